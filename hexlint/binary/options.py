"""Command-line options of the binary audit; hexlint.cli calls `add_binary_arguments(parser)`.

Namespace attributes (all present after parsing, None/False when not given):
- spills, promotions, division (bool): which audits to report; none of them given = lint mode (the HX2xx rules run
  with their TOML/config options and only findings are reported, no table).
- strict (bool): findings fail the run (exit 1) for the selected audits and HVX in DMA workers (HX205).
- func (str regex, re.search on function names), max_inloop_vspills, max_inloop_sspills, max_promotions,
  max_inloop_divisions, max_dma_vec_ops (int thresholds overriding the rules' options), dma_pattern (regex).
- baseline_lib (path): the regression gate, OLD library to compare every given library with.
- disasm (FUNC_OR_REGEX), objdump (path to an LLVM objdump, or "none" for hexlint's own rendering).
- addr2line (list of addresses, "-" for stdin, library paths may be mixed in).
"""

from __future__ import annotations

import argparse


def add_binary_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("binary audit (built .so/.o)")
    group.add_argument("--spills", action="store_true", help="report vector/scalar register spills per function/loop")
    group.add_argument("--promotions", action="store_true", help="report float->double promotions")
    group.add_argument("--division", action="store_true", help="report software division calls in loops")
    group.add_argument(
        "--strict", action="store_true", help="fail (exit 1) on findings of the selected audits and HVX in DMA workers"
    )
    group.add_argument("--func", metavar="REGEX", help="audit only functions whose name matches REGEX (re.search)")
    group.add_argument("--max-inloop-vspills", type=_count, metavar="N", help="in-loop vector spills allowed (0)")
    group.add_argument(
        "--max-inloop-sspills",
        type=_count,
        metavar="N",
        help="scalar spills allowed in innermost loops (turns HX202 on)",
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


def _count(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {value}")
    return value
