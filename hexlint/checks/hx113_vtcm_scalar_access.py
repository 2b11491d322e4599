"""HX113 vtcm-scalar-access: scalar loads and stores through a pointer derived from VTCM."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.vtcm import (
    LOAD,
    STORE,
    Holder,
    HolderProvenance,
    Origin,
    ScalarAccess,
    VtcmNames,
    scalar_accesses,
    vtcm_provenance,
)
from hexlint.c.index import Project
from hexlint.checks._c_helpers import matches_any, string_list
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

CODE = "HX113"
_MOST_RELATED = 6


def check(project: Project, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    names = VtcmNames.from_options(options)
    exempt_functions = string_list(options, "exempt_functions")
    report_splat_loads = bool(options.get("report_splat_loads", False))
    dma_files = string_list(options, "dma_implementation_files")
    provenance = vtcm_provenance(project, names)
    reported: set[tuple[str, int, int]] = set()
    for access in scalar_accesses(project, names):
        if matches_any(access.function, exempt_functions):
            continue
        if access.broadcast and not report_splat_loads:
            continue
        if matches_any(os.path.basename(access.node.path), dma_files):
            continue  # the DMA layer itself (a software stand-in copies what the engine would)
        span = _place(access)
        key = (span.path, span.line or 0, span.column or 0)
        if key in reported:
            continue  # an access in a macro body: one finding at its #define line
        reported.add(key)
        related = [_related(step) for step in provenance.chain(access.source)][:_MOST_RELATED]
        if access.node.is_macro_expansion:
            related.append(Related(Span(access.node.path, access.node.line, access.node.column), "expanded here"))
        yield diagnostic(
            CODE,
            _message(access),
            span,
            related=tuple(related),
            fingerprint_text=access.unit.source_line(span.path, span.line or 0).strip().rstrip("\\").strip(),
        )


def _place(access: ScalarAccess) -> Span:
    node = access.node
    if node.is_macro_expansion:
        place = node.spelling_start
        if place.path:
            return Span(place.path, place.line, place.column)
    return Span(node.path, node.line, node.column, node.end_line, node.end_column)


def _message(access: ScalarAccess) -> str:
    origin = _describe(access.source)
    if access.copy_from is not None:
        return (
            f"Element-by-element copy through `{access.text}` between VTCM buffers ({origin}); move the data with a "
            "DMA transfer (`dma_queue_push`) or HVX vector loads and stores."
        )
    if access.kind == STORE:
        what = "Scalar store"
    elif access.kind == LOAD:
        what = "Scalar load"
    else:
        what = "Scalar read-modify-write"
    return (
        f"{what} `{access.text}` through `{access.pointer}`, a VTCM pointer ({origin}); access VTCM with HVX vector "
        "loads and stores (`HVX_Vector *`, `hvx_vec_store_*`) or move the data by DMA."
    )


def _describe(source: Holder | Origin) -> str:
    if isinstance(source, Origin):
        return f"`{source.text}`"
    if source.kind == "field":
        return f"field `{source.name}` holds VTCM"
    if source.kind == "parameter":
        return f"parameter `{source.name}` of `{source.function}` receives VTCM"
    if source.kind == "return":
        return f"`{source.name}` returns VTCM"
    return f"`{source.name}` holds VTCM"


def _related(step: HolderProvenance | Origin) -> Related:
    if isinstance(step, Origin):
        return Related(step.span, f"`{step.text}` is VTCM")
    return Related(step.flow.span, f"`{step.holder.name}` gets a VTCM pointer here: `{step.flow.text}`")
