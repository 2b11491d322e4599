"""hexlint's own findings (HX001, HX002) take their name and severity from the rule documents, like every check's."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexlint import engine, registry, suppress
from hexlint.c import parse
from hexlint.core import Diagnostic, Severity
from hexlint.record import replace


@pytest.fixture
def demoted_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """HX001 and HX002 as documents with other severities: a hand-rolled fallback would not follow."""
    read = registry.rule_at

    def demoted(path: Path):
        rule = read(path)
        return replace(rule, severity=Severity.INFO) if rule.code in ("HX001", "HX002") else rule

    monkeypatch.setattr(registry, "rule_at", demoted)


def _matches_document(found: Diagnostic) -> None:
    rule = registry.find_rule(found.code)
    assert rule is not None
    assert (found.name, found.severity) == (rule.name, rule.severity)


def test_parse_error_comes_from_the_document(tmp_path: Path, demoted_rules: None) -> None:
    path = tmp_path / "broken.c"
    path.write_text("int f( {\n")
    (found, *_) = parse.parse_unit(str(path), parse.HOST, parse.ParseSettings()).diagnostics
    assert found.code == "HX002" and found.severity == Severity.INFO
    _matches_document(found)
    assert found.fingerprint_text == found.message


def test_unopenable_name_comes_from_the_document(demoted_rules: None) -> None:
    found = engine._unopenable("bad\udcffname.c")
    assert found.code == "HX002" and found.severity == Severity.INFO
    _matches_document(found)


def test_unused_suppression_comes_from_the_document(demoted_rules: None) -> None:
    directive = suppress.Suppression("k.c", 3, 5, 30, 3, ("HX104",), "why", well_formed=True)
    found = suppress._hx001(directive, "unused")
    assert found.code == "HX001" and found.severity == Severity.INFO
    _matches_document(found)
    assert found.fingerprint_text == "hexlint: ignore[HX104]"
