"""The fixture runner of the runtime trace rules (HX3xx): each `fixtures/rules/HX3nn/*.log` is one `hexlint trace`
run with HX3nn and every code its sidecar `NAME.expect` (`LINE CODE` pairs) mentions selected, and the options of
a sidecar `NAME.toml` (`[HX305]` tables) applied. Strict both ways: a missing finding fails, an extra one fails, a
case without a sidecar must be clean."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from types import MappingProxyType

import pytest
from conftest import REPO_ROOT

from hexlint.registry import find_rule
from hexlint.runtime.command import check_traces
from hexlint.runtime.trace import read_trace

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CASES = sorted((REPO_ROOT / "fixtures" / "rules").glob("HX3[0-9][0-9]/*.log"))


def expected_findings(case: Path) -> Counter[tuple[int, str]]:
    sidecar = case.with_suffix(".expect")
    if not sidecar.is_file():
        return Counter()
    pairs = [line.split() for line in sidecar.read_text(encoding="utf-8").splitlines() if line.strip()]
    return Counter((int(line), code) for line, code in pairs)


def run_case(case: Path) -> Counter[tuple[int, str]]:
    expected = expected_findings(case)
    codes = sorted({case.parent.name, *(code for _, code in expected)})
    rules = [find_rule(code) for code in codes]
    options_file = case.with_suffix(".toml")
    overrides = tomllib.loads(options_file.read_text(encoding="utf-8")) if options_file.is_file() else {}
    options = {rule.code: MappingProxyType({**rule.options, **overrides.get(rule.code, {})}) for rule in rules}
    found = check_traces([read_trace(str(case))], rules, options)
    return Counter((diagnostic.span.line, diagnostic.code) for diagnostic in found)


def test_every_runtime_rule_has_cases() -> None:
    assert {case.parent.name for case in CASES} >= {"HX301", "HX302", "HX303", "HX304", "HX305", "HX306"}


@pytest.mark.parametrize("case", CASES, ids=[f"{case.parent.name}/{case.name}" for case in CASES])
def test_runtime_fixture(case: Path) -> None:
    assert run_case(case) == expected_findings(case)
