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
from pathlib import Path

from hexlint.core import Edit, Fix
from hexlint.record import record

# Lines of context around each change, as `diff -u` and `git diff` use.
DIFF_CONTEXT_LINES = 3


@record
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


def write_atomic(path: Path, data: bytes, durable: bool = False) -> None:
    """Replace the file's contents with `data` through a temp file in the same directory and os.replace.

    Readers see the old or the new file, never a part of one. The file's permission bits (and owner, where allowed)
    are kept; a symlink is followed and its target rewritten; nothing is written when the file already holds exactly
    `data`. `durable` also fsyncs before the rename (survives a power cut; costs ~1 ms a file, which is why ruff,
    black and clang-format do not and neither does `hexlint --fix`). Raises OSError for unreadable or unwritable paths.
    """
    import tempfile  # only --fix writes: keep its import cost (random, shutil) out of every lint run

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
