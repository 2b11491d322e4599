"""HX305 hvx-idle-budget: an HVX thread taking part in an op is idle (no compute event open) for more of the op's
cycles than the budget allows."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.checks._runtime_helpers import finding_at, op_label, percent_option
from hexlint.core import Diagnostic
from hexlint.runtime.trace import HMX_THREAD, RuntimeTrace, busy_shares

CODE = "HX305"


def check(trace: RuntimeTrace, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    budget = percent_option(options, "max_idle_percent")
    if budget < 0:
        return
    for batch in trace.batches:
        for op in batch.ops:
            for thread, busy in busy_shares(op, dma=False):
                idle = 100.0 - busy
                if thread == HMX_THREAD or idle <= budget:
                    continue
                message = (
                    f"HVX thread {thread} is idle for {idle:.1f}% of {op_label(op)} (budget {budget:g}%); balance "
                    "the chunks over the threads or overlap the waits with compute"
                )
                fingerprint = f"{op.name} {op.tensor} {thread} idle"
                yield finding_at(CODE, op.record.path, op.record.line, message, fingerprint)
