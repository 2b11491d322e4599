"""Trace-event facts for HX106 (coverage) and HX107 (balance).

Coverage is read from the text of each kernel function (macro bodies included, comments removed) and the kernel call
graph: which functions start a compute event, which functions an op's entry point hands to the worker pool. Balance
walks the statements of the few functions that emit trace events, structured-CFG style: if/else, loops with
break/continue, switch, return; `goto` ends a path without a verdict.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.backend.dispatch import kernel_call_graph, kernel_dispatch, macro_bodies, reachable, strip_transparent
from hexlint.backend.names import matches_any
from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node

_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
_INDIRECT_CALL = re.compile(rb"(?:->|\.)\s*[A-Za-z_]\w*\s*\(")
_MAX_STATES = 16
_LOOP_PASSES = 3


@dataclass(frozen=True)
class TraceSettings:
    start_functions: tuple[str, ...]
    stop_functions: tuple[str, ...]
    event_argument: int
    compute_events: tuple[str, ...]
    compute_markers: tuple[str, ...]
    worker_runners: tuple[str, ...]
    worker_argument: int
    entry_patterns: tuple[str, ...]
    split_pairs: tuple[tuple[str, str, str], ...]
    op_pattern: str
    ignored_ops: frozenset[str]


def settings_from(options: Mapping[str, Any]) -> TraceSettings:
    pairs = tuple(
        (str(pair.get("start", "")), str(pair.get("stop", "")), str(pair.get("event", "*")))
        for pair in options.get("split_pairs", ())
        if isinstance(pair, Mapping)
    )
    return TraceSettings(
        start_functions=tuple(options.get("start_functions", ("htp_trace_event_start",))),
        stop_functions=tuple(options.get("stop_functions", ("htp_trace_event_stop",))),
        event_argument=int(options.get("event_argument", 1)),
        compute_events=tuple(options.get("compute_events", ("HTP_TRACE_EVT_HVX_*", "HTP_TRACE_EVT_HMX_*"))),
        compute_markers=tuple(options.get("compute_markers", ("HVX_Vector*", "hmx_*"))),
        worker_runners=tuple(options.get("worker_runners", ("worker_pool_run_func", "work_queue_run"))),
        worker_argument=int(options.get("worker_argument", 1)),
        entry_patterns=tuple(options.get("entry_patterns", ("op_*",))),
        split_pairs=pairs,
        op_pattern=str(options.get("op_pattern", r"^HTP_OP_\w+$")),
        ignored_ops=frozenset(options.get("ignored_ops", ("HTP_OP_INVALID",))),
    )


# ---------------------------------------------------------------- coverage (HX106)


@dataclass(frozen=True)
class EntryPoint:
    """A kernel entry point and the worker functions it hands to the pool (directly or through its callees)."""

    name: str
    unit: UnitIndex
    node: Node
    ops: frozenset[str]
    workers: tuple[str, ...]


class KernelText:
    """Comment-free text of each kernel function with the bodies of the macros it uses, for cheap textual facts."""

    def __init__(self, project: Project) -> None:
        self.functions: dict[str, tuple[UnitIndex, Node]] = {}
        for unit in project.kernel_units():
            for name, node in unit.functions.items():
                self.functions.setdefault(name, (unit, node))
        self.macros = {name: _COMMENT.sub(b" ", body) for name, body in macro_bodies(project).items()}
        self.macro_names = set(self.macros)
        self._texts: dict[str, list[bytes]] = {}
        self._words: dict[str, set[str]] = {}

    def chunks(self, name: str) -> list[bytes]:
        """The function's own text, then the bodies of the macros it expands (transitively)."""
        found = self._texts.get(name)
        if found is None:
            unit, node = self.functions[name]
            own = _COMMENT.sub(b" ", unit.source_bytes(node.path)[node.start_offset : node.end_offset])
            found = [own]
            seen: set[bytes] = set()
            pending = [own]
            while pending:
                chunk = pending.pop()
                for word in sorted(self._macros_named(chunk) - seen):
                    seen.add(word)
                    found.append(self.macros[word])
                    pending.append(self.macros[word])
            self._texts[name] = found
        return found

    def names_any(self, name: str, patterns: Iterable[str]) -> bool:
        """The function's text (macro bodies included) names an identifier matching one of the patterns."""
        words = self._words.get(name)
        if words is None:
            words = {
                word.decode("ascii", "replace") for chunk in self.chunks(name) for word in _IDENTIFIER.findall(chunk)
            }
            self._words[name] = words
        return any(fnmatch.fnmatchcase(word, pattern) for pattern in patterns for word in words)

    def calls_indirectly(self, name: str) -> bool:
        return any(_INDIRECT_CALL.search(chunk) for chunk in self.chunks(name))

    def _macros_named(self, chunk: bytes) -> set[bytes]:
        return set(_IDENTIFIER.findall(chunk)) & self.macro_names

    def calls_with_arguments(self, name: str, callees: Iterable[str]) -> Iterator[tuple[str, list[str]]]:
        """(callee, argument texts) for each textual call of one of `callees` in the function."""
        names = tuple(callee.encode() for callee in callees)
        if not names:
            return
        pattern = re.compile(rb"\b(" + b"|".join(re.escape(callee) for callee in names) + rb")\s*\(")
        for chunk in self.chunks(name):
            if not any(callee in chunk for callee in names):
                continue  # a substring test is far cheaper than the regex on the many chunks without a call
            for match in pattern.finditer(chunk):
                yield match.group(1).decode(), _split_arguments(chunk, match.end())

    def assigned_functions(self, name: str, variable: str) -> list[str]:
        """Functions a function-pointer variable is set to in the body: `fn = a;`, `T fn = c ? a : b;`."""
        pattern = re.compile(rb"\b" + re.escape(variable).encode() + rb"\s*=(?!=)([^;]*);")
        found: list[str] = []
        for match in pattern.finditer(self.chunks(name)[0]):
            for word in _IDENTIFIER.findall(match.group(1)):
                candidate = word.decode("ascii", "replace")
                if candidate in self.functions and candidate != name and candidate not in found:
                    found.append(candidate)
        return found

    def parameter_index(self, name: str, parameter: str) -> int | None:
        _unit, node = self.functions[name]
        parameters = [child.spelling for child in node.children() if child.kind == "PARM_DECL"]
        return parameters.index(parameter) if parameter in parameters else None


def kernel_text(project: Project) -> KernelText:
    """One KernelText per project, shared by HX106 and HX107."""
    return memoized(project.memo, "trace.kernel_text", lambda: KernelText(project))


def _split_arguments(text: bytes, start: int) -> list[str]:
    """The top-level comma-separated arguments of a call whose `(` ends just before `start`."""
    depth = 0
    arguments: list[str] = []
    current = bytearray()
    for byte in text[start:]:
        char = chr(byte)
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                arguments.append(current.decode("utf-8", "replace").strip())
                return arguments
            depth -= 1
        elif char == "," and depth == 0:
            arguments.append(current.decode("utf-8", "replace").strip())
            current = bytearray()
            continue
        current.append(byte)
    return arguments


def starts_compute_event(text: KernelText, name: str, settings: TraceSettings) -> bool:
    for _callee, arguments in text.calls_with_arguments(name, settings.start_functions):
        if len(arguments) > settings.event_argument:
            event = arguments[settings.event_argument].strip("() ")
            if matches_any(event, settings.compute_events):
                return True
    return False


def entry_points(project: Project, settings: TraceSettings, text: KernelText) -> list[EntryPoint]:
    """Op entry points (dispatch targets and `op_*` functions) with the workers reachable from them."""
    graph = kernel_call_graph(project)
    callers: dict[str, set[str]] = {}
    for caller, callees in graph.items():
        for callee in callees:
            callers.setdefault(callee, set()).add(caller)
    dispatch = kernel_dispatch(project, re.compile(settings.op_pattern), settings.ignored_ops)
    candidates = {name for name in set(dispatch) | set(text.functions) if name in text.functions}
    candidates = {name for name in candidates if name in dispatch or matches_any(name, settings.entry_patterns)}
    # A dispatch target inside another entry (`case HTP_OP_ADD: hvx_add_f32(...)` in op_binary) is not an entry.
    inner = {callee for name in candidates for callee in reachable(graph, name) if callee != name}
    entries = []
    started: dict[str, list[str]] = {}
    for name in sorted(candidates - inner):
        unit, node = text.functions[name]
        workers: list[str] = []
        for function in sorted(reachable(graph, name)):
            if function not in started:
                started[function] = workers_started_by(text, function, settings, callers)
            for worker in started[function]:
                if worker not in workers:
                    workers.append(worker)
        entries.append(EntryPoint(name, unit, node, dispatch.get(name, frozenset()), tuple(workers)))
    return entries


def workers_started_by(
    text: KernelText, function: str, settings: TraceSettings, callers: Mapping[str, set[str]]
) -> list[str]:
    """Functions `function` hands to a worker runner, through a function-pointer variable or parameter if need be."""
    workers: list[str] = []
    for _runner, arguments in text.calls_with_arguments(function, settings.worker_runners):
        if len(arguments) <= settings.worker_argument:
            continue
        argument = arguments[settings.worker_argument].lstrip("&( ").rstrip(") ")
        for candidate in _resolve_function(text, function, argument, callers):
            if candidate not in workers:
                workers.append(candidate)
    return workers


def _resolve_function(text: KernelText, function: str, argument: str, callers: Mapping[str, set[str]]) -> list[str]:
    if argument in text.functions:
        return [argument]
    if not re.fullmatch(r"[A-Za-z_]\w*", argument):
        return []
    assigned = text.assigned_functions(function, argument)
    if assigned:
        return assigned
    index = text.parameter_index(function, argument)
    if index is None:
        return []
    found: list[str] = []
    for caller in sorted(callers.get(function, ())):
        for _callee, arguments in text.calls_with_arguments(caller, (function,)):
            if len(arguments) > index:
                passed = arguments[index].lstrip("&( ").rstrip(") ")
                for candidate in [passed] if passed in text.functions else text.assigned_functions(caller, passed):
                    if candidate not in found:
                        found.append(candidate)
    return found


def covered(text: KernelText, graph: Mapping[str, set[str]], name: str, settings: TraceSettings) -> bool:
    """The function (with what it calls) traces its compute; one that does no vector compute may trace with any event.

    A DMA-only worker (a row gather through the DMA queue) is traced by the queue's DMA events; a worker that uses
    HVX must bracket that compute in a compute event.
    """
    functions = [function for function in reachable(graph, name) if function in text.functions]
    if any(starts_compute_event(text, function, settings) for function in functions):
        return True
    if any(
        text.names_any(function, settings.compute_markers) or text.calls_indirectly(function) for function in functions
    ):
        return False  # vector compute, or a call through a pointer that may be compute (`mmctx->vec_dot(...)`)
    return any(starts_any_event(text, function, settings) for function in functions)


def starts_any_event(text: KernelText, name: str, settings: TraceSettings) -> bool:
    return any(True for _call in text.calls_with_arguments(name, settings.start_functions))


# ---------------------------------------------------------------- balance (HX107)


@dataclass(frozen=True)
class TraceEvent:
    kind: str  # "start" | "stop"
    event: str
    node: Node


@dataclass(frozen=True)
class Imbalance:
    kind: str  # "unclosed" | "unopened" | "mismatched"
    event: TraceEvent
    exit_node: Node | None = None
    other: TraceEvent | None = None


State = tuple[TraceEvent, ...]


class BalanceWalker:
    """Open trace events along every path of one function body."""

    def __init__(self, unit: UnitIndex, settings: TraceSettings) -> None:
        self.unit = unit
        self.settings = settings
        self.names = set(settings.start_functions) | set(settings.stop_functions)
        self.findings: dict[tuple[str, int, int], Imbalance] = {}
        self.loop_stack: list[tuple[set[State], set[State]]] = []
        self.switch_breaks: list[set[State]] = []
        self.break_targets: list[str] = []
        self.conditional: set[tuple[int, int]] = set()
        self.stops: list[TraceEvent] = []

    def run(self, body: Node) -> list[Imbalance]:
        end_states = self.walk(body, {()})
        for state in end_states:
            self._exit(state, None)
        # A conditional start whose type the function also stops is taken to be stopped under the same condition.
        stopped = {event.event for event in self.stops}
        return [
            finding
            for finding in self.findings.values()
            if not (
                finding.kind == "unclosed"
                and _key(finding.event) in self.conditional
                and finding.event.event in stopped
            )
        ]

    def walk(self, node: Node, states: set[State]) -> set[State]:
        if not states:
            return states
        kind = node.kind
        if kind == "COMPOUND_STMT":
            for child in node.children():
                states = self.walk(child, states)
            return states
        if kind == "IF_STMT":
            children = node.children()
            if len(children) < 2:
                return self.leaf(node, states)
            has_else = len(children) >= 3
            condition = children[-3] if has_else else children[-2]
            states = self.leaf(condition, states)
            then_states = self.walk(children[-2] if has_else else children[-1], states)
            else_states = self.walk(children[-1], states) if has_else else states
            # An event started in one branch only is conditional: `if (on) start; ...; if (on) stop;`.
            self.conditional |= _opened(then_states, states) ^ _opened(else_states, states)
            return _capped(then_states | else_states)
        if kind in ("FOR_STMT", "WHILE_STMT", "DO_STMT"):
            return self._loop(node, states)
        if kind == "SWITCH_STMT":
            return self._switch(node, states)
        if kind in ("CASE_STMT", "DEFAULT_STMT", "LABEL_STMT"):
            children = node.children()
            return self.walk(children[-1], states) if children else states
        if kind == "RETURN_STMT":
            states = self.leaf(node, states)
            for state in states:
                self._exit(state, node)
            return set()
        if kind == "BREAK_STMT":
            if self.break_targets and self.break_targets[-1] == "loop" and self.loop_stack:
                self.loop_stack[-1][0].update(states)
            elif self.switch_breaks:
                self.switch_breaks[-1].update(states)
            return set()
        if kind == "CONTINUE_STMT":
            if self.loop_stack:
                self.loop_stack[-1][1].update(states)
            return set()
        if kind == "GOTO_STMT":
            return set()  # rare in kernels: the path is not followed
        return self.leaf(node, states)

    def _loop(self, node: Node, states: set[State]) -> set[State]:
        children = node.children()
        if not children:
            return states
        body = children[0] if node.kind == "DO_STMT" else children[-1]
        for part in children:
            if part != body:
                states = self.leaf(part, states)
        breaks: set[State] = set()
        entry = set(states)
        self.break_targets.append("loop")
        for _ in range(_LOOP_PASSES):
            continues: set[State] = set()
            self.loop_stack.append((breaks, continues))
            after_body = self.walk(body, entry)
            self.loop_stack.pop()
            grown = _capped(entry | after_body | continues)
            if grown == entry:
                break
            entry = grown
        self.break_targets.pop()
        return _capped(entry | breaks)

    def _switch(self, node: Node, states: set[State]) -> set[State]:
        children = node.children()
        if len(children) < 2:
            return states
        states = self.leaf(children[0], states)
        body = children[-1]
        breaks: set[State] = set()
        self.switch_breaks.append(breaks)
        self.break_targets.append("switch")
        current: set[State] = set()
        has_default = False
        statements = body.children() if body.kind == "COMPOUND_STMT" else [body]
        for statement in statements:
            if statement.kind in ("CASE_STMT", "DEFAULT_STMT"):
                current = current | states  # a case label is entered from the switch or by falling through
                has_default = has_default or _has_default(statement)
            current = self.walk(statement, current)
        self.break_targets.pop()
        self.switch_breaks.pop()
        after = current | breaks
        if not has_default:
            after |= states
        return _capped(after)

    def leaf(self, node: Node, states: set[State]) -> set[State]:
        for event in self._events_in(node):
            # Path merging loses correlations (`if (on) start; ... if (on) stop;`): a stop that closes the event on
            # some incoming path is not reported for the paths where it was never started.
            report = event.kind == "stop" and not any(
                opened.event == event.event for state in states for opened in state
            )
            states = {self._apply(state, event, report) for state in states}
        return _capped(states)

    def _events_in(self, node: Node) -> list[TraceEvent]:
        """The trace call a statement is: events are statements of their own (`(void)` casts looked through)."""
        call = node
        while call.kind in ("UNEXPOSED_EXPR", "CSTYLE_CAST_EXPR", "PAREN_EXPR"):
            children = call.children()
            if not children:
                return []
            call = children[-1]
        if call.kind != "CALL_EXPR" or call.spelling not in self.names:
            return []
        kind = "start" if call.spelling in self.settings.start_functions else "stop"
        return [TraceEvent(kind, _event_name(call, self.settings.event_argument), call)]

    def _apply(self, state: State, event: TraceEvent, report: bool) -> State:
        if event.kind == "start":
            return (*state, event)
        self.stops.append(event)
        for index in range(len(state) - 1, -1, -1):
            if state[index].event == event.event:
                return state[:index] + state[index + 1 :]
        if not report:
            return state
        key = ("stop", event.node.line, event.node.column)
        if state:
            self.findings.setdefault(key, Imbalance("mismatched", event, other=state[-1]))
        else:
            self.findings.setdefault(key, Imbalance("unopened", event))
        return state

    def _exit(self, state: State, exit_node: Node | None) -> None:
        for event in state:
            key = ("start", event.node.line, event.node.column)
            self.findings.setdefault(key, Imbalance("unclosed", event, exit_node=exit_node))


def _key(event: TraceEvent) -> tuple[int, int]:
    return (event.node.line, event.node.column)


def _opened(after: set[State], before: set[State]) -> set[tuple[int, int]]:
    """Starts open after a branch that were not open before it."""
    return {_key(event) for state in after for event in state} - {_key(event) for state in before for event in state}


def _has_default(statement: Node) -> bool:
    while statement.kind in ("CASE_STMT", "DEFAULT_STMT"):
        if statement.kind == "DEFAULT_STMT":
            return True
        children = statement.children()
        if not children:
            return False
        statement = children[-1]
    return False


def _capped(states: set[State]) -> set[State]:
    if len(states) <= _MAX_STATES:
        return states
    return set(sorted(states, key=len)[:_MAX_STATES])


def _event_name(call: Node, index: int) -> str:
    arguments = call.children()[1:]
    if len(arguments) <= index:
        return "?"
    argument = strip_transparent(arguments[index])
    while argument.kind in ("CSTYLE_CAST_EXPR", "UNEXPOSED_EXPR", "PAREN_EXPR") and argument.children():
        argument = argument.children()[-1]
    return argument.spelling or " ".join(argument.tokens()) or "?"


def functions_with_trace_calls(text: KernelText, settings: TraceSettings) -> list[str]:
    names = [name.encode() for name in (*settings.start_functions, *settings.stop_functions)]
    return [
        function
        for function in text.functions
        if any(name in chunk for chunk in text.chunks(function) for name in names)
    ]


def split_exempt(function: str, event: str, kind: str, settings: TraceSettings) -> bool:
    """A configured split pair: the push helper may leave the event open, the pop helper may close it."""
    for start_pattern, stop_pattern, event_pattern in settings.split_pairs:
        if not fnmatch.fnmatchcase(event, event_pattern):
            continue
        if kind == "unclosed" and fnmatch.fnmatchcase(function, start_pattern):
            return True
        if kind == "unopened" and fnmatch.fnmatchcase(function, stop_pattern):
            return True
    return False
