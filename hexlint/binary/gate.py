"""Build-to-build regression gate: which functions gained in-loop spills, promotions, divisions or DMA-worker HVX.

Functions are matched by name with the local-duplicate suffix removed (`hvx_exp_f32.124` and `hvx_exp_f32.98` are the
same function in two builds); duplicates are summed. A function new in the NEW build is compared with zero, so a PR
that adds a spilling kernel fails, while the backlog already in OLD does not.
"""

from __future__ import annotations

from collections.abc import Iterable

from hexlint.binary.audit import FunctionAudit, LibraryAudit
from hexlint.binary.findings import make_diagnostic, stable_function_name
from hexlint.core import Diagnostic
from hexlint.record import record


@record
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


@record
class Regression:
    function: str  # name in the NEW build
    metric: Metric
    old: int
    new: int


def metric_value(function: FunctionAudit, key: str) -> int:
    if key == "dma_hvx":
        return function.hvx_instructions if function.is_dma_worker else 0
    return int(getattr(function, key))


def _totals(audit: LibraryAudit, key: str) -> dict[str, int]:
    totals: dict[str, int] = {}
    for function in audit.functions:
        name = stable_function_name(function.name)
        totals[name] = totals.get(name, 0) + metric_value(function, key)
    return totals


def compare(
    old: LibraryAudit, new: LibraryAudit, families: Iterable[str], skip_codes: Iterable[str] = ()
) -> list[Regression]:
    """Every (function, metric) whose count grew from OLD to NEW, for the selected metric families."""
    wanted = set(families)
    skipped = set(skip_codes)
    regressions = []
    for metric in METRICS:
        if metric.family not in wanted or metric.code in skipped:
            continue
        before, after = _totals(old, metric.key), _totals(new, metric.key)
        for function in new.functions:
            name = stable_function_name(function.name)
            if after.get(name, 0) > before.get(name, 0) and metric_value(function, metric.key) > 0:
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
