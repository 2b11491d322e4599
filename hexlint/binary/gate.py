"""Build-to-build regression gate: which functions gained in-loop spills, promotions, divisions or DMA-worker HVX.

Functions are matched by name with the local-duplicate suffix removed (`hvx_exp_f32.124` and `hvx_exp_f32.98` are the
same function in two builds); duplicates are summed. A function new in the NEW build is compared with zero, so a PR
that adds a spilling kernel fails, while the backlog already in OLD does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.binary.audit import FunctionAudit, LibraryAudit
from hexlint.binary.findings import make_diagnostic, option_int, stable_function_name
from hexlint.core import Diagnostic


@dataclass(frozen=True)
class Metric:
    key: str
    code: str
    label: str
    family: str  # "spills" | "promotions" | "division" | "dma": the CLI flag that selects it


METRICS = (
    Metric("inloop_vector_spills", "HX201", "in-loop vector spills", "spills"),
    Metric("inloop_scalar_spills", "HX202", "in-loop scalar spills", "spills"),
    Metric("promotions", "HX203", "float->double promotions", "promotions"),
    Metric("inloop_divisions", "HX204", "in-loop division calls", "division"),
    Metric("dma_hvx", "HX205", "HVX instructions in a DMA worker", "dma"),
)


# Each gated rule's threshold option: -1 turns the rule off, in the gate as everywhere.
THRESHOLD_OPTION = {
    "HX201": "max_inloop_vector_spills",
    "HX202": "max_inloop_scalar_spills",
    "HX203": "max_promotions",
    "HX204": "max_inloop_divisions",
    "HX205": "max_dma_vec_ops",
}


@dataclass(frozen=True)
class Regression:
    function: str  # name in the NEW build
    metric: Metric
    old: int
    new: int


def metric_value(function: FunctionAudit, key: str, options: Mapping[str, Mapping[str, Any]] | None = None) -> int:
    """The count a metric gates; in-loop scalar spills in the loops HX202 counts (its `scope`: innermost by default)."""
    if key == "dma_hvx":
        return function.hvx_instructions if function.is_dma_worker else 0
    if key == "inloop_scalar_spills":
        from hexlint.checks.hx202_scalar_spill_in_loop import counted_spills

        scope = str(((options or {}).get("HX202") or {}).get("scope", "innermost"))
        return len(counted_spills(function, scope))
    return int(getattr(function, key))


def _totals(audit: LibraryAudit, key: str, options: Mapping[str, Mapping[str, Any]] | None) -> dict[str, int]:
    totals: dict[str, int] = {}
    for function in audit.functions:
        name = stable_function_name(function.name)
        totals[name] = totals.get(name, 0) + metric_value(function, key, options)
    return totals


def compare(
    old: LibraryAudit,
    new: LibraryAudit,
    families: Iterable[str],
    skip_codes: Iterable[str] = (),
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Regression]:
    """Every (function, metric) whose count grew from OLD to NEW, past what the rule allows, for the selected metric
    families; `options`: the rules' options (thresholds, HX202's scope)."""
    wanted = set(families)
    skipped = set(skip_codes)
    regressions = []
    for metric in METRICS:
        if metric.family not in wanted or metric.code in skipped:
            continue
        before, after = _totals(old, metric.key, options), _totals(new, metric.key, options)
        # What the rule allows is no regression either: the gate reports the rule's findings that grew.
        allowed = max(0, option_int((options or {}).get(metric.code, {}), THRESHOLD_OPTION[metric.code], 0))
        for function in new.functions:
            name = stable_function_name(function.name)
            grew = after.get(name, 0) > max(before.get(name, 0), allowed)
            if grew and metric_value(function, metric.key, options) > 0:
                regressions.append(Regression(function.name, metric, before.get(name, 0), after[name]))
                after[name] = -1  # report a duplicated name once
    return regressions


def regression_diagnostics(old: LibraryAudit, new: LibraryAudit, regressions: list[Regression]) -> list[Diagnostic]:
    diagnostics = []
    for regression in regressions:
        function = new.function(regression.function)
        if function is None:
            continue
        message = (
            f"`{function.name}`: {regression.metric.label} grew from {regression.old} to {regression.new} since "
            f"{old.path}; fix what this change added before merging"
        )
        diagnostics.append(
            make_diagnostic(
                regression.metric.code, new, function, function.address, message, f"{regression.metric.key}-grew"
            )
        )
    return diagnostics


def render_regressions(old: LibraryAudit, new: LibraryAudit, regressions: list[Regression]) -> str:
    if not regressions:
        return f"{new.path}: no function grew since {old.path}\n"
    lines = [f"{new.path}: {len(regressions)} regression(s) since {old.path}"]
    width = max(len(regression.function) for regression in regressions)
    for regression in regressions:
        lines.append(
            f"  {regression.function:<{width}}  {regression.metric.code} {regression.metric.label}: "
            f"{regression.old} -> {regression.new}"
        )
    return "\n".join(lines) + "\n"
