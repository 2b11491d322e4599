"""JSON format: one object, every key present, absent values as null.

    {"version": "0.1.0",
     "diagnostics": [{"code": "HX104", "name": "defensive-null-check", "severity": "error", "message": "...",
                      "path": "htp/add-ops.c", "line": 12, "column": 9, "end_line": 12, "end_column": 14,
                      "symbol": null, "address": null,
                      "source": null,
                      "related": [{"message": "...", "path": ..., "line": ..., ...}],
                      "fix": {"title": "...", "safe": true,
                              "edits": [{"path": ..., "start": 10, "end": 12, "replacement": "  "}]} | null}]}

`source` is the DWARF source location of a binary finding (same keys as a location), else null.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hexlint import __version__
from hexlint.core import Diagnostic, Fix, Rule, Span
from hexlint.report import dump_json, sort_key

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a JSON report need not import typing at start-up
    from typing import Any


def span_fields(span: Span) -> dict[str, Any]:
    return {
        "path": span.path,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
        "symbol": span.symbol,
        "address": span.address,
    }


def fix_fields(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "title": fix.title,
        "safe": fix.safe,
        "edits": [
            {
                "path": edit.path,
                "start": edit.start,
                "end": edit.end,
                "replacement": edit.replacement.decode("utf-8", "backslashreplace"),
            }
            for edit in fix.edits
        ],
    }


def diagnostic_fields(diagnostic: Diagnostic) -> dict[str, Any]:
    return {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        **span_fields(diagnostic.span),
        "source": span_fields(diagnostic.source_span) if diagnostic.source_span is not None else None,
        "related": [{"message": related.message, **span_fields(related.span)} for related in diagnostic.related],
        "fix": fix_fields(diagnostic.fix),
    }


def render(
    diagnostics: Sequence[Diagnostic], rules: Sequence[Rule] = (), libraries: Sequence[Mapping[str, object]] = ()
) -> str:
    document: dict[str, object] = {
        "version": __version__,
        "diagnostics": [diagnostic_fields(diagnostic) for diagnostic in sorted(diagnostics, key=sort_key)],
    }
    if libraries:
        # The binary audit's per-function table (--spills/--promotions/--division), one entry per library.
        document["libraries"] = list(libraries)
    return dump_json(document)
