"""Apply fixes to a file's bytes, write files atomically, and render unified diffs `git apply` and `patch -p1` accept.

Everything works on bytes: line endings (LF, CRLF, mixed), encodings and non-UTF-8 bytes pass through untouched.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from hexlint.core import Edit, Fix

# Lines of context around each change, as `diff -u` and `git diff` use.
DIFF_CONTEXT_LINES = 3


@dataclass(frozen=True)
class FixPlan:
    """Fixes that apply together in one pass: `applied` in order, `skipped` for an overlapping or invalid edit."""

    applied: tuple[Fix, ...]
    skipped: tuple[Fix, ...]
    edits: tuple[Edit, ...]  # the edits of `applied`, sorted by position


def _edits_conflict(first: Edit, second: Edit) -> bool:
    """Edits conflict when they share a byte, insert at the same place, or one inserts inside the other."""
    if first.start == first.end and second.start == second.end:
        return first.start == second.start
    if first.start == first.end:
        return second.start < first.start < second.end
    if second.start == second.end:
        return first.start < second.start < first.end
    return first.start < second.end and second.start < first.end


def _edit_is_valid(edit: Edit, size: int) -> bool:
    return 0 <= edit.start <= edit.end <= size


def plan_fixes(data: bytes, fixes: Iterable[Fix], path: str | None = None) -> FixPlan:
    """Keep fixes in the order given; a fix whose edits overlap an already kept fix's edits is skipped as a whole.

    With `path`, only edits for that path are considered (a fix may in principle touch several files).
    """
    kept: list[Fix] = []
    skipped: list[Fix] = []
    kept_edits: list[Edit] = []
    for fix in fixes:
        edits = [edit for edit in fix.edits if path is None or edit.path == path]
        valid = all(_edit_is_valid(edit, len(data)) for edit in edits)
        internally_disjoint = not any(
            _edits_conflict(edits[i], edits[j]) for i in range(len(edits)) for j in range(i + 1, len(edits))
        )
        overlaps_kept = any(_edits_conflict(edit, other) for edit in edits for other in kept_edits)
        if valid and internally_disjoint and not overlaps_kept:
            kept.append(fix)
            kept_edits.extend(edits)
        else:
            skipped.append(fix)
    ordered = tuple(sorted(kept_edits, key=lambda edit: (edit.start, edit.end)))
    return FixPlan(applied=tuple(kept), skipped=tuple(skipped), edits=ordered)


def apply_edits(data: bytes, edits: Iterable[Edit]) -> bytes:
    """Apply non-overlapping edits (as `plan_fixes` returns them); building the result front to back is linear."""
    pieces: list[bytes] = []
    position = 0
    for edit in sorted(edits, key=lambda edit: (edit.start, edit.end)):
        pieces.append(data[position : edit.start])
        pieces.append(edit.replacement)
        position = edit.end
    pieces.append(data[position:])
    return b"".join(pieces)


def apply_fixes(data: bytes, fixes: Iterable[Fix], path: str | None = None) -> bytes:
    """The file's bytes with every applicable fix applied; overlapping fixes: the first wins, the rest are skipped.

    A fixed file may still hold findings (a skipped fix): callers that want a fixed point re-run the checks and
    call this again until nothing changes.
    """
    plan = plan_fixes(data, fixes, path)
    return apply_edits(data, plan.edits) if plan.edits else data


def write_atomic(path: Path, data: bytes, durable: bool = False) -> None:
    """Replace the file's contents with `data` through a temp file in the same directory and os.replace.

    Readers see the old or the new file, never a part of one. The file's permission bits (and owner, where allowed)
    are kept; a symlink is followed and its target rewritten; nothing is written when the file already holds exactly
    `data`. `durable` also fsyncs before the rename (survives a power cut; costs ~1 ms a file, which is why ruff,
    black and clang-format do not and neither does `hexlint --fix`). Raises OSError for unreadable or unwritable paths.
    """
    target = Path(os.path.realpath(path))
    try:
        current = target.read_bytes()
    except FileNotFoundError:
        current = None
    if current == data:
        return
    mode = None
    owner = None
    if current is not None:
        status = target.stat()
        mode = stat.S_IMODE(status.st_mode)
        owner = (status.st_uid, status.st_gid)
    descriptor, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".hexlint-tmp")
    try:
        with os.fdopen(descriptor, "wb") as temp_file:
            temp_file.write(data)
            if durable:
                temp_file.flush()
                os.fsync(temp_file.fileno())
        if mode is not None:
            os.chmod(temp_name, mode)
        if owner is not None:
            # Only root may give a file away; an ordinary user already owns what they rewrite.
            with contextlib.suppress(OSError):
                os.chown(temp_name, *owner)
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise


def _split_lines(data: bytes) -> list[bytes]:
    """Lines with their terminators kept; only LF ends a line, so a CR before it stays part of the line's bytes."""
    lines = data.split(b"\n")
    result = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


def _hunk_range(start: int, length: int) -> str:
    """The `start,length` of a hunk header, as GNU diff writes it (1-based; an empty range names the line before)."""
    beginning = start + 1
    if length == 1:
        return f"{beginning}"
    if length == 0:
        beginning -= 1
    return f"{beginning},{length}"


def _diff_line(prefix: bytes, line: bytes) -> Iterator[bytes]:
    if line.endswith(b"\n"):
        yield prefix + line
    else:
        yield prefix + line + b"\n"
        yield b"\\ No newline at end of file\n"


def _quoted_path(path: str) -> str:
    """Paths with a space get a trailing tab, as GNU diff does, so both patch and git apply read the whole name."""
    return f"{path}\t" if " " in path else path


def unified_diff_bytes(path: str, old: bytes, new: bytes) -> bytes:
    """A unified diff from `old` to `new` of the file at `path` (relative, '/'-separated), with a/ and b/ prefixes."""
    if old == new:
        return b""
    old_lines = _split_lines(old)
    new_lines = _split_lines(new)
    display = path.replace(os.sep, "/")
    output = [
        f"--- {_quoted_path('a/' + display)}\n".encode("utf-8", "surrogateescape"),
        f"+++ {_quoted_path('b/' + display)}\n".encode("utf-8", "surrogateescape"),
    ]
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(DIFF_CONTEXT_LINES):
        first, last = group[0], group[-1]
        old_range = _hunk_range(first[1], last[2] - first[1])
        new_range = _hunk_range(first[3], last[4] - first[3])
        output.append(f"@@ -{old_range} +{new_range} @@\n".encode())
        for tag, old_start, old_end, new_start, new_end in group:
            if tag == "equal":
                for line in old_lines[old_start:old_end]:
                    output.extend(_diff_line(b" ", line))
                continue
            for line in old_lines[old_start:old_end]:
                output.extend(_diff_line(b"-", line))
            for line in new_lines[new_start:new_end]:
                output.extend(_diff_line(b"+", line))
    return b"".join(output)


def unified_diff(path: str, old: bytes, new: bytes) -> str:
    """`unified_diff_bytes` as text; bytes that are not UTF-8 survive as surrogates.

    Write it with `sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))` (see `encode_diff`) so the
    patch applies byte for byte.
    """
    return unified_diff_bytes(path, old, new).decode("utf-8", "surrogateescape")


def encode_diff(text: str) -> bytes:
    """The exact bytes of a diff returned by `unified_diff`, for writing to a binary stream."""
    return text.encode("utf-8", "surrogateescape")
