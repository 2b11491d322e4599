"""Apply fixes to a file's bytes, write files atomically, and render unified diffs `git apply` and `patch -p1` accept.

Everything works on bytes: line endings (LF, CRLF, mixed), encodings and non-UTF-8 bytes pass through untouched.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import stat
from collections.abc import Iterable
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


class _Occupied:
    """Accepted edits, sorted by position: a conflict check looks at the few neighbours, not at every edit."""

    def __init__(self) -> None:
        self.keys: list[tuple[int, int]] = []
        self.edits: list[Edit] = []

    def conflicts(self, edit: Edit) -> bool:
        first_at_or_after = bisect.bisect_left(self.keys, (edit.start, -1))
        # Everything that starts inside the edit (or at an insertion's offset) can conflict; of what starts before,
        # only the last two can reach into it, as accepted edits never overlap one another.
        stop = bisect.bisect_left(self.keys, (max(edit.end, edit.start + 1), -1))
        nearby = self.edits[max(0, first_at_or_after - 2) : first_at_or_after] + self.edits[first_at_or_after:stop]
        return any(_edits_conflict(edit, other) for other in nearby)

    def add(self, edit: Edit) -> None:
        index = bisect.bisect_right(self.keys, (edit.start, edit.end))
        self.keys.insert(index, (edit.start, edit.end))
        self.edits.insert(index, edit)


def plan_fixes(data: bytes, fixes: Iterable[Fix], path: str | None = None) -> FixPlan:
    """Keep fixes in the order given; a fix whose edits overlap an already kept fix's edits is skipped as a whole.

    With `path`, only edits for that path are considered (a fix may in principle touch several files).
    """
    kept: list[Fix] = []
    skipped: list[Fix] = []
    occupied = _Occupied()
    for fix in fixes:
        edits = [edit for edit in fix.edits if path is None or edit.path == path]
        own = _Occupied()
        acceptable = True
        for edit in edits:
            if not _edit_is_valid(edit, len(data)) or own.conflicts(edit) or occupied.conflicts(edit):
                acceptable = False
                break
            own.add(edit)
        if acceptable:
            kept.append(fix)
            for edit in edits:
                occupied.add(edit)
        else:
            skipped.append(fix)
    return FixPlan(applied=tuple(kept), skipped=tuple(skipped), edits=tuple(occupied.edits))


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


def is_read_only(path: Path | str) -> bool:
    """Whether the file is read-only: no write bit at all (root could still write it), or not writable by us."""
    try:
        status = os.stat(path)
    except OSError:
        return False
    return not status.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK)


def _temp_name(target: Path) -> str:
    return str(target.parent / f".{target.name}.{os.urandom(4).hex()}.hexlint-tmp")


def write_atomic(path: Path, data: bytes, durable: bool = False) -> None:
    """Replace the file's contents with `data` through a temp file in the same directory and os.replace.

    Readers see the old or the new file, never a part of one. The file's permission bits, owner and group are kept
    (root gives the temp file to the owner; a user who may write a file owned by someone else has it rewritten in
    place, as that owner cannot be set on a new file); a symlink is followed and its target rewritten; nothing is
    written when the file already holds exactly `data`. `durable` also fsyncs before the rename (survives a power
    cut; costs ~1 ms a file, which is why ruff, black and clang-format do not and neither does `hexlint --fix`).
    Raises OSError for unreadable or unwritable paths. An exception at any point, KeyboardInterrupt included,
    leaves the old file and no temp file: the temp file's name is known before it exists.
    """
    target = Path(os.path.realpath(path))
    try:
        current = target.read_bytes()
    except FileNotFoundError:
        current = None
    if current == data:
        return
    status = target.stat() if current is not None else None
    temp_name = None
    descriptor = None
    try:
        for _ in range(100):
            temp_name = _temp_name(target)
            try:
                descriptor = os.open(
                    temp_name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600
                )
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"{target.parent}: no free temp file name")
        if status is not None and not _owner_can_be_kept(descriptor, status):
            os.close(descriptor)
            descriptor = None
            os.unlink(temp_name)
            temp_name = None
            _write_in_place(target, data, durable)
            return
        with os.fdopen(descriptor, "wb") as temp_file:
            descriptor = None  # the file object closes it now
            temp_file.write(data)
            if durable:
                temp_file.flush()
                os.fsync(temp_file.fileno())
        if status is not None:
            os.chmod(temp_name, stat.S_IMODE(status.st_mode))
        os.replace(temp_name, target)
        temp_name = None
    finally:
        if descriptor is not None:
            with contextlib.suppress(OSError):
                os.close(descriptor)
        if temp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp_name)


def _owner_can_be_kept(descriptor: int, status: os.stat_result) -> bool:
    """Give the new file the old one's owner and group; False when we may not (only root may give a file away)."""
    if (os.fstat(descriptor).st_uid, os.fstat(descriptor).st_gid) == (status.st_uid, status.st_gid):
        return True
    try:
        os.fchown(descriptor, status.st_uid, status.st_gid)
    except OSError:
        return False
    return True


def _write_in_place(target: Path, data: bytes, durable: bool) -> None:
    """Rewrite the file's own inode: owner, group, mode and hard links stay; not atomic (a reader may see a part)."""
    with open(target, "r+b") as handle:
        handle.write(data)
        handle.truncate()
        if durable:
            handle.flush()
            os.fsync(handle.fileno())


def _split_lines(data: bytes) -> list[bytes]:
    """Lines with their terminators kept; only LF ends a line, so a CR before it stays part of the line's bytes."""
    lines = data.split(b"\n")
    result = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


# Bytes git writes as themselves in a quoted path; the others it writes as \\, \" or C escapes (core.quotePath).
_GIT_ESCAPES = {0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f", 0x0D: "r", 0x22: '"', 0x5C: "\\"}


def _quoted_path(path: str) -> bytes:
    """A path of a diff header as git writes it, so both git apply and patch read the whole name.

    A name with a control byte (a tab, a newline), a double quote or a backslash is C-quoted: "a/na\\tme.c". A name with
    a space gets a trailing tab, as GNU diff does (git apply and patch then take the whole line up to the tab).
    """
    raw = path.encode("utf-8", "surrogateescape")
    if any(byte < 0x20 or byte == 0x7F or byte in (0x22, 0x5C) for byte in raw):
        quoted = "".join(
            "\\" + _GIT_ESCAPES[byte]
            if byte in _GIT_ESCAPES
            else f"\\{byte:03o}"
            if byte < 0x20 or byte >= 0x7F
            else chr(byte)
            for byte in raw
        )
        return f'"{quoted}"'.encode("ascii")
    return raw + b"\t" if b" " in raw else raw


def unified_diff_bytes(path: str, old: bytes, new: bytes) -> bytes:
    """A unified diff from `old` to `new` of the file at `path` (relative, '/'-separated), with a/ and b/ prefixes.

    difflib's, with DIFF_CONTEXT_LINES of context, and a line that ends without a newline followed by GNU diff's
    `\\ No newline at end of file`, which git apply and patch need to restore it exactly.
    """
    import difflib  # only --diff renders diffs: keep its import out of every lint run

    if old == new:
        return b""
    display = path.replace(os.sep, "/")
    output = [b"--- " + _quoted_path("a/" + display) + b"\n", b"+++ " + _quoted_path("b/" + display) + b"\n"]
    lines = difflib.diff_bytes(
        difflib.unified_diff, _split_lines(old), _split_lines(new), b"", b"", n=DIFF_CONTEXT_LINES, lineterm=b"\n"
    )
    for line in itertools.islice(lines, 2, None):  # the --- and +++ lines, written above with quoting
        output.append(line)
        if not line.endswith(b"\n"):
            output.append(b"\n\\ No newline at end of file\n")
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
