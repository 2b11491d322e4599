"""What the runtime trace rules (HX3xx) share: a finding at a line of the log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic
from hexlint.runtime.trace import TracedOp


def finding_at(code: str, path: str, line: int, message: str, fingerprint: str, **details: Any) -> Diagnostic:
    return diagnostic(code, message, Span(path, line, 1), fingerprint_text=fingerprint, **details)


def op_label(op: TracedOp) -> str:
    return f"{op.name} `{op.tensor}`"


def op_related(op: TracedOp) -> tuple[Related, ...]:
    return (Related(Span(op.record.path, op.record.line, 1), f"{op.name} `{op.tensor}` ran here"),)


def percent_option(options: Mapping[str, Any], name: str) -> float:
    """A budget in percent; a negative value (the default) turns the check off."""
    value = options.get(name, -1)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else -1.0
