"""HX118 trace-info-constant: a trace event started in an indexed loop with an info argument the loop never changes."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.backend.names import matches_any, string_list
from hexlint.backend.trace import settings_from
from hexlint.backend.trace_regions import changes_in_loop, induction_variables
from hexlint.checks._c_helpers import quoted_source
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

CODE = "HX118"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = settings_from(options)
    info_argument = int(options.get("info_argument", 2))
    ignored_events = string_list(options, "ignored_events")
    reported: set[tuple[str, int, int]] = set()
    for start in model.trace_starts(settings, info_argument):
        if not start.loops or start.info is None or matches_any(start.event, ignored_events):
            continue
        innermost = start.loops[0]
        indices = induction_variables(start.unit, innermost)
        if not indices:
            continue  # a loop without an index (`while (!done)`) has no progress value to give
        if any(changes_in_loop(start.unit, region, start.info) for region in start.loops):
            continue
        node = start.node
        place = node.spelling_start if node.is_macro_expansion else None
        in_macro = place is not None and bool(place.path)
        span = Span(place.path, place.line, place.column) if in_macro else Span(node.path, node.line, node.column)
        key = (span.path, span.line or 0, span.column or 0)
        if key in reported:
            continue  # an event in a macro body is one finding however often the macro is expanded
        reported.add(key)
        info = quoted_source(start.unit, start.info, _OPERAND, _LONGEST_QUOTED) or "a value"
        index = indices[0]
        message = (
            f"{start.event} is started on every iteration of the loop over `{index}` with info {info}, which "
            f"does not change in the loop, so the events cannot be told apart in the trace; pass the progress "
            f"value instead (`(uint16_t) {index}`, a row, chunk or token index)."
        )
        loop = innermost.loop
        related = [Related(Span(loop.path, loop.line, loop.column), f"the loop over `{index}`")]
        if in_macro:
            related.append(Related(Span(node.path, node.line, node.column), "expanded from this macro use"))
        line = start.unit.source_line(span.path, span.line or 0).strip().rstrip("\\").strip()
        yield diagnostic(CODE, message, span, related=tuple(related), fingerprint_text=line or start.event)


# A cast and an operand: an identifier with member accesses and subscripts, a literal, or one parenthesised group.
_OPERAND = re.compile(
    rb"(?:\(\s*[A-Za-z_]\w*\s*\)\s*)?(?:[A-Za-z_]\w*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*|\s*\[[^\[\]]*\])*|\d\w*|\([^()]*\))"
)
_LONGEST_QUOTED = 60
