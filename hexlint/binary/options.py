"""Command-line options of the binary audit; hexlint.cli calls `add_binary_arguments(parser)`.

Namespace attributes (all present after parsing, None/False when not given):
- spills, promotions, division (bool): which audits run (their rules, plus HX205) and whose table is shown; none of
  them given = every binary rule, no table. The findings are the same whichever table is shown (docs/usage.md,
  "Binary audit").
- strict (bool): accepted for older command lines; findings fail the run in every mode, so it changes nothing.
- func (str regex, re.search on function names), max_inloop_vspills, max_inloop_sspills, max_promotions,
  max_inloop_divisions, max_dma_vec_ops (int thresholds overriding the rules' options in every mode), dma_pattern.
- top (int, rows of the table, worst first), all_rows (bool, --all: every row).
- debug_file (list of paths: -g builds whose DWARF serves the stripped libraries with the same code).
- source_prefix_map (list of (OLD, NEW) pairs: DWARF source paths starting with OLD start with NEW instead).
- baseline_lib (path): the regression gate, OLD library to compare every given library with.
- disasm (FUNC_OR_REGEX), objdump (path to an LLVM objdump, or "none" for hexlint's own rendering).
- addr2line (list of addresses, "-" for stdin, library paths may be mixed in).
"""

from __future__ import annotations

import argparse


def add_binary_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("binary audit (built .so/.o)")
    group.add_argument("--spills", action="store_true", help="audit register spills (HX201, HX202) and show the table")
    group.add_argument("--promotions", action="store_true", help="audit float->double promotions (HX203), with table")
    group.add_argument("--division", action="store_true", help="audit software division calls (HX204), with table")
    group.add_argument(
        "--strict", action="store_true", help="no effect: findings fail the run in every mode (kept for old scripts)"
    )
    group.add_argument(
        "--top", type=_count, default=DEFAULT_TOP, metavar="N", help=f"table rows shown, worst first ({DEFAULT_TOP})"
    )
    group.add_argument("--all", dest="all_rows", action="store_true", help="show every row of the table")
    group.add_argument(
        "--debug-file",
        action="append",
        default=[],
        metavar="LIB-g.so",
        help="a -g build of a library given stripped: its DWARF lines (repeatable, matched by code)",
    )
    group.add_argument(
        "--source-prefix-map",
        action="append",
        default=[],
        type=_prefix_map,
        metavar="OLD=NEW",
        help="DWARF source paths starting with OLD start with NEW (repeatable; the last match wins)",
    )
    group.add_argument("--func", metavar="REGEX", help="audit only functions whose name matches REGEX (re.search)")
    group.add_argument("--max-inloop-vspills", type=_count, metavar="N", help="in-loop vector spills allowed (0)")
    group.add_argument(
        "--max-inloop-sspills",
        type=_count,
        metavar="N",
        help="scalar spills allowed in innermost loops (0)",
    )
    group.add_argument("--max-promotions", type=_count, metavar="N", help="promotions allowed per function (0)")
    group.add_argument("--max-inloop-divisions", type=_count, metavar="N", help="in-loop division calls allowed (0)")
    group.add_argument("--dma-pattern", metavar="REGEX", help="names of DMA worker functions (HX205)")
    group.add_argument(
        "--max-dma-vec-ops", type=_count, metavar="N", help="HVX instructions allowed in DMA workers (0)"
    )
    group.add_argument("--baseline-lib", metavar="OLD.so", help="fail only on what grew since the OLD build")
    group.add_argument("--disasm", metavar="FUNC_OR_REGEX", help="annotated disassembly of matching functions")
    group.add_argument("--objdump", metavar="PATH", help="LLVM objdump for --disasm text ('none': hexlint's own)")
    group.add_argument(
        "--addr2line", nargs="+", metavar="ADDR", help="resolve addresses (or '-': every address in stdin) in LIB"
    )


DEFAULT_TOP = 20


def _prefix_map(text: str) -> tuple[str, str]:
    old, separator, new = text.partition("=")
    if not separator or not old:
        raise argparse.ArgumentTypeError(f"expected OLD=NEW (like -ffile-prefix-map), got {text!r}")
    return old, new


def _count(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value
