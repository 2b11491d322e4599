"""`--add-suppressions REASON` (ruff's `--add-noqa`): a `hexlint: ignore[CODE] REASON` directive on each finding's line.

A line gets one directive naming every code that starts on it: `  // hexlint: ignore[HX104, HX108] REASON` at its end;
before a `//` comment already there, or before a line-continuation backslash (where a `//` would swallow the next
line), as a `/* ... */` comment instead. Every directive is read back with the suppression lexer, and a line where it
would not be one (the line lies inside a block comment) is left as it was. Files are written through the fixer's
atomic write. A second run adds nothing: the findings it would name are suppressed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from hexlint import registry
from hexlint.core import Diagnostic, Source

UNSUPPRESSIBLE = ("HX001",)  # an unused-suppression finding cannot itself be suppressed


class ReasonError(ValueError):
    """A reason that cannot be written into a comment."""


def check_reason(reason: str) -> str:
    text = reason.strip()
    if not text:
        raise ReasonError("a suppression needs a reason, e.g. --add-suppressions 'pre-existing, see #123'")
    if "\n" in text or "\r" in text or "*/" in text:
        raise ReasonError("the reason must be one line without `*/`")
    return text


def suppressible(diagnostic: Diagnostic) -> bool:
    """A finding a comment can hide: on a source line, from a rule that is not a binary rule, not HX001."""
    if diagnostic.span.line is None or diagnostic.code in UNSUPPRESSIBLE:
        return False
    rule = registry.find_rule(diagnostic.code)
    return rule is not None and rule.kind != "binary"


def codes_by_line(diagnostics: Iterable[Diagnostic]) -> dict[str, dict[int, list[str]]]:
    """path -> line -> the codes starting on it, sorted and once each."""
    grouped: dict[str, dict[int, list[str]]] = {}
    for diagnostic in diagnostics:
        if not suppressible(diagnostic):
            continue
        line = diagnostic.span.line
        assert line is not None
        codes = grouped.setdefault(diagnostic.span.path, {}).setdefault(line, [])
        if diagnostic.code not in codes:
            codes.append(diagnostic.code)
    return {path: {line: sorted(codes) for line, codes in lines.items()} for path, lines in grouped.items()}


def _line_comment_columns(text: str) -> dict[int, int]:
    """line -> 0-based column of the `//` comment that starts on it."""
    from hexlint.suppress import iter_comments

    return {comment.line: comment.column - 1 for comment in iter_comments(text) if comment.text.startswith("//")}


def _with_directive(line: str, directive: str, comment_column: int | None) -> str:
    stripped = line.rstrip(" \t")
    if stripped.endswith("\\"):
        body = stripped[:-1]
        block = f"/* {directive} */"
        gap = len(body) - len(body.rstrip(" \t"))
        if gap >= len(block) + 2:  # room before the backslash: it keeps its column (HX110 stays quiet)
            return body.rstrip(" \t") + " " + block + " " * (gap - len(block) - 1) + line[len(body) :]
        return body.rstrip(" \t") + " " + block + " " + line[len(body) :]
    if comment_column is not None:
        return line[:comment_column] + f"/* {directive} */ " + line[comment_column:]
    return stripped + f"  // {directive}" + line[len(stripped) :]


def add_directives(data: bytes, lines: Mapping[int, Sequence[str]], reason: str, path: str) -> tuple[bytes, int]:
    """The file with a directive on each of `lines`, and how many it holds that it did not before."""
    from hexlint.suppress import find_suppressions

    text = data.decode("latin-1")  # one character per byte: positions and non-UTF-8 bytes survive
    rows = text.split("\n")
    comment_columns = _line_comment_columns(text)
    edited: dict[int, str] = {}
    for number, codes in lines.items():
        if not 0 < number <= len(rows):
            continue
        row = rows[number - 1]
        ending = "\r" if row.endswith("\r") else ""
        body = row[: len(row) - len(ending)]
        directive = f"hexlint: ignore[{', '.join(codes)}] {reason}"
        edited[number] = _with_directive(body, directive, comment_columns.get(number)) + ending
    for _ in range(2):  # read back; drop the lines where the directive is no directive, and read back once more
        candidate = rows.copy()
        for number, row in edited.items():
            candidate[number - 1] = row
        new = "\n".join(candidate).encode("latin-1")
        found = {
            suppression.target_line
            for suppression in find_suppressions(Source(path, new))
            if suppression.reason == reason and suppression.target_line in edited
        }
        if found == set(edited):
            break
        edited = {number: row for number, row in edited.items() if number in found}
    else:
        return data, 0
    return new, len(edited)


def write_suppressions(
    diagnostics: Iterable[Diagnostic], reason: str, read: Callable[[str], bytes | None]
) -> tuple[int, int, tuple[str, ...]]:
    """Write the directives; (directives added, findings they cover, files changed)."""
    from hexlint.fixer import write_atomic

    added = covered = 0
    changed: list[str] = []
    diagnostics = list(diagnostics)
    for path, lines in sorted(codes_by_line(diagnostics).items()):
        data = read(path)
        if data is None:
            continue
        new, count = add_directives(data, lines, reason, path)
        if not count:
            continue
        write_atomic(path, new)
        placed = {line for line in lines if new.split(b"\n")[line - 1 : line] != data.split(b"\n")[line - 1 : line]}
        covered += sum(
            1 for item in diagnostics if item.span.path == path and item.span.line in placed and suppressible(item)
        )
        added += count
        changed.append(path)
    return added, covered, tuple(changed)
