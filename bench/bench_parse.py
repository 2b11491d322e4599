#!/usr/bin/env python3
"""Side by side, in one run: hexlint's whole source pipeline vs libclang's bare parse of the same TUs.

    PYTHONPATH=. python bench/bench_parse.py [TREE ...] [--rounds N] [--arch v73] [--per-rule]

The pipeline is `hexlint.engine.lint` with every source rule (and HX002) selected and one parse thread (--jobs 1):
discovery, parsing, the one index walk per TU, all source rules, suppressions; the main thread walks each unit and
runs the rules while the parse thread parses the next files. The bare parse is `clang.cindex` parsing
the same files (the TUs and the headers no TU includes, as the engine does) with the same arguments and options,
and nothing else. Rounds alternate between the two so machine noise hits both; the best round of each counts.
The house aim is a ratio within 1.5x (issue 4 requires under 2x).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clang.cindex as cindex

from hexlint import registry
from hexlint.backend.model import model_of
from hexlint.c import index, parse
from hexlint.config import Config
from hexlint.engine import (
    RunSettings,
    _parse_settings,
    collect_files,
    is_translation_unit,
    lint,
    path_key,
    role_for,
    tree_builds,
    unit_parse_settings,
)


def source_rule_codes() -> tuple[str, ...]:
    return ("HX002", *(rule.code for rule in registry.all_rules() if rule.kind == "source" and rule.check))


def files_the_engine_parses(
    trees: Sequence[str], config: Config, settings: RunSettings
) -> list[tuple[str, str, parse.ParseSettings]]:
    """(path, role, parse settings) of every TU, then of every header that no TU includes: what run_source_rules
    parses, each with the build defines the engine gives it."""
    sources, _ = collect_files(list(trees), config)
    parse_settings = _parse_settings(config, settings)
    builds = tree_builds(config, settings)
    units = [path for path in sources if is_translation_unit(Path(path))]
    parsed = [
        parse.parse_unit(path, role_for(path, config, settings), unit_parse_settings(path, parse_settings, builds))
        for path in units
    ]
    included = {header for unit in parsed for header in index.project_headers_included(unit, sources)}
    lone = [path for path in sources if not is_translation_unit(Path(path)) and path_key(path) not in included]
    return [
        (path, role_for(path, config, settings), unit_parse_settings(path, parse_settings, builds))
        for path in [*units, *lone]
    ]


def bare_parse(files: Sequence[tuple[str, str, parse.ParseSettings]]) -> int:
    """Parse each file with exactly hexlint's arguments and options; return the number of TUs parsed."""
    clang_index = cindex.Index.create()
    for path, role, parse_settings in files:
        arguments = parse.arguments_for(path, role, parse_settings)
        clang_index.parse(path, args=arguments, options=parse._KEEP_GOING)
    return len(files)


def best_of(rounds: int, *jobs: Callable[[], object]) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of each job's best round by wall time; CPU counts every thread of this process."""
    best = [(float("inf"), float("inf"))] * len(jobs)
    for _ in range(rounds):
        for position, job in enumerate(jobs):
            start, start_cpu = time.perf_counter(), time.process_time()
            job()
            best[position] = min(best[position], (time.perf_counter() - start, time.process_time() - start_cpu))
    return best


def per_rule_seconds(files: Sequence[tuple[str, str, parse.ParseSettings]], sources: Sequence[str]) -> dict[str, float]:
    """Time of the index walk and of each source rule's check on one prebuilt project (parse excluded); the project
    indexes every source file of the trees, as a lint run does (headers in the first unit that includes them)."""
    units = [parse.parse_unit(path, role, parse_settings) for path, role, parse_settings in files]
    start = time.perf_counter()
    project = index.build_project(units, sources)
    timings = {"index walk": time.perf_counter() - start}
    for rule in registry.all_rules():
        if rule.kind == "source" and rule.check is not None:
            # Each rule alone: the facts it shares with others are its own cost here (a lint run pays them once).
            project.memo.clear()
            for unit in project.units:
                unit.memo.clear()
            start = time.perf_counter()
            list(rule.check(model_of(project), rule.options))
            timings[rule.code] = time.perf_counter() - start
    return timings


def line_count(files: Sequence[tuple[str, str, parse.ParseSettings]]) -> int:
    return sum(Path(path).read_bytes().count(b"\n") for path, _, _ in files)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_tree = str(Path(__file__).resolve().parent.parent / "fixtures" / "htp-core")
    parser.add_argument("trees", nargs="*", default=[default_tree])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--arch", default="v73")
    parser.add_argument("--per-rule", action="store_true", help="also time the index walk and each rule alone")
    arguments = parser.parse_args(argv)
    missing = [tree for tree in arguments.trees if not os.path.exists(tree)]
    if missing:
        print(f"bench_parse: {missing[0]}: no such file or directory", file=sys.stderr)
        return 2
    config = Config()
    settings = RunSettings(select=source_rule_codes(), arch=arguments.arch, jobs=1)
    files = files_the_engine_parses(arguments.trees, config, settings)
    findings: list[int] = []

    def pipeline() -> None:
        findings.append(len(lint(list(arguments.trees), config, settings).diagnostics))

    (bare_seconds, bare_cpu), (pipeline_seconds, pipeline_cpu) = best_of(
        arguments.rounds, lambda: bare_parse(files), pipeline
    )
    kernels = sum(role == parse.KERNEL for _, role, _ in files)
    print(f"trees:          {', '.join(arguments.trees)}")
    print(f"parsed files:   {len(files)} ({kernels} kernel, {len(files) - kernels} host), {line_count(files)} lines")
    print(f"rules:          {', '.join(settings.select)} ({findings[-1]} findings)")
    print(f"bare parse:     {bare_seconds:.3f} s, {bare_cpu:.3f} s CPU (best of {arguments.rounds})")
    print(f"hexlint:        {pipeline_seconds:.3f} s, {pipeline_cpu:.3f} s CPU (best of {arguments.rounds})")
    print(f"ratio:          {pipeline_seconds / bare_seconds:.2f}x (house aim <= 1.5x, issue 4: < 2x)")
    # The walk and the rules' per-unit work run on the main thread while the parse thread parses the next file: the
    # wall ratio counts a second core's help, the CPU ratio is the work itself.
    print(f"CPU ratio:      {pipeline_cpu / bare_cpu:.2f}x")
    if arguments.per_rule:
        sources, _ = collect_files(list(arguments.trees), config)
        for name, seconds in per_rule_seconds(files, sources).items():
            print(f"  {name:<12}  {seconds:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
