"""HX123 mdev-coordinates-stateful: outer coordinates starting at 0 in a worker whose range starts at row_start."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import diagnostic_at_place
from hexlint.core import Diagnostic, Related, Span

CODE = "HX123"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    for coordinate in model.mdev_coordinates(options):
        step = coordinate.step
        related = [Related(Span(step.path, step.line, step.column, step.end_line, step.end_column), "stepped here")]
        yield diagnostic_at_place(
            CODE,
            coordinate.place,
            f"coordinate `{coordinate.name}` starts at 0 and is stepped across rows, but this range starts at "
            f"`{coordinate.range_start}`: on a device or thread whose range does not start at row 0 it points at the "
            f"wrong slice; compute it from the start row with fastdiv (or step base pointers instead).",
            related,
        )
