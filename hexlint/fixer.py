"""Apply fixes to a file's bytes, write files atomically, and render unified diffs `git apply` and `patch -p1` accept.

Everything works on bytes: line endings (LF, CRLF, mixed), encodings and non-UTF-8 bytes pass through untouched.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import stat
from collections.abc import Iterable, Iterator
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


Opcode = tuple[str, int, int, int, int]  # (tag, old start, old end, new start, new end), as difflib's get_opcodes

# Beyond this many differing lines the minimal-diff search (Myers) stops and a coarser, still exact, diff is used.
MINIMAL_DIFF_LIMIT = 1000


def _myers_script(old: list[bytes], new: list[bytes], limit: int) -> list[tuple[int, int]] | None:
    """The path of a shortest edit script as (old index, new index) points, or None beyond `limit` edits.

    Myers' O((N+M)D) algorithm: fast when files differ in a few lines, whatever their size.
    """
    n, m = len(old), len(new)
    offset = limit + 1
    furthest = [0] * (2 * limit + 3)  # furthest old index reached on each diagonal k = x - y
    trace: list[list[int]] = []
    for distance in range(min(limit, n + m) + 1):
        trace.append(furthest.copy())
        for diagonal in range(-distance, distance + 1, 2):
            down = diagonal == -distance or (
                diagonal != distance and furthest[offset + diagonal - 1] < furthest[offset + diagonal + 1]
            )
            x = furthest[offset + diagonal + 1] if down else furthest[offset + diagonal - 1] + 1
            y = x - diagonal
            while x < n and y < m and old[x] == new[y]:
                x, y = x + 1, y + 1
            furthest[offset + diagonal] = x
            if x >= n and y >= m:
                return _myers_backtrack(trace, offset, n, m)
    return None


def _myers_backtrack(trace: list[list[int]], offset: int, n: int, m: int) -> list[tuple[int, int]]:
    points = [(n, m)]
    x, y = n, m
    for distance in range(len(trace) - 1, -1, -1):
        furthest = trace[distance]
        diagonal = x - y
        down = diagonal == -distance or (
            diagonal != distance and furthest[offset + diagonal - 1] < furthest[offset + diagonal + 1]
        )
        previous_diagonal = diagonal + 1 if down else diagonal - 1
        previous_x = furthest[offset + previous_diagonal] if distance > 0 else 0
        previous_y = previous_x - previous_diagonal if distance > 0 else 0
        while x > previous_x and y > previous_y:
            x, y = x - 1, y - 1
            points.append((x, y))
        x, y = previous_x, previous_y
        points.append((x, y))
    points.reverse()
    return points


def _opcodes_from_path(points: list[tuple[int, int]], old_base: int, new_base: int) -> list[Opcode]:
    """Turn a path of unit steps (diagonal = equal line) into merged equal / replace / delete / insert runs."""
    codes: list[Opcode] = []
    start_x, start_y = points[0]
    change_x, change_y = start_x, start_y
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if (x0, y0) == (x1, y1):
            continue
        if x1 - x0 == 1 and y1 - y0 == 1:
            if (change_x, change_y) != (x0, y0):
                codes.append(_change(change_x, x0, change_y, y0, old_base, new_base))
            if codes and codes[-1][0] == "equal" and codes[-1][2] == old_base + x0:
                tag, i1, _, j1, _ = codes[-1]
                codes[-1] = (tag, i1, old_base + x1, j1, new_base + y1)
            else:
                codes.append(("equal", old_base + x0, old_base + x1, new_base + y0, new_base + y1))
            change_x, change_y = x1, y1
    end_x, end_y = points[-1]
    if (change_x, change_y) != (end_x, end_y):
        codes.append(_change(change_x, end_x, change_y, end_y, old_base, new_base))
    return codes


def _change(x0: int, x1: int, y0: int, y1: int, old_base: int, new_base: int) -> Opcode:
    tag = "replace" if x1 > x0 and y1 > y0 else ("delete" if x1 > x0 else "insert")
    return (tag, old_base + x0, old_base + x1, new_base + y0, new_base + y1)


def _paired_opcodes(old: list[bytes], new: list[bytes], old_base: int, new_base: int) -> list[Opcode]:
    """Line i against line i (same line count): exact, and minimal for changes that keep every line in place."""
    codes: list[Opcode] = []
    for index, (old_line, new_line) in enumerate(zip(old, new, strict=True)):
        tag = "equal" if old_line == new_line else "replace"
        if codes and codes[-1][0] == tag:
            codes[-1] = (tag, codes[-1][1], old_base + index + 1, codes[-1][3], new_base + index + 1)
        else:
            codes.append((tag, old_base + index, old_base + index + 1, new_base + index, new_base + index + 1))
    return codes


def diff_opcodes(old: list[bytes], new: list[bytes]) -> list[Opcode]:
    """Opcodes turning `old` into `new`: minimal (Myers) for up to MINIMAL_DIFF_LIMIT changed lines, else coarser.

    Always exact: applying them to `old` gives `new`. Linear in the common prefix and suffix, which are trimmed first.
    """
    prefix = 0
    while prefix < len(old) and prefix < len(new) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < len(old) - prefix and suffix < len(new) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    old_middle, new_middle = old[prefix : len(old) - suffix], new[prefix : len(new) - suffix]
    codes: list[Opcode] = [("equal", 0, prefix, 0, prefix)] if prefix else []
    if old_middle or new_middle:
        paired_changes = (
            sum(1 for a, b in zip(old_middle, new_middle, strict=True) if a != b)
            if len(old_middle) == len(new_middle)
            else None
        )
        limit = MINIMAL_DIFF_LIMIT if paired_changes is None else min(MINIMAL_DIFF_LIMIT, 2 * paired_changes - 1)
        path = _myers_script(old_middle, new_middle, limit) if limit >= 0 else None
        if path is not None:
            codes.extend(_opcodes_from_path(path, prefix, prefix))
        elif paired_changes is not None:
            codes.extend(_paired_opcodes(old_middle, new_middle, prefix, prefix))
        else:
            codes.append(_change(0, len(old_middle), 0, len(new_middle), prefix, prefix))
    if suffix:
        codes.append(("equal", len(old) - suffix, len(old), len(new) - suffix, len(new)))
    return codes


def grouped_opcodes(codes: list[Opcode], context: int = DIFF_CONTEXT_LINES) -> Iterator[list[Opcode]]:
    """Hunks: changes with `context` equal lines around them, as difflib.SequenceMatcher.get_grouped_opcodes."""
    codes = list(codes)
    if not codes or all(code[0] == "equal" for code in codes):
        return
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = (tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2)
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = (tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context))
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


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
    for group in grouped_opcodes(diff_opcodes(old_lines, new_lines)):
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
