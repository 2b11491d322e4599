"""GitHub Actions workflow commands: `::error file=F,line=L,col=C,endLine=..,endColumn=..,title=T::message`.

Escaping follows the runner's rules (actions/toolkit command.ts): in the message `%`, `\\r`, `\\n` become `%25`,
`%0D`, `%0A`; in property values `:` and `,` become `%3A` and `%2C` as well. A binary finding is annotated on its
DWARF source line when it has one, else on the library file without a line. `file=` is relative to the source root
(`hexlint.report.source_root`, the git work tree the runner checked out) for a file below it, whatever the working
directory; GitHub places annotations by paths relative to the repository.
"""

from __future__ import annotations

from collections.abc import Sequence

from hexlint.core import Diagnostic, Rule, Severity
from hexlint.report import binary_place, code_point_column, forget_file_lines, root_relative, sort_key, source_root

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _characters(path: str, line: int | None, byte_column: int | None) -> int | None:
    """GitHub places annotations by character; hexlint's columns count bytes."""
    if line is None or byte_column is None:
        return byte_column
    return code_point_column(path, line, byte_column)


def render_one(diagnostic: Diagnostic, root: str | None = None) -> str:
    span = diagnostic.span
    message = diagnostic.message
    if span.line is None and span.symbol is not None:
        message = f"{binary_place(span)}: {message}"
    if span.line is None and diagnostic.source_span is not None and diagnostic.source_span.line is not None:
        span = diagnostic.source_span
    shown = root_relative(span.path, root) if root is not None else None
    properties = [("file", shown.replace("\\", "/") if shown is not None else span.path)]
    for key, value in (
        ("line", span.line),
        ("col", _characters(span.path, span.line, span.column)),
        ("endLine", span.end_line),
        ("endColumn", _characters(span.path, span.end_line, span.end_column)),
    ):
        if value is not None:
            properties.append((key, str(value)))
    properties.append(("title", f"{diagnostic.code} {diagnostic.name}"))
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{_COMMAND[diagnostic.severity]} {rendered}::{escape_data(message)}"


def render(diagnostics: Sequence[Diagnostic], rules: Sequence[Rule] = ()) -> str:
    forget_file_lines()
    root = source_root()
    lines = [render_one(diagnostic, root) for diagnostic in sorted(diagnostics, key=sort_key)]
    return "\n".join(lines) + ("\n" if lines else "")
