"""HX108 division-in-loop: `/` or `%` by a value the compiler cannot fold, inside a loop of kernel code."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.backend.loops import LoopFinder, LoopRegion, is_loop_invariant, split_top_level
from hexlint.backend.model import BackendModel
from hexlint.backend.names import matches_any, string_list
from hexlint.c.index import UnitIndex
from hexlint.c.node import Node
from hexlint.checks._c_helpers import diagnostic_at, quoted_source
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

CODE = "HX108"
DIVISION_OPERATORS = frozenset({"/", "%", "/=", "%="})
_LONGEST_QUOTED_DIVISOR = 60
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = DivisionSettings.from_options(options)
    reported: set[tuple[str, int]] = set()
    for unit in model.kernel_units():
        for finding in _unit_findings(model, unit, settings):
            # A division in a macro body is one finding at its #define line, however often the macro is expanded.
            key = (finding.span.path, finding.span.line or 0, finding.span.column or 0)
            if key not in reported:
                reported.add(key)
                yield finding


@dataclass(frozen=True)
class DivisionSettings:
    floating_point: bool
    exempt_functions: tuple[str, ...]
    setup_loop_bounds: tuple[str, ...]
    max_setup_trips: int
    fastdiv_init: str
    fastdiv: str
    fastmod: str

    @staticmethod
    def from_options(options: Mapping[str, Any]) -> DivisionSettings:
        return DivisionSettings(
            floating_point=bool(options.get("check_floating_point", True)),
            exempt_functions=string_list(options, "exempt_functions"),
            setup_loop_bounds=string_list(options, "setup_loop_bounds"),
            max_setup_trips=int(options.get("max_setup_trips", 4)),
            fastdiv_init=str(options.get("fastdiv_init", "init_fastdiv_values")),
            fastdiv=str(options.get("fastdiv", "fastdiv")),
            fastmod=str(options.get("fastmod", "fastmodulo")),
        )


def _unit_findings(model: BackendModel, unit: UnitIndex, settings: DivisionSettings) -> Iterator[Diagnostic]:
    # One kind at a time: asking for several sorts them by location, which costs a libclang call per node.
    candidates = [*unit.nodes("BINARY_OPERATOR"), *unit.nodes("COMPOUND_ASSIGNMENT_OPERATOR")]
    divisions = [node for node in candidates if node.binary_operator in DIVISION_OPERATORS]
    if not divisions:
        return
    finder = LoopFinder([region for region in model.loops(unit) if not _is_setup_loop(region, settings)])
    for division in divisions:
        region = finder.innermost(division)
        if region is None:
            continue
        operands = division.children()
        if len(operands) != 2:
            continue
        divisor = operands[1]
        if divisor.constant_value is not None:
            continue  # the compiler turns division by a constant into a multiply and shift
        is_float = division.is_floating_type or operands[0].is_floating_type or divisor.is_floating_type
        if is_float and not settings.floating_point:
            continue
        if divisor.unwrapped().type_kind == "VECTOR":
            continue
        if not is_loop_invariant(unit, region, divisor):
            continue  # a divisor that changes every iteration cannot be precomputed: there is nothing to suggest
        if operands[0].constant_value is not None and is_float:
            continue  # `1.0f / x` is the reciprocal the advice asks for, computed once per outer iteration
        if is_loop_invariant(unit, region, operands[0]):
            continue  # both operands fixed: the compiler hoists the whole division out of the loop
        function = unit.enclosing_function(division)
        if function is not None and matches_any(function.spelling, settings.exempt_functions):
            continue
        yield _finding(unit, division, divisor, region, is_float, settings)


def _is_setup_loop(region: LoopRegion, settings: DivisionSettings) -> bool:
    """A loop bounded by the thread or task count runs a handful of times per op, and so does a pipeline's prologue
    (`for (t = 0, k = 0; t < n && k < 2; t++, k++)`: at most two trips): plain division is right there."""
    names = IDENTIFIER.findall(region.condition)
    if any(matches_any(name, settings.setup_loop_bounds) for name in names):
        return True
    return _trips_at_most(region, settings.max_setup_trips)


_COUNTED = re.compile(r"^\(?\s*([A-Za-z_]\w*)\s*(<=|<|!=)\s*(\d+)[uU]?\s*\)?$")


def _trips_at_most(region: LoopRegion, limit: int) -> bool:
    """A `for` one of whose `&&` conditions is `k < N` (N <= limit) on a counter its init sets to 0 and its increment
    steps by one: whatever else the condition says, the body runs at most N times."""
    if region.loop.kind != "FOR_STMT" or region.from_macro or region.loop.is_macro_expansion:
        return False
    condition = region.condition.encode()
    for start, end in split_top_level(condition, 0, len(condition), b"&&"):
        match = _COUNTED.match(condition[start:end].decode().strip())
        if match is None:
            continue
        name, operator, bound = match.group(1), match.group(2), int(match.group(3))
        trips = bound + 1 if operator == "<=" else bound
        counted = re.search(rf"(?:\+\+\s*{name}\b|\b{name}\s*(?:\+\+|\+=\s*1\b))", region.increment)
        if trips <= limit and counted and re.search(rf"\b{name}\s*=\s*0\b", region.init):
            return True
    return False


def _finding(
    unit: UnitIndex,
    division: Node,
    divisor: Node,
    region: LoopRegion,
    is_float: bool,
    settings: DivisionSettings,
) -> Diagnostic:
    message = _message(unit, division, divisor, is_float, settings)
    loop = region.loop
    loop_place = loop.spelling_start if region.from_macro else None
    if loop_place is not None and loop_place.path:
        loop_span = Span(loop_place.path, loop_place.line, loop_place.column)
    else:
        loop_span = Span(loop.path, loop.line, loop.column)
    related = [Related(loop_span, "the loop that repeats the division")]
    if not division.is_macro_expansion:
        return diagnostic_at(CODE, unit, division, message, related)
    place = division.spelling_start
    if not place.path:
        return diagnostic_at(CODE, unit, division, message, related)
    related.append(Related(Span(division.path, division.line, division.column), "expanded from this macro use"))
    return diagnostic(
        CODE,
        message,
        Span(place.path, place.line, place.column),
        related=tuple(related),
        fingerprint_text=unit.source_line(place.path, place.line).strip().rstrip("\\").strip(),
    )


def _message(unit: UnitIndex, division: Node, divisor: Node, is_float: bool, settings: DivisionSettings) -> str:
    what = "modulo" if division.binary_operator.startswith("%") else "division"
    quoted = quoted_source(unit, divisor, _OPERAND, _LONGEST_QUOTED_DIVISOR) or "a non-constant value"
    if is_float:
        return (
            f"Floating-point {what} by {quoted} inside a loop calls a software divide on every iteration "
            "(Hexagon has no divide instruction); multiply by its reciprocal computed once before the loop."
        )
    helper = settings.fastmod if what == "modulo" else settings.fastdiv
    return (
        f"Integer {what} by {quoted} inside a loop calls a software divide on every iteration "
        f"(Hexagon has no divide instruction); precompute `{settings.fastdiv_init}()` for the divisor once "
        f"and use `{helper}()`."
    )


# An identifier with member accesses (`sctx->k_chunks`), or a parenthesised group of one level (`(ne1 * ne2)`).
_OPERAND = re.compile(rb"[A-Za-z_]\w*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*)*|\([^()]*\)")
