"""HX109 dma-pop-missing: a kernel function can return with DMA transfers it pushed still in flight."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.dma import FunctionDma, InFlight, settings_from
from hexlint.backend.model import BackendModel
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

CODE = "HX109"
_MAX_RELATED_PUSHES = 6


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = settings_from(options)
    reported: set[tuple[str, int, int, str]] = set()
    for function in model.dma_functions(settings):
        for in_flight in function.in_flight:
            span = _exit_span(function, in_flight)
            # A function stamped out by a macro several times is one finding at the macro's use.
            key = (span.path, span.line or 0, span.column or 0, in_flight.queue.key)
            if key in reported:
                continue
            reported.add(key)
            yield _diagnostic(function, in_flight, span)


def _exit_span(function: FunctionDma, in_flight: InFlight) -> Span:
    if in_flight.exit_node is not None:
        return in_flight.exit_node.span()
    body = next((child for child in function.node.children() if child.kind == "COMPOUND_STMT"), function.node)
    return Span(body.path, body.end_line, max(body.end_column - 1, 1), body.end_line, body.end_column)


def _diagnostic(function: FunctionDma, in_flight: InFlight, span: Span) -> Diagnostic:
    queue = in_flight.queue.name
    count = f"{in_flight.lo}" if in_flight.lo == in_flight.hi else f"at least {in_flight.lo}"
    where = "returns here" if in_flight.exit_node is not None else "ends here"
    others = sorted({name for key, name in function.queue_names().items() if key in function.popped_queues()} - {queue})
    popped_elsewhere = (
        f" (its pops take from `{'`, `'.join(others)}`, not `{queue}`)"
        if others and in_flight.queue.key not in function.popped_queues()
        else ""
    )
    fix = (
        "pop every transfer on the way out (a drain loop of `dma_queue_pop`, or `dma_queue_flush` for writebacks "
        "pushed without pops)"
        if in_flight.exit_node is None
        else "pop or flush what is in flight before this return, or return before the first push"
    )
    message = (
        f"`{function.name}` {where} with {count} DMA transfer(s) still in flight on `{queue}`{popped_elsewhere}; {fix}."
    )
    related = [
        Related(push.span(), f"pushed onto `{queue}` here, possibly still in flight")
        for push in in_flight.pushes[:_MAX_RELATED_PUSHES]
    ]
    line_text = function.unit.source_line(span.path, span.line or 1).strip()
    return diagnostic(
        CODE, message, span, related=tuple(related), fingerprint_text=line_text or os.path.basename(span.path)
    )
