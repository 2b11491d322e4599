"""HX108 beyond the fixtures: loop shapes read from text, options, messages and related locations."""

from __future__ import annotations

from pathlib import Path

import pytest

from hexlint import registry
from hexlint.backend.loops import loop_shape, written_in
from hexlint.backend.model import model_of
from hexlint.c import index, parse
from hexlint.checks import hx108_division_in_loop


def findings(tmp_path: Path, source: str, **overrides: object) -> list:
    path = tmp_path / "htp" / "op.c"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    unit = parse.parse_unit(str(path), parse.KERNEL, parse.ParseSettings())
    project = index.build_project([unit], [str(path)])
    rule = registry.find_rule("HX108")
    assert rule is not None
    return list(hx108_division_in_loop.check(model_of(project), {**rule.options, **overrides}))


@pytest.mark.parametrize(
    ("text", "repeated", "condition"),
    [
        (b"for (int i = n / k; i < m; i++) { x += i; }", b" i < m; i++) { x += i; }", " i < m"),
        (b"for (;;) x++;", b";) x++;", ""),
        (b"while (i < f(a, b)) { i++; }", b"while (i < f(a, b)) { i++; }", "i < f(a, b)"),
        (b"do { i++; } while (i < n);", b"do { i++; }", ""),
    ],
)
def test_loop_shape_reads_the_repeated_part(text: bytes, repeated: bytes, condition: str) -> None:
    shape = loop_shape(text, 0, None)
    assert shape is not None
    assert text[shape.repeated_start : shape.end] == repeated
    assert shape.condition == condition


def test_loop_shape_of_a_macro_loop_stops_at_the_end_of_the_define() -> None:
    text = b"#define LOOP \\\n    for (i = 0; i < n; i++) \\\n        x += i / d;\nint after = 1;\n"
    start = text.index(b"for")
    shape = loop_shape(text, start, None)
    assert shape is not None and text[shape.end - 1 : shape.end] == b";" and b"after" not in text[start : shape.end]


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (b"x = 1;", True),
        (b"x += 2;", True),
        (b"x++;", True),
        (b"--x;", True),
        (b"f(&x);", True),
        (b"y = x == 1;", False),
        (b"y = ctx->x;", False),
        (b"f(&x->field);", False),
        (b"y = xx + 1;", False),
    ],
)
def test_written_in_recognises_writes_of_a_variable(text: bytes, written: bool) -> None:
    assert written_in(text, "x") is written


def test_message_names_divisor_suggests_fastdiv_and_relates_the_loop(tmp_path: Path) -> None:
    source = (
        "unsigned f(unsigned *out, unsigned n, unsigned ne01) {\n"
        "    for (unsigned i = 0; i < n; i++) {\n"
        "        out[i] = i % ne01;\n"
        "    }\n"
        "    return 0;\n"
        "}\n"
    )
    (finding,) = findings(tmp_path, source)
    assert (finding.span.line, finding.span.column) == (3, 18)
    assert "modulo by `ne01`" in finding.message and "init_fastdiv_values()" in finding.message
    assert "fastmodulo()" in finding.message
    assert finding.related[0].span.line == 2 and finding.fingerprint_text == "out[i] = i % ne01;"


def test_fastdiv_names_come_from_options(tmp_path: Path) -> None:
    source = (
        "unsigned f(unsigned n, unsigned d) {\n"
        "    unsigned s = 0;\n"
        "    for (unsigned i = 0; i < n; i++) s += i / d;\n"
        "    return s;\n"
        "}\n"
    )
    (finding,) = findings(tmp_path, source, fastdiv_init="make_divisor", fastdiv="divide_fast")
    assert "`make_divisor()`" in finding.message and "`divide_fast()`" in finding.message


def test_floating_point_can_be_switched_off(tmp_path: Path) -> None:
    source = (
        "void f(float *row, unsigned n, float scale) {\n"
        "    for (unsigned i = 0; i < n; i++) row[i] = row[i] / scale;\n"
        "}\n"
    )
    assert len(findings(tmp_path, source)) == 1
    assert findings(tmp_path, source, check_floating_point=False) == []


def test_exempt_functions_and_setup_loop_bounds_are_options(tmp_path: Path) -> None:
    source = (
        "void setup(unsigned *o, unsigned n, unsigned d) {\n    for (unsigned i = 0; i < n; i++) o[i] = i / d;\n}\n"
    )
    assert len(findings(tmp_path, source)) == 1
    assert findings(tmp_path, source, exempt_functions=["set*"]) == []
    assert findings(tmp_path, source, setup_loop_bounds=["n"]) == []


def test_host_code_is_not_checked(tmp_path: Path) -> None:
    path = tmp_path / "host.cpp"
    path.write_text(
        "unsigned f(unsigned n, unsigned d) {\n    unsigned s = 0;\n    for (; n; n--) s += n / d;\n    return s;\n}\n"
    )
    unit = parse.parse_unit(str(path), parse.HOST, parse.ParseSettings())
    project = index.build_project([unit], [str(path)])
    assert list(hx108_division_in_loop.check(model_of(project), registry.find_rule("HX108").options)) == []
