"""HX121 mdev-partition-line-unsafe: an HVX writer's multi-device chunks not sized on 128-byte cache lines."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.mdev import Partition, settings_from
from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import diagnostic_at_place
from hexlint.core import Diagnostic

CODE = "HX121"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = settings_from(options)
    line_names = re.compile(r"\b(?:{})\b".format("|".join(map(re.escape, settings.line_size_names))))
    rows_helper = settings.rows_per_chunk_functions[0] if settings.rows_per_chunk_functions else "the rows helper"
    for partition in model.mdev_partitions(options):
        if model.mdev_dma_only_writer(options, partition.place.function):
            continue  # DMA writes to DDR own no cache line: small non-overlapping ranges are fine
        message = _problem(partition, settings.line_size, line_names, rows_helper)
        if message:
            yield diagnostic_at_place(CODE, partition.place, message)


def _problem(partition: Partition, line_size: int, line_names: re.Pattern[str], rows_helper: str) -> str | None:
    if partition.checks_row_partition:
        # `can_split ? 1 : 0`, or a split of whole heads under `if (can_split)`: every row of the destination starts
        # on its own line, so no split on whole rows shares one, and the failing check is the device-0 fallback.
        return None
    if partition.hand_written:
        return (
            "a multi-device split computed by hand in an op that writes DDR through HVX: two devices can share a "
            f"128-byte line at the boundary; size the chunks with `{rows_helper}()` and split with the partition "
            "helper (0 units per chunk falls back to device 0)."
        )
    leaves = [leaf for leaf in partition.units_leaves if leaf != "0"]
    line_derived = [leaf for leaf in leaves if _line_count(leaf, line_size, line_names)]
    other = [leaf for leaf in leaves if leaf not in line_derived]
    if partition.checks_line_grid and not partition.hand_written:
        return None  # the helper's checks written out: strides tested against the line size in the function
    # Rows per chunk computed from the row size and the line, the guide's `128 / gcd(row_size, 128)` (with 1 for a
    # zero row size): whole lines per chunk only where rows are evenly spaced from an aligned base. The helper checks
    # that (outer strides on the line grid, aligned data); the formula written out needs the same checks beside it:
    # contiguity (checks_line_grid already returned) and alignment.
    rows_by_formula = [leaf for leaf in line_derived if "gcd" in leaf]
    line_derived = [leaf for leaf in line_derived if leaf not in rows_by_formula]
    if rows_by_formula:
        other = [leaf for leaf in other if leaf != "1"]
        missing = _missing_checks(partition)
        if missing and not other:
            return (
                f"rows per chunk by `128 / gcd(row_size, 128)` without the {' and '.join(missing)} check of the "
                f"destination: on a strided view (outer strides off the line grid) a chunk of whole rows still ends "
                f"mid-line; take `{rows_helper}()`, which checks the strides, or test contiguity and alignment and "
                "pass 0 (device 0) when they fail."
            )
    if other:
        return (
            f"units per chunk `{other[0]}` is neither `{rows_helper}()`'s result nor a count of 128-byte lines: "
            "devices writing DDR through HVX may share a cache line at the boundary; take the helper's rows per "
            "chunk, or elements per line under the contiguity and alignment checks (0 when they fail)."
        )
    if line_derived:
        missing = _missing_checks(partition)
        if missing:
            return (
                f"an element partition by 128-byte lines without the {' and '.join(missing)} check of the "
                "destination: a strided or unaligned tensor tears lines between devices; pass the elements per "
                "line only when the tensor is contiguous and its data 128-byte aligned, 0 (device 0) otherwise."
            )
        if "0" not in partition.units_leaves:
            return (
                "an element partition by 128-byte lines with no device-0 fallback: pass 0 units per chunk when the "
                "destination is not contiguous or not aligned."
            )
    return None


def _missing_checks(partition: Partition) -> list[str]:
    """The destination checks a line-sized split needs that its function does not make."""
    checks = (("contiguity", partition.checks_contiguity), ("alignment", partition.checks_alignment))
    return [name for name, present in checks if not present]


def _line_count(leaf: str, line_size: int, line_names: re.Pattern[str]) -> bool:
    """Elements (or bytes) of one 128-byte line: the line-size name in it, or 32 / 64 / 128 written out."""
    if line_names.search(leaf) or re.search(rf"\b{line_size}\b", leaf):
        return True
    return leaf.isdigit() and int(leaf) in {line_size // size for size in (1, 2, 4)}
