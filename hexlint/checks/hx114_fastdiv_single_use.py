"""HX114 fastdiv-single-use: `init_fastdiv_values()` whose result feeds one division that runs once."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.fastdiv import fastdiv_inits, fastdiv_names
from hexlint.c.index import Project
from hexlint.checks._c_helpers import diagnostic_at, node_span
from hexlint.core import Diagnostic, Related

CODE = "HX114"


def check(project: Project, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    names = fastdiv_names(options)
    for init in fastdiv_inits(project, options):
        if not init.single_use:
            continue
        use = init.divisions[0]
        divisor = f"`{init.divisor}`" if init.divisor and len(init.divisor) <= 60 else "the divisor"
        message = (
            f"`{names.init}()` precomputes {divisor} for a single `{use.call.spelling}()` (in `{use.function}`) "
            "that runs once per initialisation: the set-up costs more than the division it replaces; divide with "
            "`/` (or `%`) instead."
        )
        related = [Related(node_span(use.call), "the only division it feeds")]
        yield diagnostic_at(CODE, init.unit, init.call, message, related)
