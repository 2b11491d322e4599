"""HX116 unroll-excessive: an unroll pragma without a count, or with one above the limit, on a loop doing HVX work."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.backend.names import string_list
from hexlint.backend.pragmas import (
    GovernedLoop,
    HvxMarkers,
    hvx_operation,
)
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

CODE = "HX116"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    limit = int(options.get("max_unroll_count", 4))
    markers = HvxMarkers(string_list(options, "hvx_types"), string_list(options, "hvx_calls"))
    reported: set[tuple[str, int]] = set()
    for governed in model.unroll_pragmas():
        request = governed.request
        key = (request.path, request.offset)
        if key in reported or not _excessive(governed, limit):
            continue
        operation = hvx_operation(governed, markers)
        if operation is None:
            continue  # a scalar loop: unrolling it costs no vector registers
        reported.add(key)  # a pragma in a macro body is one finding however often the macro is expanded
        yield _finding(model, governed, operation, limit)


def _excessive(governed: GovernedLoop, limit: int) -> bool:
    request = governed.request
    if request.disables:
        return False
    if request.full:
        return governed.trip_count is None or governed.trip_count > limit
    return governed.count is not None and governed.count > limit  # an unresolved name says nothing


def _finding(model: BackendModel, governed: GovernedLoop, hvx: str, limit: int) -> Diagnostic:
    request = governed.request
    pragma = f"`#pragma {request.text}`"
    operation = f"`{hvx}`"
    if not request.full:
        what = f"{pragma} unrolls this HVX loop ({operation}) {governed.count} times, more than {limit}"
    elif governed.trip_count is not None:
        copies = governed.trip_count
        what = f"{pragma} fully unrolls this HVX loop ({operation}) into {copies} copies, more than {limit}"
    else:
        what = f"{pragma} without a count lets the compiler unroll this HVX loop ({operation}) as far as it likes"
    spills = ""
    if governed.function is not None:
        libraries = model.libraries_spilling_in_loops(governed.function)
        if libraries:
            spills = f", and `{governed.function}` spills HVX registers in a loop of {', '.join(libraries)}"
    message = (
        f"{what}, which raises register pressure and makes vector spills likely{spills}; "
        f"give an explicit count of at most {limit} (`#pragma unroll({limit})`)."
    )
    loop = governed.loop
    related: tuple[Related, ...] = ()
    if loop.is_macro_expansion:
        related = (Related(Span(loop.path, loop.line, loop.column), "the loop is expanded from this macro use"),)
    line_text = governed.unit.source_line(request.path, request.line).strip().rstrip("\\").strip()
    return diagnostic(
        CODE,
        message,
        Span(request.path, request.line, request.column),
        related=related,
        fingerprint_text=line_text or request.text,
    )
