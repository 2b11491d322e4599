"""Loops of kernel code: the repeated part of each loop, which loop holds a node, loop invariance, textual writes.

Shared by every rule that asks "is this inside a loop" (division, fastdiv, trace detail, unrolling).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hexlint.c.index import UnitIndex
from hexlint.c.node import Node

LOOP_KINDS = ("FOR_STMT", "WHILE_STMT", "DO_STMT")


@dataclass(frozen=True)
class LoopRegion:
    """The bytes of a loop that run on every iteration (condition, increment, body; not a `for` init clause).

    Offsets are where the loop is written: in the file for ordinary code, inside the #define for a loop that a
    macro body produces (so a division before the loop in the same macro is not taken for one inside it).
    """

    loop: Node
    path: str
    start: int
    end: int
    condition: str
    from_macro: bool
    init: str = ""  # a `for`'s init and increment clauses ("" for other loops and unread headers)
    increment: str = ""

    def holds(self, place: NodePlace) -> bool:
        if self.from_macro and place.spelled_in_macro and place.spelling_path == self.path:
            return self.start <= place.spelling_offset < self.end
        if self.from_macro:
            loop = self.loop
            return place.path == loop.path and loop.start_offset <= place.offset < loop.end_offset
        return place.path == self.path and self.start <= place.offset < self.end


def region_text(unit: UnitIndex, region: LoopRegion) -> bytes:
    return unit.source_bytes(region.path)[region.start : region.end]


def place_inside(region: LoopRegion, place: NodePlace) -> bool:
    """Whether a node (e.g. a variable's declaration) lies in the repeated part of the loop."""
    return region.holds(place)


# A name not reached through `.`/`->` and not the tail of a longer identifier: `p->d = i` does not write `d`.
_NOT_A_MEMBER = rb"(?<![\w.>])"
# An `&` right after the end of an operand (identifier, literal, `)` or `]`) is the binary operator, not address-of.
_OPERAND_END = re.compile(rb"[\w)\]]\Z")
# ... unless that identifier is a keyword that takes an expression after it (`return &d`).
_KEYWORD_END = re.compile(rb"(?<!\w)return\Z")


def assignment_count(text: bytes, name: str) -> int:
    """How often `name = ...` (plain assignment, not `==`) is written in the text, member stores excluded."""
    if name.encode() not in text:
        return 0  # every match holds the name: a byte search rules most texts out without the regex
    pattern = rb"%s%s\s*=(?!=)" % (_NOT_A_MEMBER, re.escape(name.encode()))
    return len(re.findall(pattern, text))


def _takes_address(text: bytes, name: str) -> bool:
    """`&name` as a unary operator: no operand just before the `&` (`i & d`, `n && d` are not address-of)."""
    pattern = rb"(?<!&)&(?!&)\s*%s\b(?!\s*[-.\[])" % re.escape(name.encode())
    return any(_unary_position(text[: match.start()].rstrip()) for match in re.finditer(pattern, text))


def _unary_position(before: bytes) -> bool:
    return _OPERAND_END.search(before[-1:]) is None or _KEYWORD_END.search(before[-6:]) is not None


def written_in(text: bytes, name: str) -> bool:
    """Whether the text assigns (plainly or compound), increments or takes the address of variable `name`.

    Textual, so members of the same name (`p->d = i`) and binary `&`/`&&` are told apart from writes to `name`.
    """
    if name.encode() not in text:
        return False  # every way of writing it holds the name
    escaped = re.escape(name.encode())
    pattern = rb"%s%s\s*(?:[-+*/%%&|^]|<<|>>)?=(?!=)|%s%s\s*(?:\+\+|--)|(?:\+\+|--)\s*%s\b(?!\s*(?:->|\.))" % (
        _NOT_A_MEMBER,
        escaped,
        _NOT_A_MEMBER,
        escaped,
        escaped,
    )
    return re.search(pattern, text) is not None or _takes_address(text, name)


_VARIANT_KINDS = frozenset({"CALL_EXPR", "ARRAY_SUBSCRIPT_EXPR", "STMT_EXPR"})


def is_loop_invariant(unit: UnitIndex, region: LoopRegion, expression: Node) -> bool:
    """True when nothing the expression reads changes inside the loop: no calls, no array loads, no pointer loads,
    and every variable it names is declared outside the loop and never written in it (struct field loads through a
    context pointer count as invariant, as the kernels treat them)."""
    text = region_text(unit, region)
    for node in expression.walk():
        if node.kind in _VARIANT_KINDS or node.unary_operator_is_dereference:
            return False
        if node.kind != "DECL_REF_EXPR":
            continue
        declaration = node.referenced
        if declaration is None:
            return False
        if declaration.kind in ("ENUM_CONSTANT_DECL", "FUNCTION_DECL"):
            continue
        if place_inside(region, NodePlace.of(declaration)) or written_in(text, node.spelling):
            return False
    return True


@dataclass(frozen=True)
class NodePlace:
    """Where a node is, both as expanded and as written, computed once per node (each costs libclang calls)."""

    path: str
    offset: int
    spelled_in_macro: bool
    spelling_path: str
    spelling_offset: int

    @staticmethod
    def of(node: Node) -> NodePlace:
        in_macro = node.is_macro_expansion
        spelling = node.spelling_start if in_macro else None
        return NodePlace(
            node.path,
            node.start_offset,
            in_macro,
            spelling.path if spelling else node.path,
            spelling.offset if spelling else node.start_offset,
        )


def loop_regions(unit: UnitIndex) -> list[LoopRegion]:
    regions = []
    for loop in (loop for kind in LOOP_KINDS for loop in unit.nodes(kind)):
        if _runs_once(loop):
            continue
        from_macro = loop.is_macro_expansion
        if from_macro:
            place = loop.spelling_start
            path, start, end = place.path, place.offset, None
        else:
            path, start, end = loop.path, loop.start_offset, loop.end_offset
        shape = loop_shape(unit.source_bytes(path), start, end)
        if shape is None:
            if from_macro:
                continue  # cannot tell where a macro's loop ends: say nothing rather than guess
            regions.append(LoopRegion(loop, path, start, end or start, "", from_macro))
            continue
        regions.append(
            LoopRegion(
                loop, path, shape.repeated_start, shape.end, shape.condition, from_macro, shape.init, shape.increment
            )
        )
    return regions


def _runs_once(loop: Node) -> bool:
    """`do { ... } while (0)` (the statement-macro idiom) and `while (0)` are not loops."""
    if loop.kind == "FOR_STMT":
        return False
    children = loop.children()
    condition = children[-1] if loop.kind == "DO_STMT" else children[0] if children else None
    return condition is not None and condition.constant_value == 0


@dataclass(frozen=True)
class LoopShape:
    repeated_start: int
    end: int
    condition: str
    init: str = ""
    increment: str = ""


def loop_shape(data: bytes, start: int, end: int | None) -> LoopShape | None:
    """Read a loop's parts from its text: `for (init; cond; inc) body`, `while (cond) body`, `do body while (cond);`."""
    limit = macro_definition_end(data, start) if end is None else end
    keyword = _keyword_at(data, start)
    if keyword in (b"for", b"while"):
        open_paren = _skip_space(data, start + len(keyword), limit)
        close_paren = _matching(data, open_paren, limit)
        if close_paren is None:
            return None
        init = increment = b""
        if keyword == b"for":
            parts = split_top_level(data, open_paren + 1, close_paren, b";")
            if len(parts) != 3:
                return None
            init, condition, increment = (data[part_start:part_end] for part_start, part_end in parts)
            repeated_start = parts[1][0]
        else:
            repeated_start, condition = start, data[open_paren + 1 : close_paren]
        body_end = end if end is not None else _statement_end(data, close_paren + 1, limit)
        if body_end is None:
            return None
        return LoopShape(
            repeated_start, body_end, *(text.decode("utf-8", errors="replace") for text in (condition, init, increment))
        )
    if keyword == b"do":
        body_end = end if end is not None else _statement_end(data, start + 2, limit)
        if body_end is None:
            return None
        return LoopShape(start, body_end, "")
    return None


def _keyword_at(data: bytes, start: int) -> bytes:
    for keyword in (b"for", b"while", b"do"):
        after = start + len(keyword)
        if data[start:after] == keyword and (
            after >= len(data) or not (data[after : after + 1].isalnum() or data[after : after + 1] == b"_")
        ):
            return keyword
    return b""


def _skip_space(data: bytes, position: int, limit: int) -> int:
    while position < limit and data[position : position + 1] in (b" ", b"\t", b"\n", b"\r", b"\\"):
        position += 1
    return position


_OPENERS = {ord("("): ord(")"), ord("["): ord("]"), ord("{"): ord("}")}
_BRACKETS = re.compile(rb"[()\[\]{}]")
_BRACKETS_OR_SEMICOLON = re.compile(rb"[()\[\]{};]")
_BACKSLASH = ord("\\")


def _matching(data: bytes, position: int, limit: int) -> int | None:
    """The offset of the bracket closing the one at `position`."""
    if position >= limit or data[position] not in _OPENERS:
        return None
    depth = 0
    for match in _BRACKETS.finditer(data, position, limit):
        if data[match.start()] in _OPENERS:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return match.start()
    return None


def _statement_end(data: bytes, position: int, limit: int) -> int | None:
    """The end (exclusive) of the statement starting at `position`: a braced block, or up to its `;`."""
    position = _skip_space(data, position, limit)
    if position < limit and data[position] == ord("{"):
        close = _matching(data, position, limit)
        return None if close is None else close + 1
    depth = 0
    for match in _BRACKETS_OR_SEMICOLON.finditer(data, position, limit):
        byte = data[match.start()]
        if byte in _OPENERS:
            depth += 1
        elif byte == ord(";"):
            if depth == 0:
                return match.start() + 1
        else:
            depth -= 1
            if depth < 0:
                return None
    return None


def macro_definition_end(data: bytes, position: int) -> int:
    """The end of the (backslash-continued) line holding `position`: a macro's loop cannot run past its #define."""
    # `(?<!\\)\n` searched from `position` (the look-behind sees the byte before it), by `find`: a regex that starts
    # with a look-behind is tried at every byte, and macro bodies run over many continued lines.
    end = data.find(b"\n", position)
    while end > 0 and data[end - 1] == _BACKSLASH:
        end = data.find(b"\n", end + 1)
    return end if end >= 0 else len(data)


def split_top_level(data: bytes, start: int, end: int, separator: bytes) -> list[tuple[int, int]]:
    """(start, end) of each piece of data[start:end] between `separator`s outside brackets (`;` of a `for` header,
    `&&` of a condition). Literals are not skipped: callers that may meet them split blanked text (mdev.blank)."""
    pieces: list[tuple[int, int]] = []
    depth, begin, index = 0, start, start
    while index < end:
        byte = data[index]
        if byte in _OPENERS:
            depth += 1
        elif byte in (ord(")"), ord("]"), ord("}")):
            depth -= 1
        elif depth == 0 and data.startswith(separator, index, end):
            pieces.append((begin, index))
            index += len(separator)
            begin = index
            continue
        index += 1
    pieces.append((begin, end))
    return pieces


class LoopFinder:
    """Answers "which loop repeats this node?" for one unit, with the regions bucketed by file as plain ranges."""

    def __init__(self, regions: Sequence[LoopRegion]) -> None:
        self.written: dict[str, list[tuple[int, int, LoopRegion]]] = {}
        self.in_macros: dict[str, list[tuple[int, int, LoopRegion]]] = {}
        self.macro_uses: dict[str, list[tuple[int, int, LoopRegion]]] = {}
        for region in regions:
            if region.from_macro:
                self.in_macros.setdefault(region.path, []).append((region.start, region.end, region))
                loop = region.loop
                self.macro_uses.setdefault(loop.path, []).append((loop.start_offset, loop.end_offset, region))
            else:
                self.written.setdefault(region.path, []).append((region.start, region.end, region))

    def innermost(self, node: Node) -> LoopRegion | None:
        if not (self.written or self.in_macros):
            return None
        place = NodePlace.of(node)
        offset = place.offset
        holding = [region for start, end, region in self.written.get(place.path, ()) if start <= offset < end]
        if place.spelled_in_macro:
            spelled = place.spelling_offset
            in_macro = self.in_macros.get(place.spelling_path, ())
            holding += [region for start, end, region in in_macro if start <= spelled < end]
        uses = self.macro_uses.get(place.path, ())
        holding += [
            region
            for start, end, region in uses
            if start <= offset < end and not (place.spelled_in_macro and place.spelling_path == region.path)
        ]
        return min(holding, key=lambda region: region.end - region.start) if holding else None


def innermost_region(regions: Sequence[LoopRegion], node: Node) -> LoopRegion | None:
    return LoopFinder(regions).innermost(node)
