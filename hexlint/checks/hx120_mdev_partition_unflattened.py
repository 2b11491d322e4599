"""HX120 mdev-partition-unflattened: a multi-device partition whose unit count is dimension 1 (`ne01`) alone."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import diagnostic_at_place
from hexlint.core import Diagnostic

CODE = "HX120"

# `ne01`, `ne1`, `ne11`, `src0->ne[1]`, `octx->src[0]->ne[1]`: the row count of one 2D slice
_DIMENSION_ONE = re.compile(r"ne[0-3]?1|(?:[A-Za-z_]\w*(?:\s*\[\s*\w+\s*\])?\s*(?:->|\.)\s*)+ne\s*\[\s*1\s*\]")


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    for partition in model.mdev_partitions(options):
        if not _DIMENSION_ONE.fullmatch(partition.total_resolved):
            continue
        if partition.checks_row_partition:
            # htp_tensor_can_row_partition(): every row of every slice starts on its own line, so the boundary
            # repeated in each slice never shares one (matmul splitting its weight rows under that check).
            continue
        shown = f"`{partition.total}`"
        if partition.total != partition.total_resolved:
            shown += f" (`{partition.total_resolved}`)"
        kind = "split written by hand" if partition.hand_written else "partition"
        yield diagnostic_at_place(
            CODE,
            partition.place,
            f"this multi-device {kind} divides {shown} rows, dimension 1 alone: every ne02/ne03 slice repeats the "
            "device boundary (false sharing in each slice); partition the flattened rows `ne01 * ne02 * ne03`.",
        )
