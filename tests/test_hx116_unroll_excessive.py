"""HX116 unroll-excessive: the pragma reader, and the message naming the binary audit's in-loop spills when the run
also audits the library built from the source."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT

from hexlint.backend.pragmas import HvxMarkers, governed_loops, hvx_operation, parse_unroll, unroll_requests
from hexlint.c.index import build_project
from hexlint.c.parse import ParseSettings, classify, parse_unit
from hexlint.config import Config
from hexlint.engine import RunSettings, lint

BINARY = REPO_ROOT / "fixtures" / "binary"


@pytest.mark.parametrize(
    ("body", "parsed"),
    [
        ("unroll", (True, None, None)),
        ("unroll(4)", (False, 4, None)),
        ("unroll 8", (False, 8, None)),
        ("unroll ( 0x10 )", (False, 16, None)),
        ("unroll(unroll_cnt)", (False, None, "unroll_cnt")),
        ("nounroll", (False, 1, None)),
        ("clang loop unroll(full)", (True, None, None)),
        ("clang loop unroll(enable)", (True, None, None)),
        ("clang loop unroll(disable)", (False, 1, None)),
        ("clang loop vectorize(enable) unroll_count(6)", (False, 6, None)),
        ("GCC unroll 8", (False, 8, None)),
        ("clang loop vectorize(enable)", None),
        ("once", None),
        ('clang diagnostic ignored "-Wunused-variable"', None),
    ],
)
def test_parse_unroll(body: str, parsed: tuple[bool, int | None, str | None] | None) -> None:
    assert parse_unroll(body) == parsed


def test_requests_point_at_the_pragma_and_the_loop_after_it() -> None:
    data = b'void f(int n) {\n  #pragma unroll(2)\n  /* note */\n  for (;;) {}\n  _Pragma("unroll") while (n) {}\n}\n'
    first, second = unroll_requests(data, "f.c")
    assert (first.line, first.column, first.count) == (2, 3, 2)
    assert data[first.loop_offset : first.loop_offset + 3] == b"for"
    assert (second.line, second.full) == (5, True)
    assert data[second.loop_offset : second.loop_offset + 5] == b"while"


def _lint_twin(*names: str) -> list:
    settings = RunSettings(select=("HX116", "HX201"), kernel_globs=("*.c",), jobs=1)
    result = lint([str(BINARY / name) for name in names], Config(), settings)
    return [diagnostic for diagnostic in result.diagnostics if diagnostic.code == "HX116"]


def test_message_names_the_in_loop_spills_of_the_library_audited_in_the_same_run() -> None:
    findings = _lint_twin("unroll_spill.c", "unroll_spill.so")
    source = (BINARY / "unroll_spill.c").read_text().splitlines()
    assert findings, "the bare pragmas on the 40-iteration loops are findings"
    for finding in findings:
        assert source[finding.span.line - 1].strip() == "#pragma unroll"
        assert "`unrolled_accumulate` spills HVX registers in a loop of unroll_spill.so" in finding.message
    # the legal twin's unroll(4) pragmas are within the limit
    legal_start = next(index for index, line in enumerate(source) if line.startswith("void legal_unrolled_by_four"))
    assert len(findings) == 3 and all(finding.span.line <= legal_start for finding in findings)


def test_without_the_library_the_message_says_nothing_of_spills() -> None:
    with_library = _lint_twin("unroll_spill.c", "unroll_spill.so")
    alone = _lint_twin("unroll_spill.c")
    assert [finding.span.line for finding in alone] == [finding.span.line for finding in with_library]
    assert all("spills HVX registers" not in finding.message for finding in alone)


def test_governed_loops_resolve_counts_and_trip_counts(tmp_path: Path) -> None:
    path = tmp_path / "htp" / "k.c"
    path.parent.mkdir(parents=True)
    path.write_text(
        "#include <stdint.h>\n"
        "#include <hexagon_types.h>\n"
        "#define P(x) _Pragma(#x)\n"
        "#define LOOP(cnt) P(unroll(cnt)) for (uint32_t i = 0; i < n; i++) { d[i] = s[i]; }\n"
        "void a(HVX_Vector * d, const HVX_Vector * s, uint32_t n) { LOOP(8) }\n"
        "void b(HVX_Vector * d, const HVX_Vector * s, uint32_t n) { LOOP(2) }\n"
        "void c(int * d) {\n"
        "    #pragma unroll\n"
        "    for (int i = 10; i > 0; i -= 3) { d[i] = i; }\n"
        "}\n"
    )
    unit = parse_unit(str(path), classify(str(path)), ParseSettings())
    assert not unit.diagnostics, [diagnostic.message for diagnostic in unit.diagnostics]
    project = build_project([unit], [str(path)])
    markers = HvxMarkers(("HVX_Vector", "HEXAGON_Vect*"), ("Q6_V*",))
    facts = {
        loop.function: (loop.count, loop.trip_count, hvx_operation(loop, markers) is not None)
        for loop in governed_loops(project)
    }
    assert facts == {"a": (8, None, True), "b": (2, None, True), "c": (None, 4, False)}
