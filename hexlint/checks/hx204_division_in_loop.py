"""HX204 division-in-loop (binary): calls to the software division helpers inside a loop."""

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

CODE = "HX204"


def check(audit: LibraryAudit, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    threshold = option_int(options, "max_inloop_divisions", 0)
    if threshold < 0:
        return  # -1 turns the rule off
    for function in audit.functions:
        if function.is_helper:
            continue
        divisions = [call for call in function.calls if call.is_division and call.loop is not None]
        if len(divisions) <= threshold:
            continue
        helpers = ", ".join(sorted({call.helper or "?" for call in divisions}))
        message = (
            f"`{function.name}` calls software division inside loops ({plural(len(divisions), 'call')} to "
            f"{helpers}); Hexagon has no divide instruction: precompute the divisor with init_fastdiv_values() "
            "and use fastdiv()/fastmodulo() in the loop"
        )
        per_loop = Counter(call.loop for call in divisions)
        related = loop_related(audit, function, {h: plural(n, "division call") for h, n in per_loop.items() if h})
        yield make_diagnostic(CODE, audit, function, divisions[0].address, message, "division-in-loop", related)
