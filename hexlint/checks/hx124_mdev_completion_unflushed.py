"""HX124 mdev-completion-unflushed: a barrier, fence write or response before the op's outputs are flushed or its
DMA transfers drained."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.mdev import settings_from
from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import diagnostic_at_place
from hexlint.core import Diagnostic

CODE = "HX124"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    helpers = settings_from(options).flush_functions
    # The tree's own flush helper, the first configured one it names (trees name theirs differently).
    flush = next((name for name in helpers if model.mentions(name)), helpers[0] if helpers else "the flush helper")
    for completion in model.mdev_completions(options):
        if completion.missing == "flush":
            message = (
                f"`{completion.signal}()` signals completion after `{completion.cause}()` ran the op with no cache "
                f"flush in between: peers and the host may read stale DDR; call `{flush}()` first."
            )
        else:
            message = (
                f"`{completion.signal}()` signals completion while the transfer pushed by `{completion.cause}()` "
                "may still be in flight: pop it (or `dma_queue_flush()`) first."
            )
        yield diagnostic_at_place(CODE, completion.place, message)
