"""`hexlint trace LOG...`: the runtime trace rules (HX3xx) on GGML_HEXAGON_PROFILE=3 logs, in the usual formats.

With `--tree PATH`, each runtime finding names the static finding of the op's kernel that explains it: HX301 (no
events) by HX106 trace-missing, HX302 (unbalanced) by HX107 trace-unbalanced, HX304 (one info value) by HX118
trace-info-constant. An op's kernel functions come from the backend model: the op's HTP ops (the host's op
mapping), the kernel entry points whose dispatch case handles them, and every function those reach.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from hexlint import registry
from hexlint.core import Diagnostic, Related, Rule
from hexlint.runtime.logfile import LogError, read_all, write_report
from hexlint.runtime.trace import RuntimeTrace, read_trace

# typing.TYPE_CHECKING without importing typing at start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    from hexlint.backend.model import BackendModel

# runtime rule -> the static rule whose finding explains it
STATIC_COUNTERPART = {"HX301": "HX106", "HX302": "HX107", "HX304": "HX118"}
BUDGET_FLAGS = (("max_hvx_idle", "HX305", "max_idle_percent"), ("max_dma_wait", "HX306", "max_dma_wait_percent"))


def build_parser(parser_class: type[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = parser_class(
        prog="hexlint trace",
        description="Check runtime op traces of the Hexagon backend (GGML_HEXAGON_PROFILE=3 logs: profile-op and "
        "trace-evt lines) with the HX3xx rules.",
    )
    parser.add_argument("logs", nargs="+", metavar="LOG", help="logs holding profile-op / trace-evt lines")
    parser.add_argument("--tree", metavar="PATH", help="the backend tree: name the static finding behind each one")
    parser.add_argument("--select", action="append", metavar="RULES", help="HX3xx codes, names or prefixes")
    parser.add_argument("--ignore", action="append", metavar="RULES", help="runtime rules to turn off")
    parser.add_argument(
        "--format", choices=("text", "json", "sarif", "github"), default="text", help="report format (default: text)"
    )
    parser.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--config", metavar="FILE", help="pyproject.toml or hexlint.toml with rule options")
    parser.add_argument(
        "--max-hvx-idle", type=float, metavar="PERCENT", help="HX305's budget: idle share of an op per HVX thread"
    )
    parser.add_argument(
        "--max-dma-wait", type=float, metavar="PERCENT", help="HX306's budget: DMA-wait share of an op per thread"
    )
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line")
    parser.add_argument("-v", "--verbose", action="store_true", help="related locations")
    return parser


def _selectors(values: Sequence[str] | None) -> tuple[str, ...]:
    return tuple(item.strip() for value in values or () for item in value.split(",") if item.strip())


def runtime_rules(select: Sequence[str], ignore: Sequence[str]) -> list[Rule]:
    from hexlint.engine import is_enabled

    rules = [rule for rule in registry.all_rules() if rule.kind == "runtime"]
    return [rule for rule in rules if is_enabled(rule, select or ("ALL",), ignore)]


def check_traces(
    traces: Sequence[RuntimeTrace], rules: Sequence[Rule], options: Mapping[str, Mapping[str, Any]]
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for trace in traces:
        for rule in rules:
            assert rule.check is not None
            found.extend(rule.check(trace, options[rule.code]))
    return found


def run(arguments: Sequence[str], parser_class: type[argparse.ArgumentParser], stdout: TextIO, stderr: TextIO) -> int:
    from hexlint.config import load_config
    from hexlint.engine import OptionsByCode, unknown_selectors
    from hexlint.report import summary_line

    options_given = build_parser(parser_class).parse_args(arguments)
    select, ignore = _selectors(options_given.select), _selectors(options_given.ignore)
    for option, selectors in (("--select", select), ("--ignore", ignore)):
        unknown = unknown_selectors(selectors)
        if unknown:
            raise LogError(f"{option}: unknown rule `{unknown[0]}` (see hexlint --list-rules)")
    rules = runtime_rules(select, ignore)
    traces = read_all(options_given.logs, read_trace)
    if not any(trace.profile_ops for trace in traces):
        raise LogError(
            f"{', '.join(options_given.logs)}: no profile-op lines: run llama.cpp with GGML_HEXAGON_PROFILE=3 "
            "(op traces) or 1 (op profiles)"
        )
    config = load_config(options_given.config, options_given.logs[0])
    by_code = OptionsByCode(config)
    options: dict[str, Mapping[str, Any]] = {rule.code: by_code[rule.code] for rule in rules}
    for flag, code, name in BUDGET_FLAGS:
        value = getattr(options_given, flag)
        if value is not None and code in options:
            options[code] = MappingProxyType({**options[code], name: value})
    diagnostics = check_traces(traces, rules, options)
    if options_given.tree and diagnostics:
        from hexlint.splits.tree import load_model

        diagnostics = explain(diagnostics, traces, load_model(options_given.tree))
    text = _render(diagnostics, rules, options_given)
    write_report(text, options_given.output, stdout)
    if not options_given.quiet:
        stderr.write(summary_line(diagnostics, len(traces)) + "\n")
    return 1 if diagnostics and not options_given.exit_zero else 0


def _render(diagnostics: Sequence[Diagnostic], rules: Sequence[Rule], options: argparse.Namespace) -> str:
    if options.format == "json":
        from hexlint.report import json as json_report

        return json_report.render(diagnostics, rules)
    if options.format == "sarif":
        from hexlint.report import sarif

        return sarif.render(diagnostics, rules)
    if options.format == "github":
        from hexlint.report import github

        return github.render(diagnostics, rules)
    from hexlint.report import text

    return text.render(diagnostics, rules, verbose=options.verbose)


# ------------------------------------------------------------------ static explanations


def explain(diagnostics: list[Diagnostic], traces: Sequence[RuntimeTrace], model: BackendModel) -> list[Diagnostic]:
    """Each runtime finding with the static findings (HX106, HX107, HX118) in its op's kernel functions."""
    static = _static_findings(model, sorted(set(STATIC_COUNTERPART.values())))
    ops_at = {
        (op.record.path, op.record.line): op.name for trace in traces for batch in trace.batches for op in batch.ops
    }
    explained = []
    for diagnostic in diagnostics:
        counterpart = STATIC_COUNTERPART.get(diagnostic.code)
        op = _op_of(diagnostic, ops_at)
        reasons = [finding for finding in static.get(counterpart or "", ()) if op and _serves(model, finding, op)]
        if not reasons:
            explained.append(diagnostic)
            continue
        first = reasons[0]
        where = f"{first.span.path}:{first.span.line}"
        message = f"{diagnostic.message} (explained statically: {first.code} {first.name} at {where})"
        related = tuple(Related(reason.span, f"{reason.code} {reason.name}: {reason.message}") for reason in reasons)
        explained.append(replace(diagnostic, message=message, related=(*diagnostic.related, *related)))
    return explained


def _op_of(diagnostic: Diagnostic, ops_at: Mapping[tuple[str, int], str]) -> str | None:
    at = ops_at.get((diagnostic.span.path, diagnostic.span.line or 0))
    if at is not None:
        return at
    for related in diagnostic.related:
        at = ops_at.get((related.span.path, related.span.line or 0))
        if at is not None:
            return at
    return None


def _static_findings(model: BackendModel, codes: Sequence[str]) -> dict[str, list[Diagnostic]]:
    found: dict[str, list[Diagnostic]] = {}
    for code in codes:
        rule = registry.find_rule(code)
        if rule is None or rule.check is None:
            continue
        found[code] = list(rule.check(model, rule.options))
    return found


def _serves(model: BackendModel, finding: Diagnostic, op: str) -> bool:
    """Whether the static finding lies in a kernel function that runs for `op` (a fused op: for one of its parts)."""
    functions = _kernel_functions(model, op)
    text = model.kernel_text()
    for name in functions:
        entry = text.functions.get(name)
        if entry is None:
            continue
        _, node = entry
        same_file = os.path.realpath(node.path) == os.path.realpath(finding.span.path)
        if same_file and node.line <= (finding.span.line or 0) <= node.end_line:
            return True
    return False


def _kernel_functions(model: BackendModel, op: str) -> set[str]:
    def compute() -> set[str]:
        table = model.op_table()
        htp_ops = {
            htp for part in op.split("+") for htp in (table.support(part).htp_ops if table.support(part) else ())
        }
        functions: set[str] = set()
        for entry, ops in model.dispatch().items():
            if ops & htp_ops:
                functions |= model.reachable(entry)
        return functions

    from hexlint.c.index import memoized

    return memoized(model.project.memo, ("runtime.kernel_functions", op), compute)
