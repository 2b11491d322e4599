"""HX117 trace-dma-wait-event: a DMA wait inside a compute trace event instead of a DMA event."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.backend.names import string_list
from hexlint.backend.trace import settings_from
from hexlint.backend.trace_regions import calls_in_events
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

CODE = "HX117"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = settings_from(options)
    dma_events = string_list(options, "dma_events") or ("HTP_TRACE_EVT_DMA",)
    wait_functions = string_list(options, "wait_functions")
    waits = model.dma_wait_helpers(settings, wait_functions, dma_events)
    dma_event = dma_events[0]
    reported: set[tuple[str, int, int]] = set()
    traces = model.trace_regions(settings, model.possible_waits(wait_functions))
    for function, trace in sorted(traces.items()):
        for call in trace.calls:
            if call.callee not in waits:
                continue
            events = calls_in_events(call, settings.compute_events)
            if not events:
                continue
            node = call.node
            place = node.spelling_start if node.is_macro_expansion else None
            if place is not None and place.path:
                span = Span(place.path, place.line, place.column)
            else:
                span = Span(node.path, node.line, node.column)
            key = (span.path, span.line or 0, span.column or 0)
            if key in reported:
                continue  # a wait in a macro body is one finding however often the macro is expanded
            reported.add(key)
            event = events[0]
            via = "" if waits[call.callee] == call.callee else f" (it waits in `{waits[call.callee]}`)"
            message = (
                f"`{call.callee}`{via} waits for DMA inside the {event.event} event started at line "
                f"{event.node.line} of `{function}`, so the wait is counted as compute; pop before starting the "
                f"compute event, or bracket the wait in its own {dma_event} event."
            )
            related = [Related(event.node.span(), f"{event.event} is started here")]
            if place is not None and place.path:
                related.append(Related(Span(node.path, node.line, node.column), "expanded from this macro use"))
            line = trace.unit.source_line(span.path, span.line or 0).strip().rstrip("\\").strip()
            yield diagnostic(CODE, message, span, related=tuple(related), fingerprint_text=line or call.callee)
