"""Source-rule findings take their name and severity from the rule document through registry.diagnostic only."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexlint import registry
from hexlint.c import index, parse
from hexlint.checks import _c_helpers


def loop_unit(tmp_path: Path) -> index.UnitIndex:
    path = tmp_path / "htp" / "op.c"
    path.parent.mkdir(parents=True)
    path.write_text("int f(int n, int d) { int s = 0; for (int i = 0; i < n; i++) s += i / d; return s; }\n")
    unit = parse.parse_unit(str(path), parse.KERNEL, parse.ParseSettings())
    return index.build_project([unit], [str(path)]).units[0]


def test_diagnostic_at_takes_a_code_and_reads_the_rule_document(tmp_path: Path) -> None:
    unit = loop_unit(tmp_path)
    node = unit.nodes("BINARY_OPERATOR")[-1]
    rule = registry.find_rule("HX108")
    assert rule is not None
    finding = _c_helpers.diagnostic_at("HX108", unit, node, "message")
    assert (finding.code, finding.name, finding.severity) == (rule.code, rule.name, rule.severity)
    assert finding.span.line == 1 and finding.fingerprint_text.startswith("int f(")


def test_an_unknown_code_is_an_error_not_an_invented_identity(tmp_path: Path) -> None:
    unit = loop_unit(tmp_path)
    with pytest.raises(KeyError):
        _c_helpers.diagnostic_at("HX999", unit, unit.nodes("BINARY_OPERATOR")[-1], "message")


def test_no_second_identity_lookup_with_fallback_defaults() -> None:
    assert not hasattr(_c_helpers, "RuleIdentity")
    assert not hasattr(_c_helpers, "rule_identity")
