"""Rules = documents in rules/ (identity, docs, codebase names) joined with check functions in hexlint/checks/."""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hexlint.checks import CHECKS
from hexlint.core import Diagnostic, Rule, RuleDoc, Severity

# The `[docs]` table: its long texts are parsed only when a rule's docs are asked for.
_DOCS_TABLE = re.compile(r"^\[docs\][ \t]*(?:#[^\n]*)?$", re.MULTILINE)
# A table header after `[docs]` that belongs to another table: the split would lose it, so such a document is
# parsed whole (a false alarm, e.g. a docs line that starts with `[`, only costs that parse).
_OTHER_TABLE = re.compile(r"^[ \t]*\[(?!docs[\].])", re.MULTILINE)


def _toml(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib.loads(text)


def rule_documents_dir() -> Path:
    """rules/ ships inside the wheel as hexlint/_rules; a source checkout has it at the top level."""
    packaged = Path(__file__).parent / "_rules"
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "rules"


class RegistryError(Exception):
    pass


@dataclass(frozen=True)
class LazyCheck:
    """A rule's check, looked up in CHECKS when called: listing or documenting rules imports no rule module."""

    code: str

    def __call__(self, *arguments: Any, **keywords: Any) -> Iterator[Diagnostic]:
        return CHECKS[self.code](*arguments, **keywords)


@dataclass(frozen=True)
class LazyDocs:
    """A rule's docs: the `[docs]` part of its document, parsed on first use (`rule.doc`)."""

    text: str  # the document from its `[docs]` line on

    def __call__(self) -> RuleDoc:
        return _docs_from(self.text)


@functools.cache
def _docs_from(text: str) -> RuleDoc:
    return rule_doc(_toml(text).get("docs", {}))


def rule_doc(docs: Mapping[str, Any]) -> RuleDoc:
    return RuleDoc(
        what=docs.get("what", ""),
        why=docs.get("why", ""),
        example=docs.get("example", ""),
        use_instead=docs.get("use_instead", ""),
        fix_safety=docs.get("fix_safety", ""),
    )


def split_document(text: str) -> tuple[str, str]:
    """(head, docs): the document before its `[docs]` table and from it on; docs is "" when it cannot be split
    safely (no such table, or another table after it), and then the head is the whole document."""
    match = _DOCS_TABLE.search(text)
    if match is None or _OTHER_TABLE.search(text, match.end()):
        return text, ""
    return text[: match.start()], text[match.start() :]


def load_rule(path: Path) -> Rule:
    head, docs_text = split_document(path.read_text(encoding="utf-8"))
    try:
        data = _toml(head)
    except ValueError:  # a `[docs]` line inside a multi-line string of the head: parse the document whole
        head, docs_text = head + docs_text, ""
        data = _toml(head)
    code = data["code"]
    return Rule(
        code=code,
        name=data["name"],
        severity=Severity(data["severity"]),
        kind=data["kind"],
        summary=data["summary"],
        docs=LazyDocs(docs_text) if docs_text else rule_doc(data.get("docs", {})),
        options=data.get("options", {}),
        check=LazyCheck(code) if code in CHECKS else None,
        scope=data.get("scope", "file"),
    )


@functools.cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, sorted by code."""
    rules = [load_rule(path) for path in sorted(rule_documents_dir().glob("HX*.toml"))]
    return tuple(sorted(rules, key=lambda rule: rule.code))


@functools.cache
def _rules_by_code_and_name() -> dict[str, Rule]:
    by_key: dict[str, Rule] = {}
    for rule in all_rules():
        by_key.setdefault(rule.code.lower(), rule)
        by_key.setdefault(rule.name, rule)
    return by_key


def find_rule(code_or_name: str) -> Rule | None:
    wanted = code_or_name.strip()
    return _rules_by_code_and_name().get(wanted.lower())  # codes in any case; names are lower-case


def matches_selector(rule: Rule, selector: str) -> bool:
    """A selector is a code ("HX104"), a code prefix ("HX1", "ALL") or a rule name ("defensive-null-check")."""
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    return rule.code.upper().startswith(selector.upper()) or rule.name == selector.lower()


def is_known_selector(selector: str) -> bool:
    return any(matches_selector(rule, selector) for rule in all_rules())
