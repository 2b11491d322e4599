"""HX302 trace-event-unbalanced: inside an op, a thread started an event it never stopped, or stopped one it never
started (the runtime side of HX107). Threads whose trace buffer dropped events are left to HX303."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.checks._runtime_helpers import finding_at, op_label, op_related
from hexlint.core import Diagnostic
from hexlint.runtime.trace import RuntimeTrace, imbalances

CODE = "HX302"


def check(trace: RuntimeTrace, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    exempt = frozenset(str(event) for event in options.get("exempt_events", ()))
    for batch in trace.batches:
        saturated = batch.saturated_threads()
        for op in batch.ops:
            for imbalance in imbalances(op):
                if imbalance.thread in saturated or imbalance.event in exempt:
                    continue
                if imbalance.kind == "open":
                    message = (
                        f"Thread {imbalance.thread} starts {imbalance.event} in {op_label(op)} and never stops it "
                        "before the op ends; stop the event on every path out of the traced region"
                    )
                else:
                    message = (
                        f"Thread {imbalance.thread} stops {imbalance.event} in {op_label(op)} without a start; "
                        "start the event before the region it closes"
                    )
                yield finding_at(
                    CODE,
                    imbalance.at.path,
                    imbalance.at.line,
                    message,
                    f"{op.name} {op.tensor} {imbalance.thread} {imbalance.event} {imbalance.kind}",
                    related=op_related(op),
                )
