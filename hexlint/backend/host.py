"""Host-side call facts: calls between the functions of a unit, and the shortest call chain from a root to each;
and the session-ownership tests among the buffer reads of those functions.

`supports_op` and the `supported_*()` checkers are roots: what they reach decides an op's support. Function templates
count as functions (a call names the template), their unresolved calls are followed by the name they look up, a
lambda's body belongs to the function it is written in, and a lambda held by a namespace-scope variable is a function
of that variable's name.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from hexlint.backend.names import matches_any
from hexlint.backend.pointers import is_null_constant
from hexlint.c.index import UnitIndex, memoized
from hexlint.c.node import Node
from hexlint.core import Span


@dataclass(frozen=True)
class CallHop:
    """`caller` calls `callee` at `site`."""

    caller: str
    callee: str
    site: Span


def lambda_variables(unit: UnitIndex) -> dict[str, Node]:
    """Namespace-scope variables holding a lambda (`static auto owned = [](const ggml_tensor * t) {...};`), by name:
    called like functions, and nothing else encloses their bodies."""

    def compute() -> dict[str, Node]:
        found: dict[str, Node] = {}
        for variable in unit.nodes("VAR_DECL"):
            if unit.enclosing_function(variable) is not None:
                continue  # a local lambda's body is part of its function already
            if any(node.kind == "LAMBDA_EXPR" for node in _shallow(variable, depth=3)):
                found.setdefault(variable.spelling, variable)
        return found

    return memoized(unit.memo, "host.lambda_variables", compute)


def _shallow(node: Node, depth: int) -> list[Node]:
    found: list[Node] = []
    level = node.children()
    for _ in range(depth):
        found.extend(level)
        level = [child for parent in level for child in parent.children()]
    return found


def enclosing_callable(unit: UnitIndex, node: Node) -> str | None:
    """The name of the function (or namespace-scope lambda variable) whose body holds `node`."""
    function = unit.enclosing_function(node)
    if function is not None:
        return function.spelling
    for name, variable in lambda_variables(unit).items():
        if variable.path == node.path and variable.start_offset <= node.start_offset < variable.end_offset:
            return name
    return None


def called_name(call: Node, lambdas: dict[str, Node]) -> str:
    """What a call calls: its function's name, also unresolved in a template, or the lambda variable it invokes."""
    name = call.callee_name
    if name == "operator()" and lambdas:
        children = call.children()
        target = children[0].unwrapped() if children else None
        if target is not None and target.kind == "DECL_REF_EXPR" and target.spelling in lambdas:
            return target.spelling
    return name


def calls_by_caller(unit: UnitIndex, not_followed: tuple[str, ...]) -> dict[str, list[CallHop]]:
    """Calls between functions defined in this unit, by caller name, in source order (logging is not followed)."""
    lambdas = lambda_variables(unit)
    functions = {function.spelling for function in unit.functions_all()} | set(lambdas)
    calls: dict[str, list[CallHop]] = {}
    for call in unit.nodes("CALL_EXPR"):
        callee = called_name(call, lambdas)
        if callee not in functions or matches_any(callee, not_followed):
            continue
        caller = enclosing_callable(unit, call)
        if caller is None or caller == callee:
            continue
        calls.setdefault(caller, []).append(CallHop(caller, callee, call.span()))
    return calls


def shortest_chains(roots: list[str], calls: dict[str, list[CallHop]]) -> dict[str, tuple[CallHop, ...]]:
    """For every function reachable from a root, the shortest call chain that reaches it (roots: an empty chain)."""
    chains: dict[str, tuple[CallHop, ...]] = {root: () for root in roots}
    queue = deque(roots)
    while queue:
        caller = queue.popleft()
        for hop in calls.get(caller, ()):
            if hop.callee not in chains:
                chains[hop.callee] = (*chains[caller], hop)
                queue.append(hop.callee)
    return chains


def call_chains(
    unit: UnitIndex, entries: tuple[str, ...], checkers: tuple[str, ...], not_followed: tuple[str, ...]
) -> dict[str, tuple[CallHop, ...]]:
    """Every function reached from the entries (`supports_op`), with its shortest call chain; a checker they do not
    reach starts a chain of its own. Calls of `not_followed` functions are not followed."""

    def compute() -> dict[str, tuple[CallHop, ...]]:
        calls = calls_by_caller(unit, not_followed)
        chains = shortest_chains(list(entries), calls)
        for checker in checkers:
            if checker not in chains:
                reached = shortest_chains([checker], calls)
                chains.update({name: chain for name, chain in reached.items() if name not in chains})
        return chains

    return dict(memoized(unit.memo, ("host.call_chains", entries, checkers, not_followed), compute))


@dataclass(frozen=True)
class OwnershipSettings:
    """What a session-ownership test is made of: `buffer_member` tested for NULL, `ownership_calls` (fnmatch) asked
    about that buffer; it may read no other of `runtime_members` and make no other of `runtime_calls`."""

    buffer_member: str
    ownership_calls: tuple[str, ...]
    runtime_members: tuple[str, ...]
    runtime_calls: tuple[str, ...]


def ownership_tests(unit: UnitIndex, settings: OwnershipSettings) -> frozenset[tuple[str, int, int]]:
    """The buffer reads and calls (path, start, end) that belong to a NULL-tolerant session-ownership test: a buffer
    that, once allocated, must belong to this session, and that lets an unallocated tensor through. Three shapes,
    whether written inline, in a helper, or in a template's lambda: `t->buffer && (<ownership of t->buffer>)`,
    `!t->buffer || (<ownership of t->buffer>)`, and `if (t->buffer) { <ownership of t->buffer> }` with no else."""

    def compute() -> frozenset[tuple[str, int, int]]:
        accepted: set[tuple[str, int, int]] = set()
        for operator in unit.nodes("BINARY_OPERATOR"):
            spelled = operator.binary_operator
            if spelled not in ("&&", "||"):
                continue
            operands = operator.children()
            if len(operands) == 2:
                # `t->buffer && (not owned)` is a rejection an unallocated tensor skips; `!t->buffer || (owned)`
                # an acceptance it passes: the other polarity (`t->buffer && owned(...)`) rejects it.
                positive = spelled == "&&"
                tests = _buffer_tests(operands[0], settings.buffer_member, positive=positive)
                if tests and _ownership_polarities(operands[1], settings) == {not positive}:
                    accepted.update(_ownership_nodes(tests, operands[1], settings))
        for statement in unit.nodes("IF_STMT"):
            parts = [child for child in statement.children() if child.kind not in ("DECL_STMT", "VAR_DECL")]
            if len(parts) == 2:  # no else: an unallocated tensor skips the whole test
                tests = _buffer_tests(parts[0], settings.buffer_member, positive=True)
                accepted.update(_ownership_nodes(tests, parts[1], settings))
        return frozenset(accepted)

    return memoized(unit.memo, ("host.ownership_tests", settings), compute)


def _ownership_polarities(body: Node, settings: OwnershipSettings, negated: bool = False) -> set[bool]:
    """For each ownership call in `body`, whether the body is true when the buffer IS owned (True) or when it is
    not (False): `!owned(b)`, `get_sess(b) != sess` and `owned(b) == false` count as negated."""
    node = body.unwrapped()
    if node.kind == "CALL_EXPR" and matches_any(node.callee_name, settings.ownership_calls):
        return {not negated}
    if node.kind == "UNARY_OPERATOR" and node.unary_operator == "!":
        return set().union(*(_ownership_polarities(child, settings, not negated) for child in node.children()))
    if node.kind == "BINARY_OPERATOR" and node.binary_operator in ("==", "!="):
        operands = [operand.unwrapped() for operand in node.children()]
        flips = node.binary_operator == "!="
        if any(operand.kind == "CXX_BOOL_LITERAL_EXPR" and operand.tokens() == ["false"] for operand in operands):
            flips = not flips
        return set().union(*(_ownership_polarities(child, settings, negated ^ flips) for child in operands))
    return set().union(*(_ownership_polarities(child, settings, negated) for child in node.children()))


def _key(node: Node) -> tuple[str, int, int]:
    return (node.path, node.start_offset, node.end_offset)


def _buffer_tests(condition: Node, buffer_member: str, positive: bool) -> list[Node]:
    """The `t->buffer` reads a condition tests for being set (positive: `a && t->buffer`, `t->buffer != NULL`) or
    unset (`!a || !t->buffer`, `t->buffer == NULL`), through a chain of `&&` (positive) or `||` (negative)."""
    node = condition.unwrapped()
    if node.kind == "BINARY_OPERATOR":
        operator = node.binary_operator
        operands = node.children()
        if len(operands) != 2:
            return []
        if operator == ("&&" if positive else "||"):
            return [
                *_buffer_tests(operands[0], buffer_member, positive),
                *_buffer_tests(operands[1], buffer_member, positive),
            ]
        if operator == ("!=" if positive else "=="):
            left, right = (operand.unwrapped() for operand in operands)
            member = left if is_null_constant(right) else right if is_null_constant(left) else None
            return [member] if member is not None and _is_member(member, buffer_member) else []
        return []
    if not positive and node.kind == "UNARY_OPERATOR" and node.unary_operator == "!":
        operand = node.children()
        inner = operand[0].unwrapped() if operand else None
        return [inner] if inner is not None and _is_member(inner, buffer_member) else []
    return [node] if positive and _is_member(node, buffer_member) else []


def _is_member(node: Node, name: str) -> bool:
    return node.kind == "MEMBER_REF_EXPR" and node.member_name == name


def _ownership_nodes(tests: list[Node], body: Node, settings: OwnershipSettings) -> set[tuple[str, int, int]]:
    """The tested buffer reads plus the body's reads and calls, when the body only asks ownership calls about one
    of the tested buffers (and asks at least one); else nothing."""
    if not tests:
        return set()
    tested = {"".join(test.tokens()): test for test in tests}
    found: set[tuple[str, int, int]] = set()
    buffer: str | None = None
    asked = False
    for node in body.walk():
        if node.kind == "MEMBER_REF_EXPR" and node.member_name in settings.runtime_members:
            text = "".join(node.tokens())
            if node.member_name != settings.buffer_member or text not in tested or buffer not in (None, text):
                return set()
            buffer = text
            found.add(_key(node))
        elif node.kind == "CALL_EXPR":
            name = node.callee_name
            if matches_any(name, settings.ownership_calls):
                arguments = [argument.unwrapped() for argument in node.arguments()]
                if len(arguments) != 1 or "".join(arguments[0].tokens()) not in tested:
                    return set()
                asked = True
                found.add(_key(node))
            elif matches_any(name, settings.runtime_calls):
                return set()
    if not asked or buffer is None:
        return set()
    found.add(_key(tested[buffer]))
    return found
