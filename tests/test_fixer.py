"""hexlint.fixer: applying edits, atomic writes, and diffs that git apply and patch -p1 accept byte for byte."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from hexlint.core import Edit, Fix
from hexlint.fixer import (
    apply_edits,
    apply_fixes,
    encode_diff,
    plan_fixes,
    unified_diff,
    unified_diff_bytes,
    write_atomic,
)

hypothesis = pytest.importorskip("hypothesis")
strategies = hypothesis.strategies


def fix(*edits: tuple[int, int, bytes], path: str = "f.c") -> Fix:
    return Fix("test", tuple(Edit(path, start, end, replacement) for start, end, replacement in edits))


# --- apply_fixes -----------------------------------------------------------------------------------------------------


def test_edits_apply_by_offset_whatever_their_order() -> None:
    data = b"0123456789"
    assert apply_fixes(data, [fix((8, 9, b"X")), fix((1, 3, b"")), fix((5, 5, b"+"))]) == b"034+567X9"


def test_overlapping_fix_is_skipped_and_the_first_wins() -> None:
    data = b"abcdef"
    first, second = fix((1, 4, b"X")), fix((3, 5, b"Y"))
    assert apply_fixes(data, [first, second]) == b"aXef"
    assert apply_fixes(data, [second, first]) == b"abcYf"
    plan = plan_fixes(data, [first, second])
    assert plan.applied == (first,) and plan.skipped == (second,)


def test_a_fix_is_all_or_nothing() -> None:
    data = b"abcdef"
    kept = fix((2, 3, b"X"))
    partly_overlapping = fix((0, 1, b"Y"), (2, 4, b"Z"))
    assert apply_fixes(data, [kept, partly_overlapping]) == b"abXdef"


@pytest.mark.parametrize(
    ("first", "second", "conflict"),
    [
        ((2, 2, b"A"), (2, 2, b"B"), True),  # two insertions at one place: order would be arbitrary
        ((2, 2, b"A"), (1, 3, b"B"), True),  # an insertion inside a replacement
        ((2, 2, b"A"), (2, 4, b"B"), False),  # an insertion at a replacement's start
        ((2, 2, b"A"), (0, 2, b"B"), False),  # ... or at its end
        ((0, 2, b"A"), (2, 4, b"B"), False),  # adjacent replacements
        ((0, 3, b"A"), (2, 4, b"B"), True),
    ],
)
def test_what_counts_as_overlapping(first: tuple, second: tuple, conflict: bool) -> None:
    plan = plan_fixes(b"abcdef", [fix(first), fix(second)])
    assert len(plan.skipped) == (1 if conflict else 0)


def test_insertion_before_a_replacement_at_the_same_offset() -> None:
    assert apply_fixes(b"abcdef", [fix((2, 4, b"X")), fix((2, 2, b"+"))]) == b"ab+Xef"


def test_out_of_range_edits_are_skipped() -> None:
    data = b"abc"
    assert apply_fixes(data, [fix((2, 9, b"X")), fix((-1, 0, b"Y")), fix((2, 1, b"Z"))]) == data


def test_only_edits_for_the_given_path_apply() -> None:
    mixed = Fix("two files", (Edit("a.c", 0, 1, b"A"), Edit("b.c", 1, 2, b"B")))
    assert apply_fixes(b"xyz", [mixed], path="a.c") == b"Ayz"
    assert apply_fixes(b"xyz", [mixed], path="b.c") == b"xBz"


def test_no_fixes_leave_the_bytes_alone() -> None:
    data = b"a\r\nb\xff"
    assert apply_fixes(data, []) == data
    assert apply_edits(data, []) == data


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(
    data=strategies.binary(max_size=60),
    raw_edits=strategies.lists(
        strategies.tuples(strategies.integers(0, 60), strategies.integers(0, 8), strategies.binary(max_size=4)),
        max_size=8,
    ),
)
def test_applied_edits_equal_applying_them_one_by_one_back_to_front(data: bytes, raw_edits: list) -> None:
    fixes = [fix((start, start + length, replacement)) for start, length, replacement in raw_edits]
    plan = plan_fixes(data, fixes)
    expected = data
    for edit in sorted(plan.edits, key=lambda edit: (edit.start, edit.end), reverse=True):
        expected = expected[: edit.start] + edit.replacement + expected[edit.end :]
    assert apply_fixes(data, fixes) == expected
    assert len(plan.applied) + len(plan.skipped) == len(fixes)


def brute_force_conflict(first: Edit, second: Edit) -> bool:
    """The overlap rule spelled out on byte sets: shared bytes, same insertion point, or an insertion inside."""
    first_bytes, second_bytes = set(range(first.start, first.end)), set(range(second.start, second.end))
    if first_bytes & second_bytes:
        return True
    if not first_bytes and not second_bytes:
        return first.start == second.start
    insertion, other = (first, second) if not first_bytes else (second, first)
    return other.start < insertion.start < other.end


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(
    raw_fixes=strategies.lists(
        strategies.lists(
            strategies.tuples(strategies.integers(0, 30), strategies.integers(0, 5)), min_size=1, max_size=3
        ),
        max_size=12,
    )
)
def test_plan_keeps_exactly_the_fixes_a_pairwise_check_keeps(raw_fixes: list) -> None:
    data = bytes(40)
    fixes = [fix(*((start, start + length, b"x") for start, length in edits)) for edits in raw_fixes]
    expected_kept: list[Fix] = []
    for candidate in fixes:
        own = list(candidate.edits)
        internal = any(brute_force_conflict(a, b) for i, a in enumerate(own) for b in own[i + 1 :])
        against_kept = any(brute_force_conflict(a, b) for a in own for kept in expected_kept for b in kept.edits)
        if not internal and not against_kept:
            expected_kept.append(candidate)
    assert list(plan_fixes(data, fixes).applied) == expected_kept


def test_twenty_thousand_fixes_all_apply() -> None:
    """A generated header can carry thousands of findings; the overlap check looks at neighbours, not at all pairs."""
    data = bytes(200_000)
    fixes = [fix((offset, offset + 3, b"yy")) for offset in range(0, 200_000, 10)]
    plan = plan_fixes(data, fixes)
    assert len(plan.applied) == 20_000 and not plan.skipped


# --- write_atomic ----------------------------------------------------------------------------------------------------


def test_write_keeps_mode_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "kernel.c"
    target.write_bytes(b"old\n")
    target.chmod(0o751)
    write_atomic(target, b"new\r\n\xff")
    assert target.read_bytes() == b"new\r\n\xff"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kernel.c"]


def test_write_replaces_the_file_rather_than_truncating_it(tmp_path: Path) -> None:
    target = tmp_path / "kernel.c"
    target.write_bytes(b"old\n")
    inode_before = target.stat().st_ino
    reader = target.open("rb")
    write_atomic(target, b"new\n")
    # A reader that opened the file before the write still sees one whole version, never a half-written one.
    assert reader.read() == b"old\n"
    reader.close()
    assert target.stat().st_ino != inode_before


def test_unchanged_file_is_not_written(tmp_path: Path) -> None:
    target = tmp_path / "kernel.c"
    target.write_bytes(b"same\n")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    inode_before = target.stat().st_ino
    write_atomic(target, b"same\n")
    assert target.stat().st_mtime_ns == 1_000_000_000
    assert target.stat().st_ino == inode_before


def test_write_through_a_symlink_rewrites_its_target(tmp_path: Path) -> None:
    real = tmp_path / "real.c"
    real.write_bytes(b"old\n")
    link = tmp_path / "link.c"
    link.symlink_to(real)
    write_atomic(link, b"new\n")
    assert link.is_symlink()
    assert real.read_bytes() == b"new\n"


def test_a_failed_write_leaves_the_file_and_no_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "kernel.c"
    target.write_bytes(b"old\n")

    def refuse(source: str, destination: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, b"new\n")
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kernel.c"]


def test_durable_write_syncs_before_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    target = tmp_path / "kernel.c"
    write_atomic(target, b"a\n")
    assert synced == []
    write_atomic(target, b"b\n", durable=True)
    assert len(synced) == 1 and target.read_bytes() == b"b\n"


def interrupted_write(target: Path, data: bytes, step: int) -> bool:
    """write_atomic with KeyboardInterrupt raised as it reaches its `step`-th line; False once it ran to the end."""
    import sys

    code = write_atomic.__code__
    seen = 0

    def trace(frame, event, argument):
        nonlocal seen
        if frame.f_code is not code:
            return None
        if event == "line":
            seen += 1
            if seen == step:
                raise KeyboardInterrupt
        return trace

    previous = sys.gettrace()
    sys.settrace(lambda frame, event, argument: trace if frame.f_code is code else None)
    try:
        write_atomic(target, data)
    except KeyboardInterrupt:
        return True
    finally:
        sys.settrace(previous)
    return False


def test_ctrl_c_at_any_line_of_a_write_leaves_one_whole_file_and_no_temp_file(tmp_path: Path) -> None:
    """An interrupt between creating the temp file and the code that removes it left `.k.c.XXXX.hexlint-tmp`."""
    target = tmp_path / "k.c"
    steps = 0
    for step in range(1, 200):
        target.write_bytes(b"old\n")
        if not interrupted_write(target, b"new\n", step):
            break
        steps += 1
        assert target.read_bytes() in (b"old\n", b"new\n"), step
        assert sorted(p.name for p in tmp_path.iterdir()) == ["k.c"], step
    assert steps > 10  # every line of write_atomic was interrupted once
    assert target.read_bytes() == b"new\n"


@pytest.mark.parametrize("call", ["open", "fchown", "fdopen", "chmod", "replace", "fstat"])
def test_ctrl_c_just_after_each_system_call_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    """The interrupt lands after the call did its work and before its result is kept."""
    target = tmp_path / "k.c"
    target.write_bytes(b"old\n")
    real = getattr(os, call)

    def then_interrupt(*arguments, **keywords):
        real(*arguments, **keywords)
        raise KeyboardInterrupt

    monkeypatch.setattr(os, call, then_interrupt)
    with contextlib.suppress(KeyboardInterrupt):
        write_atomic(target, b"new\n")
    monkeypatch.undo()
    assert target.read_bytes() in (b"old\n", b"new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.c"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_root_keeps_the_owner_and_group_of_a_file_it_fixes(tmp_path: Path) -> None:
    target = tmp_path / "k.c"
    target.write_bytes(b"old\n")
    os.chown(target, 4321, 8765)
    target.chmod(0o640)
    write_atomic(target, b"new\n")
    status = target.stat()
    assert (status.st_uid, status.st_gid, stat.S_IMODE(status.st_mode)) == (4321, 8765, 0o640)
    assert target.read_bytes() == b"new\n"


def test_a_file_whose_owner_cannot_be_set_is_rewritten_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ordinary user writing another user's (group-writable) file: a new file would change its owner."""
    target = tmp_path / "k.c"
    target.write_bytes(b"old\n")
    inode = target.stat().st_ino
    real_stat = Path.stat

    def owned_by_someone_else(self, *arguments, **keywords):
        status = real_stat(self, *arguments, **keywords)
        if self == target:
            fields = list(status)
            fields[stat.ST_UID] = status.st_uid + 1
            return os.stat_result(fields)
        return status

    def refuse(*arguments):
        raise PermissionError("Operation not permitted")

    monkeypatch.setattr(Path, "stat", owned_by_someone_else)
    monkeypatch.setattr(os, "fchown", refuse)
    write_atomic(target, b"new, and longer\n")
    monkeypatch.undo()
    assert target.read_bytes() == b"new, and longer\n"
    assert target.stat().st_ino == inode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.c"]


def test_write_creates_a_missing_file(tmp_path: Path) -> None:
    target = tmp_path / "new.c"
    write_atomic(target, b"x\n")
    assert target.read_bytes() == b"x\n"


# --- unified_diff ----------------------------------------------------------------------------------------------------


def applies_with(tool: str, tmp_path: Path, name: str, old: bytes, new: bytes) -> None:
    """Apply our diff to `old` with git apply or patch -p1 and check the result is exactly `new`."""
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    tree = tmp_path / f"tree-{tool}"
    if tree.exists():
        shutil.rmtree(tree)
    (tree / "src").mkdir(parents=True)
    (tree / "src" / name).write_bytes(old)
    patch = tmp_path / "change.patch"
    patch.write_bytes(encode_diff(unified_diff(f"src/{name}", old, new)))
    if tool == "git":
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
        command = ["git", "apply", "--whitespace=nowarn", str(patch)]
    else:
        command = ["patch", "-p1", "--quiet", "--batch", "-i", str(patch)]
    result = subprocess.run(command, cwd=tree, capture_output=True)
    assert result.returncode == 0, (tool, result.stderr, result.stdout, patch.read_bytes())
    assert (tree / "src" / name).read_bytes() == new


CASES = {
    "plain": (b"a\nb\nc\n", b"a\nB\nc\n"),
    "crlf": (b"a\r\nb  \\\r\nc\r\n", b"a\r\nb \\\r\nc\r\n"),
    "no newline at end, both": (b"a\nb \\", b"a\nb  \\"),
    "newline added at end": (b"a\nb", b"a\nb\n"),
    "newline removed at end": (b"a\nb\n", b"a\nb"),
    "not utf-8": (b"caf\xe9 \\\nx\n", b"caf\xe9  \\\nx\n"),
    "empty to content": (b"", b"x\n"),
    "content to empty": (b"x\n", b""),
    "far apart": (
        b"".join(b"line %d\n" % i for i in range(40)),
        b"".join(b"line %d\n" % (i * (i % 17 != 3)) for i in range(40)),
    ),
}


@pytest.mark.parametrize("tool", ["git", "patch"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_diff_applies_exactly(tool: str, case: str, tmp_path: Path) -> None:
    old, new = CASES[case]
    applies_with(tool, tmp_path, "kernel.c", old, new)


@pytest.mark.parametrize("tool", ["git", "patch"])
def test_diff_of_a_path_with_spaces_applies(tool: str, tmp_path: Path) -> None:
    applies_with(tool, tmp_path, "my kernel.c", b"a\nb\n", b"a\nc\n")


def test_diff_headers_and_no_newline_marker() -> None:
    text = unified_diff("htp/k.c", b"a\nb", b"a\nc")
    assert text.splitlines() == [
        "--- a/htp/k.c",
        "+++ b/htp/k.c",
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "\\ No newline at end of file",
        "+c",
        "\\ No newline at end of file",
    ]


def test_no_diff_for_identical_bytes() -> None:
    assert unified_diff("k.c", b"x\r\n", b"x\r\n") == ""


def test_diff_keeps_cr_and_non_utf8_bytes() -> None:
    raw = unified_diff_bytes("k.c", b"x \\\r\n\xff\n", b"x  \\\r\n\xff\n")
    assert b"-x \\\r\n+x  \\\r\n \xff\n" in raw
    assert encode_diff(unified_diff("k.c", b"x \\\r\n\xff\n", b"x  \\\r\n\xff\n")) == raw


def test_diff_of_many_changed_lines_applies(tmp_path: Path) -> None:
    """Thousands of changed lines, with and without lines removed: the diff still applies exactly."""
    old = b"".join(b"line %d  \\\n" % i for i in range(5000))
    same_count = b"".join(
        line.replace(b"  ", b" ") if i % 2 else line for i, line in enumerate(old.splitlines(keepends=True))
    )
    fewer = b"".join(line for i, line in enumerate(same_count.splitlines(keepends=True)) if i % 3)
    for new in (same_count, fewer):
        applies_with("git", tmp_path, "k.c", old, new)


def test_diff_is_as_small_as_the_change() -> None:
    """One changed line of a long file is one hunk with three lines of context, as `diff -u` writes it."""
    old = b"".join(b"%d\n" % i for i in range(100))
    text = unified_diff("k.c", old, old.replace(b"\n50\n", b"\nfifty\n"))
    assert text.splitlines()[2:] == ["@@ -48,7 +48,7 @@", " 47", " 48", " 49", "-50", "+fifty", " 51", " 52", " 53"]


@pytest.mark.parametrize("tool", ["git", "patch"])
@pytest.mark.parametrize("name", ["tab\there.c", "new\nline.c", 'quote"d.c', "back\\slash.c", "caf\xe9 \tx.c"])
def test_diff_of_a_path_git_quotes_applies(tool: str, name: str, tmp_path: Path) -> None:
    applies_with(tool, tmp_path, name, b"a\nb\n", b"a\nc\n")


def test_quoted_path_is_spelled_as_git_spells_it() -> None:
    assert unified_diff("d/ta\tb.c", b"a\n", b"b\n").splitlines()[:2] == ['--- "a/d/ta\\tb.c"', '+++ "b/d/ta\\tb.c"']


lines_strategy = strategies.lists(
    strategies.sampled_from([b"a", b"b", b"c \\", b"  d\t\\", b"\xff", b"e\r", b""]), max_size=12
)


@hypothesis.settings(max_examples=40, deadline=None)
@hypothesis.given(
    old_lines=lines_strategy,
    new_lines=lines_strategy,
    old_ends=strategies.booleans(),
    new_ends=strategies.booleans(),
)
def test_random_diffs_apply_with_git_and_patch(
    old_lines: list[bytes], new_lines: list[bytes], old_ends: bool, new_ends: bool
) -> None:
    import tempfile

    old = b"\n".join(old_lines) + (b"\n" if old_ends and old_lines else b"")
    new = b"\n".join(new_lines) + (b"\n" if new_ends and new_lines else b"")
    if old == new:
        assert unified_diff("k.c", old, new) == ""
        return
    with tempfile.TemporaryDirectory() as directory:
        for tool in ("git", "patch"):
            applies_with(tool, Path(directory), "k.c", old, new)
