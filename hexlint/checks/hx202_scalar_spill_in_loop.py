"""HX202 scalar-spill-in-loop: general registers stored to and reloaded from stack slots inside a loop."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.binary.audit import LibraryAudit
from hexlint.binary.findings import loop_related, make_diagnostic, option_int, plural
from hexlint.core import Diagnostic

CODE = "HX202"


def check(audit: LibraryAudit, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    threshold = option_int(options, "max_inloop_scalar_spills", -1)
    if threshold < 0:
        return  # opt-in: scalar spills in outer loops around DMA waits are normal
    for function in audit.functions:
        spills = function.spills(vector=False, in_loop=True)
        if len(spills) <= threshold:
            continue
        stores = sum(1 for access in spills if access.is_store)
        per_loop = Counter(access.loop for access in spills)
        message = (
            f"`{function.name}` spills scalar registers inside loops: {plural(stores, 'store')}, "
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
