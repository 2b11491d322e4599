"""HX201 vector-spill-in-loop: HVX vector registers stored to and reloaded from stack slots inside a loop."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping

from hexlint.binary.audit import LibraryAudit
from hexlint.binary.findings import loop_related, make_diagnostic, option_int, plural
from hexlint.core import Diagnostic

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CODE = "HX201"


def check(audit: LibraryAudit, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    threshold = option_int(options, "max_inloop_vector_spills", 0)
    if threshold < 0:
        return  # -1 turns the rule off
    for function in audit.functions:
        spills = function.spills(vector=True, in_loop=True)
        if len(spills) <= threshold:
            continue
        stores = sum(1 for access in spills if access.is_store)
        per_loop = Counter(access.loop for access in spills)
        trips = sum(loop.round_trips for loop in function.loops if loop.depth == 1)
        calling_loops = {loop.header for loop in function.loops if loop.calls}
        if any(access.loop in calling_loops for access in spills):
            # No HVX register survives a call: vectors live across a call in the loop are saved and reloaded each time.
            advice = "move the calls out of the loop or inline them, since no HVX register is preserved across a call"
        else:
            advice = "keep fewer vectors live in the loop (less unrolling, split the loop, reuse accumulators)"
        message = (
            f"`{function.name}` spills HVX vectors inside loops: {plural(stores, 'store')}, "
            f"{plural(len(spills) - stores, 'reload')}, {plural(trips, 'round trip')} (allowed {threshold}); {advice}"
        )
        counts = {header: plural(count, "vector spill access") for header, count in per_loop.items() if header}
        yield make_diagnostic(
            CODE,
            audit,
            function,
            spills[0].address,
            message,
            "vector-spill-in-loop",
            loop_related(audit, function, counts),
        )
