"""HX107 trace-unbalanced: a trace event started and not stopped on some path, stopped unstarted, or mismatched."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.backend.trace import Imbalance, settings_from, split_exempt
from hexlint.core import Diagnostic, Related
from hexlint.registry import diagnostic

CODE = "HX107"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = settings_from(options)
    text = model.kernel_text()
    for function in model.trace_functions(settings):
        unit, _node = text.functions[function]
        for imbalance in model.trace_imbalances(function, settings):
            if split_exempt(function, imbalance.event.event, imbalance.kind, settings):
                continue
            yield _diagnostic(
                function, imbalance, unit.source_line(imbalance.event.node.path, imbalance.event.node.line)
            )


def _message(function: str, imbalance: Imbalance) -> str:
    event = imbalance.event.event
    if imbalance.kind == "unclosed":
        exit_node = imbalance.exit_node
        where = f"the return at line {exit_node.line}" if exit_node is not None else "the end of the function"
        return (
            f"Trace event {event} started here is still open at {where} in `{function}`; stop it on every path "
            f"out of the function (early returns included)."
        )
    if imbalance.kind == "mismatched" and imbalance.other is not None:
        return (
            f"This stops {event} while {imbalance.other.event} (started at line {imbalance.other.node.line}) is the "
            f"open event; stop the event type that was started."
        )
    return (
        f"Trace event {event} is stopped here without a matching start in `{function}`; add the start, or configure "
        f"the push/pop helper pair in split_pairs."
    )


def _diagnostic(function: str, imbalance: Imbalance, line_text: str) -> Diagnostic:
    related: list[Related] = []
    if imbalance.exit_node is not None:
        related.append(Related(imbalance.exit_node.span(), "the function returns here with the event open"))
    if imbalance.other is not None:
        related.append(Related(imbalance.other.node.span(), f"{imbalance.other.event} is started here"))
    node = imbalance.event.node
    fingerprint_text = line_text.strip() or os.path.basename(node.path)
    message = _message(function, imbalance)
    return diagnostic(CODE, message, node.span(), related=tuple(related), fingerprint_text=fingerprint_text)
