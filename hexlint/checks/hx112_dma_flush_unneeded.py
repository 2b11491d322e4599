"""HX112 dma-flush-unneeded: a `dma_queue_flush` where every transfer pushed before it is already popped."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.dma import settings_from
from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import diagnostic_at
from hexlint.core import Diagnostic

CODE = "HX112"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = settings_from(options)
    reported: set[tuple[str, int, int]] = set()
    for function in model.dma_functions(settings):
        for flush in function.flushes:
            if flush.hi != 0 or not flush.pushed_before:
                continue
            key = (flush.node.path, flush.node.line, flush.node.column)
            if key in reported:
                continue
            reported.add(key)
            message = (
                f"Nothing can be in flight on `{flush.queue.name}` at this flush in `{function.name}`: every push "
                f"before it is already popped; drop the flush (it is for batches pushed without individual pops)."
            )
            yield diagnostic_at(CODE, function.unit, flush.node, message)
