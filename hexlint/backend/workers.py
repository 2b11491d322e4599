"""Worker functions and the state they write.

A worker is a kernel function handed to a worker runner (`work_queue_run(queue, fn, data, n)` and its legacy name
`worker_pool_run_func`); every thread of the pool runs it with its own thread index and the same `data`. For each
worker: its thread-index and context parameters, the struct the context is cast to, and every write in its body
(and in the helpers it hands the context to, one call deep), classified by what it writes: a file-scope or static
variable, a field of the shared context, or a per-thread slot (an element picked by an index, or through a pointer
the worker derived for its own rows).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from hexlint.backend.dispatch import kernel_call_graph
from hexlint.backend.names import matches_any
from hexlint.backend.trace import kernel_text, settings_from, workers_started_by
from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node

_INCREMENTS = frozenset({"++", "--"})
_WRITE_KINDS = ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR", "UNARY_OPERATOR")
_STATIC = re.compile(rb"\bstatic\b")
_WORD = re.compile(rb"[A-Za-z_]\w*")
# A member chain with subscripts: `actx->partial[ith].sum`.
_LVALUE = re.compile(rb"[A-Za-z_]\w*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*|\s*\[[^\]\n]*\])*")


@dataclass(frozen=True)
class WorkerSettings:
    runners: tuple[str, ...]
    worker_argument: int
    count_argument: int
    thread_index_parameter: int
    context_parameter: int
    lock_functions: tuple[str, ...]
    unlock_functions: tuple[str, ...]


def worker_settings(options: Mapping[str, Any]) -> WorkerSettings:
    return WorkerSettings(
        runners=tuple(options.get("worker_runners", ("work_queue_run", "worker_pool_run_func"))),
        worker_argument=int(options.get("worker_argument", 1)),
        count_argument=int(options.get("thread_count_argument", 3)),
        thread_index_parameter=int(options.get("thread_index_parameter", 1)),
        context_parameter=int(options.get("context_parameter", 2)),
        lock_functions=tuple(options.get("lock_functions", ("*_mutex_lock", "*_spin_lock", "*_lock"))),
        unlock_functions=tuple(options.get("unlock_functions", ("*_mutex_unlock", "*_spin_unlock", "*_unlock"))),
    )


@dataclass(frozen=True)
class Launch:
    """One hand-over of a worker to the pool: who does it and with which arguments (as written)."""

    launcher: str
    runner: str
    data: str
    count: str


@dataclass(frozen=True)
class Write:
    """An assignment, compound assignment or increment in a worker (or a helper it hands the context to)."""

    kind: str  # "global" | "static" | "shared_field" | "per_thread"
    node: Node  # the assignment or increment
    unit: UnitIndex
    target: str  # the written lvalue as a short text: `g_count`, `ctx->sum`
    function: str  # the function the write is in (the worker, or a helper)
    guard: str  # "" | "atomic" (an _Atomic object) | "lock" (between a lock and its unlock) | "single_thread"


@dataclass(frozen=True)
class Worker:
    name: str
    unit: UnitIndex
    node: Node
    thread_index: str  # the parameter's name, "" when the function has too few parameters
    context: str
    context_struct: str  # the struct the context pointer is cast to, "" when it is used as `void *`
    launches: tuple[Launch, ...]
    writes: tuple[Write, ...]

    @property
    def runs_on_one_thread(self) -> bool:
        """Every launch asks for exactly one thread: nothing runs concurrently with it."""
        return bool(self.launches) and all(launch.count.strip("() ") == "1" for launch in self.launches)


def workers(project: Project, options: Mapping[str, Any]) -> list[Worker]:
    settings = worker_settings(options)
    return memoized(project.memo, ("backend.workers", settings), lambda: _workers(project, settings))


def worker_names(project: Project, options: Mapping[str, Any]) -> frozenset[str]:
    """The functions handed to the pool: the launches alone, without scanning any worker's writes."""
    settings = worker_settings(options)
    return frozenset(launches(project, settings))


def launches(project: Project, settings: WorkerSettings) -> dict[str, list[Launch]]:
    """Worker function -> its launches (the runner calls that hand it to the pool), memoized per project."""
    return memoized(project.memo, ("backend.worker_launches", settings), lambda: _launches(project, settings))


# ---------------------------------------------------------------- syntax helpers shared with hexlint.backend.fastdiv


def function_parents(unit: UnitIndex, function: Node) -> dict[Node, Node]:
    """Child -> parent for every node of one function definition, from one walk of its subtree."""
    key = ("backend.function_parents", function.path, function.start_offset)
    return memoized(unit.memo, key, lambda: _parents(function))


def _parents(function: Node) -> dict[Node, Node]:
    """In pre-order (source order, also for the nodes a macro expands to, which all share one offset)."""
    parents: dict[Node, Node] = {}
    pending = [(child, function) for child in reversed(function.children())]
    while pending:
        node, parent = pending.pop()
        parents[node] = parent
        pending.extend((child, node) for child in reversed(node.children()))
    return parents


def parameters(function: Node) -> list[Node]:
    return [child for child in function.children() if child.kind == "PARM_DECL"]


def call_arguments(call: Node) -> list[Node]:
    """The argument expressions of a CALL_EXPR (its first child is the callee)."""
    children = call.children()
    return children[1:] if children else []


# ---------------------------------------------------------------- discovery


def _launches(project: Project, settings: WorkerSettings) -> dict[str, list[Launch]]:
    text = kernel_text(project)
    trace_settings = settings_from({"worker_runners": settings.runners, "worker_argument": settings.worker_argument})
    callers: dict[str, set[str]] = {}
    for caller, callees in kernel_call_graph(project).items():
        for callee in callees:
            callers.setdefault(callee, set()).add(caller)
    launches: dict[str, list[Launch]] = {}
    for function in sorted(text.functions):
        started = workers_started_by(text, function, trace_settings, callers)
        if not started:
            continue
        for runner, arguments in text.calls_with_arguments(function, settings.runners):
            named = arguments[settings.worker_argument].lstrip("&( ").rstrip(") ") if len(arguments) > 1 else ""
            # A worker named in the call is that call's; one passed through a variable may be any of those started.
            launched = [named] if named in started else started
            data_index = settings.worker_argument + 1
            data = arguments[data_index] if len(arguments) > data_index else ""
            count = arguments[settings.count_argument] if len(arguments) > settings.count_argument else ""
            for worker in launched:
                launch = Launch(function, runner, data, count)
                if launch not in launches.setdefault(worker, []):
                    launches[worker].append(launch)
    return launches


def _workers(project: Project, settings: WorkerSettings) -> list[Worker]:
    text = kernel_text(project)
    launched = launches(project, settings)
    found = []
    helper_writes: dict[tuple[str, int, int], list[Write]] = {}  # a helper many workers call is scanned once
    for name in sorted(launched):
        unit, node = text.functions[name]
        found.append(_worker(unit, node, tuple(launched[name]), settings, text.functions, helper_writes))
    return found


def _worker(
    unit: UnitIndex,
    node: Node,
    launches: tuple[Launch, ...],
    settings: WorkerSettings,
    functions: Mapping[str, tuple[UnitIndex, Node]],
    helper_writes: dict[tuple[str, int, int], list[Write]],
) -> Worker:
    params = parameters(node)
    thread_index = params[settings.thread_index_parameter] if len(params) > settings.thread_index_parameter else None
    context = params[settings.context_parameter] if len(params) > settings.context_parameter else None
    scan = _WriteScan(unit, node, context, thread_index, settings)
    writes = list(scan.writes())
    for helper_name, index, call in scan.helper_calls():
        if helper_name == node.spelling or helper_name not in functions:
            continue
        helper_unit, helper = functions[helper_name]
        helper_params = parameters(helper)
        if index >= len(helper_params):
            continue
        key = (helper.path, helper.start_offset, index)
        if key not in helper_writes:
            helper_scan = _WriteScan(helper_unit, helper, helper_params[index], None, settings)
            helper_writes[key] = [
                write for write in helper_scan.writes() if write.kind in ("shared_field", "per_thread")
            ]
        for write in helper_writes[key]:
            if write.kind == "shared_field" and not write.guard:
                # `if (ith == 0) finish(ctx);`: the call's guard covers the helper's writes.
                write = replace(write, guard=scan.call_guard(call))
            if write not in writes:
                writes.append(write)
    return Worker(
        name=node.spelling,
        unit=unit,
        node=node,
        thread_index=thread_index.spelling if thread_index is not None else "",
        context=context.spelling if context is not None else "",
        context_struct=scan.context_struct,
        launches=launches,
        writes=tuple(writes),
    )


class _WriteScan:
    """The writes of one function, with `context` the pointer every thread shares (a parameter) and its aliases."""

    def __init__(
        self,
        unit: UnitIndex,
        function: Node,
        context: Node | None,
        thread_index: Node | None,
        settings: WorkerSettings,
    ) -> None:
        self.unit = unit
        self.function = function
        self.settings = settings
        self.thread_index = thread_index
        self.shared: set[Node] = set()  # declarations that point at the shared context (or a sub-struct of it)
        self.per_thread: set[Node] = set()  # declarations that point at one thread's slot of it
        self.context_struct = ""
        self._lock_events: list[tuple[int, bool]] | None = None
        self._one_thread_ranges: list[tuple[int, int]] | None = None
        self._tree: _Tree | None = None
        if context is not None:
            self.shared.add(context)
            self._find_aliases()

    def _find_aliases(self) -> None:
        # Declarations in source order: `struct x *ctx = data; struct y *s = &ctx->slots[ith];`. Only one initialised
        # with a name, a member or an address can be an alias: that shape is cheap to see, the text tests below not.
        declarations = walked_nodes(self.unit, self.function, "VAR_DECL")
        candidates = [node for node in declarations if _may_alias(node)]
        # Every name an alias can have: the context's, then those of declarations whose value starts from one of
        # them, in any order. A declaration outside that can never alias, and is never located (sorted) at all.
        roots = [_reference_root(node) for node in candidates]
        names = {declaration.spelling for declaration in self.shared}
        grown = True
        while grown:
            grown = False
            for node, root in zip(candidates, roots, strict=True):
                if root is not None and root.spelling in names and node.spelling not in names:
                    names.add(node.spelling)
                    grown = True
        reachable = [
            node for node, root in zip(candidates, roots, strict=True) if root is not None and root.spelling in names
        ]
        for node in in_source_order(reachable):
            if not self._may_reach_shared(node):
                continue  # no name of its value is spelled like a shared declaration yet: asked before locating it
            # Only a pointer declaration, or one initialised with an address (`&ctx->part[ith]`), can be an alias.
            if not self._may_name_shared(node, b"&") and node.type_kind != "POINTER":
                continue
            if not self._may_name_shared(node):
                continue
            initialiser = _initialiser(node)
            if initialiser is None:
                continue
            source = initialiser.unwrapped()
            if source.kind == "DECL_REF_EXPR" and source.referenced in self.shared:
                if node.type_kind == "POINTER":
                    self.shared.add(node)
                    declaration = node.type_declaration
                    if not self.context_struct and declaration is not None and declaration.spelling:
                        self.context_struct = declaration.spelling
                continue
            if source.kind == "MEMBER_REF_EXPR" and _points_to_record(node):
                # `struct htp_ops_context * octx = ctx->octx;`: a struct every thread reaches through the context.
                root, path = lvalue_path(source)
                if root is not None and root in self.shared and path and path[0][0] == "member":
                    if _per_thread_path(path):
                        self.per_thread.add(node)
                    else:
                        self.shared.add(node)
                continue
            if source.kind == "UNARY_OPERATOR" and source.unary_operator == "&":
                operand = source.children()
                if not operand:
                    continue
                root, path = lvalue_path(operand[0])
                if root is None or root not in self.shared or not path or path[0][0] != "member":
                    continue
                if _per_thread_path(path):
                    self.per_thread.add(node)
                else:
                    self.shared.add(node)

    def _may_reach_shared(self, declaration: Node) -> bool:
        """Whether the declaration's initialiser can lead to a shared declaration the way `_find_aliases` follows
        it (the name itself, the root of a member path, or of the operand of `&`): only if that root's reference is
        spelled like one of them."""
        root = _reference_root(declaration)
        return root is not None and root.spelling in {shared.spelling for shared in self.shared}

    def _may_name_shared(self, node: Node, text: bytes = b"") -> bool:
        """Whether the node's text names a declaration of the shared context (or holds `text`); code a macro
        produced always may."""
        data = self.unit.source_bytes(node.path)
        if text:
            if data.find(text, node.start_offset, node.end_offset) >= 0:
                return True
        else:
            words = set(_WORD.findall(data, node.start_offset, node.end_offset))
            if any(declaration.spelling.encode() in words for declaration in self.shared):
                return True
        return node.is_macro_expansion

    def writes(self) -> Iterator[Write]:
        # Only assignments and increments write: keep those before placing them (placing a node costs more).
        candidates = [
            (node, target, order, position)
            for order, kind in enumerate(_WRITE_KINDS)
            for position, node in enumerate(walked_nodes(self.unit, self.function, kind))
            if (target := _written_lvalue(node)) is not None
        ]
        candidates.sort(key=lambda item: (item[0].start_offset, item[2], item[3]))
        for node, target, _order, _position in candidates:
            write = self._classify(node, target)
            if write is not None:
                yield write

    def _classify(self, node: Node, target: Node) -> Write | None:
        root, path = lvalue_path(target)
        if root is None:
            return None
        text = _lvalue_text(self.unit, target)
        if root.kind == "VAR_DECL" and root not in self.shared and root not in self.per_thread:
            storage = _storage(self.unit, root)
            if storage is None:
                return None  # an automatic local: this thread's own
            if root.type_kind == "POINTER" and path and path[0][0] in ("index", "deref"):
                return None  # a store through a global pointer lands in a buffer, like `dst[ir]`
            if self._indexed_by_thread(path):
                return Write("per_thread", node, self.unit, text, self.function.spelling, "")
            return Write(storage, node, self.unit, text, self.function.spelling, self._guard(node, target))
        if root in self.per_thread:
            return Write("per_thread", node, self.unit, text, self.function.spelling, "")
        if root not in self.shared or not path or path[0][0] != "member":
            return None  # a local, or data a pointer parameter points at
        if _per_thread_path(path):
            return Write("per_thread", node, self.unit, text, self.function.spelling, "")
        return Write("shared_field", node, self.unit, text, self.function.spelling, self._guard(node, target))

    def _indexed_by_thread(self, path: list[tuple[str, Any]]) -> bool:
        if self.thread_index is None:
            return False
        for step in path:
            if step[0] == "index" and any(
                ref.kind == "DECL_REF_EXPR" and ref.referenced == self.thread_index for ref in step[1].walk()
            ):
                return True
        return False

    def _guard(self, node: Node, target: Node) -> str:
        if "_Atomic" in target.type_spelling or target.type_spelling.startswith("atomic_"):
            return "atomic"
        if self._under_lock(node):
            return "lock"
        if self._single_thread(node):
            return "single_thread"
        return ""

    def _under_lock(self, node: Node) -> bool:
        """The last lock or unlock call before the node (in source order) is a lock."""
        if node.is_macro_expansion:
            return self._tree_of().under_lock(node, self.settings)  # one offset for all of a macro's nodes
        if self._lock_events is None:
            self._lock_events = []
            lock_calls = [
                call
                for call in walked_nodes(self.unit, self.function, "CALL_EXPR")
                if matches_any(call.spelling, self.settings.unlock_functions + self.settings.lock_functions)
            ]
            for call in in_source_order(lock_calls):
                if matches_any(call.spelling, self.settings.unlock_functions):
                    self._lock_events.append((call.start_offset, False))
                elif matches_any(call.spelling, self.settings.lock_functions):
                    self._lock_events.append((call.start_offset, True))
        before = bisect.bisect_left(self._lock_events, (node.start_offset, False))
        return before > 0 and self._lock_events[before - 1][1]

    def _single_thread(self, node: Node) -> bool:
        """Only one thread gets here: inside `if (ith == k)` (`&&` other conditions allowed), or after an
        `if (ith != k) return;` (or `if (ith) return;`) at the top level of the function body."""
        if self.thread_index is None:
            return False
        if node.is_macro_expansion:
            return self._tree_of().single_thread(node, self.thread_index)
        if self._one_thread_ranges is None:
            self._one_thread_ranges = self._one_thread_parts()
        offset = node.start_offset
        return any(start <= offset < end for start, end in self._one_thread_ranges)

    def _one_thread_parts(self) -> list[tuple[int, int]]:
        """Byte ranges of the function that one thread alone runs."""
        ranges = []
        for statement in function_nodes(self.unit, self.function, "IF_STMT"):
            parts = statement.children()
            if len(parts) >= 2 and _selects_one_thread(parts[0], self.thread_index):
                ranges.append((parts[1].start_offset, parts[1].end_offset))
        body = self.function.children()[-1] if self.function.children() else None
        if body is not None and body.kind == "COMPOUND_STMT":
            for statement in body.children():
                if _returns_unless_one_thread(statement, self.thread_index):
                    ranges.append((statement.end_offset, self.function.end_offset))
                    break
        return ranges

    def _tree_of(self) -> _Tree:
        if self._tree is None:
            self._tree = _Tree(self.unit, self.function)
        return self._tree

    def call_guard(self, call: Node) -> str:
        return "lock" if self._under_lock(call) else "single_thread" if self._single_thread(call) else ""

    def helper_calls(self) -> Iterator[tuple[str, int, Node]]:
        """(callee, parameter index, call) for each call that hands the shared context (or an alias) to a
        function."""
        shared_names = {declaration.spelling for declaration in self.shared}
        for node in function_nodes(self.unit, self.function, "CALL_EXPR"):
            if not node.spelling:
                continue
            values = [argument.unwrapped() for argument in call_arguments(node)]
            # An argument can reference a shared declaration only if it is spelled like one: asked before the text
            # test, which must locate the call.
            if not any(value.kind == "DECL_REF_EXPR" and value.spelling in shared_names for value in values):
                continue
            if not self._may_name_shared(node):
                continue
            for index, value in enumerate(values):
                if value.kind == "DECL_REF_EXPR" and value.referenced in self.shared:
                    yield node.spelling, index, node


class _Tree:
    """The function's nodes with their parents, walked once: for code a macro produced, whose nodes all sit at the
    macro use's offset, so only the tree tells their order and nesting."""

    def __init__(self, unit: UnitIndex, function: Node) -> None:
        self.function = function
        self.parents = function_parents(unit, function)
        self.position: dict[Node, int] = {}
        self.lock_events: list[tuple[int, bool]] | None = None

    def under_lock(self, node: Node, settings: WorkerSettings) -> bool:
        if self.lock_events is None:
            self.position = {item: index for index, item in enumerate(self.parents)}  # pre-order: source order
            self.lock_events = []
            for index, call in enumerate(self.parents):
                if call.kind != "CALL_EXPR":
                    continue
                if matches_any(call.spelling, settings.unlock_functions):
                    self.lock_events.append((index, False))
                elif matches_any(call.spelling, settings.lock_functions):
                    self.lock_events.append((index, True))
        if not self.lock_events or node not in self.position:
            return False
        before = bisect.bisect_left(self.lock_events, (self.position[node], False))
        return before > 0 and self.lock_events[before - 1][1]

    def single_thread(self, node: Node, thread_index: Node) -> bool:
        child = node
        parent = self.parents.get(child)
        while parent is not None:
            if parent.kind == "IF_STMT":
                parts = parent.children()
                if len(parts) >= 2 and parts[1] == child and _selects_one_thread(parts[0], thread_index):
                    return True
            if parent.kind == "COMPOUND_STMT" and self.parents.get(parent) == self.function:
                for statement in parent.children():
                    if statement == child:
                        break
                    if _returns_unless_one_thread(statement, thread_index):
                        return True
            child, parent = parent, self.parents.get(parent)
        return False


def nodes_in(unit: UnitIndex, function: Node, kind: str) -> list[Node]:
    """The nodes of one kind inside a function definition, in source order, from the unit's index bucket (no walk
    of the function's tree)."""
    by_path = memoized(unit.memo, ("backend.nodes_by_offset", kind), lambda: _by_offset(unit, kind))
    starts, nodes = by_path.get(function.path, ((), ()))
    low = bisect.bisect_left(starts, function.start_offset)
    high = bisect.bisect_left(starts, function.end_offset)
    return list(nodes[low:high])


_KINDS_OF_A_SCAN = ("VAR_DECL", "CALL_EXPR", "IF_STMT", *_WRITE_KINDS)
_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include", re.MULTILINE)


def function_nodes(unit: UnitIndex, function: Node, kind: str) -> list[Node]:
    """`nodes_in` for one function, from one walk of its own subtree (in C, the libclang visitor with no Python
    per node beyond a list append) instead of locating every node of the unit: a worker scan asks for a few kinds of
    a few functions. Same nodes, same order."""
    key = ("backend.function_nodes_sorted", function.path, function.start_offset, kind)
    return memoized(unit.memo, key, lambda: in_source_order(walked_nodes(unit, function, kind)))


def walked_nodes(unit: UnitIndex, function: Node, kind: str) -> list[Node]:
    """The nodes of one kind of a function in walk (pre-)order; `in_source_order` of a selection of them is that
    selection's order in `nodes_in`. A filter before the sort saves locating the nodes it drops."""
    key = ("backend.function_nodes", function.path, function.start_offset)
    by_kind = memoized(unit.memo, key, lambda: _function_nodes(unit, function))
    if by_kind is None:
        return nodes_in(unit, function, kind)
    return by_kind.get(kind, [])


def in_source_order(nodes: list[Node]) -> list[Node]:
    """By offset, walk order among nodes at one offset (a macro's), as `nodes_in` has them."""
    order = sorted(range(len(nodes)), key=lambda position: (nodes[position].start_offset, position))
    return [nodes[position] for position in order]


def _function_nodes(unit: UnitIndex, function: Node) -> dict[str, list[Node]] | None:
    data = unit.source_bytes(function.path)
    if _INCLUDE.search(data, function.start_offset, function.end_offset):
        return None  # nodes of an included file sit in the extent but not in the file: let the index decide
    if unit.is_top(function):
        # The walk's own subtree of a top-level definition, by kind: no walk of it here.
        return {kind: unit.nodes_in_top(kind, function) for kind in _KINDS_OF_A_SCAN}
    by_kind: dict[str, list[Node]] = {kind: [] for kind in _KINDS_OF_A_SCAN}
    for node in function.descendants():  # in the function's file: no #include in its extent
        found = by_kind.get(node.kind)
        if found is not None:
            found.append(node)
    return by_kind


def _by_offset(unit: UnitIndex, kind: str) -> dict[str, tuple[list[int], list[Node]]]:
    grouped: dict[str, list[tuple[int, int, Node]]] = {}
    for index, node in enumerate(unit.nodes(kind)):
        grouped.setdefault(node.path, []).append((node.start_offset, index, node))
    by_path = {}
    for path, items in grouped.items():
        items.sort(key=lambda item: (item[0], item[1]))  # walk order among nodes at one offset (a macro's)
        by_path[path] = ([item[0] for item in items], [item[2] for item in items])
    return by_path


def _per_thread_path(path: list[tuple[str, Any]]) -> bool:
    """A step picks an element by a run-time index (`part[ith]`, `dst[ir]`): each thread its own; `part[0]` is not."""
    return any(step[0] == "index" and step[1].constant_value is None for step in path)


def _points_to_record(declaration: Node) -> bool:
    if declaration.type_kind != "POINTER":
        return False
    record_node = declaration.type_declaration
    return record_node is not None and record_node.kind in ("STRUCT_DECL", "UNION_DECL")


_ALIAS_SOURCE_KINDS = frozenset({"DECL_REF_EXPR", "MEMBER_REF_EXPR", "UNARY_OPERATOR"})


def _may_alias(declaration: Node) -> bool:
    initialiser = _initialiser(declaration)
    return initialiser is not None and initialiser.unwrapped().kind in _ALIAS_SOURCE_KINDS


def _initialiser(declaration: Node) -> Node | None:
    children = [child for child in declaration.children() if child.kind not in ("TYPE_REF", "STRUCT_DECL")]
    children = [child for child in children if not child.kind.endswith("_ATTR")]
    return children[-1] if children else None


def _written_lvalue(node: Node) -> Node | None:
    """The lvalue an assignment, compound assignment or increment/decrement writes."""
    if node.kind == "BINARY_OPERATOR":
        if node.binary_operator != "=":
            return None
    elif node.kind == "COMPOUND_ASSIGNMENT_OPERATOR":
        pass
    elif node.kind == "UNARY_OPERATOR":
        if node.unary_operator not in _INCREMENTS:
            return None
    else:
        return None
    children = node.children()
    return children[0] if children else None


def _reference_root(declaration: Node) -> Node | None:
    """The DECL_REF_EXPR at the root of a declaration's initialiser as `_find_aliases` follows it: the value
    itself, or the root of a member path, or of the operand of `&`."""
    initialiser = _initialiser(declaration)
    if initialiser is None:
        return None
    source = initialiser.unwrapped()
    if source.kind == "UNARY_OPERATOR":
        operand = source.children()
        if not operand:
            return None
        source = operand[0]
    return _lvalue_root(source)


def _lvalue_root(expression: Node) -> Node | None:
    """The DECL_REF_EXPR `lvalue_path` starts from (what it takes the referenced declaration of), found the same way
    without reading the steps."""
    node = expression.unwrapped()
    while True:
        if node.kind == "MEMBER_REF_EXPR":
            children = node.children()
            if not children:
                return None
            node = children[0].unwrapped()
        elif node.kind == "ARRAY_SUBSCRIPT_EXPR":
            children = node.children()
            if len(children) != 2:
                return None
            node = children[0].unwrapped()
        elif node.kind == "UNARY_OPERATOR" and node.unary_operator == "*":
            children = node.children()
            if not children:
                return None
            node = children[0].unwrapped()
        elif node.kind == "DECL_REF_EXPR":
            return node
        else:
            return None


def lvalue_path(expression: Node) -> tuple[Node | None, list[tuple[str, Any]]]:
    """The declaration an lvalue starts from and the steps to it, outermost last: `ctx->part[i].n` ->
    (ctx, [("member", "part"), ("index", i), ("member", "n")])."""
    steps: list[tuple[str, Any]] = []
    node = expression.unwrapped()
    while True:
        if node.kind == "MEMBER_REF_EXPR":
            children = node.children()
            steps.append(("member", node.spelling))
            if not children:
                return None, []
            node = children[0].unwrapped()
        elif node.kind == "ARRAY_SUBSCRIPT_EXPR":
            children = node.children()
            if len(children) != 2:
                return None, []
            steps.append(("index", children[1]))
            node = children[0].unwrapped()
        elif node.kind == "UNARY_OPERATOR" and node.unary_operator == "*":
            children = node.children()
            if not children:
                return None, []
            steps.append(("deref", None))
            node = children[0].unwrapped()
        elif node.kind == "DECL_REF_EXPR":
            steps.reverse()
            return node.referenced, steps
        else:
            return None, []


def _storage(unit: UnitIndex, declaration: Node) -> str | None:
    """ "global" for a file-scope variable, "static" for a static local, None for an automatic one."""
    if unit.enclosing_function(declaration) is None:
        return "global"
    # The words before the name (`static const uint32_t calls`), read from the file: tokenising the whole
    # declaration costs its initialiser too. A declaration a macro produced reads as automatic.
    data = unit.source_bytes(declaration.path)
    name_at = _offset_of(unit, declaration.path, declaration.line, declaration.column)
    if name_at is None or not 0 <= declaration.start_offset <= name_at <= len(data):
        return None
    return "static" if _STATIC.search(data, declaration.start_offset, name_at) else None


def _offset_of(unit: UnitIndex, path: str, line: int, column: int) -> int | None:
    starts = memoized(unit.memo, ("backend.line_starts", path), lambda: _line_starts(unit.source_bytes(path)))
    return starts[line - 1] + column - 1 if 0 < line <= len(starts) else None


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    starts.extend(match.end() for match in re.finditer(rb"\n", data))
    return starts


def _selects_one_thread(condition: Node, thread_index: Node) -> bool:
    """`ith == k` with `k` not naming the thread index (exactly one thread passes), possibly `&&` something else."""
    condition = condition.unwrapped()
    if condition.kind != "BINARY_OPERATOR":
        return False
    parts = [part.unwrapped() for part in condition.children()]
    if len(parts) != 2:
        return False
    operator = condition.binary_operator
    if operator == "&&":
        return any(_selects_one_thread(part, thread_index) for part in parts)
    return operator == "==" and _thread_index_against_other(parts, thread_index)


def _returns_unless_one_thread(statement: Node, thread_index: Node) -> bool:
    """`if (ith != k) return;`, `if (ith > 0) return;`, `if (ith) return;`: every thread but one leaves."""
    if statement.kind != "IF_STMT":
        return False
    parts = statement.children()
    if len(parts) != 2:
        return False
    body = parts[1]
    if body.kind == "COMPOUND_STMT":
        inner = body.children()
        body = inner[0] if len(inner) == 1 else body
    if body.kind != "RETURN_STMT":
        return False
    condition = parts[0].unwrapped()
    if _is_thread_index(condition, thread_index):
        return True
    if condition.kind != "BINARY_OPERATOR":
        return False
    sides = [part.unwrapped() for part in condition.children()]
    if len(sides) != 2:
        return False
    operator = condition.binary_operator
    if operator == "!=":
        return _thread_index_against_other(sides, thread_index)
    if operator == ">":
        return _is_thread_index(sides[0], thread_index) and sides[1].constant_value == 0
    return False


def _thread_index_against_other(sides: list[Node], thread_index: Node) -> bool:
    for variable, other in ((sides[0], sides[1]), (sides[1], sides[0])):
        if _is_thread_index(variable, thread_index) and not any(
            _is_thread_index(node, thread_index) for node in other.walk()
        ):
            return True
    return False


def _is_thread_index(node: Node, thread_index: Node) -> bool:
    return node.kind == "DECL_REF_EXPR" and node.referenced == thread_index


def _lvalue_text(unit: UnitIndex, target: Node) -> str:
    """The lvalue as written; inside a macro body, the member chain read from where its first token is spelled."""
    if target.is_macro_expansion:
        place = target.spelling_start
        data = unit.source_bytes(place.path) if place.path else b""
        match = _LVALUE.match(data, place.offset) if data else None
        text = match.group(0).decode("utf-8", "replace") if match else ""
        return " ".join(text.split()) or target.spelling or "this lvalue"
    data = unit.source_bytes(target.path)
    start, end = target.start_offset, target.end_offset
    if not 0 <= start < end <= len(data) or end - start > 60:
        return target.spelling or "this lvalue"
    return " ".join(data[start:end].decode("utf-8", "replace").split())
