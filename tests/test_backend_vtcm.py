"""Focused tests of the VTCM pointer provenance facts behind HX113: holders, chains, accesses, options."""

from __future__ import annotations

from pathlib import Path

from c_projects import project_of

from hexlint.backend import vtcm
from hexlint.registry import find_rule

HEADER = """
#include <stddef.h>
#include <stdint.h>
typedef long HVX_Vector __attribute__((__vector_size__(128)));
struct htp_context { uint8_t *vtcm_base; uint32_t vtcm_size; float *ddr; };
struct htp_spad { uint8_t *data; uint32_t size; };
struct htp_ops_context { struct htp_context *ctx; struct htp_spad src0_spad; };
"""


def default_names(**changes: object) -> vtcm.VtcmNames:
    options = dict(find_rule("HX113").options)
    options.update(changes)
    return vtcm.VtcmNames.from_options(options)


def holders_by_name(provenance: vtcm.VtcmProvenance) -> dict[str, vtcm.HolderProvenance]:
    return {found.holder.name: found for found in provenance.holders.values()}


SOURCE = """
#include "x.h"
static float helper(const float *p, uint32_t i) { return p[i]; }
void layout(struct htp_ops_context *octx) { octx->src0_spad.data = octx->ctx->vtcm_base + 128; }
float work(struct htp_ops_context *octx, uint32_t n) {
    float *rows = (float *) octx->src0_spad.data;
    float *ddr = octx->ctx->ddr;
    HVX_Vector *vectors = (HVX_Vector *) rows;
    size_t used = (uint8_t *) rows - octx->ctx->vtcm_base;
    vectors[0] = vectors[1];
    return helper(rows, n) + helper(ddr, n) + ddr[0] + (float) used;
}
"""


def test_holders_and_the_chain_back_to_the_origin(tmp_path: Path) -> None:
    project = project_of(tmp_path, {"htp/x.h": HEADER, "htp/k.c": SOURCE})
    provenance = vtcm.vtcm_provenance(project, default_names())
    holders = holders_by_name(provenance)
    assert {"htp_spad.data", "rows", "vectors", "p"} <= set(holders)
    assert "ddr" not in holders and "used" not in holders  # DDR, and a pointer difference is a byte count
    assert holders["p"].holder.kind == vtcm.PARAMETER and holders["p"].holder.function == "helper"
    chain = provenance.chain(holders["p"].holder)
    assert [step.holder.name for step in chain[:-1]] == ["p", "rows", "htp_spad.data"]
    assert isinstance(chain[-1], vtcm.Origin) and chain[-1].text == "octx->ctx->vtcm_base"
    assert vtcm.vtcm_provenance(project, default_names()) is provenance  # memoized per project


def test_only_scalar_accesses_through_vtcm_are_listed(tmp_path: Path) -> None:
    project = project_of(tmp_path, {"htp/x.h": HEADER, "htp/k.c": SOURCE})
    accesses = vtcm.scalar_accesses(project, default_names())
    assert [(access.text, access.kind, access.function) for access in accesses] == [("p[i]", vtcm.LOAD, "helper")]


def test_every_call_site_mode_needs_all_callers(tmp_path: Path) -> None:
    project = project_of(tmp_path, {"htp/x.h": HEADER, "htp/k.c": SOURCE})
    holders = holders_by_name(vtcm.vtcm_provenance(project, default_names(parameter_call_sites="every")))
    assert "rows" in holders and "p" not in holders  # one call passes DDR
    assert vtcm.scalar_accesses(project, default_names(parameter_call_sites="every")) == []


def test_splat_loads_are_marked_broadcast(tmp_path: Path) -> None:
    source = """
    #include "x.h"
    HVX_Vector hvx_vec_splat_f32(float x);
    HVX_Vector scale(struct htp_context *ctx, uint32_t k) {
        const float *scales = (const float *) ctx->vtcm_base;
        float s = scales[k];
        float t = scales[k + 1];
        return hvx_vec_splat_f32(s) + hvx_vec_splat_f32(scales[0]) + hvx_vec_splat_f32(t * t) + t;
    }
    """
    project = project_of(tmp_path, {"htp/x.h": HEADER, "htp/k.c": source})
    found = {access.text: access.broadcast for access in vtcm.scalar_accesses(project, default_names())}
    assert found == {"scales[k]": True, "scales[0]": True, "scales[k + 1]": False}
    unmarked = vtcm.scalar_accesses(project, default_names(splat_functions=[]))
    assert not any(access.broadcast for access in unmarked)
