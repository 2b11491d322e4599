"""HX105 beyond the fixtures: the call chain and its related locations, options, and host-only scope."""

from __future__ import annotations

from pathlib import Path

from hexlint import registry
from hexlint.backend.model import model_of
from hexlint.c import index, parse
from hexlint.checks import hx105_supports_op_runtime_state

SOURCE = """
struct ggml_backend_buffer { int usage; };
struct ggml_tensor { int type; struct ggml_backend_buffer *buffer; void *data; };

static int leaf(const struct ggml_tensor *t) {
    return t->buffer != 0;
}

static int middle(const struct ggml_tensor *t) {
    return leaf(t) + t->type;
}

static int ggml_hexagon_supported_add(const struct ggml_tensor *t) {
    return middle(t);
}

int ggml_backend_hexagon_device_supports_op(void *dev, const struct ggml_tensor *t) {
    (void) dev;
    return ggml_hexagon_supported_add(t);
}
"""


def findings(tmp_path: Path, source: str = SOURCE, role: str = parse.HOST, **overrides: object) -> list:
    path = tmp_path / ("host.cpp" if role == parse.HOST else "htp/op.c")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    unit = parse.parse_unit(str(path), role, parse.ParseSettings())
    project = index.build_project([unit], [str(path)])
    rule = registry.find_rule("HX105")
    assert rule is not None
    return list(hx105_supports_op_runtime_state.check(model_of(project), {**rule.options, **overrides}))


def test_chain_from_supports_op_with_a_related_location_per_hop(tmp_path: Path) -> None:
    (finding,) = findings(tmp_path)
    assert finding.span.line == 6
    assert "ggml_backend_hexagon_device_supports_op -> ggml_hexagon_supported_add -> middle -> leaf" in finding.message
    assert [related.span.line for related in finding.related] == [19, 14, 10]
    assert finding.related[-1].message == "`middle` calls `leaf` here"


def test_allowed_and_not_followed_functions_are_options(tmp_path: Path) -> None:
    assert findings(tmp_path, allowed_functions=["leaf"]) == []
    assert findings(tmp_path, not_followed=["middle"]) == []


def test_a_checker_nothing_calls_is_its_own_root(tmp_path: Path) -> None:
    source = SOURCE.replace("return ggml_hexagon_supported_add(t);", "return t->type;")
    (finding,) = findings(tmp_path, source)
    assert finding.message.startswith("`ggml_hexagon_supported_add` reaches `t->buffer`")


def test_kernel_code_is_not_checked(tmp_path: Path) -> None:
    assert findings(tmp_path, role=parse.KERNEL) == []


OWNERSHIP = """
struct ggml_backend_buffer { int usage; };
struct ggml_tensor { int type; struct ggml_backend_buffer *buffer; };
struct session;
bool ggml_backend_buffer_is_hexagon(const ggml_backend_buffer *b);
session *ggml_backend_hexagon_buffer_get_sess(const ggml_backend_buffer *b);

template <typename... T>
static bool owned(const session *s, T... tensors) {
    return ([&]() -> bool {
        return !tensors->buffer || (ggml_backend_buffer_is_hexagon(tensors->buffer) &&
                                    ggml_backend_hexagon_buffer_get_sess(tensors->buffer) == s);
    }() && ...);
}

bool ggml_backend_hexagon_device_supports_op(const session *s, const ggml_tensor *op) {
    if (op->buffer && !ggml_backend_buffer_is_hexagon(op->buffer)) {
        return false;
    }
    return owned(s, op);
}
"""


def test_ownership_tests_are_accepted_inline_and_in_templates(tmp_path: Path) -> None:
    assert findings(tmp_path, OWNERSHIP) == []


def test_without_ownership_calls_every_ownership_test_is_reported(tmp_path: Path) -> None:
    lines = sorted(finding.span.line for finding in findings(tmp_path, OWNERSHIP, ownership_calls=[]))
    assert lines == [11, 12, 17]


def test_an_ownership_guard_around_another_buffer_read_is_reported(tmp_path: Path) -> None:
    source = OWNERSHIP.replace("!ggml_backend_buffer_is_hexagon(op->buffer)", "op->buffer->usage == 2")
    (finding,) = findings(tmp_path, source)
    assert finding.span.line == 17
    assert "`op->buffer`" in finding.message and "`op->buffer->usage`" in finding.message
