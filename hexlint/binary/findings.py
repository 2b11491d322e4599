"""Turning audit facts into core.Diagnostic objects: shared by the HX201..HX205 checks and the regression gate."""

from __future__ import annotations

import re
from collections.abc import Mapping

from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:  # the table renders stable names without the audit's modules (a run the cache answers)
    from typing import Any

    from hexlint.binary.audit import FunctionAudit, LibraryAudit

# `hvx_exp_f32.124`: the number of a local duplicate changes from build to build; identity must not.
_LOCAL_SUFFIX = re.compile(r"\.\d+$")


def stable_function_name(name: str) -> str:
    return _LOCAL_SUFFIX.sub("", name)


def fingerprint(function: FunctionAudit, kind: str) -> str:
    """Function + finding kind, never the address, so a baseline survives a rebuild that moves code."""
    return f"{stable_function_name(function.name)} {kind}"


def option_int(options: Mapping[str, Any], name: str, default: int) -> int:
    value = options.get(name, default)
    return default if value is None else int(value)


def binary_span(audit: LibraryAudit, function: FunctionAudit, address: int) -> Span:
    return Span(path=audit.path, symbol=function.name, address=address)


def source_span(audit: LibraryAudit, address: int) -> Span | None:
    location = audit.locate(address)
    if location is None or location.line <= 0:
        return None
    return Span(path=location.file, line=location.line, column=location.column or None)


def make_diagnostic(
    code: str,
    audit: LibraryAudit,
    function: FunctionAudit,
    address: int,
    message: str,
    kind: str,
    related: tuple[Related, ...] = (),
) -> Diagnostic:
    return diagnostic(
        code,
        message,
        binary_span(audit, function, address),
        source_span=source_span(audit, address),
        related=related,
        fingerprint_text=fingerprint(function, kind),
    )


def loop_related(audit: LibraryAudit, function: FunctionAudit, counts: Mapping[int, str]) -> tuple[Related, ...]:
    """One Related per loop that holds findings: where the loop starts and what it holds."""
    related = []
    for loop in function.loops:
        if loop.header not in counts:
            continue
        location = audit.locate(loop.header)
        where = f" ({location.file}:{location.line})" if location and location.line > 0 else ""
        related.append(
            Related(
                span=binary_span(audit, function, loop.header),
                message=f"{loop.kind} loop at {loop.header:#x}, depth {loop.depth}{where}: {counts[loop.header]}",
            )
        )
    return tuple(related)


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}es" if word.endswith(("s", "sh", "ch", "x")) else f"{count} {word}s"
