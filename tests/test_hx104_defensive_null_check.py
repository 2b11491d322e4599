"""HX104 beyond the fixtures: configuration (names, types, slots), messages and the assertion wording."""

from __future__ import annotations

from pathlib import Path

from hexlint import registry
from hexlint.backend.model import model_of
from hexlint.c import index, parse
from hexlint.checks import hx104_defensive_null_check
from hexlint.checks.hx104_defensive_null_check import NullCheckSettings

PRELUDE = """
#include <assert.h>
#include <stddef.h>
struct htp_tensor { void *data; };
struct htp_ops_context { struct htp_tensor *src[4]; struct htp_tensor *dst; void *ctx; };
"""


def findings(tmp_path: Path, body: str, name: str = "op.c", **overrides: object) -> list:
    path = tmp_path / "htp" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PRELUDE + body, encoding="utf-8")
    unit = parse.parse_unit(str(path), parse.KERNEL, parse.ParseSettings())
    project = index.build_project([unit], [str(path)])
    rule = registry.find_rule("HX104")
    assert rule is not None
    return list(hx104_defensive_null_check.check(model_of(project), {**rule.options, **overrides}))


def test_assertion_message_names_the_macro_and_the_pointer(tmp_path: Path) -> None:
    (finding,) = findings(
        tmp_path, "int op(struct htp_ops_context *octx) {\n    assert(octx != NULL);\n    return 0;\n}\n"
    )
    assert finding.message.startswith("Defensive `assert` of internal framework pointer `octx`")
    assert finding.span.line == PRELUDE.count("\n") + 2 and finding.span.column == 12


def test_one_finding_per_condition_lists_every_pointer(tmp_path: Path) -> None:
    body = (
        "int op(struct htp_ops_context *octx) {\n"
        "    if (!octx || !octx->ctx || !octx->dst) return -1;\n"
        "    return 0;\n"
        "}\n"
    )
    (finding,) = findings(tmp_path, body)
    assert "internal framework pointers `octx`, `octx->ctx` and required operand `octx->dst`" in finding.message


def test_internal_names_are_configuration(tmp_path: Path) -> None:
    body = "int op(struct htp_tensor *session) {\n    if (!session) return -1;\n    return 0;\n}\n"
    assert findings(tmp_path, body) == []
    assert len(findings(tmp_path, body, internal_pointer_names=["session"])) == 1


def test_required_slots_per_file_most_specific_glob_wins(tmp_path: Path) -> None:
    body = "int op(struct htp_ops_context *octx) {\n    if (!octx->src[1]) return -1;\n    return 0;\n}\n"
    slots = {"*": [0], "binary-*.c": [0, 1], "binary-special.c": [0]}
    assert findings(tmp_path, body, name="unary-ops.c", required_operand_slots=slots) == []
    assert len(findings(tmp_path, body, name="binary-ops.c", required_operand_slots=slots)) == 1
    assert findings(tmp_path, body, name="binary-special.c", required_operand_slots=slots) == []


def test_settings_read_every_option_of_the_rule_document() -> None:
    rule = registry.find_rule("HX104")
    assert rule is not None
    settings = NullCheckSettings.from_options(rule.options)
    assert "octx" in settings.internal_pointer_names and "assert" in settings.assert_macros
    assert settings.required_slots("/x/flash-attn-ops.c") == (0, 1, 2)
    assert settings.required_slots("/x/softmax-ops.c") == (0,)


def test_reassigned_parameter_is_not_reported(tmp_path: Path) -> None:
    body = (
        "int op(struct htp_ops_context *octx, struct htp_ops_context *other) {\n"
        "    octx = other;\n"
        "    if (!octx) return -1;\n"
        "    return 0;\n"
        "}\n"
    )
    assert findings(tmp_path, body) == []
