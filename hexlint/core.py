"""The one model shared by source and binary findings: small frozen dataclasses, nothing else."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Source:
    """A file's raw bytes; text rules decode it themselves so non-UTF-8 input is never lost."""

    path: str
    data: bytes


@dataclass(frozen=True)
class Span:
    """Where a finding is: a text range (1-based line/column) or a binary place (symbol + address), or both."""

    path: str
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    symbol: str | None = None
    address: int | None = None


@dataclass(frozen=True)
class Related:
    """Another place that explains the finding, e.g. the host line that writes a field."""

    span: Span
    message: str


@dataclass(frozen=True)
class Edit:
    """Replace bytes [start, end) of a file with `replacement`."""

    path: str
    start: int
    end: int
    replacement: bytes


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    safe: bool = True


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    severity: Severity
    message: str
    span: Span
    # For binary findings: the source file:line DWARF gives for `span.address`.
    source_span: Span | None = None
    related: tuple[Related, ...] = ()
    fix: Fix | None = None
    # Text the baseline fingerprint is computed from (normally the offending source line or instruction),
    # so a finding keeps its identity when unrelated lines above it move.
    fingerprint_text: str = ""


CheckFunction = Callable[..., Iterator[Diagnostic]]


@dataclass(frozen=True)
class RuleDoc:
    what: str
    why: str
    example: str
    use_instead: str
    fix_safety: str = ""


@dataclass(frozen=True)
class Rule:
    """A rule: identity and docs from its document in rules/, behaviour from its module in hexlint/checks/."""

    code: str
    name: str
    severity: Severity
    kind: str  # "tool" | "text" | "source" | "binary"
    summary: str
    # The docs, or what reads them on first use (`rule.doc`): a lint run needs none of the documents' long texts.
    docs: RuleDoc | Callable[[], RuleDoc]
    options: Mapping[str, Any] = field(default_factory=dict)
    check: CheckFunction | None = None
    # "file": the rule judges each file on its own. "project": its facts span files (host writes vs kernel reads), so a
    # partial run (a pre-commit hook) parses the rest of the tree as context for it.
    scope: str = "file"

    @property
    def doc(self) -> RuleDoc:
        return self.docs if isinstance(self.docs, RuleDoc) else self.docs()
