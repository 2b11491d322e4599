"""Output formats: each module has `render(diagnostics, rules, ...) -> str`; shared helpers live here."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence

from hexlint.core import Diagnostic, Severity, Span

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMATS = ("text", "json", "sarif", "github")


@functools.cache
def _lone_surrogate() -> re.Pattern[str]:
    return re.compile("[\ud800-\udfff]")  # compiled for the JSON reports only, not at every start-up


def forget_file_lines() -> None:
    """Each report reads the files it places columns in afresh: a file may have changed since the last report."""
    _file_lines.cache_clear()


@functools.lru_cache(maxsize=256)
def _file_lines(path: str) -> tuple[bytes, ...]:
    try:
        with open(path, "rb") as handle:
            return tuple(handle.read().splitlines())
    except OSError:
        return ()


def code_point_column(path: str, line: int, byte_column: int) -> int:
    """hexlint's columns count bytes (as libclang does); SARIF and GitHub annotations count characters."""
    lines = _file_lines(path)
    if not 0 < line <= len(lines):
        return byte_column
    prefix = lines[line - 1][: byte_column - 1]
    if prefix.isascii():
        return byte_column
    # An undecodable byte counts as one character, as an editor showing U+FFFD would place it.
    return len(prefix.decode("utf-8", errors="replace")) + 1


def dump_json(document: Any) -> str:
    """Indented JSON that is valid UTF-8: readable non-ASCII text, and a file name that is not UTF-8 (held by Python
    as lone surrogates, which no UTF-8 writer accepts) as `\\udcXX` escapes that json.loads gives back unchanged."""
    import json as _json  # not `json`: hexlint.report.json is the JSON format module; imported only when used

    text = _json.dumps(document, indent=2, ensure_ascii=False)
    return _lone_surrogate().sub(lambda match: f"\\u{ord(match.group()):04x}", text) + "\n"


def source_root(start: str | None = None) -> str:
    """The directory SARIF URIs and GitHub annotations are relative to: the git work tree holding `start` (default:
    the working directory), where code scanning and the Actions runner resolve paths; else `start` itself."""
    import os

    here = os.path.abspath(start or os.getcwd())
    probe = here
    while not os.path.exists(os.path.join(probe, ".git")):
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent
    return probe


def root_relative(path: str, root: str) -> str | None:
    """`path` relative to `root` when it lies below it, else None."""
    import os

    try:
        relative = os.path.relpath(os.path.abspath(path), root)
    except ValueError:  # another drive (Windows)
        return None
    if relative == os.curdir or relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def has_safe_fix(diagnostic: Diagnostic) -> bool:
    return diagnostic.fix is not None and diagnostic.fix.safe and bool(diagnostic.fix.edits)


def has_unsafe_fix(diagnostic: Diagnostic) -> bool:
    """A fix that may change what the code does: applied only with --unsafe-fixes."""
    return diagnostic.fix is not None and not diagnostic.fix.safe and bool(diagnostic.fix.edits)


def held_back_note(diagnostics: Sequence[Diagnostic], unsafe_fixes: bool = False) -> str:
    """` (N unsafe fixes held back: --unsafe-fixes applies them)`, or nothing (ruff's "hidden fixes" hint)."""
    held = 0 if unsafe_fixes else sum(1 for diagnostic in diagnostics if has_unsafe_fix(diagnostic))
    if not held:
        return ""
    fixes, them = ("fix", "it") if held == 1 else ("fixes", "them")
    return f" ({held} unsafe {fixes} held back: --unsafe-fixes applies {them})"


def sort_key(diagnostic: Diagnostic) -> tuple[str, int, int, int, str]:
    span = diagnostic.span
    return (span.path, span.line or 0, span.column or 0, span.address or 0, diagnostic.code)


def binary_place(span: Span) -> str:
    """`lib.so:function+0xOFF` style place of a binary finding (the symbol may already carry its offset)."""
    if span.symbol and span.address is not None and "+" not in span.symbol:
        return f"{span.path}:{span.symbol}@{span.address:#x}"
    if span.symbol:
        return f"{span.path}:{span.symbol}"
    if span.address is not None:
        return f"{span.path}:{span.address:#x}"
    return span.path


def text_place(span: Span) -> str:
    """`path:line:col` (or the binary place) of a span."""
    if span.line is None:
        return binary_place(span)
    return f"{span.path}:{span.line}:{span.column or 1}"


def summary_line(
    diagnostics: Sequence[Diagnostic],
    files_checked: int,
    fixed: int = 0,
    unsafe_fixes: bool = False,
    fix_flag: str | None = None,
) -> str:
    """The one line printed on stderr after a run; with `unsafe_fixes` the unsafe fixes count as fixable, and
    `fix_flag` is what applies them (`--fix` alone when the configuration's `unsafe-fixes` is on)."""
    fixed_note = f" Fixed {fixed} finding{'s' if fixed != 1 else ''}." if fixed else ""
    if not diagnostics:
        return f"All checks passed: {files_checked} file{'s' if files_checked != 1 else ''} checked.{fixed_note}"
    severities = Counter(diagnostic.severity for diagnostic in diagnostics)
    parts = [_plural(severities[severity], severity.value) for severity in Severity if severities[severity]]
    files = len({diagnostic.span.path for diagnostic in diagnostics})
    fixable = sum(
        1 for diagnostic in diagnostics if has_safe_fix(diagnostic) or (unsafe_fixes and has_unsafe_fix(diagnostic))
    )
    flag = fix_flag or ("--fix --unsafe-fixes" if unsafe_fixes else "--fix")
    fixable_note = f" {fixable} fixable with {flag}." if fixable else ""
    count = len(diagnostics)
    return (
        f"Found {count} finding{'s' if count != 1 else ''} ({', '.join(parts)}) in {files} of {files_checked} "
        f"file{'s' if files_checked != 1 else ''}.{fixable_note}{held_back_note(diagnostics, unsafe_fixes)}"
        f"{fixed_note}"
    )


def render_statistics(diagnostics: Sequence[Diagnostic]) -> str:
    """Count per rule, most frequent first (like `ruff --statistics`)."""
    counts = Counter((diagnostic.code, diagnostic.name) for diagnostic in diagnostics)
    fixable = Counter(diagnostic.code for diagnostic in diagnostics if has_safe_fix(diagnostic))
    lines = []
    for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0][0])):
        marker = "[*]" if fixable[code] else "   "
        lines.append(f"{count:>6}  {code}  {marker} {name}")
    return "\n".join(lines) + ("\n" if lines else "")


def render_statistics_json(diagnostics: Sequence[Diagnostic]) -> str:
    """`--statistics --format json`: the same counts as one object, rules in the text's order."""
    from hexlint import __version__

    counts = Counter((diagnostic.code, diagnostic.name) for diagnostic in diagnostics)
    fixable = Counter(diagnostic.code for diagnostic in diagnostics if has_safe_fix(diagnostic))
    rows = [
        {"code": code, "name": name, "count": count, "fixable": bool(fixable[code])}
        for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0][0]))
    ]
    return dump_json({"version": __version__, "total": len(diagnostics), "statistics": rows})
