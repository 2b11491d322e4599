"""HX113 vtcm-scalar-access: scalar loads and stores through a pointer derived from VTCM."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.backend.names import matches_any, string_list
from hexlint.backend.vtcm import (
    LOAD,
    STORE,
    HolderProvenance,
    Origin,
    ScalarAccess,
    VtcmNames,
)
from hexlint.c.index import UnitIndex
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

CODE = "HX113"
_MOST_RELATED = 6


def prepare_unit(unit: UnitIndex, options: Mapping[str, Any]) -> None:
    BackendModel.prepare_vtcm_flows(unit, VtcmNames.from_options(options))


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    names = VtcmNames.from_options(options)
    exempt_functions = string_list(options, "exempt_functions")
    report_splat_loads = bool(options.get("report_splat_loads", False))
    dma_files = string_list(options, "dma_implementation_files")
    provenance = model.vtcm_provenance(names)
    reported: set[tuple[str, int, int]] = set()
    for access in model.vtcm_scalar_accesses(names):
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
        chain = provenance.chain(access.source)
        related = [_related(step) for step in chain][:_MOST_RELATED]
        if access.node.is_macro_expansion:
            related.append(Related(Span(access.node.path, access.node.line, access.node.column), "expanded here"))
        yield diagnostic(
            CODE,
            _message(access, chain),
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


def _message(access: ScalarAccess, chain: list[HolderProvenance | Origin]) -> str:
    where = _derivation(access, chain)
    if access.copy_from is not None:
        return (
            f"Scalar copy through `{access.text}` from VTCM to VTCM ({where}); move the data with a DMA transfer "
            "(`dma_queue_push`) or HVX vector loads and stores."
        )
    what = {LOAD: "Scalar load", STORE: "Scalar store"}.get(access.kind, "Scalar read-modify-write")
    return (
        f"{what} `{access.text}` of VTCM ({where}); use HVX vector loads and stores (`HVX_Vector *`, "
        "`hvx_vec_store_*`) or a DMA transfer."
    )


def _derivation(access: ScalarAccess, chain: list[HolderProvenance | Origin]) -> str:
    """`dst` derives from field `htp_spad.data` (...), passed in as parameter `dst` of `scale_row`."""
    steps = [step for step in chain if isinstance(step, HolderProvenance)]
    origin = chain[-1] if chain and isinstance(chain[-1], Origin) else None
    # A field holds VTCM wherever it is read, so the field is the origin worth naming: what stored VTCM in it may be
    # another op's code (the related locations show it).
    field = next((step.holder for step in steps if step.holder.kind == "field"), None)
    if field is not None:
        text = f"`{access.pointer}` derives from field `{field.name}`, which holds VTCM pointers"
    elif origin is not None and origin.text != access.pointer:
        text = f"`{access.pointer}` derives from `{origin.text}`"
    else:
        text = f"`{access.pointer}` points into VTCM"
    # The parameter worth naming is the one the access's own function receives, not one further up the chain.
    nearest = steps[: next((index for index, step in enumerate(steps) if step.holder.kind == "field"), len(steps))]
    parameter = next((step.holder for step in nearest if step.holder.kind == "parameter"), None)
    if parameter is not None:
        text += f"; it is passed in as parameter `{parameter.name}` of `{parameter.function}`"
    return text


def _related(step: HolderProvenance | Origin) -> Related:
    if isinstance(step, Origin):
        return Related(step.span, f"`{step.text}` points into VTCM")
    holder = step.holder
    if holder.kind == "parameter":
        return Related(step.flow.span, f"this call passes `{step.flow.text}` as parameter `{holder.name}`")
    if holder.kind == "return":
        return Related(step.flow.span, f"`{holder.name}` returns a VTCM pointer here")
    what = f"field `{holder.name}`" if holder.kind == "field" else f"`{holder.name}`"
    return Related(step.flow.span, f"{what} gets a VTCM pointer here: `{step.flow.text}`")
