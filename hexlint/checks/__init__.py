"""The explicit, sorted list of check functions, keyed by rule code.

Signatures by rule kind (the kind is declared in the rule's document in rules/):
- text:   check(source: hexlint.core.Source, options: Mapping[str, Any]) -> Iterator[Diagnostic]
- source: check(model: hexlint.backend.model.BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]
- binary: check(audit: hexlint.binary.audit.LibraryAudit, options: Mapping[str, Any]) -> Iterator[Diagnostic]
- runtime: check(trace: hexlint.runtime.trace.RuntimeTrace, options: Mapping[str, Any]) -> Iterator[Diagnostic]
  (`hexlint trace LOG...`)
- tool:   no check function; the engine itself emits these (HX001 unused suppression, HX002 parse error, ...).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from hexlint.core import CheckFunction

# Rule code -> module in this package. Modules are imported on first use, so a run of text rules alone never loads
# libclang and an audit of binaries never loads the C front end.
CHECK_MODULES: dict[str, str] = {
    "HX101": "hx101_kernel_params_unread",
    "HX102": "hx102_kernel_params_unwritten",
    "HX103": "hx103_kernel_params_recomputed",
    "HX104": "hx104_defensive_null_check",
    "HX105": "hx105_supports_op_runtime_state",
    "HX106": "hx106_trace_missing",
    "HX107": "hx107_trace_unbalanced",
    "HX108": "hx108_division_in_loop",
    "HX109": "hx109_dma_pop_missing",
    "HX110": "hx110_macro_backslash_misaligned",
    "HX111": "hx111_macro_backslash_whitespace",
    "HX112": "hx112_dma_flush_unneeded",
    "HX113": "hx113_vtcm_scalar_access",
    "HX114": "hx114_fastdiv_single_use",
    "HX115": "hx115_worker_shared_write",
    "HX116": "hx116_unroll_excessive",
    "HX117": "hx117_trace_dma_wait_event",
    "HX118": "hx118_trace_info_constant",
    "HX120": "hx120_mdev_partition_unflattened",
    "HX121": "hx121_mdev_partition_line_unsafe",
    "HX122": "hx122_mdev_range_encapsulation",
    "HX123": "hx123_mdev_coordinates_stateful",
    "HX124": "hx124_mdev_completion_unflushed",
    "HX125": "hx125_mdev_fence_seq_unsigned",
    "HX201": "hx201_vector_spill_in_loop",
    "HX202": "hx202_scalar_spill_in_loop",
    "HX203": "hx203_float_promotion",
    "HX204": "hx204_division_in_loop",
    "HX205": "hx205_hvx_in_dma_worker",
    "HX301": "hx301_trace_op_without_events",
    "HX302": "hx302_trace_event_unbalanced",
    "HX303": "hx303_trace_buffer_saturated",
    "HX304": "hx304_trace_info_unvaried",
    "HX305": "hx305_hvx_idle_budget",
    "HX306": "hx306_dma_wait_budget",
}


class _LazyChecks(dict):
    """Rule code -> check function; a value still naming its module is imported when first looked up."""

    def __getitem__(self, code: str) -> CheckFunction:
        value = dict.__getitem__(self, code)
        if isinstance(value, str):
            value = importlib.import_module(f"{__name__}.{value}").check
            dict.__setitem__(self, code, value)
        return value

    def get(self, code: str, default: CheckFunction | None = None) -> CheckFunction | None:
        return self[code] if code in self else default  # noqa: SIM401 (dict.get would skip the import)

    def values(self):  # type: ignore[override]
        return [self[code] for code in self]

    def items(self):  # type: ignore[override]
        return [(code, self[code]) for code in self]


CHECKS: dict[str, CheckFunction] = _LazyChecks(CHECK_MODULES)


def unit_preparer(code: str) -> Callable[..., None] | None:
    """A source rule's `prepare_unit(unit, options)`, if its module has one: what its check will ask of each kernel
    unit, computed as the unit is indexed, while the threads parse the next files (the main thread would wait)."""
    module = CHECK_MODULES.get(code)
    if module is None:
        return None
    return getattr(importlib.import_module(f"{__name__}.{module}"), "prepare_unit", None)
