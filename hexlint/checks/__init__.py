"""The explicit, sorted list of check functions, keyed by rule code.

Signatures by rule kind (the kind is declared in the rule's document in rules/):
- text:   check(source: hexlint.core.Source, options: Mapping[str, Any]) -> Iterator[Diagnostic]
- source: check(project: hexlint.c.index.Project, options: Mapping[str, Any]) -> Iterator[Diagnostic]
- binary: check(audit: hexlint.binary.audit.LibraryAudit, options: Mapping[str, Any]) -> Iterator[Diagnostic]
- tool:   no check function; the engine itself emits these (HX001 unused suppression, HX002 parse error, ...).
"""

from __future__ import annotations

from hexlint.checks import (
    hx101_kernel_params_unread,
    hx102_kernel_params_unwritten,
    hx103_kernel_params_recomputed,
    hx104_defensive_null_check,
    hx105_supports_op_runtime_state,
    hx106_trace_missing,
    hx107_trace_unbalanced,
    hx108_division_in_loop,
    hx110_macro_backslash_misaligned,
    hx111_macro_backslash_whitespace,
    hx201_vector_spill_in_loop,
    hx202_scalar_spill_in_loop,
    hx203_float_promotion,
    hx204_division_in_loop,
    hx205_hvx_in_dma_worker,
)
from hexlint.core import CheckFunction

CHECKS: dict[str, CheckFunction] = {
    "HX101": hx101_kernel_params_unread.check,
    "HX102": hx102_kernel_params_unwritten.check,
    "HX103": hx103_kernel_params_recomputed.check,
    "HX104": hx104_defensive_null_check.check,
    "HX105": hx105_supports_op_runtime_state.check,
    "HX106": hx106_trace_missing.check,
    "HX107": hx107_trace_unbalanced.check,
    "HX108": hx108_division_in_loop.check,
    "HX110": hx110_macro_backslash_misaligned.check,
    "HX111": hx111_macro_backslash_whitespace.check,
    "HX201": hx201_vector_spill_in_loop.check,
    "HX202": hx202_scalar_spill_in_loop.check,
    "HX203": hx203_float_promotion.check,
    "HX204": hx204_division_in_loop.check,
    "HX205": hx205_hvx_in_dma_worker.check,
}
