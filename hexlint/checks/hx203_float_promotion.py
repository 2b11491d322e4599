"""HX203 float-promotion: float promoted to double (convert_sf2df, df arithmetic, soft-float double helpers)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from hexlint.binary.audit import LibraryAudit
from hexlint.binary.findings import loop_related, make_diagnostic, option_int, plural
from hexlint.core import Diagnostic

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CODE = "HX203"


def check(audit: LibraryAudit, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    threshold = option_int(options, "max_promotions", 0)
    if threshold < 0:
        return  # -1 turns the rule off
    for function in audit.functions:
        if function.is_helper or function.promotions <= threshold:
            continue
        places = sorted(
            [(operation.address, operation.loop, operation.text) for operation in function.double_operations]
            + [(call.address, call.loop, call.helper or call.text) for call in function.calls if call.is_promotion]
        )
        in_loop = sum(1 for _address, loop, _what in places if loop is not None)
        helpers = sorted({call.helper for call in function.calls if call.is_promotion and call.helper})
        through = f" (calls {', '.join(helpers)})" if helpers else ""
        message = (
            f"`{function.name}` computes in double precision: {plural(len(places), 'promotion')}, "
            f"{in_loop} inside loops{through}; use float literals (`1.5f`), float math functions "
            "(`sqrtf`, `expf`) and float variables so nothing is promoted to double"
        )
        counts: dict[int, int] = {}
        for _address, loop, _what in places:
            if loop is not None:
                counts[loop] = counts.get(loop, 0) + 1
        related = loop_related(audit, function, {header: plural(n, "promotion") for header, n in counts.items()})
        # Point at the first promotion inside a loop when there is one: that is the one worth fixing first.
        address = next((where for where, loop, _what in places if loop is not None), places[0][0])
        yield make_diagnostic(CODE, audit, function, address, message, "float-promotion", related)
