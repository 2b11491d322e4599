"""Rules = documents in rules/ (identity, docs, codebase names) joined with check functions in hexlint/checks/."""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hexlint.checks import CHECKS
from hexlint.core import Diagnostic, Rule, RuleDoc, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


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


def load_rule(path: Path) -> Rule:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    docs = data.get("docs", {})
    code = data["code"]
    return Rule(
        code=code,
        name=data["name"],
        severity=Severity(data["severity"]),
        kind=data["kind"],
        summary=data["summary"],
        doc=RuleDoc(
            what=docs.get("what", ""),
            why=docs.get("why", ""),
            example=docs.get("example", ""),
            use_instead=docs.get("use_instead", ""),
            fix_safety=docs.get("fix_safety", ""),
        ),
        options=data.get("options", {}),
        check=LazyCheck(code) if code in CHECKS else None,
        scope=data.get("scope", "file"),
    )


@functools.cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, sorted by code."""
    rules = [load_rule(path) for path in sorted(rule_documents_dir().glob("HX*.toml"))]
    return tuple(sorted(rules, key=lambda rule: rule.code))


def find_rule(code_or_name: str) -> Rule | None:
    wanted = code_or_name.strip()
    for rule in all_rules():
        if rule.code.lower() == wanted.lower() or rule.name == wanted.lower():
            return rule
    return None


def matches_selector(rule: Rule, selector: str) -> bool:
    """A selector is a code ("HX104"), a code prefix ("HX1", "ALL") or a rule name ("defensive-null-check")."""
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    return rule.code.upper().startswith(selector.upper()) or rule.name == selector.lower()


def is_known_selector(selector: str) -> bool:
    return any(matches_selector(rule, selector) for rule in all_rules())
