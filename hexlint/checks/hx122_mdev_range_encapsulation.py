"""HX122 mdev-range-encapsulation: multi-device range logic outside its `if (mdev.count > 1)` block, single-device
defaults missing, no early return on an empty range, `mdev` names reaching workers or context structs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import diagnostic_at_place
from hexlint.core import Diagnostic

CODE = "HX122"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    for partition in model.mdev_partitions(options):
        if partition.hand_written:
            continue  # HX121's: a split by hand has no helper range to encapsulate
        if not partition.guarded:
            yield diagnostic_at_place(
                CODE,
                partition.place,
                "the multi-device partition runs outside `if (octx->ctx->mdev.count > 1)`: keep the single-device "
                "path untouched and put all multi-device logic in that block.",
            )
            continue
        start, count = partition.start, partition.count
        if start is not None and start.declared_at is not None and start.declaration != "0":
            yield diagnostic_at_place(
                CODE,
                start.declared_at,
                f"`{start.name}` does not start at its single-device default: declare `{start.name} = 0` and let "
                "only the multi-device block change it.",
            )
        if (
            count is not None
            and count.declared_at is not None
            and count.declaration
            not in (
                partition.total,
                partition.total_resolved,
            )
        ):
            yield diagnostic_at_place(
                CODE,
                count.declared_at,
                f"`{count.name}` does not start at its single-device default: declare `{count.name} = "
                f"{partition.total}` (every unit) and let only the multi-device block change it.",
            )
        if count is not None and not partition.early_return:
            yield diagnostic_at_place(
                CODE,
                partition.place,
                f"no early return when this device's range is empty: add `if ({count.name} == 0) return "
                "HTP_STATUS_OK;` after the multi-device block (device-0 fallback gives the others nothing).",
            )
    for name in model.mdev_names(options):
        if name.where == "worker":
            message = (
                f"worker `{name.owner}` reads multi-device state `{name.name}`: workers are device-agnostic; hand "
                "them `row_start` / `nrows` in their context instead."
            )
        else:
            message = (
                f"context struct `{name.owner}` carries the multi-device field `{name.name}`: workers see only "
                "standard ranges; name it `row_start` / `nrows` (or keep it in the op function)."
            )
        yield diagnostic_at_place(CODE, name.place, message)
