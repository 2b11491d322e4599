"""The registry: rules are listed without importing their modules, and each rule module loads only when it runs."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from hexlint import engine, registry, suppress
from hexlint.c import index, parse
from hexlint.checks import CHECK_MODULES, CHECKS, _c_helpers
from hexlint.core import Diagnostic, Severity

ROOT = Path(__file__).resolve().parent.parent


def run_python(code: str) -> str:
    environment = {"PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", code]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True, env=environment)
    return result.stdout.strip()


def test_every_listed_module_has_a_check_function() -> None:
    for code in CHECK_MODULES:
        assert callable(CHECKS[code]), code


def test_rules_with_a_module_call_it_lazily() -> None:
    for rule in registry.all_rules():
        assert (rule.check is not None) == (rule.code in CHECK_MODULES), rule.code


def test_listing_rules_imports_no_rule_module() -> None:
    loaded = run_python(
        "import sys; from hexlint import registry; registry.all_rules(); "
        "print(sorted(name for name in sys.modules if name.startswith('hexlint.checks.hx') or name == 'clang.cindex'))"
    )
    assert loaded == "[]"


def test_text_rules_alone_never_load_libclang(tmp_path: Path) -> None:
    source = tmp_path / "macro.h"
    source.write_text("#define TWO(x) \\\n    ((x) + (x))\n")
    loaded = run_python(
        "import sys; from hexlint.cli import main; "
        f"main(['--select', 'HX110,HX111', {str(source)!r}]); print('clang.cindex' in sys.modules)"
    )
    assert loaded.splitlines()[-1] == "False"


def test_scope_is_file_or_project_and_cross_file_rules_say_project() -> None:
    scopes = {rule.code: rule.scope for rule in registry.all_rules()}
    assert set(scopes.values()) <= {"file", "project"}
    # Host writes and kernel reads, dispatch tables, trace and DMA queue helpers and a helper's callers live in
    # different files; so do the code that stores a VTCM pointer in a context field and the worker that reads it,
    # an op and the workers that write its destination, and a completion signal and the op that ran before it.
    project_rules = {code for code, scope in scopes.items() if scope == "project"}
    assert project_rules == {
        "HX101",
        "HX102",
        "HX103",
        "HX104",
        "HX106",
        "HX107",
        "HX109",
        "HX112",
        "HX113",
        "HX114",
        "HX115",
        "HX121",
        "HX122",
        "HX124",
    }


def test_selectors_resolve_from_file_names_that_must_name_the_rule(tmp_path: Path) -> None:
    keys = {key.code: key.name for key in registry.rule_keys()}
    assert keys == {rule.code: rule.name for rule in registry.all_rules()}
    assert registry.is_known_selector("macro-backslash-misaligned") and not registry.is_known_selector("HX9")
    (document,) = Path(registry.rule_documents_dir()).glob("HX110-*.toml")
    misnamed = tmp_path / "HX110-old-name.toml"
    misnamed.write_bytes(document.read_bytes())
    with pytest.raises(registry.RegistryError, match=r"must be named HX110-macro-backslash-misaligned\.toml"):
        registry.rule_at(misnamed)


def _expand_codes(text: str) -> set[str]:
    codes: set[str] = set()
    for first, last in re.findall(r"HX(\d{3})(?:-HX(\d{3}))?", text):
        codes.update(f"HX{number}" for number in range(int(first), int(last or first) + 1))
    return codes


def test_the_docs_list_exactly_the_project_scope_rules_as_cross_file() -> None:
    project_rules = {rule.code for rule in registry.all_rules() if rule.scope == "project"}
    root = Path(__file__).resolve().parent.parent
    for document in ("README.md", "docs/usage.md"):
        text = " ".join((root / document).read_text(encoding="utf-8").split())
        (listed,) = re.findall(r"the cross-file rules \((HX[^:)]*)", text, re.IGNORECASE)
        assert _expand_codes(listed) == project_rules, document


# hexlint's own findings (HX001, HX002) take their name and severity from the rule


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


# Source-rule findings take their name and severity from the rule document through


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
