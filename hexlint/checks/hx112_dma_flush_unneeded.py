"""HX112 dma-flush-unneeded: a `dma_queue_flush` where every transfer pushed before it is already popped."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.dma import dma_functions, settings_from
from hexlint.c.index import Project
from hexlint.checks._c_helpers import diagnostic_at
from hexlint.core import Diagnostic

CODE = "HX112"


def check(project: Project, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = settings_from(options)
    reported: set[tuple[str, int, int]] = set()
    for function in dma_functions(project, settings):
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
