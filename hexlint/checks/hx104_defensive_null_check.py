"""HX104 defensive-null-check: NULL checks and assertions of internal framework pointers and required operands."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.loops import split_top_level
from hexlint.backend.mdev import blanked_file, matching
from hexlint.backend.model import BackendModel
from hexlint.backend.pointers import CheckedPointer, NullCheck, NullCheckSettings, Provenance, is_null_constant
from hexlint.c.index import UnitIndex
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
    return node.end_offset if node.kind == "COMPOUND_STMT" else _past_semicolon(data, node.end_offset)


def _whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to whole lines when nothing else shares them but a `//` comment after it (which goes
    with the code it comments), so no emptied line is left behind."""
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end < 0 else line_end
    after = data[end:line_end].strip()
    if data[line_start:start].strip() or (after and not after.startswith(b"//")):
        return start, end
    end = min(line_end + 1, len(data))
    # Between two blank lines, one of them goes too, so the removal leaves one blank line where it was.
    next_end = data.find(b"\n", end)
    previous_start = data.rfind(b"\n", 0, max(line_start - 1, 0)) + 1
    if line_start and next_end >= 0 and not data[end:next_end].strip() and not data[previous_start:line_start].strip():
        end = next_end + 1
    return line_start, end


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
    `if (!p || !q) <dead>` goes (or keeps only its other conditions), `if (p) <live>` becomes `<live>`, an `else`
    keeps whichever branch always runs, `p ? <live> : NULL` becomes `<live>`, and an assertion goes (or keeps only
    its other conditions). Checks written inside a macro's body get no fix."""
    statement, unit, pointers = null_check.statement, null_check.unit, null_check.pointers
    if null_check.assert_macro:
        return _assertion_fix(null_check)
    if statement.is_macro_expansion:
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
    if statement.kind != "IF_STMT" or len(children) not in (2, 3):
        return None
    condition, then_branch = children[0], children[1]
    else_branch = children[2] if len(children) == 3 else None
    if condition.kind in ("DECL_STMT", "VAR_DECL", "NULL_STMT"):
        return None  # a C++ init-statement or a condition variable: left to the author
    if data[condition.start_offset : condition.end_offset].count(b"\\"):
        return None
    end = _statement_end(data, else_branch or then_branch)
    for operator, when_null in (("||", True), ("&&", False)):
        terms = _terms(condition, operator)
        flagged = [term for term in terms if _flagged(term, pointers, when_null=when_null)]
        if not flagged:
            continue
        if len(flagged) < len(terms):
            kept = f" {operator} ".encode().join(
                data[term.start_offset : term.end_offset] for term in terms if term not in flagged
            )
            edit = Edit(path, condition.start_offset, condition.end_offset, kept)
            return Fix("Remove the defensive NULL tests from the condition", (edit,), safe=False)
        # The condition is always false (`if (!p)`: the else branch runs) or always true (`if (p)`: the then branch).
        live = else_branch if when_null else then_branch
        if live is None:
            if not _in_block(unit, statement):
                return None  # the body of a loop or a label: removing it would hand that role to the next statement
            start, end = _whole_lines(data, statement.start_offset, end)
            return Fix("Remove the defensive NULL check and its branch", (Edit(path, start, end, b""),), safe=False)
        if live.kind == "IF_STMT" and not _in_block(unit, statement):
            return None  # an `if` without braces in place of this one could capture an outer `else`
        # A compound stays a block, so its declarations keep their scope.
        edit = Edit(path, statement.start_offset, end, data[live.start_offset : _statement_end(data, live)])
        title = "Keep the branch of the defensive NULL check that always runs, without the check"
        return Fix(title, (edit,), safe=False)
    return None


def _in_block(unit: UnitIndex, statement: Node) -> bool:
    """True when the statement stands directly in a `{ }` block, so removing or replacing it leaves no loop, `if` or
    label without its body. What a macro expands around the statement (`do { } while (0)`, parentheses) starts where
    it does and is looked through."""
    for ancestor in _ancestors(unit, statement):
        if ancestor.start_offset != statement.start_offset:
            return ancestor.kind == "COMPOUND_STMT"
    return False


def _ancestors(unit: UnitIndex, node: Node) -> list[Node]:
    """From the node's parent up to its function, by identity: the nodes of a macro expansion share one extent, so
    extents cannot tell a node's parent from its siblings."""
    function = unit.enclosing_function(node)
    if function is None:
        return []
    parents: dict[int, Node] = {}
    stack = [function]
    while stack:
        current = stack.pop()
        for child in current.children():
            parents[id(child)] = current
            if child is node:
                chain = [current]
                while chain[-1] is not function:
                    chain.append(parents[id(chain[-1])])
                return chain
            stack.append(child)
    return []


_NOT_NULL = re.compile(r"^(?:(?P<left>.+?)\s*!=\s*(?:NULL|nullptr|0)|(?:NULL|nullptr|0)\s*!=\s*(?P<right>.+))$")


def _assertion_fix(null_check: NullCheck) -> Fix | None:
    """`assert(p)`, `GGML_ASSERT(p != NULL && n > 0)`: the invocation goes with its `;`, or keeps only its other
    conditions. Read in the text as written at the call: the expansion has no node for the invocation itself."""
    statement, unit, macro = null_check.statement, null_check.unit, null_check.assert_macro
    data = unit.source_bytes(statement.path)
    name_end = statement.start_offset + len(macro)
    if data[statement.start_offset : name_end] != macro.encode():
        return None
    open_paren = name_end + len(data[name_end:]) - len(data[name_end:].lstrip(b" \t"))
    if data[open_paren : open_paren + 1] != b"(":
        return None
    # Brackets and separators are found in the text with comments and literals blanked (same offsets), so a `)` or
    # `&&` in the message of `assert(p && "message")` is not taken for code.
    blanked = blanked_file(unit, statement.path)  # once per file, shared with the mdev rules
    close_paren = matching(blanked, open_paren)
    if close_paren >= len(blanked):
        return None
    condition_start, condition_end = split_top_level(blanked, open_paren + 1, close_paren, b",")[0]
    condition = data[condition_start:condition_end]
    if (
        b"\\\n" in condition
        or len(split_top_level(blanked, condition_start, condition_end, b"||")) > 1
        or b"?" in condition
    ):
        return None  # only a plain `&&` chain: its always-true terms can go without regrouping the rest
    flagged = {_squeezed(pointer.text) for pointer in null_check.pointers}
    terms = [data[start:end].strip() for start, end in split_top_level(blanked, condition_start, condition_end, b"&&")]
    kept = [term for term in terms if not _asserts_not_null(term.decode(errors="replace"), flagged)]
    if len(kept) == len(terms):
        return None
    path = statement.path
    if all(term.startswith(b'"') for term in kept):  # nothing left but the message of `assert(p && "message")`
        if not _in_block(unit, statement):
            return None
        start, end = _whole_lines(data, statement.start_offset, _past_semicolon(data, close_paren + 1))
        return Fix(f"Remove the defensive `{macro}`", (Edit(path, start, end, b""),), safe=False)
    edit = Edit(path, condition_start, condition_end, b" && ".join(kept))
    return Fix(f"Remove the defensive NULL tests from the `{macro}`", (edit,), safe=False)


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _asserts_not_null(term: str, flagged: set[str]) -> bool:
    """`p`, `(p)`, `p != NULL`, `nullptr != p` for a flagged pointer `p`."""
    text = term.strip()
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    match = _NOT_NULL.match(text)
    if match:
        text = (match.group("left") or match.group("right") or "").strip()
    return _squeezed(text) in flagged


def _balanced(text: str) -> bool:
    depth = 0
    for character in text:
        depth += {"(": 1, ")": -1}.get(character, 0)
        if depth < 0:
            return False
    return depth == 0


def _past_semicolon(data: bytes, end: int) -> int:
    position = end
    while position < len(data) and data[position] in b" \t":
        position += 1
    return position + 1 if data[position : position + 1] == b";" else end
