"""HX106 trace-missing: a kernel entry point or one of its worker functions emits no compute trace event."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.backend.names import matches_any
from hexlint.backend.trace import settings_from
from hexlint.c.index import UnitIndex
from hexlint.c.node import Node
from hexlint.core import Diagnostic, Related
from hexlint.registry import diagnostic

CODE = "HX106"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = settings_from(options)
    text = model.kernel_text()
    start = settings.start_functions[0] if settings.start_functions else "htp_trace_event_start"
    stop = settings.stop_functions[0] if settings.stop_functions else "htp_trace_event_stop"
    exempt = tuple(str(pattern) for pattern in options.get("exempt_functions", ()))
    reported: set[str] = {name for name in text.functions if matches_any(name, exempt)}
    for entry in model.entry_points(settings):
        if not entry.workers:
            if entry.name not in reported and not model.traced(entry.name, settings):
                reported.add(entry.name)
                message = (
                    f"Kernel entry point `{entry.name}` emits no compute trace event; wrap its compute in "
                    f"`{start}(tr, HTP_TRACE_EVT_HVX_COMP, info)` / `{stop}(...)`."
                )
                yield _diagnostic(entry.unit, entry.node, message, ())
            continue
        for worker in entry.workers:
            if worker in reported or model.traced(worker, settings):
                continue
            reported.add(worker)
            unit, node = text.functions[worker]
            message = (
                f"Worker `{worker}` (run by `{entry.name}`) emits no compute trace event; wrap the compute of each "
                f"chunk in `{start}(tr, HTP_TRACE_EVT_HVX_COMP, chunk)` / `{stop}(...)`."
            )
            related = (Related(entry.node.span(), f"`{entry.name}` hands `{worker}` to the worker pool"),)
            yield _diagnostic(unit, node, message, related)


def _diagnostic(unit: UnitIndex, node: Node, message: str, related: tuple[Related, ...]) -> Diagnostic:
    fingerprint_text = unit.source_line(node.path, node.line).strip() or os.path.basename(node.path)
    return diagnostic(CODE, message, node.span(), related=related, fingerprint_text=fingerprint_text)
