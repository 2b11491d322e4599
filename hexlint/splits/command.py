"""`hexlint splits LOG...`: argument parsing and output; the work is in schedlog, analysis and report."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from hexlint.runtime.logfile import LogError, read_all, write_report
from hexlint.splits.analysis import DEFAULT_NPU_PATTERN, analyse
from hexlint.splits.schedlog import read_log

# typing.TYPE_CHECKING without importing typing at start-up.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO


class NothingToAnalyse(LogError):
    """No log holds a scheduler dump (exit 2)."""


def build_parser(parser_class: type[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = parser_class(
        prog="hexlint splits",
        description="Graph splits of the Hexagon backend from llama.cpp's scheduler dumps (GGML_SCHED_DEBUG=2, -v) "
        "and GGML_HEXAGON_VERBOSE=1 supports-op lines: NPU segments, and each boundary classed hard (no HTP "
        "kernel), movable (a supports_op predicate rejected the node) or free.",
    )
    parser.add_argument("logs", nargs="*", metavar="LOG", help="llama.cpp logs holding scheduler dumps")
    parser.add_argument("--tree", metavar="PATH", help="the backend tree (ggml-hexagon): the static op table")
    parser.add_argument(
        "--format", choices=("text", "json", "svg"), default="text", help="report format (default: text)"
    )
    parser.add_argument("--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument(
        "--npu",
        metavar="REGEX",
        default=DEFAULT_NPU_PATTERN,
        help=f"backend names that are the NPU (default: {DEFAULT_NPU_PATTERN})",
    )
    parser.add_argument(
        "--op-table", action="store_true", help="with --tree: print the static op table (no log needed)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="every rejection that holds, supports-op lines")
    return parser


def run(arguments: Sequence[str], parser_class: type[argparse.ArgumentParser], stdout: TextIO) -> int:
    from hexlint.splits.report import render_json, render_text
    from hexlint.splits.svg import render_svg

    options = build_parser(parser_class).parse_args(arguments)
    try:
        re.compile(options.npu)
    except re.error as error:
        raise LogError(f"--npu: {options.npu}: not a regular expression ({error})") from None
    if options.op_table:
        if not options.tree:
            raise LogError("--op-table: needs --tree PATH (the backend tree whose op table to print)")
        from hexlint.splits.report import render_op_table
        from hexlint.splits.tree import load_model

        text = render_op_table(load_model(options.tree).op_table(), options.format == "json")
        write_report(text, options.output, stdout)
        return 0
    if not options.logs:
        raise LogError("splits: give the logs to read (LOG...), or --tree PATH --op-table")
    logs = read_all(options.logs, read_log)
    if not any(log.graphs for log in logs):
        raise NothingToAnalyse(
            f"{', '.join(options.logs)}: no scheduler dump (`## SPLIT #` / `node #` lines): run llama.cpp with "
            "GGML_SCHED_DEBUG=2 and -v"
        )
    table = None
    if options.tree:
        from hexlint.splits.tree import load_model

        table = load_model(options.tree).op_table()
    report = analyse(logs, table, options.npu, options.tree)
    if options.format == "json":
        text = render_json(report)
    elif options.format == "svg":
        text = render_svg(report)
    else:
        text = render_text(report, options.verbose)
    write_report(text, options.output, stdout)
    return 0
