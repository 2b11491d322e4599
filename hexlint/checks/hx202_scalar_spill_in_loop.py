"""HX202 scalar-spill-in-loop: general registers stored to and reloaded from stack slots inside a loop."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping

from hexlint.binary.audit import FunctionAudit, LibraryAudit, StackAccess
from hexlint.binary.findings import loop_related, make_diagnostic, option_int, plural
from hexlint.core import Diagnostic

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CODE = "HX202"


def counted_spills(function: FunctionAudit, scope: str) -> list[StackAccess]:
    """In-loop scalar spill accesses; with scope "innermost" only those in loops that hold no other loop."""
    spills = list(function.spills(vector=False, in_loop=True))
    if scope == "all":
        return spills
    outer = {loop.parent for loop in function.loops if loop.parent is not None}
    return [access for access in spills if access.loop not in outer]


def check(audit: LibraryAudit, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    threshold = option_int(options, "max_inloop_scalar_spills", 0)
    if threshold < 0:
        return  # -1 turns the rule off
    scope = str(options.get("scope", "innermost"))
    for function in audit.functions:
        spills = counted_spills(function, scope)
        if len(spills) <= threshold:
            continue
        stores = sum(1 for access in spills if access.is_store)
        per_loop = Counter(access.loop for access in spills)
        where = "inside innermost loops" if scope != "all" else "inside loops"
        message = (
            f"`{function.name}` spills scalar registers {where}: {plural(stores, 'store')}, "
            f"{plural(len(spills) - stores, 'reload')} (allowed {threshold}); hoist loop-invariant values, "
            "precompute them on the host (kernel_params) or split the loop to lower register pressure"
        )
        counts = {header: plural(count, "scalar spill access") for header, count in per_loop.items() if header}
        yield make_diagnostic(
            CODE,
            audit,
            function,
            spills[0].address,
            message,
            "scalar-spill-in-loop",
            loop_related(audit, function, counts),
        )
