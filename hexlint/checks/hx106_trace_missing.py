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
    if not any(model.mentions(name) for name in settings.start_functions):
        # A tree from before the trace API (or that names it otherwise): asking every kernel for it says nothing.
        if model.entry_points(settings):
            model.note(
                f"trace-missing ({CODE}) found no `{start}` in the kernel code and reports nothing; if the tree's "
                f"trace API has another name, set it in start_functions."
            )
        return
    exempt = tuple(str(pattern) for pattern in options.get("exempt_functions", ()))
    reported: set[str] = {name for name in text.functions if matches_any(name, exempt)}
    for entry in model.entry_points(settings):
        if not entry.workers and entry.name not in reported and not model.traced(entry.name, settings):
            reported.add(entry.name)
            message = (
                f"Kernel entry point `{entry.name}` emits no compute trace event; wrap its compute in "
                f"`{start}(tr, HTP_TRACE_EVT_HVX_COMP, info)` / `{stop}(...)`."
            )
            yield _diagnostic(entry.unit, entry.node, message, ())
    for worker, entries in model.workers(settings).items():
        if worker in reported or model.traced(worker, settings):
            continue
        reported.add(worker)
        unit, node = text.functions[worker]
        # Every entry that runs the worker is named, so a fix made for one of them does not hide the others.
        runners = ", ".join(f"`{entry.name}`" for entry in entries)
        message = (
            f"Worker `{worker}` (run by {runners}) emits no compute trace event; wrap the compute of each "
            f"chunk in `{start}(tr, HTP_TRACE_EVT_HVX_COMP, chunk)` / `{stop}(...)`."
        )
        related = tuple(
            Related(entry.node.span(), f"`{entry.name}` hands `{worker}` to the worker pool") for entry in entries
        )
        yield _diagnostic(unit, node, message, related)


def _diagnostic(unit: UnitIndex, node: Node, message: str, related: tuple[Related, ...]) -> Diagnostic:
    fingerprint_text = unit.source_line(node.path, node.line).strip() or os.path.basename(node.path)
    return diagnostic(CODE, message, node.span(), related=related, fingerprint_text=fingerprint_text)
