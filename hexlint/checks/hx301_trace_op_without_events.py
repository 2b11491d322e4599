"""HX301 trace-op-without-events: an op of a traced batch recorded no trace event (the runtime side of HX106)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.checks._runtime_helpers import finding_at, op_label
from hexlint.core import Diagnostic
from hexlint.runtime.trace import RuntimeTrace

CODE = "HX301"


def check(trace: RuntimeTrace, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    exempt = frozenset(str(op) for op in options.get("exempt_ops", ()))
    for batch in trace.batches:
        if not batch.events:
            continue  # a batch without any event was not traced (GGML_HEXAGON_PROFILE below 3)
        for op in batch.ops:
            if op.events or op.name in exempt:
                continue
            message = (
                f"{op_label(op)} ran for {op.record.cycles} cycles and recorded no trace event; emit "
                "HTP_TRACE_EVT_HVX_COMP start/stop around the compute of its kernel and workers"
            )
            yield finding_at(CODE, op.record.path, op.record.line, message, f"{op.name} {op.tensor} no-events")
