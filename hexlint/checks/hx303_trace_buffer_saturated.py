"""HX303 trace-buffer-saturated: a thread recorded more trace events in a batch than its buffer printed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.checks._runtime_helpers import finding_at
from hexlint.core import Diagnostic
from hexlint.runtime.trace import RuntimeTrace

CODE = "HX303"


def check(trace: RuntimeTrace, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    least = int(options.get("min_lost", 1))
    for batch in trace.batches:
        for thread, (recorded, printed) in sorted(batch.saturated_threads().items()):
            if recorded - printed < least:
                continue
            message = (
                f"Thread {thread} recorded {recorded} trace events in this batch but its buffer kept {printed}; "
                "raise GGML_HEXAGON_OPTRACE (events per thread) or trace fewer ops per batch"
            )
            record = batch.record
            yield finding_at(CODE, record.path, record.line, message, f"batch {record.n_ops} thread {thread}")
