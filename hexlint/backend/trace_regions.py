"""Trace events of kernel functions: each start with its event type, `info` argument and enclosing loops, and the
calls made while events are open (the start/stop regions), path by path.

A call is inside an event's region on a path when the event was started earlier on that path and not yet stopped
there: the HX107 balance walker's open-event state at the statement holding the call (if/else, loops with break and
continue, switch and early returns followed; several paths reaching a call give several states). The innermost open
event of a state is the one started last. A DMA wait helper is a kernel function that calls a wait (`dma_queue_pop`)
itself, or a helper, outside a DMA event of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hexlint.backend.loops import LoopRegion, NodePlace, is_loop_invariant, loop_regions, written_in
from hexlint.backend.names import matches_any
from hexlint.backend.trace import BalanceWalker, TraceEvent, TraceSettings, functions_with_trace_calls, kernel_text
from hexlint.backend.trace import _event_name as event_name
from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_STEPPED = re.compile(r"([A-Za-z_]\w*)\s*(?:\+\+|--|[-+*]=|<<=|>>=|=(?!=))|(?:\+\+|--)\s*([A-Za-z_]\w*)")

OpenEvents = tuple[TraceEvent, ...]  # the events open on one path, the innermost (started last) last


@dataclass(frozen=True)
class CallInTrace:
    """A call in a function that emits trace events, with the events open at it on each path reaching it."""

    function: str
    unit: UnitIndex
    node: Node
    callee: str
    open_events: frozenset[OpenEvents]

    def innermost_events(self) -> frozenset[str]:
        """The innermost open event type of each path ("" for a path with none open)."""
        return frozenset(state[-1].event if state else "" for state in self.open_events)


@dataclass(frozen=True)
class FunctionTrace:
    function: str
    unit: UnitIndex
    calls: tuple[CallInTrace, ...]


@dataclass(frozen=True)
class TraceStart:
    """A `htp_trace_event_start(tr, event, info)` call and the loops repeating it (innermost first)."""

    function: str | None
    unit: UnitIndex
    node: Node
    event: str
    info: Node | None
    loops: tuple[LoopRegion, ...]


def function_traces(
    project: Project, settings: TraceSettings, callees: frozenset[str] | None = None
) -> dict[str, FunctionTrace]:
    """The calls inside trace regions, per kernel function that emits trace events; with `callees`, only the calls
    of those functions (and only the functions making one are walked)."""
    key = ("trace_regions.function_traces", settings, callees)
    return memoized(project.memo, key, lambda: _function_traces(project, settings, callees))


def _function_traces(
    project: Project, settings: TraceSettings, callees: frozenset[str] | None
) -> dict[str, FunctionTrace]:
    text = kernel_text(project)
    wanted: dict[str, list[Node]] | None = None
    if callees is not None:
        wanted = {}
        by_callee = calls_by_callee(project)
        for callee in sorted(callees):
            for unit, call in by_callee.get(callee, ()):
                function = unit.enclosing_function(call)
                if function is not None:
                    wanted.setdefault(function.spelling, []).append(call)
    traces = {}
    for function in functions_with_trace_calls(text, settings):
        if wanted is not None and function not in wanted:
            continue
        unit, node = text.functions[function]
        body = next((child for child in node.children() if child.kind == "COMPOUND_STMT"), None)
        if body is None:
            continue
        walker = _RegionWalker(unit, settings, None if wanted is None else wanted[function])
        walker.run(body)
        calls = tuple(
            CallInTrace(function, unit, call, call.spelling, frozenset(states))
            for call, states in walker.open_at.values()
        )
        traces[function] = FunctionTrace(function, unit, calls)
    return traces


class _RegionWalker(BalanceWalker):
    """The balance walker, also noting the open events at the calls (all, or the `candidates`) of every statement
    it steps over."""

    def __init__(self, unit: UnitIndex, settings: TraceSettings, candidates: list[Node] | None = None) -> None:
        super().__init__(unit, settings)
        self.open_at: dict[Node, tuple[Node, set[OpenEvents]]] = {}
        self._calls: dict[Node, list[Node]] = {}  # loops are walked several times: each statement's calls once
        self._candidates = candidates

    def leaf(self, node: Node, states: set[OpenEvents]) -> set[OpenEvents]:
        if any(states):  # a statement outside every event is in no region: its calls are not looked at
            calls = self._calls.get(node)
            if calls is None:
                calls = self._calls[node] = self._calls_in(node)
            for call in calls:
                self.open_at.setdefault(call, (call, set()))[1].update(states)
        return super().leaf(node, states)

    def _calls_in(self, node: Node) -> list[Node]:
        if self._candidates is not None:
            start, end, path = node.start_offset, node.end_offset, node.path
            inside = [
                call
                for call in self._candidates
                if call.path == path and start <= call.start_offset and call.end_offset <= end
            ]
            if not inside or not node.is_macro_expansion:
                return inside
            # A macro use's statements all span the use: walk to tell which statement holds the call.
            held = set(node.walk())
            return [call for call in inside if call in held]
        return [
            call
            for call in node.walk()
            if call.kind == "CALL_EXPR" and call.spelling and call.spelling not in self.names
        ]


def dma_wait_helpers(
    project: Project, settings: TraceSettings, wait_functions: Sequence[str], dma_events: Sequence[str]
) -> dict[str, str]:
    """Kernel function -> the wait it reaches (`dma_queue_pop`), for every function that waits on a DMA queue each
    time it runs, outside a DMA event of its own: the waits themselves and the helpers calling one unconditionally
    (`dma_queue_flush`), transitively. A worker popping in its loop is no helper: its calls are looked at instead."""
    key = ("trace_regions.dma_wait_helpers", settings, tuple(wait_functions), tuple(dma_events))
    return memoized(project.memo, key, lambda: _dma_wait_helpers(project, settings, wait_functions, dma_events))


def _dma_wait_helpers(
    project: Project, settings: TraceSettings, wait_functions: Sequence[str], dma_events: Sequence[str]
) -> dict[str, str]:
    callers = calls_by_callee(project)
    traces = function_traces(project, settings, possible_waits(project, wait_functions))
    in_trace = {call.node: call for trace in traces.values() for call in trace.calls}
    waits = {name: name for name in callers if matches_any(name, wait_functions)}
    pending = sorted(waits)
    while pending:
        name = pending.pop()
        for unit, call in callers.get(name, ()):
            caller = unit.enclosing_function(call)
            if caller is None or caller.spelling in waits or caller.spelling not in callers:
                continue  # a function nothing calls (a worker, an entry point) is nobody's wait helper
            traced = in_trace.get(call)
            if traced is not None and not _outside(traced, dma_events):
                continue  # the helper times this wait in a DMA event of its own
            if not _always_runs(unit, call, caller):
                continue  # a push that flushes only when its ring is full is no wait helper
            waits[caller.spelling] = waits[name]
            pending.append(caller.spelling)
    return waits


def possible_waits(project: Project, wait_functions: Sequence[str]) -> frozenset[str]:
    """The wait functions and every called kernel function that calls one, transitively, whatever its events: the
    functions dma_wait_helpers chooses from."""
    key = ("trace_regions.possible_waits", tuple(wait_functions))
    return memoized(project.memo, key, lambda: _possible_waits(project, wait_functions))


def _possible_waits(project: Project, wait_functions: Sequence[str]) -> frozenset[str]:
    callers = calls_by_callee(project)
    found = {name for name in callers if matches_any(name, wait_functions)}
    pending = sorted(found)
    while pending:
        name = pending.pop()
        for unit, call in callers.get(name, ()):
            caller = unit.enclosing_function(call)
            if caller is not None and caller.spelling not in found and caller.spelling in callers:
                found.add(caller.spelling)
                pending.append(caller.spelling)
    return frozenset(found)


_BRANCHING = frozenset({"IF_STMT", "SWITCH_STMT", "CASE_STMT", "DEFAULT_STMT", "CONDITIONAL_OPERATOR", "FOR_STMT"})


def _always_runs(unit: UnitIndex, call: Node, function: Node) -> bool:
    """The call runs every time the function runs: no return before it, and not under an if, switch, `?:`, the
    right side of `&&`/`||`, or the body of a `for` or `while` (a `while` condition and a `do` body run once)."""
    start, end = call.start_offset, call.end_offset
    for node in unit.nodes("RETURN_STMT"):
        if node.path == call.path and function.start_offset <= node.start_offset < start and node.end_offset < end:
            return False  # an early return may leave before it (`return dma_queue_pop(q).dst;` is no early return)
    inner = call
    for ancestor in unit.ancestors(call):
        if ancestor == function:
            return True
        kind = ancestor.kind
        if kind in _BRANCHING:
            return False
        if kind == "WHILE_STMT":
            children = ancestor.children()
            if not children or children[0] != inner:
                return False
        if kind == "BINARY_OPERATOR" and ancestor.binary_operator in ("&&", "||"):
            children = ancestor.children()
            if len(children) == 2 and children[1] == inner:
                return False
        inner = ancestor
    return True


def calls_by_callee(project: Project) -> dict[str, list[tuple[UnitIndex, Node]]]:
    """Every call of the kernel code by the name it calls (the AST's calls: a function only named, as a worker
    handed to a pool is, is not called)."""
    return memoized(project.memo, "trace_regions.calls_by_callee", lambda: _calls_by_callee(project))


def _calls_by_callee(project: Project) -> dict[str, list[tuple[UnitIndex, Node]]]:
    found: dict[str, list[tuple[UnitIndex, Node]]] = {}
    for unit in project.kernel_units():
        for call in unit.nodes("CALL_EXPR"):
            name = call.spelling
            if name:
                found.setdefault(name, []).append((unit, call))
    return found


def _outside(call: CallInTrace, events: Sequence[str]) -> bool:
    """On some path the call's innermost open event is none of `events` (or no event is open)."""
    return any(not matches_any(event, events) for event in call.innermost_events()) or not call.open_events


def calls_in_events(call: CallInTrace, events: Sequence[str]) -> list[TraceEvent]:
    """The events matching `events` that are the innermost open event at the call on some path."""
    found: dict[tuple[int, int], TraceEvent] = {}
    for state in call.open_events:
        if state and matches_any(state[-1].event, events):
            event = state[-1]
            found.setdefault((event.node.line, event.node.column), event)
    return [found[key] for key in sorted(found)]


# ---------------------------------------------------------------- starts and their loops


def trace_starts(project: Project, settings: TraceSettings, info_argument: int) -> list[TraceStart]:
    """Every trace start call of the kernel code, with its event, info argument and the loops repeating it."""
    key = ("trace_regions.trace_starts", settings, info_argument)
    return memoized(project.memo, key, lambda: list(_trace_starts(project, settings, info_argument)))


def _trace_starts(project: Project, settings: TraceSettings, info_argument: int) -> Iterable[TraceStart]:
    names = set(settings.start_functions)
    for unit in project.kernel_units():
        calls = [call for call in unit.nodes("CALL_EXPR") if call.spelling in names]
        if not calls:
            continue
        regions = loop_regions(unit)
        for call in calls:
            arguments = call.children()[1:]
            info = arguments[info_argument] if len(arguments) > info_argument else None
            function = unit.enclosing_function(call)
            loops = enclosing_loops(regions, call, function)
            yield TraceStart(
                function.spelling if function is not None else None,
                unit,
                call,
                event_name(call, settings.event_argument),
                info,
                loops,
            )


def enclosing_loops(regions: Sequence[LoopRegion], node: Node, function: Node | None) -> tuple[LoopRegion, ...]:
    """The loop regions repeating `node` inside its function, innermost first."""
    place = NodePlace.of(node)
    holding = [
        region
        for region in regions
        if region.holds(place)
        and (
            function is None
            or (
                region.loop.path == function.path
                and function.start_offset <= region.loop.start_offset < function.end_offset
            )
        )
    ]
    return tuple(sorted(holding, key=lambda region: region.end - region.start))


def changes_in_loop(unit: UnitIndex, region: LoopRegion, expression: Node) -> bool:
    """The expression may take another value on the next iteration of the loop."""
    return not is_loop_invariant(unit, region, expression)


def induction_variables(unit: UnitIndex, region: LoopRegion) -> tuple[str, ...]:
    """The variables that step the loop: a `for` increment's, or those of a `while`/`do` condition the body writes."""
    loop = region.loop
    data = unit.source_bytes(region.path)
    if loop.kind == "FOR_STMT":
        increment = _for_increment(data, region)
        stepped = [first or second for first, second in _STEPPED.findall(increment)]
        return tuple(dict.fromkeys(name for name in stepped if name))
    if loop.kind == "WHILE_STMT":
        condition = region.condition
    else:
        children = loop.children()
        condition = " ".join(children[-1].tokens()) if children else ""
    body = data[region.start : region.end]
    names = [name for name in _IDENTIFIER.findall(condition) if written_in(body, name)]
    return tuple(dict.fromkeys(names))


def _for_increment(data: bytes, region: LoopRegion) -> str:
    """The increment clause of a `for` loop: from after the condition's `;` to the header's closing `)`."""
    position = region.start
    depth = 0
    semicolon = None
    for index in range(position, min(len(data), region.end)):
        byte = data[index]
        if byte in b"([{":
            depth += 1
        elif byte in b")]}":
            if depth == 0:
                return data[semicolon + 1 : index].decode("utf-8", "replace") if semicolon is not None else ""
            depth -= 1
        elif byte == ord(";") and depth == 0 and semicolon is None:
            semicolon = index
    return ""
