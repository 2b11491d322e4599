"""HX104 defensive-null-check: NULL checks and assertions of internal framework pointers and required operands."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.backend.pointers import CheckedPointer, NullCheck, NullCheckSettings, Provenance
from hexlint.core import Diagnostic, Span
from hexlint.registry import diagnostic

CODE = "HX104"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    reported: set[tuple[str, int, int]] = set()
    for null_check in model.null_checks(NullCheckSettings.from_options(options)):
        # One finding per condition, as a reviewer writes one comment on `if (!q || !k || !dst)`.
        finding = _finding(null_check)
        key = (finding.span.path, finding.span.line or 0, finding.span.column or 0)
        if key not in reported:
            reported.add(key)
            yield finding


_WHAT = {
    Provenance.INTERNAL: ("internal framework pointer", "internal framework pointers"),
    Provenance.REQUIRED_OPERAND: ("required operand", "required operands"),
    Provenance.REQUIRED_OPERAND_DATA: ("data of a required operand", "data of required operands"),
}


def _describe(checked: tuple[CheckedPointer, ...]) -> str:
    """ "required operands `q`, `k`" or "internal framework pointers `ctx`, `params` and required operand `dst`"."""
    groups: dict[str, list[str]] = {}
    for pointer in checked:
        groups.setdefault(pointer.reason, []).append(f"`{pointer.text}`")
    parts = []
    for reason, names in groups.items():
        singular, plural = _WHAT[reason]
        parts.append(f"{singular if len(names) == 1 else plural} {', '.join(names)}")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _finding(null_check: NullCheck) -> Diagnostic:
    unit, checked, macro = null_check.unit, null_check.pointers, null_check.assert_macro
    subject = _describe(checked)
    never = "it is" if len(checked) == 1 else "they are"
    if macro:
        message = f"Defensive `{macro}` of {subject}: {never} never NULL here by construction; remove the assertion."
    else:
        message = (
            f"Defensive NULL check of {subject}: {never} never NULL here by construction; remove the check and "
            "let an invariant violation fail loudly upstream."
        )
    node = checked[0].node
    if node.is_macro_expansion:
        place = node.spelling_start
        span = Span(place.path, place.line, place.column) if place.path else Span(node.path, node.line, node.column)
    else:
        span = Span(node.path, node.line, node.column, node.end_line, node.end_column)
    return diagnostic(CODE, message, span, fingerprint_text=unit.source_line(span.path, span.line or 0).strip())
