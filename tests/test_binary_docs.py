"""Each binary rule's docs: the `example` compiled with clang-22 fires exactly that rule, `use_instead` fires nothing.

HX202's docs are checked with its threshold at 0 (its default) whatever the options say.
"""

from __future__ import annotations

import pytest
from test_binary_support import build_library

from hexlint.binary.audit import audit_image, settings_from_options
from hexlint.binary.run import BINARY_CODES, binary_checks, rule_options
from hexlint.elf import load_elf
from hexlint.registry import find_rule


def findings(library, code_under_test: str) -> set[str]:
    import argparse

    options = rule_options({}, argparse.Namespace())
    if code_under_test == "HX202":
        options["HX202"]["max_inloop_scalar_spills"] = 0
    audit = audit_image(load_elf(library), settings_from_options(options))
    checks = binary_checks()
    return {diagnostic.code for code in BINARY_CODES for diagnostic in checks[code](audit, options[code])}


@pytest.mark.parametrize("code", BINARY_CODES)
def test_rule_document_is_complete(code):
    rule = find_rule(code)
    assert rule is not None and rule.kind == "binary"
    for section in (rule.doc.what, rule.doc.why, rule.doc.example, rule.doc.use_instead):
        assert section.strip()


@pytest.mark.parametrize("code", BINARY_CODES)
def test_example_fires_exactly_this_rule_and_use_instead_nothing(code, tmp_path):
    rule = find_rule(code)
    example = build_library(tmp_path, rule.doc.example, name="example", extra=("-g",))
    assert findings(example, code) == {code}
    clean = build_library(tmp_path, rule.doc.use_instead, name="use_instead", extra=("-g",))
    assert findings(clean, code) == set()


def test_audit_defaults_match_the_rule_documents():
    import argparse

    from hexlint.binary.audit import AuditSettings

    assert settings_from_options(rule_options({}, argparse.Namespace())) == AuditSettings()
