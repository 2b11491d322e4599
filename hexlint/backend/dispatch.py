"""Ops and dispatch: the kernel call graph, macro bodies, and which op's `case` reaches each kernel entry function.

Read from the source bytes of each definition (macro bodies included), which is much cheaper than visiting every
reference node; memoized per project, so every rule that asks shares one computation.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping

from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node

DEFAULT_OP_PATTERN = r"^HTP_OP_\w+$"
DEFAULT_IGNORED_OPS = ("HTP_OP_INVALID",)

_TRANSPARENT_KINDS = frozenset({"UNEXPOSED_EXPR", "PAREN_EXPR"})
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
_MACRO_DEFINITION = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)((?:[^\n]*\\\r?\n)*[^\n]*)", re.MULTILINE)


def strip_transparent(node: Node) -> Node:
    while node.kind in _TRANSPARENT_KINDS:
        children = node.children()
        if len(children) != 1:
            break
        node = children[0]
    return node


def _leaves_switch(statement: Node) -> bool:
    if statement.kind == "COMPOUND_STMT":
        children = statement.children()
        return bool(children) and _leaves_switch(children[-1])
    return statement.kind in ("RETURN_STMT", "BREAK_STMT")


def _constant_name(node: Node) -> str:
    node = strip_transparent(node)
    if node.kind == "DECL_REF_EXPR":
        return node.spelling
    tokens = node.tokens()
    return tokens[0] if len(tokens) == 1 else ""


def first_call(statement: Node) -> str:
    for node in statement.walk():
        if node.kind == "CALL_EXPR" and node.spelling:
            return node.spelling
    return ""


def kernel_call_graph(project: Project) -> dict[str, set[str]]:
    """Kernel function -> the kernel functions it calls or names (a worker handed to a pool is named, not called).

    Read from the text of each definition, macro bodies included, so functions stamped out by macros keep their
    edges; cheaper than visiting every reference node of the TU.
    """
    return memoized(project.memo, "kernel_params.call_graph", lambda: _kernel_call_graph(project))


def _kernel_call_graph(project: Project) -> dict[str, set[str]]:
    units = project.kernel_units()
    defined = {name for unit in units for name in unit.functions}
    macros = macro_bodies(project)
    graph: dict[str, set[str]] = defaultdict(set)
    memo: dict[bytes, set[str]] = {}
    for unit in units:
        for name, function in unit.functions.items():
            text = unit.source_bytes(function.path)[function.start_offset : function.end_offset]
            for identifier in _identifiers_through_macros(text, macros, memo):
                if identifier != name and identifier in defined:
                    graph[name].add(identifier)
    return graph


def macro_bodies(project: Project) -> dict[bytes, bytes]:
    """Function-like and object-like macro bodies of the kernel files, by name (first definition wins)."""
    return memoized(project.memo, "kernel_params.macro_bodies", lambda: _macro_bodies(project))


def _macro_bodies(project: Project) -> dict[bytes, bytes]:
    macros: dict[bytes, bytes] = {}
    for unit in project.kernel_units():
        for path in {function.path for function in unit.functions.values()}:
            for match in _MACRO_DEFINITION.finditer(unit.source_bytes(path)):
                macros.setdefault(match.group(1), match.group(2))
    return macros


def kernel_dispatch(
    project: Project, op_pattern: re.Pattern[str], ignored_ops: frozenset[str]
) -> dict[str, frozenset[str]]:
    """Kernel entry function -> the ops whose `case` in a kernel switch calls it: `case HTP_OP_ADD: return op_x()`."""
    key = ("kernel_params.dispatch", op_pattern.pattern, ignored_ops)
    return memoized(project.memo, key, lambda: _kernel_dispatch(project, op_pattern, ignored_ops))


def _kernel_dispatch(
    project: Project, op_pattern: re.Pattern[str], ignored_ops: frozenset[str]
) -> dict[str, frozenset[str]]:
    defined = {name for unit in project.kernel_units() for name in unit.functions}
    entries: dict[str, set[str]] = defaultdict(set)
    for unit in project.kernel_units():
        for switch in unit.nodes("SWITCH_STMT"):
            for ops, statement in case_groups(switch, op_pattern, ignored_ops):
                callee = first_call(statement)
                if callee in defined:
                    entries[callee] |= ops
    return {name: frozenset(ops) for name, ops in entries.items()}


def case_groups(
    switch: Node, op_pattern: re.Pattern[str], ignored_ops: frozenset[str]
) -> Iterator[tuple[frozenset[str], Node]]:
    """Each statement of a switch body with the op labels that lead to it (fall-through included)."""
    children = switch.children()
    body = children[-1] if children else None
    if body is None or body.kind != "COMPOUND_STMT":
        return
    labels: set[str] = set()
    for statement in body.children():
        while statement.kind in ("CASE_STMT", "DEFAULT_STMT"):
            parts = statement.children()
            if statement.kind == "CASE_STMT" and parts:
                label = _constant_name(parts[0])
                if label and op_pattern.search(label):
                    labels.add(label)
            if not parts:
                break
            statement = parts[-1]
        ops = frozenset(labels - ignored_ops)
        if ops:
            yield ops, statement
        if _leaves_switch(statement):
            labels = set()  # no fall-through into the next case


def _identifiers_through_macros(text: bytes, macros: Mapping[bytes, bytes], memo: dict[bytes, set[str]]) -> set[str]:
    """Identifiers of the text and of the macros it expands, transitively; macro results are memoized."""
    found: set[str] = set()
    for word in set(_IDENTIFIER.findall(text)):
        found.add(word.decode("ascii", "replace"))
        if word in macros:
            found |= _macro_identifiers(word, macros, memo)
    return found


def _macro_identifiers(name: bytes, macros: Mapping[bytes, bytes], memo: dict[bytes, set[str]]) -> set[str]:
    cached = memo.get(name)
    if cached is None:
        memo[name] = set()  # a macro that names itself expands once
        cached = _identifiers_through_macros(macros[name], macros, memo)
        memo[name] = cached
    return cached


def unit_paths(unit: UnitIndex) -> list[str]:
    """The files a unit indexes: its main file and the project headers it owns (as clang spells them)."""
    paths = {unit.path} | {function.path for function in unit.functions.values()}
    return sorted(path for path in paths if path)


def reachable(graph: Mapping[str, set[str]], start: str) -> set[str]:
    seen = {start}
    stack = [start]
    while stack:
        for callee in graph.get(stack.pop(), ()):
            if callee not in seen:
                seen.add(callee)
                stack.append(callee)
    return seen
