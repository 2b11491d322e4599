"""Fastdiv values in kernel code: where each `init_fastdiv_values()` result goes and which divisions it feeds.

The value is followed through local variables (`struct fastdiv_values d = init(...)`, copies `e = d`), struct fields
(`ctx.div = init(...)`, designated and positional initialisers; the field is then looked up wherever it is read in
kernel code, so a context handed to a worker is followed into the worker) and parameters (a call `f(.., d, ..)` or
`f(.., &d, ..)` of a kernel function is followed into `f`). Each `fastdiv()` / `fastmodulo()` reached is a division
use, recurring when it runs more than once per initialisation: inside a loop that does not also hold the
initialisation, in a worker (or a function reachable from one: every thread runs it), in a function called from a
loop, from several places or through a pointer. Anything else the value meets (returned, handed to an unknown
function, read field by field, stored in an array or a global) is an escape: what happens to it is unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.backend.dispatch import kernel_call_graph, reachable
from hexlint.backend.loops import LoopRegion, NodePlace, loop_regions
from hexlint.backend.names import nodes_named
from hexlint.backend.workers import call_arguments, parameters, worker_names, worker_settings
from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node

_CLIMB_KINDS = frozenset({"UNEXPOSED_EXPR", "PAREN_EXPR", "CSTYLE_CAST_EXPR"})
_MAX_DEPTH = 8


@dataclass(frozen=True)
class FastdivNames:
    init: str
    divisions: tuple[str, ...]


def fastdiv_names(options: Mapping[str, Any]) -> FastdivNames:
    return FastdivNames(
        init=str(options.get("fastdiv_init", "init_fastdiv_values")),
        divisions=(str(options.get("fastdiv", "fastdiv")), str(options.get("fastmod", "fastmodulo"))),
    )


@dataclass(frozen=True)
class DivisionUse:
    """A fastdiv()/fastmodulo() call an initialisation reaches; `repeats` says why it runs more than once, or ""."""

    unit: UnitIndex
    call: Node
    function: str
    repeats: str


@dataclass(frozen=True)
class FastdivInit:
    unit: UnitIndex
    call: Node
    function: str
    divisor: str  # the argument as written
    divisions: tuple[DivisionUse, ...]
    escapes: tuple[str, ...]

    @property
    def single_use(self) -> bool:
        """One division, run once per initialisation, and nowhere else the value could go."""
        return not self.escapes and len(self.divisions) == 1 and not self.divisions[0].repeats


def fastdiv_inits(project: Project, options: Mapping[str, Any]) -> list[FastdivInit]:
    names = fastdiv_names(options)
    key = ("backend.fastdiv", names, worker_settings(options))
    return memoized(project.memo, key, lambda: _Flows(project, names, options).all_inits())


@dataclass(frozen=True)
class _Context:
    origin_unit: UnitIndex
    origin_function: Node
    origin_call: Node
    repeats: str  # why every use below this point repeats ("" when it need not)


class _Flows:
    def __init__(self, project: Project, names: FastdivNames, options: Mapping[str, Any]) -> None:
        self.project = project
        self.names = names
        self.units = project.kernel_units()
        self.functions: dict[str, tuple[UnitIndex, Node]] = {}
        for unit in self.units:
            for name, node in unit.functions.items():
                self.functions.setdefault(name, (unit, node))
        self.workers = worker_names(project, options)
        self._from_workers: set[str] | None = None
        self._repeats_memo: dict[tuple[str, str, int], str] = {}
        self.children: dict[Node, list[_Child]] = {}  # the nodes the descents to a value's uses went through

    def all_inits(self) -> list[FastdivInit]:
        found = []
        for unit in self.units:
            for call in nodes_named(self.project, unit, "CALL_EXPR", self.names.init):
                function = unit.enclosing_function(call)
                if function is None:
                    continue
                found.append(self._follow(unit, function, call))
        return found

    def _follow(self, unit: UnitIndex, function: Node, call: Node) -> FastdivInit:
        self.divisions: list[DivisionUse] = []
        self.escapes: list[str] = []
        self.seen: set[tuple[Any, ...]] = set()
        context = _Context(unit, function, call, _cached(function, call, self.children))
        self._flow_from(unit, function, call, context, 0)
        arguments = call_arguments(call)
        divisor = _source_text(unit, arguments[0]) if arguments else ""
        return FastdivInit(
            unit, call, function.spelling, divisor, tuple(self.divisions), tuple(dict.fromkeys(self.escapes))
        )

    # ------------------------------------------------------------ where one occurrence of the value goes

    def _flow_from(self, unit: UnitIndex, function: Node, expression: Node, context: _Context, depth: int) -> None:
        if depth > _MAX_DEPTH:
            self.escapes.append("followed too far")
            return
        parents = _parents_of(function, expression, self.children)
        node = expression
        while True:
            parent = parents.get(node)
            if parent is None:
                self.escapes.append("lost")
                return
            if parent.kind == "UNEXPOSED_EXPR" and _designator(parent) is not None and node != parent.children()[0]:
                self._flow_to_field(_designator(parent), context, depth)
                return
            if parent.kind in _CLIMB_KINDS or (parent.kind == "UNARY_OPERATOR" and parent.unary_operator in ("&", "*")):
                node = parent
                continue
            if parent.kind == "CONDITIONAL_OPERATOR" and parent.children() and parent.children()[0] != node:
                node = parent
                continue
            break
        kind = parent.kind
        if kind == "CALL_EXPR":
            self._flow_into_call(unit, function, parent, node, context, depth)
        elif kind == "BINARY_OPERATOR" and parent.binary_operator == "=":
            children = parent.children()
            if len(children) == 2 and children[0] == node:
                return  # a store into this variable or field, not a use of the value
            self._flow_to_lvalue(unit, function, children[0] if children else node, context, depth)
        elif kind == "VAR_DECL":
            self._flow_to_variable(unit, function, parent, context, depth)
        elif kind == "INIT_LIST_EXPR":
            field = _positional_field(parent, node)
            if field is None:
                self.escapes.append("an initialiser list")
            else:
                self._flow_to_field(field, context, depth)
        elif kind == "RETURN_STMT":
            self.escapes.append(f"returned by `{function.spelling}`")
        elif kind == "MEMBER_REF_EXPR":
            self.escapes.append("read field by field")
        elif kind in ("COMPOUND_STMT", "DECL_STMT"):
            return  # a statement of its own: the result is dropped
        else:
            self.escapes.append(f"used in {kind}")

    def _flow_into_call(
        self, unit: UnitIndex, function: Node, call: Node, argument: Node, context: _Context, depth: int
    ) -> None:
        arguments = call_arguments(call)
        index = next((position for position, item in enumerate(arguments) if item == argument), None)
        if index is None:
            return  # the callee expression itself
        callee = call.spelling
        if callee in self.names.divisions:
            repeats = context.repeats or self._loop_reason(unit, function, call, context)
            if not repeats and function != context.origin_function:
                repeats = self._function_repeats(function.spelling, context)
            self.divisions.append(DivisionUse(unit, call, function.spelling, repeats))
            return
        target = self.functions.get(callee)
        if target is None:
            self.escapes.append(f"passed to `{callee or 'a function pointer'}`")
            return
        callee_unit, callee_node = target
        params = parameters(callee_node)
        if index >= len(params):
            self.escapes.append(f"passed to `{callee}` as a variadic argument")
            return
        repeats = context.repeats or self._loop_reason(unit, function, call, context)
        if not repeats and callee in self.workers:
            repeats = f"`{callee}` runs on every thread of the pool"
        key = ("parameter", callee, index, bool(repeats))
        if key in self.seen:
            return
        self.seen.add(key)
        inner = _Context(context.origin_unit, context.origin_function, context.origin_call, repeats)
        self._uses_of_variable(callee_unit, callee_node, params[index], inner, depth + 1)

    def _flow_to_lvalue(self, unit: UnitIndex, function: Node, lvalue: Node, context: _Context, depth: int) -> None:
        target = lvalue.unwrapped()
        if target.kind == "DECL_REF_EXPR":
            declaration = target.referenced
            if declaration is not None and declaration.kind in ("VAR_DECL", "PARM_DECL"):
                self._flow_to_variable(unit, function, declaration, context, depth)
                return
        if target.kind == "MEMBER_REF_EXPR":
            field = target.referenced
            if field is not None and field.kind == "FIELD_DECL":
                self._flow_to_field(field, context, depth)
                return
        self.escapes.append("stored through an expression")

    def _flow_to_variable(
        self, unit: UnitIndex, function: Node, declaration: Node, context: _Context, depth: int
    ) -> None:
        if unit.enclosing_function(declaration) != function or "static" in declaration.tokens()[:3]:
            self.escapes.append(f"stored in `{declaration.spelling}`, not a local")
            return
        key = ("variable", declaration.path, declaration.start_offset, bool(context.repeats))
        if key in self.seen:
            return
        self.seen.add(key)
        self._uses_of_variable(unit, function, declaration, context, depth + 1)

    def _uses_of_variable(
        self, unit: UnitIndex, function: Node, declaration: Node, context: _Context, depth: int
    ) -> None:
        # A local's uses are in its function: its own nodes, not a name index of the whole unit.
        name = declaration.spelling
        # A top-level definition's references are the index walk's own, grouped by declaration: no walk of it here.
        below = unit.nodes_in_top("DECL_REF_EXPR", function) if unit.is_top(function) else function.descendants()
        references = [node for node in below if node.kind == "DECL_REF_EXPR" and node.spelling == name]
        for reference in references:
            if not function.start_offset <= reference.start_offset < function.end_offset:
                continue
            if reference.path != function.path or reference.referenced != declaration:
                continue
            self._flow_from(unit, function, reference, context, depth)

    def _flow_to_field(self, field: Node, context: _Context, depth: int) -> None:
        key = ("field", field.path, field.start_offset, bool(context.repeats))
        if key in self.seen:
            return
        self.seen.add(key)
        place = (field.path, field.start_offset)
        for unit in self.units:
            for reference in nodes_named(self.project, unit, "MEMBER_REF_EXPR", field.spelling):
                declaration = reference.referenced
                # Each unit has its own cursor for a header's field: compare where the field is declared.
                if declaration is None or (declaration.path, declaration.start_offset) != place:
                    continue
                function = unit.enclosing_function(reference)
                if function is None:
                    continue
                self._flow_from(unit, function, reference, context, depth + 1)

    # ------------------------------------------------------------ does it run more than once?

    def _loop_reason(self, unit: UnitIndex, function: Node, node: Node, context: _Context) -> str:
        """A loop of `function` repeats `node` (a loop that also holds the initialisation repeats both: it is no
        reason)."""
        place = NodePlace.of(node)
        origin = None
        if unit is context.origin_unit and function == context.origin_function:
            origin = NodePlace.of(context.origin_call)
        for region in _regions(unit):
            if not region.holds(place):
                continue
            if not (function.start_offset <= region.loop.start_offset < function.end_offset):
                continue
            if origin is not None and region.holds(origin):
                continue
            return f"inside the loop at line {region.loop.line}"
        return ""

    def _function_repeats(self, name: str, context: _Context) -> str:
        """Why a function other than the initialising one may run more than once per initialisation ("" if not)."""
        key = (name, context.origin_function.path, context.origin_function.start_offset)
        if key in self._repeats_memo:
            return self._repeats_memo[key]
        self._repeats_memo[key] = ""  # a recursion guard; refined below
        reason = self._function_repeats_uncached(name, context)
        self._repeats_memo[key] = reason
        return reason

    def _function_repeats_uncached(self, name: str, context: _Context) -> str:
        if name in self.workers:
            return f"`{name}` runs on every thread of the pool"
        if name in self._reached_from_workers():
            return f"`{name}` is called from a worker"
        calls = [(unit, call) for unit in self.units for call in nodes_named(self.project, unit, "CALL_EXPR", name)]
        references = sum(len(nodes_named(self.project, unit, "DECL_REF_EXPR", name)) for unit in self.units)
        if references > len(calls):
            return f"`{name}` is also used through a function pointer"
        if len(calls) != 1:
            return f"`{name}` is called from {len(calls)} places" if calls else f"`{name}` is never called directly"
        unit, call = calls[0]
        caller = unit.enclosing_function(call)
        if caller is None:
            return ""
        reason = self._loop_reason(unit, caller, call, context)
        if reason:
            return f"`{name}` is called {reason}"
        if caller == context.origin_function:
            return ""
        return self._function_repeats(caller.spelling, context)

    def _reached_from_workers(self) -> set[str]:
        if self._from_workers is None:
            graph = kernel_call_graph(self.project)
            self._from_workers = {name for worker in self.workers for name in reachable(graph, worker)}
        return self._from_workers


def _cached(function: Node, call: Node, children: dict[Node, list[_Child]]) -> str:
    """Why a value stored through a pointer under an `if` (`if (n != octx->n) octx->div = init(n);`) is reused: it
    is a cache kept across calls, recomputed only when the divisor changes ("" when the store is not such)."""
    parents = _parents_of(function, call, children)
    node = parents.get(call)
    while node is not None and node.kind in _CLIMB_KINDS | {"CONDITIONAL_OPERATOR"}:
        node = parents.get(node)
    if node is None or node.kind != "BINARY_OPERATOR" or node.binary_operator != "=":
        return ""
    target = node.children()[0].unwrapped()
    base = target.children()[0] if target.kind == "MEMBER_REF_EXPR" and target.children() else None
    if base is None or base.unwrapped().type_kind != "POINTER":
        return ""
    while node is not None and node != function:
        parent = parents.get(node)
        if parent is not None and parent.kind == "IF_STMT" and parent.children() and parent.children()[0] != node:
            return f"the value is kept through a pointer and re-initialised only under the `if` at line {parent.line}"
        node = parent
    return ""


def _designator(node: Node) -> Node | None:
    """The field of a designated initialiser `.name = value` (an unexposed node holding MEMBER_REF and the value)."""
    parts = node.children()
    if len(parts) == 2 and parts[0].kind == "MEMBER_REF":
        field = parts[0].referenced
        return field if field is not None and field.kind == "FIELD_DECL" else None
    return None


def _positional_field(init_list: Node, value: Node) -> Node | None:
    """The field a positional initialiser fills: `{a, b, init(...)}` fills the struct's third field."""
    items = init_list.children()
    index = next((position for position, item in enumerate(items) if item == value), None)
    record_node = init_list.type_declaration
    if index is None or record_node is None or record_node.kind not in ("STRUCT_DECL", "UNION_DECL"):
        return None
    if any(item.kind == "UNEXPOSED_EXPR" and _designator(item) is not None for item in items):
        return None  # positions after a designator follow it: not worth reconstructing
    fields = [child for child in record_node.children() if child.kind == "FIELD_DECL"]
    return fields[index] if index < len(fields) else None


def _parents_of(function: Node, node: Node, children: dict[Node, list[_Child]]) -> dict[Node, Node]:
    """Child -> parent along the one path from `function` down to `node` (empty when `node` is not below it).

    The descent enters only children whose extent holds the node's (code a macro produced shares the macro use's
    extent, so it may try several), instead of mapping every node of the function; `children` keeps each visited
    node's children with their extents for the next descent through the same function."""
    start, end = node.start_offset, node.end_offset
    path = node.path
    pending: list[tuple[Node, int]] = [(function, 0)]
    chain: list[Node] = []
    while pending:
        current, depth = pending.pop()
        del chain[depth:]
        chain.append(current)
        below = []
        for child_start, child_end, child_path, child in _children_of(current, children):
            if child_start <= start and end <= child_end:
                if child_start == start and child_end == end and child == node:
                    chain.append(child)
                    return {chain[position + 1]: chain[position] for position in range(len(chain) - 1)}
                below.append(child)
            elif child_path != path:
                below.append(child)  # an extent in another file (or none) tells nothing: look inside
        pending.extend((child, depth + 1) for child in reversed(below))
    return {}


_Child = tuple[int, int, str, Node]


def _children_of(node: Node, cache: dict[Node, list[_Child]]) -> list[_Child]:
    found = cache.get(node)
    if found is None:
        found = cache[node] = [(child.start_offset, child.end_offset, child.path, child) for child in node.children()]
    return found


def _regions(unit: UnitIndex) -> list[LoopRegion]:
    return memoized(unit.memo, "backend.loop_regions", lambda: loop_regions(unit))


def _source_text(unit: UnitIndex, node: Node) -> str:
    """The expression as written (one line), or its tokens when a macro produced it."""
    data = unit.source_bytes(node.path)
    start, end = node.start_offset, node.end_offset
    if node.is_macro_expansion or not 0 <= start < end <= len(data):
        return " ".join(node.tokens())
    return " ".join(data[start:end].decode("utf-8", "replace").split())
