"""Text format: `path:line:col: HX104 [defensive-null-check] message`, one line per finding.

Binary findings read `lib.so:function@0xADDR: HX201 [vector-spill-in-loop] message (file.c:12)`.
With `verbose`, related locations follow as indented `note:` lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from hexlint.core import Diagnostic, Rule
from hexlint.report import sort_key, text_place


def render_one(diagnostic: Diagnostic, verbose: bool = False) -> str:
    line = f"{text_place(diagnostic.span)}: {diagnostic.code} [{diagnostic.name}] {diagnostic.message}"
    if diagnostic.source_span is not None and diagnostic.source_span.line is not None:
        line += f" ({diagnostic.source_span.path}:{diagnostic.source_span.line})"
    if verbose:
        for related in diagnostic.related:
            line += f"\n    note: {text_place(related.span)}: {related.message}"
    return line


def render(diagnostics: Sequence[Diagnostic], rules: Sequence[Rule] = (), verbose: bool = False) -> str:
    lines = [render_one(diagnostic, verbose) for diagnostic in sorted(diagnostics, key=sort_key)]
    return "\n".join(lines) + ("\n" if lines else "")
