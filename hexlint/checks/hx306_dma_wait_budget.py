"""HX306 dma-wait-budget: a thread spends more of an op's cycles inside DMA events (waiting for transfers) than the
budget allows."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.checks._runtime_helpers import finding_at, op_label, percent_option
from hexlint.core import Diagnostic
from hexlint.runtime.trace import RuntimeTrace, busy_shares

CODE = "HX306"


def check(trace: RuntimeTrace, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    budget = percent_option(options, "max_dma_wait_percent")
    if budget < 0:
        return
    for batch in trace.batches:
        for op in batch.ops:
            for thread, share in busy_shares(op, dma=True):
                if share <= budget:
                    continue
                message = (
                    f"Thread {thread} waits on DMA for {share:.1f}% of {op_label(op)} (budget {budget:g}%); "
                    "prefetch the next block while computing the current one (double buffering)"
                )
                yield finding_at(CODE, op.record.path, op.record.line, message, f"{op.name} {op.tensor} {thread} dma")
