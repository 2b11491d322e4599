"""HX205 hvx-in-dma-worker: a DMA worker function (name matches dma_pattern) executes HVX instructions."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hexlint.binary.audit import LibraryAudit
from hexlint.binary.findings import make_diagnostic, option_int, plural
from hexlint.core import Diagnostic

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CODE = "HX205"


def check(audit: LibraryAudit, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    threshold = option_int(options, "max_dma_vec_ops", 0)
    if threshold < 0:
        return  # -1 turns the rule off
    # The audit decided which functions are DMA workers from the same dma_pattern option (empty: none).
    for function in audit.functions:
        if not function.is_dma_worker or function.hvx_instructions <= threshold:
            continue
        message = (
            f"DMA worker `{function.name}` executes {plural(function.hvx_instructions, 'HVX instruction')} "
            f"(allowed {threshold}); move the vector work to the compute threads and keep DMA workers to "
            "dma_queue_push/pop so they never contend for HVX contexts"
        )
        address = function.first_hvx_address if function.first_hvx_address is not None else function.address
        yield make_diagnostic(CODE, audit, function, address, message, "hvx-in-dma-worker")
