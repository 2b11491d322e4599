"""Helpers shared by the source rules' messages: findings at nodes and accesses, option lists, op lists."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hexlint.backend.kernel_params import FieldAccess, Ops
from hexlint.backend.mdev import Place
from hexlint.c.index import UnitIndex
from hexlint.c.node import Node
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic


def node_span(node: Node) -> Span:
    return Span(node.path, node.line, node.column, node.end_line, node.end_column)


def diagnostic_at(code: str, unit: UnitIndex, node: Node, message: str, related: Sequence[Related] = ()) -> Diagnostic:
    """A finding of rule `code` at a node; its name and severity come from the rule's document."""
    return diagnostic(
        code,
        message,
        node_span(node),
        related=tuple(related),
        fingerprint_text=unit.source_line(node.path, node.line).strip(),
    )


def describe_ops(ops: Ops, limit: int = 3) -> str:
    if not ops:
        return "any op"
    names = sorted(ops)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def for_ops(ops: Ops) -> str:
    """ " for HTP_OP_ADD" for a message, or nothing when the ops are unknown."""
    return f" for {describe_ops(ops)}" if ops else ""


def access_diagnostic(code: str, message: str, access: FieldAccess, related: tuple[Related, ...]) -> Diagnostic:
    return diagnostic(code, message, access.span, related=related, fingerprint_text=access.line_text)


def quoted_source(unit: UnitIndex, node: Node, operand: re.Pattern[bytes], longest: int) -> str | None:
    """The expression as written, in backquotes, when at most `longest` bytes; for code a macro produced, the
    `operand` read where its first token is spelled (only that token's place is known). None: no short text."""
    if node.is_macro_expansion:
        place = node.spelling_start
        data = unit.source_bytes(place.path) if place.path else b""
        match = operand.match(data, place.offset) if data else None
        if match is None:
            return None
        start, end = match.start(), match.end()
    else:
        data = unit.source_bytes(node.path)
        start, end = node.start_offset, node.end_offset
    if not 0 <= start < end <= len(data) or end - start > longest:
        return None
    text = " ".join(data[start:end].decode("utf-8", errors="replace").replace("\\\n", " ").split())
    return f"`{text}`"


def spelled_place(node: Node) -> tuple[str, int, int]:
    """Where a node is spelled: inside the #define for code a macro body produced (one place, however many
    functions the macro stamps out)."""
    if node.is_macro_expansion:
        place = node.spelling_start
        if place.path:
            return place.path, place.line, place.column
    return node.path, node.line, node.column


def diagnostic_where_spelled(
    code: str, unit: UnitIndex, node: Node, message: str, related: Sequence[Related] = ()
) -> Diagnostic:
    """A finding at the node, or at its #define line for code a macro body produced (the macro use related)."""
    path, line, column = spelled_place(node)
    if (path, line, column) == (node.path, node.line, node.column):
        return diagnostic_at(code, unit, node, message, related)
    return diagnostic(
        code,
        message,
        Span(path, line, column),
        related=(*related, Related(node_span(node), "expanded from this macro use")),
        fingerprint_text=unit.source_line(path, line).strip().rstrip("\\").strip(),
    )


def diagnostic_at_place(code: str, place: Place, message: str, related: Sequence[Related] = ()) -> Diagnostic:
    """A finding at a place the multi-device facts found by text (an offset range of a kernel file)."""
    return diagnostic(
        code,
        message,
        Span(place.path, place.line, place.column, place.end_line, place.end_column),
        related=tuple(related),
        fingerprint_text=place.unit.source_line(place.path, place.line).strip(),
    )
