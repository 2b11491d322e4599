"""DMA queue operations per kernel function, and what is still in flight where each function can end.

Facts for the DMA pipeline rules (HX109, HX112). A DMA queue is a strict FIFO: every `dma_queue_push*` must be
matched by a `dma_queue_pop*` (or drained by `dma_queue_flush`) before the function that owns the queue returns.

What is computed, per kernel function that touches a queue (directly, or through helpers of the tree found by what
they call, transitively):
- its queue operations (push / pop / flush / helper calls) with the queue they act on. A queue is named by its
  expression, canonical: single-assignment pointer locals are replaced by their initialiser
  (`dma_queue * q = octx->ctx->dma[ith]` makes `q` and `octx->ctx->dma[ith]` one queue) and parameters by their
  position, so a helper's `%0` is bound to the caller's argument at each call;
- the number of transfers in flight on each queue, as an interval [lo, hi], at every exit (each `return`, and the
  end of the body) and at every flush, with the pushes that may still be in flight. The walk is over the structured
  statements (if/else, loops with break/continue, switch, forward `goto`, return); paths merge by joining intervals.

Loops: a loop is walked until its state at the head is stable (intervals widened: a growing upper bound goes to
infinity, a falling lower bound to 0). The lower bound after a loop assumes the loop ran at least once (it comes from
the states that completed an iteration, or left by `break`); the upper bound also counts the loop not running. So
`lo >= 1` at an exit reads "on this path, under the pipeline's own assumption that its loops run, a transfer is
still in flight" (a missing epilogue, a return after pushes), and `hi == 0` at a flush reads "nothing can be in
flight here, whatever the trip counts". A loop whose condition is `!dma_queue_empty(q)`, `dma_queue_depth(q)`
(`> 0`, `!= 0`) or a pop of `q` drains `q`.

Helpers: a call to a function of the tree that (transitively) calls queue primitives is interpreted in place with
its queue parameters bound to the caller's queues (`fa_prefetch_block(dma, ...)` pushes on the caller's `dma`). A
function leaving transfers in flight on a queue that comes from its parameters is a push helper for that queue (what
it leaves belongs to its callers) when it does so at the end of its body and is called elsewhere in the tree, or
when it is defined in a header and does so on every way out (`dma_cache_push`: its callers may be in files a
partial tree does not hold).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node

INFINITE = 1 << 30
_MAX_LOOP_PASSES = 6
_MAX_INLINE_DEPTH = 6
_WRAPPERS = frozenset({"UNEXPOSED_EXPR", "PAREN_EXPR", "CSTYLE_CAST_EXPR"})
_PARAMETER = re.compile(r"%(\d+)")


@dataclass(frozen=True)
class DmaSettings:
    push_functions: tuple[str, ...] = ("dma_queue_push*",)
    pop_functions: tuple[str, ...] = ("dma_queue_pop", "dma_queue_pop_nowait")
    flush_functions: tuple[str, ...] = ("dma_queue_flush",)
    empty_functions: tuple[str, ...] = ("dma_queue_empty",)
    depth_functions: tuple[str, ...] = ("dma_queue_depth",)
    queue_argument: int = 0
    queue_type: str = "dma_queue"  # a parameter whose type names it hands a queue to a helper

    def primitive(self, name: str) -> str:
        """ "push", "pop", "flush", "empty", "depth", or "" for a name that is not a queue primitive."""
        for kind, patterns in (
            ("push", self.push_functions),
            ("pop", self.pop_functions),
            ("flush", self.flush_functions),
            ("empty", self.empty_functions),
            ("depth", self.depth_functions),
        ):
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns):
                return kind
        return ""


def settings_from(options: Mapping[str, Any]) -> DmaSettings:
    def names(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = options.get(key, default)
        return (value,) if isinstance(value, str) else tuple(str(item) for item in value or ())

    defaults = DmaSettings()
    return DmaSettings(
        push_functions=names("push_functions", defaults.push_functions),
        pop_functions=names("pop_functions", defaults.pop_functions),
        flush_functions=names("flush_functions", defaults.flush_functions),
        empty_functions=names("empty_functions", defaults.empty_functions),
        depth_functions=names("depth_functions", defaults.depth_functions),
        queue_argument=int(options.get("queue_argument", defaults.queue_argument)),
        queue_type=str(options.get("queue_type", defaults.queue_type)),
    )


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Queue:
    """One queue as a function names it: `key` is canonical (`%0` a parameter), `name` is how the source says it."""

    key: str
    name: str

    @property
    def from_parameter(self) -> bool:
        return self.key.startswith("%")


@dataclass(frozen=True)
class QueueOp:
    kind: str  # "push" | "pop" | "flush" | "helper"
    queue: Queue
    node: Node
    callee: str


@dataclass(frozen=True)
class InFlight:
    """Transfers on `queue` that may still be in flight where the function ends (`exit_node` None: end of body)."""

    queue: Queue
    exit_node: Node | None
    lo: int
    hi: int
    pushes: tuple[Node, ...]


@dataclass(frozen=True)
class FlushPoint:
    """A flush, with the most that can be in flight on its queue when it runs, and whether anything was pushed."""

    queue: Queue
    node: Node
    hi: int
    pushed_before: bool


@dataclass(frozen=True)
class FunctionDma:
    name: str
    unit: UnitIndex
    node: Node
    ops: tuple[QueueOp, ...]
    helper_queues: frozenset[str]  # keys of queues this function is a push helper for
    in_flight: tuple[InFlight, ...]  # exits with transfers in flight (lo >= 1) on queues it owns
    flushes: tuple[FlushPoint, ...]  # flushes on queues the function starts with empty
    called: bool  # some function of the tree calls it

    def popped_queues(self) -> frozenset[str]:
        return frozenset(op.queue.key for op in self.ops if op.kind in ("pop", "flush"))

    def queue_names(self) -> dict[str, str]:
        return {op.queue.key: op.queue.name for op in self.ops}


# ---------------------------------------------------------------- the abstract state


@dataclass(frozen=True)
class Level:
    """Transfers in flight on one queue: at least `lo`, at most `hi`; the pushes that may be among them.

    `lo` takes the loops before this point to have run at least once; `sure` is the lower bound without that.
    """

    lo: int = 0
    hi: int = 0
    sites: frozenset[Tree] = frozenset()
    pushed: bool = False  # some push happened on some path before this point
    sure: int = 0


_EMPTY = Level()
State = dict  # queue key -> Level; None is an unreachable point


def _level(state: State, key: str, entry: Callable[[str], Level]) -> Level:
    found = state.get(key)
    return found if found is not None else entry(key)


def _join_level(a: Level, b: Level) -> Level:
    if a == b:
        return a
    return Level(min(a.lo, b.lo), max(a.hi, b.hi), a.sites | b.sites, a.pushed or b.pushed, min(a.sure, b.sure))


def join(a: State | None, b: State | None, entry: Callable[[str], Level] = lambda _key: _EMPTY) -> State | None:
    if a is None:
        return b
    if b is None:
        return a
    if a is b:
        return a
    merged: State = {}
    for key in a.keys() | b.keys():
        merged[key] = _join_level(_level(a, key, entry), _level(b, key, entry))
    return merged


def _widen(old: State, new: State, entry: Callable[[str], Level]) -> State:
    widened: State = {}
    for key in old.keys() | new.keys():
        before, after = _level(old, key, entry), _level(new, key, entry)
        lo = before.lo if after.lo >= before.lo else 0
        hi = before.hi if after.hi <= before.hi else INFINITE
        sure = before.sure if after.sure >= before.sure else 0
        widened[key] = Level(lo, hi, before.sites | after.sites, before.pushed or after.pushed, sure)
    return widened


def _push(level: Level, node: Tree) -> Level:
    return Level(
        min(level.lo + 1, INFINITE),
        min(level.hi + 1, INFINITE),
        level.sites | {node},
        True,
        min(level.sure + 1, INFINITE),
    )


def _pop(level: Level) -> Level:
    hi = level.hi if level.hi >= INFINITE else max(level.hi - 1, 0)
    sites = level.sites if hi > 0 else frozenset()
    return Level(max(level.lo - 1, 0), hi, sites, level.pushed, max(level.sure - 1, 0))


def _drained(level: Level) -> Level:
    return Level(0, 0, frozenset(), level.pushed)


# ---------------------------------------------------------------- the tree's functions


class Tree:
    """A node of a function body read once from libclang: the walk passes over loops many times, in Python only.

    `relevant` marks the subtrees holding a call the walk acts on (a queue primitive or a helper of the tree); an
    expression without one cannot change the queues and is skipped.
    """

    __slots__ = ("_binary", "_spelling", "_unary", "kids", "kind", "node", "relevant")

    def __init__(self, node: Node, kind: str, kids: list[Tree], relevant: bool) -> None:
        self.node = node
        self.kind = kind
        self.kids = kids
        self.relevant = relevant
        self._spelling: str | None = None
        self._binary: str | None = None
        self._unary: str | None = None

    def children(self) -> list[Tree]:
        return self.kids

    @property
    def spelling(self) -> str:
        if self._spelling is None:
            self._spelling = self.node.spelling
        return self._spelling

    @property
    def binary_operator(self) -> str:
        if self._binary is None:
            self._binary = self.node.binary_operator
        return self._binary

    @property
    def unary_operator(self) -> str:
        if self._unary is None:
            self._unary = self.node.unary_operator
        return self._unary

    @property
    def constant_value(self) -> int | float | None:
        return self.node.constant_value


def read_tree(node: Node, relevant_call: Callable[[str], bool]) -> Tree:
    """The tree of `node` from one traversal; a subtree is relevant when it holds a call `relevant_call` names."""
    root = Tree(node, node.kind, [], False)
    # (tree, its parent) in pre-order: a node's kids are filled before its next sibling is popped
    placed: list[tuple[Tree, Tree]] = []
    stack = [(child, root) for child in reversed(node.children())]
    pop, push = stack.pop, stack.extend
    while stack:
        child, parent = pop()
        tree = Tree(child, child.kind, [], False)
        parent.kids.append(tree)
        placed.append((tree, parent))
        if tree.kind == "CALL_EXPR" and relevant_call(tree.spelling):
            tree.relevant = True
        grandchildren = child.children()
        if grandchildren:
            push([(grandchild, tree) for grandchild in reversed(grandchildren)])
    for tree, parent in reversed(placed):
        if tree.relevant:
            parent.relevant = True
    return root


def _walk_tree(tree: Tree) -> Iterator[Tree]:
    stack = [tree]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.kids))


class FunctionFacts:
    """What the walk needs of one definition: its parameters, single-assignment pointer locals, its body's tree."""

    def __init__(self, name: str, unit: UnitIndex, node: Node, relevant_call: Callable[[str], bool]) -> None:
        self.name = name
        self.unit = unit
        self.node = node
        children = node.children()
        self.parameters = [child.spelling for child in children if child.kind == "PARM_DECL"]
        body = next((child for child in children if child.kind == "COMPOUND_STMT"), None)
        self.body = read_tree(body, relevant_call) if body is not None else None
        self.aliases: dict[str, tuple[str, str]] = {}
        if self.body is not None:
            self._collect_aliases(self.body)

    def _collect_aliases(self, body: Tree) -> None:
        declarations: list[Tree] = []
        names_seen: dict[str, int] = {}
        writes: list[Tree] = []
        for tree in _walk_tree(body):
            kind = tree.kind
            if kind == "VAR_DECL":
                declarations.append(tree)
                names_seen[tree.spelling] = names_seen.get(tree.spelling, 0) + 1
            elif (
                kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR", "UNARY_OPERATOR")
                and tree.kids
                and _unwrapped(tree.kids[0]).kind == "DECL_REF_EXPR"
            ):
                writes.append(tree)
        pointers = {
            tree.spelling
            for tree in declarations
            if names_seen.get(tree.spelling, 0) == 1 and tree.kids and tree.node.type_kind == "POINTER"
        }
        assigned: set[str] = set()
        for tree in writes:
            name = _unwrapped(tree.kids[0]).spelling
            if name not in pointers:
                continue
            if (
                tree.kind == "COMPOUND_ASSIGNMENT_OPERATOR"
                or (tree.kind == "BINARY_OPERATOR" and tree.binary_operator == "=")
                or (tree.kind == "UNARY_OPERATOR" and tree.unary_operator in ("++", "--", "&"))
            ):
                assigned.add(name)
        for declaration in declarations:
            name = declaration.spelling
            if name not in pointers or name in assigned:
                continue
            initialiser = declaration.kids[-1]
            if not (initialiser.kind.endswith("EXPR") or initialiser.kind.endswith("LITERAL")):
                continue
            key, _name = self.queue_of(initialiser)
            self.aliases[name] = (key, name)

    def queue_of(self, tree: Tree) -> tuple[str, str]:
        """(canonical key, source name) of an expression naming a queue."""
        tree = _unwrapped(tree)
        kind = tree.kind
        kids = tree.kids
        if kind == "DECL_REF_EXPR":
            name = tree.spelling
            if name in self.aliases:
                return self.aliases[name]
            if name in self.parameters:
                referenced = tree.node.referenced
                if referenced is not None and referenced.kind == "PARM_DECL":
                    return (f"%{self.parameters.index(name)}", name)
            return (name, name)
        if kind == "MEMBER_REF_EXPR":
            base_key, base_name = self.queue_of(kids[0]) if kids else ("", "")
            if base_key.startswith("&"):
                base_key = base_key[1:]
            member = tree.spelling
            return (f"{base_key}.{member}", f"{base_name}->{member}" if base_name else member)
        if kind == "ARRAY_SUBSCRIPT_EXPR" and len(kids) == 2:
            base_key, base_name = self.queue_of(kids[0])
            index_key, index_name = self.queue_of(kids[1])
            return (f"{base_key}[{index_key}]", f"{base_name}[{index_name}]")
        if kind == "UNARY_OPERATOR" and kids:
            inner_key, inner_name = self.queue_of(kids[0])
            operator = tree.unary_operator
            return (f"{operator}{inner_key}", f"{operator}{inner_name}")
        value = tree.constant_value
        if value is not None:
            return (str(value), str(value))
        return (f"<{kind}@{tree.node.line}:{tree.node.column}>", "the queue")


def _unwrapped(tree: Tree) -> Tree:
    while tree.kind in _WRAPPERS and tree.kids:
        tree = tree.kids[-1]
    return tree


# ---------------------------------------------------------------- the walk


class _Walk:
    """One walk of a function body; `entry` gives the state of a queue the function has not touched yet."""

    def __init__(self, model: DmaModel, facts: FunctionFacts, entry: Callable[[str], Level], depth: int) -> None:
        self.model = model
        self.facts = facts
        self.entry = entry
        self.depth = depth
        self.exits: dict[Tree | None, State] = {}
        self.final_exits: set[Tree | None] = {None}
        self.flushes: dict[Tree, tuple[Queue, Level, bool]] = {}
        self.ops: dict[Tree, QueueOp] = {}
        self.touched: dict[str, Level] = {}
        self.loops: list[tuple[list[State | None], list[State | None]]] = []
        self.switch_breaks: list[list[State | None]] = []
        self.break_targets: list[str] = []
        self.gotos: dict[str, State | None] = {}
        self.labels_seen: set[str] = set()

    # -- state helpers

    def level(self, state: State, key: str) -> Level:
        found = state.get(key)
        if found is not None:
            return found
        level = self.entry(key)
        self.touched.setdefault(key, level)
        return level

    def join(self, a: State | None, b: State | None) -> State | None:
        return join(a, b, self._entry_level)

    def _entry_level(self, key: str) -> Level:
        level = self.entry(key)
        self.touched.setdefault(key, level)
        return level

    def run(self) -> State | None:
        body = self.facts.body
        if body is None:
            return None
        for child in body.children():
            if child.kind == "RETURN_STMT":
                self.final_exits.add(child)
        end = self.walk(body, {})
        if end is not None:
            self.exits[None] = self.join(self.exits.get(None), end)
        return end

    def exit_state(self) -> State | None:
        merged: State | None = None
        for state in self.exits.values():
            merged = self.join(merged, state)
        return merged

    # -- statements

    def walk(self, node: Tree, state: State | None) -> State | None:
        kind = node.kind
        if kind == "COMPOUND_STMT":
            for child in node.children():
                state = self.walk(child, state)
            return state
        if kind == "LABEL_STMT":
            self.labels_seen.add(node.spelling)
            state = self.join(state, self.gotos.pop(node.spelling, None))
            children = node.children()
            return self.walk(children[-1], state) if children else state
        if state is None:
            return None
        if kind == "IF_STMT":
            children = node.children()
            if len(children) < 2:
                return self.expression(node, state)
            has_else = len(children) >= 3
            condition = children[-3] if has_else else children[-2]
            state = self.expression(condition, state)
            then_state = self.walk(children[-2] if has_else else children[-1], state)
            else_state = self.walk(children[-1], state) if has_else else state
            return self.join(then_state, else_state)
        if kind in ("FOR_STMT", "WHILE_STMT", "DO_STMT"):
            return self._loop(node, state)
        if kind == "SWITCH_STMT":
            return self._switch(node, state)
        if kind in ("CASE_STMT", "DEFAULT_STMT"):
            children = node.children()
            return self.walk(children[-1], state) if children else state
        if kind == "RETURN_STMT":
            state = self.expression(node, state)
            if state is not None:
                self.exits[node] = self.join(self.exits.get(node), state)
            return None
        if kind == "BREAK_STMT":
            if self.break_targets and self.break_targets[-1] == "loop" and self.loops:
                self.loops[-1][0].append(state)
            elif self.switch_breaks:
                self.switch_breaks[-1].append(state)
            return None
        if kind == "CONTINUE_STMT":
            if self.loops:
                self.loops[-1][1].append(state)
            return None
        if kind == "GOTO_STMT":
            children = node.children()
            label = children[0].spelling if children else ""
            if label and label not in self.labels_seen:
                self.gotos[label] = self.join(self.gotos.get(label), state)
            return None  # a backward goto ends the path without a verdict
        return self.expression(node, state)

    def _loop(self, node: Tree, state: State) -> State | None:
        children = node.children()
        if not children:
            return state
        kind = node.kind
        body = children[0] if kind == "DO_STMT" else children[-1]
        condition: Tree | None = None
        if kind == "WHILE_STMT" and len(children) >= 2:
            condition = children[0]
        elif kind == "DO_STMT" and len(children) >= 2:
            condition = children[-1]
        else:
            for part in children[:-1]:  # a for's init, condition and increment, once: queue calls there are rare
                state = self.expression(part, state)
                if state is None:
                    return None
        drains = self._drained_queues(node, children, body)

        before = state
        head = before
        after_iterations: State | None = None
        breaks: list[State | None] = []
        self.break_targets.append("loop")
        for index in range(_MAX_LOOP_PASSES):
            entered = self.expression(condition, head) if condition is not None and kind != "DO_STMT" else head
            breaks = []
            continues: list[State | None] = []
            self.loops.append((breaks, continues))
            after = self.walk(body, entered)
            self.loops.pop()
            for continued in continues:
                after = self.join(after, continued)
            if condition is not None and kind == "DO_STMT":
                after = self.expression(condition, after)
            after_iterations = after
            merged = self.join(head, after)
            if merged is None:
                break
            grown = merged if index == 0 else _widen(head, merged, self._entry_level)
            if _same(grown, head, self._entry_level):
                break
            head = grown
        self.break_targets.pop()

        if kind == "WHILE_STMT" and condition is not None:
            skipped = self.expression(condition, before)
            completed = self.expression(condition, after_iterations) if after_iterations is not None else None
        else:
            skipped = before
            completed = after_iterations
        left: State | None = completed
        for broken in breaks:
            left = self.join(left, broken)
        if left is None:
            exit_state = None if kind == "DO_STMT" else skipped
        elif kind == "DO_STMT" or skipped is None:
            exit_state = left
        else:
            exit_state = self._at_least_once(left, skipped)
        if exit_state is not None and drains:
            exit_state = dict(exit_state)
            for key in drains:
                drained = _drained(self.level(exit_state, key))
                for broken in breaks:
                    if broken is not None:
                        drained = _join_level(drained, self.level(broken, key))
                exit_state[key] = drained
        return exit_state

    def _at_least_once(self, left: State, skipped: State) -> State:
        """Lower bounds from the states that ran the body, upper bounds from those and the loop not running."""
        merged: State = {}
        for key in left.keys() | skipped.keys():
            ran, not_ran = self.level(left, key), self.level(skipped, key)
            merged[key] = Level(
                ran.lo,
                max(ran.hi, not_ran.hi),
                ran.sites | not_ran.sites,
                ran.pushed or not_ran.pushed,
                min(ran.sure, not_ran.sure),
            )
        return merged

    def _drained_queues(self, node: Tree, children: list[Tree], body: Tree) -> list[str]:
        """Queues a loop drains: its condition is `!empty(q)`, `depth(q)` (`> 0`, `!= 0`) or a pop of `q`."""
        drained: list[str] = []
        for part in children:
            if part == body:
                continue
            key = self._drain_condition(part)
            if key is not None:
                drained.append(key)
        return drained

    def _drain_condition(self, condition: Tree) -> str | None:
        if not condition.relevant:
            return None
        node = _unwrapped(condition)
        negated = False
        while node.kind == "UNARY_OPERATOR" and node.unary_operator == "!":
            negated = not negated
            children = node.children()
            if not children:
                return None
            node = _unwrapped(children[0])
        if node.kind == "BINARY_OPERATOR" and node.binary_operator in ("!=", ">"):
            children = node.children()
            if len(children) == 2 and _is_zero(children[1]):
                node = _unwrapped(children[0])
        if node.kind == "MEMBER_REF_EXPR" and not negated:
            children = node.children()
            if not children:
                return None
            node = _unwrapped(children[0])
        if node.kind != "CALL_EXPR":
            return None
        primitive = self.model.primitive(node.spelling)
        wanted = {"empty": True, "depth": False, "pop": False}
        if primitive not in wanted or wanted[primitive] != negated:
            return None
        arguments = node.children()[1:]
        index = self.model.settings.queue_argument
        if len(arguments) <= index:
            return None
        return self.facts.queue_of(arguments[index])[0]

    def _switch(self, node: Tree, state: State) -> State | None:
        children = node.children()
        if len(children) < 2:
            return state
        state = self.expression(children[0], state)
        if state is None:
            return None
        body = children[-1]
        breaks: list[State | None] = []
        self.switch_breaks.append(breaks)
        self.break_targets.append("switch")
        current: State | None = None
        has_default = False
        statements = body.children() if body.kind == "COMPOUND_STMT" else [body]
        for statement in statements:
            if statement.kind in ("CASE_STMT", "DEFAULT_STMT"):
                current = self.join(current, state)
                has_default = has_default or _has_default(statement)
            current = self.walk(statement, current)
        self.break_targets.pop()
        self.switch_breaks.pop()
        after = current
        for broken in breaks:
            after = self.join(after, broken)
        if not has_default:
            after = self.join(after, state)
        return after

    # -- expressions

    def expression(self, node: Tree | None, state: State | None) -> State | None:
        if node is None or state is None or not node.relevant:
            return state
        kind = node.kind
        if kind == "CALL_EXPR":
            children = node.children()
            arguments = children[1:]
            for argument in arguments:
                state = self.expression(argument, state)
            return self._call(node, arguments, state) if state is not None else None
        if kind == "CONDITIONAL_OPERATOR":
            children = node.children()
            if len(children) == 3:
                state = self.expression(children[0], state)
                return self.join(self.expression(children[1], state), self.expression(children[2], state))
        if kind == "BINARY_OPERATOR" and node.binary_operator in ("&&", "||"):
            children = node.children()
            if len(children) == 2:
                state = self.expression(children[0], state)
                return self.join(state, self.expression(children[1], state))
        for child in node.children():
            state = self.expression(child, state)
        return state

    def _call(self, node: Tree, arguments: list[Tree], state: State) -> State:
        name = node.spelling
        settings = self.model.settings
        primitive = self.model.primitive(name)
        if primitive in ("push", "pop", "flush"):
            if len(arguments) <= settings.queue_argument:
                return state
            queue = Queue(*self.facts.queue_of(arguments[settings.queue_argument]))
            self.ops.setdefault(node, QueueOp(primitive, queue, node.node, name))
            level = self.level(state, queue.key)
            if primitive == "flush":
                previous = self.flushes.get(node)
                seen = level if previous is None else _join_level(previous[1], level)
                self.flushes[node] = (queue, seen, seen.pushed)
            state = dict(state)
            if primitive == "push":
                state[queue.key] = _push(level, node)
            elif primitive == "pop":
                state[queue.key] = _pop(level)
            else:
                state[queue.key] = _drained(level)
            return state
        if primitive:
            return state
        callee = self.model.helper_for(self.facts.unit, name)
        if callee is not None:
            return self._inline(node, callee, arguments, state)
        return state

    def _inline(self, node: Tree, callee: FunctionFacts, arguments: list[Tree], state: State) -> State:
        bound = [self.facts.queue_of(argument) for argument in arguments]

        def caller_key(key: str) -> str:
            def substitute(match: re.Match[str]) -> str:
                index = int(match.group(1))
                return bound[index][0] if index < len(bound) else match.group(0)

            mapped = _PARAMETER.sub(substitute, key)
            return mapped[1:] if mapped.startswith("&") and "." in mapped else mapped

        def caller_name(key: str) -> str:
            index_match = re.match(r"%(\d+)", key)
            if index_match and int(index_match.group(1)) < len(bound):
                return bound[int(index_match.group(1))][1] + key[index_match.end() :].replace(".", "->")
            return key

        def entry(key: str) -> Level:
            if not key.startswith("%"):
                return _EMPTY
            return self.level(state, caller_key(key))

        result = self.model.summary(callee, entry, self.depth + 1)
        state = dict(state)
        if result is None:  # too deep or recursive: anything may have happened to the queues it was given
            for argument, (key, _name) in zip(arguments, bound, strict=True):
                if self.model.settings.queue_type in argument.node.type_spelling:
                    state[key] = Level(0, INFINITE, self.level(state, key).sites | {node}, True, 0)
            return state
        for key, level in result.items():
            if not key.startswith("%"):
                continue
            mapped = caller_key(key)
            before = self.level(state, mapped)
            added = level.sites - before.sites
            sites = (level.sites & before.sites) | ({node} if added else frozenset())
            state[mapped] = Level(level.lo, level.hi, sites if level.hi > 0 else frozenset(), level.pushed, level.sure)
            self.ops.setdefault(node, QueueOp("helper", Queue(mapped, caller_name(key)), node.node, callee.name))
        return state


def self_level(state: State, key: str) -> Level:
    """The level of a queue in a walk that started with every queue empty."""
    return state.get(key, _EMPTY)


def _is_zero(node: Tree) -> bool:
    """`0` or `NULL` (`((void *) 0)`)."""
    node = _unwrapped(node)
    return node.kind in ("GNU_NULL_EXPR", "CXX_NULL_PTR_LITERAL_EXPR") or node.constant_value == 0


def _same(a: State, b: State, entry: Callable[[str], Level]) -> bool:
    return all(_level(a, key, entry) == _level(b, key, entry) for key in a.keys() | b.keys())


def _has_default(statement: Tree) -> bool:
    while statement.kind in ("CASE_STMT", "DEFAULT_STMT"):
        if statement.kind == "DEFAULT_STMT":
            return True
        children = statement.children()
        if not children:
            return False
        statement = children[-1]
    return False


# ---------------------------------------------------------------- the model

FunctionId = tuple[str, str]  # (path of the definition, name): static functions of two files may share a name


class DmaModel:
    """The tree's kernel functions that touch DMA queues, and their walks."""

    def __init__(self, project: Project, settings: DmaSettings) -> None:
        self.settings = settings
        self._primitives: dict[str, str] = {}
        self._by_unit: dict[int, dict[str, Node]] = {}
        self._anywhere: dict[str, tuple[UnitIndex, Node]] = {}
        for unit in project.kernel_units():
            self._by_unit[id(unit)] = unit.functions
            for name, node in unit.functions.items():
                self._anywhere.setdefault(name, (unit, node))
        callees: dict[FunctionId, set[FunctionId]] = {}
        primitive_calls: dict[FunctionId, list[Node]] = {}
        places: dict[FunctionId, tuple[UnitIndex, Node]] = {}
        takes_queue: dict[FunctionId, bool] = {}

        def hands_queue(function_id: FunctionId, node: Node) -> bool:
            found = takes_queue.get(function_id)
            if found is None:
                found = takes_queue[function_id] = any(
                    child.kind == "PARM_DECL" and settings.queue_type in child.type_spelling
                    for child in node.children()
                )
            return found

        self.called_names: set[str] = set()
        for unit in project.kernel_units():
            for call in unit.nodes("CALL_EXPR"):
                name = call.spelling
                self.called_names.add(name)
                primitive = self.primitive(name)
                target = None if primitive else self.resolve(unit, name)
                # Only calls that can reach a queue matter here: primitives, and calls of functions taking one.
                if target is None and not primitive:
                    continue
                if target is not None and not hands_queue(target[0], target[2]):
                    continue
                function = unit.enclosing_function(call)
                if function is None:
                    continue
                caller = (function.path, function.spelling)
                places.setdefault(caller, (unit, function))
                if primitive:
                    primitive_calls.setdefault(caller, []).append(call)
                elif target is not None:
                    callees.setdefault(caller, set()).add(target[0])
        # Functions calling queue primitives; helpers among them take a queue parameter, and (transitively) the
        # functions calling a helper join them. A call that hands over no queue cannot touch the caller's queues.
        self.dma_functions: set[FunctionId] = {
            caller
            for caller, calls in primitive_calls.items()
            if not self.primitive(caller[1])
            and any(self.primitive(call.spelling) in ("push", "pop", "flush") for call in calls)
        }
        self.helpers: set[FunctionId] = {
            function_id for function_id in self.dma_functions if hands_queue(function_id, places[function_id][1])
        }
        changed = True
        while changed:
            changed = False
            for caller, targets in callees.items():
                if caller not in self.dma_functions and not self.primitive(caller[1]) and targets & self.helpers:
                    self.dma_functions.add(caller)
                    if hands_queue(caller, places[caller][1]):
                        self.helpers.add(caller)
                    changed = True
        self.places = places
        self._facts: dict[FunctionId, FunctionFacts] = {}
        # Functions a macro stamps out several times (one per type) with the same queue calls walk alike: the first
        # stands for the others, so a finding is reported once, at the first expansion.
        self.copies: dict[FunctionId, FunctionId] = {}
        first_of: dict[tuple[Any, ...], FunctionId] = {}
        for function_id in sorted(self.dma_functions, key=lambda item: (item[0], places[item][1].line, item[1])):
            node = places[function_id][1]
            if not node.is_macro_expansion:
                continue
            place = node.spelling_start
            calls = tuple(sorted(call.spelling for call in primitive_calls.get(function_id, ())))
            helpers = tuple(sorted(callees.get(function_id, set()) & self.helpers))
            signature = (place.path, place.offset, calls, helpers)
            if signature in first_of:
                self.copies[function_id] = first_of[signature]
            else:
                first_of[signature] = function_id
        self._summaries: dict[FunctionId, list[tuple[dict[str, Level], State | None]]] = {}
        self._active: set[FunctionId] = set()

    def resolve(self, unit: UnitIndex, name: str) -> tuple[FunctionId, UnitIndex, Node] | None:
        """The definition a call names: the calling unit's own first (a static of that file), else any unit's."""
        node = self._by_unit.get(id(unit), {}).get(name)
        if node is not None:
            return ((node.path, name), unit, node)
        found = self._anywhere.get(name)
        if found is None:
            return None
        return ((found[1].path, name), found[0], found[1])

    def primitive(self, name: str) -> str:
        found = self._primitives.get(name)
        if found is None:
            found = self._primitives[name] = self.settings.primitive(name)
        return found

    def _acts_on_queues(self, unit: UnitIndex, name: str) -> bool:
        if self.primitive(name):
            return True
        target = self.resolve(unit, name)
        return target is not None and target[0] in self.helpers

    def helper_for(self, unit: UnitIndex, name: str) -> FunctionFacts | None:
        target = self.resolve(unit, name)
        return self.facts(target[0]) if target is not None and target[0] in self.helpers else None

    def facts(self, function_id: FunctionId) -> FunctionFacts | None:
        """The function's tree and names, read on first use."""
        found = self._facts.get(function_id)
        if found is None and function_id in self.dma_functions:
            unit, node = self.places[function_id]
            found = FunctionFacts(function_id[1], unit, node, lambda name: self._acts_on_queues(unit, name))
            self._facts[function_id] = found
        return found

    def summary(self, callee: FunctionFacts, entry: Callable[[str], Level], depth: int) -> State | None:
        """The state at the callee's exits (joined) when entered with `entry`; None when too deep or recursive."""
        identity = (callee.node.path, callee.name)
        if depth > _MAX_INLINE_DEPTH or identity in self._active or callee.body is None:
            return None
        for touched, result in self._summaries.get(identity, ()):
            if all(entry(key) == level for key, level in touched.items()):
                return result
        self._active.add(identity)
        try:
            walk = _Walk(self, callee, entry, depth)
            walk.run()
            result = walk.exit_state()
        finally:
            self._active.discard(identity)
        self._summaries.setdefault(identity, []).append((walk.touched, result))
        return result

    def analyse(self, function_id: FunctionId) -> FunctionDma | None:
        facts = self.facts(function_id)
        if facts is None or facts.body is None:
            return None
        walk = _Walk(self, facts, lambda _key: _EMPTY, 0)
        walk.run()
        end: State | None = None
        for exit_node in walk.final_exits:
            end = join(end, walk.exits.get(exit_node))
        called = function_id[1] in self.called_names
        exits = [state for state in walk.exits.values() if state is not None]
        # A header's function may be called only from files a partial tree does not hold (dma_cache_push).
        in_header = facts.node.path.endswith((".h", ".hpp"))
        helper_queues = frozenset(
            key
            for key in {key for state in exits for key in state}
            if key.startswith("%")
            and (
                (called and end is not None and self_level(end, key).lo >= 1)
                or (in_header and all(self_level(state, key).lo >= 1 for state in exits))
            )
        )
        names = {op.queue.key: op.queue.name for op in walk.ops.values()}
        in_flight: list[InFlight] = []
        for exit_node, state in walk.exits.items():
            # At the end of the body the loops are taken to have run; an early return must hold a transfer for sure.
            final = exit_node in walk.final_exits
            for key, level in sorted((state or {}).items()):
                if (level.lo if final else level.sure) >= 1 and key not in helper_queues:
                    pushes = tuple(
                        sorted(
                            (site.node for site in level.sites), key=lambda site: (site.path, site.line, site.column)
                        )
                    )
                    exit_at = exit_node.node if exit_node is not None else None
                    in_flight.append(InFlight(Queue(key, names.get(key, key)), exit_at, level.lo, level.hi, pushes))
        # A queue a caller hands over may hold the caller's transfers: only queues the function starts with empty
        # (its own, or any queue of a function nothing in the tree calls: a worker, an entry point) say "nothing".
        flushes = [
            FlushPoint(queue, node.node, level.hi, pushed)
            for node, (queue, level, pushed) in walk.flushes.items()
            if not (queue.from_parameter and called)
        ]
        ops = tuple(sorted(walk.ops.values(), key=lambda op: (op.node.path, op.node.line, op.node.column)))
        return FunctionDma(
            facts.name, facts.unit, facts.node, ops, helper_queues, tuple(in_flight), tuple(flushes), called
        )


def dma_model(project: Project, settings: DmaSettings) -> DmaModel:
    return memoized(project.memo, ("dma.model", settings), lambda: DmaModel(project, settings))


def dma_functions(project: Project, settings: DmaSettings) -> list[FunctionDma]:
    """Every kernel function of the tree that touches a DMA queue, with its walk's results (memoized per project)."""

    def compute() -> list[FunctionDma]:
        model = dma_model(project, settings)
        found = []
        for function_id in sorted(model.dma_functions):
            if function_id in model.copies:
                continue
            analysed = model.analyse(function_id)
            if analysed is not None:
                found.append(analysed)
        return found

    return memoized(project.memo, ("dma.functions", settings), compute)
