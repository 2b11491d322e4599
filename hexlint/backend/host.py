"""Host-side call facts: calls between the functions of a unit, and the shortest call chain from a root to each.

`supports_op` and the `supported_*()` checkers are roots: what they reach decides an op's support.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from hexlint.backend.names import matches_any
from hexlint.c.index import UnitIndex, memoized
from hexlint.core import Span


@dataclass(frozen=True)
class CallHop:
    """`caller` calls `callee` at `site`."""

    caller: str
    callee: str
    site: Span


def calls_by_caller(unit: UnitIndex, not_followed: tuple[str, ...]) -> dict[str, list[CallHop]]:
    """Calls between functions defined in this unit, by caller name, in source order (logging is not followed)."""
    functions = {function.spelling for function in unit.functions_all()}
    calls: dict[str, list[CallHop]] = {}
    for call in unit.nodes("CALL_EXPR"):
        callee = call.spelling
        if callee not in functions or matches_any(callee, not_followed):
            continue
        caller = unit.enclosing_function(call)
        if caller is None or caller.spelling == callee:
            continue
        calls.setdefault(caller.spelling, []).append(CallHop(caller.spelling, callee, call.span()))
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
