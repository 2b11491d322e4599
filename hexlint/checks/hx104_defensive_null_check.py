"""HX104 defensive-null-check: NULL checks and assertions of internal framework pointers and required operands."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.backend.pointers import CheckedPointer, NullCheck, NullCheckSettings, Provenance, is_null_constant
from hexlint.c.node import Node
from hexlint.core import Diagnostic, Edit, Fix, Span
from hexlint.registry import diagnostic

CODE = "HX104"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    reported: set[tuple[str, int, int]] = set()
    for null_check in model.null_checks(NullCheckSettings.from_options(options)):
        # One finding per condition, as a reviewer writes one comment on `if (!q || !k || !dst)`.
        finding = _finding(null_check)
        key = (finding.span.path, finding.span.line or 0, finding.span.column or 0)
        if key not in reported:
            reported.add(key)
            yield finding


_WHAT = {
    Provenance.INTERNAL: ("internal framework pointer", "internal framework pointers"),
    Provenance.REQUIRED_OPERAND: ("required operand", "required operands"),
    Provenance.REQUIRED_OPERAND_DATA: ("data of a required operand", "data of required operands"),
}


def _describe(checked: tuple[CheckedPointer, ...]) -> str:
    """ "required operands `q`, `k`" or "internal framework pointers `ctx`, `params` and required operand `dst`"."""
    groups: dict[str, list[str]] = {}
    for pointer in checked:
        groups.setdefault(pointer.reason, []).append(f"`{pointer.text}`")
    parts = []
    for reason, names in groups.items():
        singular, plural = _WHAT[reason]
        parts.append(f"{singular if len(names) == 1 else plural} {', '.join(names)}")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _finding(null_check: NullCheck) -> Diagnostic:
    unit, checked, macro = null_check.unit, null_check.pointers, null_check.assert_macro
    subject = _describe(checked)
    never = "it is" if len(checked) == 1 else "they are"
    if macro:
        message = f"Defensive `{macro}` of {subject}: {never} never NULL here by construction; remove the assertion."
    else:
        message = (
            f"Defensive NULL check of {subject}: {never} never NULL here by construction; remove the check and "
            "let an invariant violation fail loudly upstream."
        )
    node = checked[0].node
    if node.is_macro_expansion:
        place = node.spelling_start
        span = Span(place.path, place.line, place.column) if place.path else Span(node.path, node.line, node.column)
    else:
        span = Span(node.path, node.line, node.column, node.end_line, node.end_column)
    fix = removal_fix(null_check)
    return diagnostic(
        CODE, message, span, fix=fix, fingerprint_text=unit.source_line(span.path, span.line or 0).strip()
    )


# ---------------------------------------------------------------- the fix (unsafe: it changes control flow)


def _terms(node: Node, operator: str) -> list[Node]:
    """The operands of a chain of `operator` (`a || b || c`), through parentheses."""
    node = node.unwrapped()
    if node.kind == "BINARY_OPERATOR" and node.binary_operator == operator:
        left, right = node.children()
        return [*_terms(left, operator), *_terms(right, operator)]
    return [node]


def _tested_pointer(term: Node) -> tuple[Node, bool] | None:
    """(pointer, true when the pointer is NULL) for `!p`, `p == NULL`, `NULL == p`, `p`, `p != NULL`."""
    node = term.unwrapped()
    if node.kind == "UNARY_OPERATOR" and node.unary_operator == "!":
        inner = _tested_pointer(node.children()[0])
        return (inner[0], not inner[1]) if inner is not None else None
    if node.kind == "BINARY_OPERATOR" and node.binary_operator in ("==", "!="):
        left, right = node.children()
        pointer = left if is_null_constant(right) else right if is_null_constant(left) else None
        if pointer is None:
            return None
        return pointer.unwrapped(), node.binary_operator == "=="
    if node.type_kind == "POINTER":
        return node, False
    return None


def _flagged(term: Node, pointers: tuple[CheckedPointer, ...], when_null: bool) -> bool:
    tested = _tested_pointer(term)
    if tested is None or tested[1] != when_null:
        return False
    node = tested[0]
    return any(
        (pointer.node.start_offset, pointer.node.end_offset) == (node.start_offset, node.end_offset)
        for pointer in pointers
    )


def _statement_end(data: bytes, node: Node) -> int:
    """The end of a statement, past the `;` libclang leaves out of an expression statement's extent."""
    end = node.end_offset
    if node.kind != "COMPOUND_STMT":
        position = end
        while position < len(data) and data[position] in b" \t":
            position += 1
        if position < len(data) and data[position : position + 1] == b";":
            end = position + 1
    return end


def _whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to whole lines when nothing else shares them but a `//` comment after it (which goes
    with the code it comments), so no blank line is left behind."""
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    after = data[end:line_end].strip()
    if data[line_start:start].strip() or (after and not after.startswith(b"//")):
        return start, end
    return line_start, min(line_end + 1, len(data))


def _is_simple(node: Node) -> bool:
    """An expression that needs no parentheses wherever a `?:` stood: a name, a member, a call, a literal, `&x`."""
    node = node.unwrapped() if node.kind == "PAREN_EXPR" else node
    simple = ("DECL_REF_EXPR", "MEMBER_REF_EXPR", "CALL_EXPR", "INTEGER_LITERAL", "ARRAY_SUBSCRIPT_EXPR", "PAREN_EXPR")
    if node.kind == "UNEXPOSED_EXPR":
        children = node.children()
        return len(children) == 1 and _is_simple(children[0])
    if node.kind == "UNARY_OPERATOR" and node.unary_operator in ("&", "*"):
        return _is_simple(node.children()[0])
    return node.kind in simple or is_null_constant(node)


def removal_fix(null_check: NullCheck) -> Fix | None:
    """Remove the check and its dead branch, where the statement's shape makes that a plain text edit:
    `if (!p || !q) <dead>` goes (or keeps only its other conditions), `if (p) <live>` becomes `<live>`,
    `p ? <live> : NULL` becomes `<live>`. Assertions, `else` branches and macro expansions get no fix."""
    statement, unit, pointers = null_check.statement, null_check.unit, null_check.pointers
    if statement.is_macro_expansion or null_check.assert_macro:
        return None
    data = unit.source_bytes(statement.path)
    children = statement.children()
    path = statement.path
    if statement.kind == "CONDITIONAL_OPERATOR" and len(children) == 3:
        condition, live, dead = children
        terms = _terms(condition, "&&")
        if not all(_flagged(term, pointers, when_null=False) for term in terms) or not is_null_constant(dead):
            return None
        text = data[live.start_offset : live.end_offset]
        enclosed = data[: statement.start_offset].rstrip().endswith(b"(") and data[statement.end_offset :].lstrip(
            b" \t"
        ).startswith(b")")
        replacement = text if _is_simple(live) or enclosed else b"(" + text + b")"
        edit = Edit(path, statement.start_offset, statement.end_offset, replacement)
        return Fix("Keep only the non-NULL branch of the defensive `?:`", (edit,), safe=False)
    if statement.kind != "IF_STMT" or len(children) != 2:
        return None  # an `else`, a C++ init-statement or a condition variable: left to the author
    condition, branch = children
    if data[condition.start_offset : condition.end_offset].count(b"\\"):
        return None
    terms = _terms(condition, "||")
    flagged = [term for term in terms if _flagged(term, pointers, when_null=True)]
    if flagged and len(flagged) == len(terms):
        start, end = _whole_lines(data, statement.start_offset, _statement_end(data, branch))
        return Fix("Remove the defensive NULL check and its branch", (Edit(path, start, end, b""),), safe=False)
    if flagged:
        kept = b" || ".join(data[term.start_offset : term.end_offset] for term in terms if term not in flagged)
        edit = Edit(path, condition.start_offset, condition.end_offset, kept)
        return Fix("Remove the defensive NULL tests from the condition", (edit,), safe=False)
    positive = _terms(condition, "&&")
    if all(_flagged(term, pointers, when_null=False) for term in positive):
        # `if (p) <live>`: the branch always runs; a compound stays a block, so its declarations keep their scope.
        live = data[branch.start_offset : _statement_end(data, branch)]
        edit = Edit(path, statement.start_offset, _statement_end(data, branch), live)
        return Fix("Keep the branch of the defensive NULL check, without the check", (edit,), safe=False)
    return None
