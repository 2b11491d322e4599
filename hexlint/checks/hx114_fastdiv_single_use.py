"""HX114 fastdiv-single-use: `init_fastdiv_values()` whose result feeds one division that runs once."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.fastdiv import fastdiv_names
from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import diagnostic_where_spelled, node_span, spelled_place
from hexlint.core import Diagnostic, Related

CODE = "HX114"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    names = fastdiv_names(options)
    reported: set[tuple[str, int, int]] = set()
    for init in model.fastdiv_inits(options):
        if not init.single_use:
            continue
        place = spelled_place(init.call)
        if place in reported:
            continue  # a macro body stamping out several functions: one finding at the #define
        reported.add(place)
        use = init.divisions[0]
        divisor = f"`{init.divisor}`" if init.divisor and len(init.divisor) <= 60 else "the divisor"
        plain = "take `%`" if use.call.spelling == names.divisions[-1] else "divide with `/`"
        message = (
            f"`{names.init}()` precomputes {divisor} for a single `{use.call.spelling}()` (in `{use.function}`) "
            f"that runs once per initialisation: the set-up costs more than the division it replaces; {plain} "
            "instead."
        )
        related = [Related(node_span(use.call), "the only division it feeds")]
        yield diagnostic_where_spelled(CODE, init.unit, init.call, message, related)
