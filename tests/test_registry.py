"""The registry: rules are listed without importing their modules, and each rule module loads only when it runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hexlint import registry
from hexlint.checks import CHECK_MODULES, CHECKS

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
    # different files; so do the code that stores a VTCM pointer in a context field and the worker that reads it.
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
