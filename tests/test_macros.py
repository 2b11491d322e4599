"""HX110 / HX111: fixtures with inline expectations, fixed outputs, and proofs that the fix only moves whitespace."""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import io
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hexlint.checks import _macros, hx110_macro_backslash_misaligned, hx111_macro_backslash_whitespace
from hexlint.core import Diagnostic, Source
from hexlint.fixer import apply_fixes, unified_diff_bytes
from hexlint.registry import load_rule, rule_documents_dir

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures" / "rules"
CHECKS: dict[str, Callable[..., Iterator[Diagnostic]]] = {
    "HX110": hx110_macro_backslash_misaligned.check,
    "HX111": hx111_macro_backslash_whitespace.check,
}
EXPECT = re.compile(rb"expect:\s*(HX\d{3}(?:\s*,\s*HX\d{3})*)")
SPLICE = re.compile(rb"\\[ \t\f\v]*\r?\n")
HORIZONTAL_WHITESPACE = re.compile(rb"[ \t\f\v]")


def rule_options(code: str) -> dict:
    (document,) = Path(rule_documents_dir()).glob(f"{code}-*.toml")
    return dict(load_rule(document).options)


def fixture_cases() -> list[Path]:
    """Cases this file runs through the checks directly; those with suppressions need the engine (test_fixtures.py)."""
    return sorted(
        path
        for code in CHECKS
        for path in (FIXTURES / code).glob("*.c")
        if not path.name.endswith(".fixed.c") and b"hexlint: ignore" not in path.read_bytes()
    )


def expectations(path: Path) -> Counter[tuple[int, str]]:
    """Inline `expect: HXnnn[, HXnnn]` comments plus a sidecar NAME.expect of `LINE CODE` pairs."""
    found: Counter[tuple[int, str]] = Counter()
    for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        for match in EXPECT.finditer(line):
            for code in match.group(1).split(b","):
                found[(number, code.strip().decode())] += 1
    sidecar = path.with_suffix(".expect")
    if sidecar.exists():
        for entry in sidecar.read_text().split("\n"):
            if entry.strip():
                number, code = entry.split()
                found[(int(number), code)] += 1
    return found


# Upstream's script realigns a whole macro to its longest line + pad; hexlint's default moves only the lines out of
# the macro's own column.
WHOLE_MACRO = {"HX110": {"realign": "whole-macro"}}


def lint(path: str, data: bytes, codes: set[str], overrides: dict | None = None) -> list[Diagnostic]:
    source = Source(path, data)
    return [
        diagnostic
        for code in sorted(codes)
        for diagnostic in CHECKS[code](source, {**rule_options(code), **(overrides or {}).get(code, {})})
    ]


def codes_for(case: Path) -> set[str]:
    return {case.parent.name} | {code for _, code in expectations(case)}


def safe_fixed(path: str, data: bytes, codes: set[str], overrides: dict | None = None) -> bytes:
    diagnostics = lint(path, data, codes, overrides)
    return apply_fixes(data, [d.fix for d in diagnostics if d.fix is not None and d.fix.safe])


def token_stream(path: Path) -> list[tuple[str, bytes, int]]:
    """libclang's tokens (comments left out) as (kind, spliced text, logical line): equal streams = same program."""
    cindex = pytest.importorskip("clang.cindex", reason="libclang-ng is needed for the token-stream proof")
    data = path.read_bytes()
    unit = cindex.Index.create().parse(str(path), args=["-x", "c", "-std=c11"])
    splice_ends = [match.end() for match in SPLICE.finditer(data)]
    stream = []
    for token in unit.get_tokens(extent=unit.cursor.extent):
        if token.kind.name == "COMMENT":
            continue
        start, end = token.extent.start.offset, token.extent.end.offset
        # A logical line is a line after splicing: where a directive (a macro) ends.
        logical_line = data.count(b"\n", 0, start) - sum(1 for offset in splice_ends if offset <= start)
        stream.append((token.kind.name, SPLICE.sub(b"", data[start:end]), logical_line))
    return stream


def assert_same_program(original: bytes, fixed: bytes, tmp_path: Path) -> None:
    before, after = tmp_path / "before.c", tmp_path / "after.c"
    before.write_bytes(original)
    after.write_bytes(fixed)
    assert token_stream(before) == token_stream(after)
    # Whitespace-only: every other byte, including CR and LF and non-UTF-8 bytes, is kept in order.
    assert HORIZONTAL_WHITESPACE.sub(b"", original) == HORIZONTAL_WHITESPACE.sub(b"", fixed)


# --- fixtures: expectations strict both ways, fixed bytes, idempotence, token streams ---------------------------------


@pytest.mark.parametrize("case", fixture_cases(), ids=lambda case: f"{case.parent.name}/{case.name}")
def test_fixture_findings_match_expectations(case: Path) -> None:
    found = Counter((d.span.line, d.code) for d in lint(str(case), case.read_bytes(), codes_for(case)))
    assert found == expectations(case)


@pytest.mark.parametrize("case", fixture_cases(), ids=lambda case: f"{case.parent.name}/{case.name}")
def test_fixture_fix_matches_fixed_file(case: Path) -> None:
    fixed_file = case.with_name(case.name[: -len(".c")] + ".fixed.c")
    fixed = safe_fixed(str(case), case.read_bytes(), codes_for(case))
    if not expectations(case):
        assert fixed == case.read_bytes()
        assert not fixed_file.exists(), "a clean case needs no .fixed.c"
        return
    assert fixed_file.exists(), f"{fixed_file.name} is missing"
    assert fixed == fixed_file.read_bytes()


@pytest.mark.parametrize(
    "case", [case for case in fixture_cases() if case.parent.name == "HX110"], ids=lambda case: case.name
)
def test_whole_macro_realignment_matches_its_twin(case: Path) -> None:
    """`realign = "whole-macro"` gives NAME.whole-macro.fixed.c, or NAME.fixed.c where both modes agree."""
    whole = case.with_name(case.name[: -len(".c")] + ".whole-macro.fixed.c")
    expected = whole if whole.exists() else case.with_name(case.name[: -len(".c")] + ".fixed.c")
    fixed = safe_fixed(str(case), case.read_bytes(), codes_for(case), WHOLE_MACRO)
    assert fixed == (expected.read_bytes() if expectations(case) else case.read_bytes())
    assert safe_fixed(str(case), fixed, codes_for(case), WHOLE_MACRO) == fixed


@pytest.mark.parametrize("case", fixture_cases(), ids=lambda case: f"{case.parent.name}/{case.name}")
def test_fixture_fix_is_idempotent_and_leaves_no_fixable_finding(case: Path) -> None:
    codes = codes_for(case)
    once = safe_fixed(str(case), case.read_bytes(), codes)
    assert safe_fixed(str(case), once, codes) == once
    left = [d for d in lint(str(case), once, codes) if d.fix is not None and d.fix.safe]
    assert left == []


@pytest.mark.parametrize("case", fixture_cases(), ids=lambda case: f"{case.parent.name}/{case.name}")
def test_fixture_fix_keeps_the_token_stream(case: Path, tmp_path: Path) -> None:
    original = case.read_bytes()
    assert_same_program(original, safe_fixed(str(case), original, codes_for(case)), tmp_path)


def test_unsafe_fix_would_split_a_token(tmp_path: Path) -> None:
    """The glued-token fix is unsafe for a reason: applied anyway, it changes the token stream (the proof has teeth)."""
    case = FIXTURES / "HX110" / "glued_token.c"
    original = case.read_bytes()
    (diagnostic,) = lint(str(case), original, {"HX110"})
    assert diagnostic.fix is not None and not diagnostic.fix.safe
    forced = apply_fixes(original, [diagnostic.fix])
    with pytest.raises(AssertionError):
        assert_same_program(original, forced, tmp_path)


@pytest.mark.parametrize("case", fixture_cases(), ids=lambda case: f"{case.parent.name}/{case.name}")
def test_fixture_diff_applies_with_git_and_patch(case: Path, tmp_path: Path) -> None:
    original = case.read_bytes()
    fixed = safe_fixed(str(case), original, codes_for(case))
    if fixed == original:
        assert unified_diff_bytes(case.name, original, fixed) == b""
        return
    patch_file = tmp_path / "fix.patch"
    patch_file.write_bytes(unified_diff_bytes(f"src/{case.name}", original, fixed))
    for tool in ("git", "patch"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
        tree = tmp_path / tool
        (tree / "src").mkdir(parents=True)
        (tree / "src" / case.name).write_bytes(original)
        if tool == "git":
            subprocess.run(["git", "init", "-q", str(tree)], check=True)
            command = ["git", "apply", str(patch_file)]
        else:
            command = ["patch", "-p1", "--quiet", "-i", str(patch_file)]
        result = subprocess.run(command, cwd=tree, capture_output=True, text=True)
        assert result.returncode == 0, f"{tool}: {result.stderr}{result.stdout}"
        assert (tree / "src" / case.name).read_bytes() == fixed, tool


def test_every_fixture_with_a_finding_is_a_named_edge_case() -> None:
    names = {case.name for case in fixture_cases()}
    wanted = {
        "misaligned.c",
        "if_blocks.c",
        "comments_and_strings.c",
        "legal_define_in_block_comment.c",
        "long_line.c",
        "tabs.c",
        "last_line_backslash.c",
        "crlf.c",
        "trailing_whitespace.c",
    }
    assert wanted <= names


# --- the rule documents ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(CHECKS))
def test_rule_docs_example_fires_only_this_rule_and_use_instead_is_clean(code: str) -> None:
    (document,) = Path(rule_documents_dir()).glob(f"{code}-*.toml")
    rule = load_rule(document)
    assert rule.kind == "text"
    fired = {d.code for d in lint("htp/example.c", rule.doc.example.encode(), set(CHECKS))}
    assert fired == {code}
    assert lint("htp/example.c", rule.doc.use_instead.encode(), set(CHECKS)) == []


# --- focused behaviour ----------------------------------------------------------------------------------------------


def macro_text(*lines: str, ending: str = "\n") -> bytes:
    return ending.join(lines).encode() + ending.encode()


def test_column_is_longest_line_plus_pad_and_final_line_counts() -> None:
    data = macro_text("#define F(x) \\", "    (x) + \\", "    (x) * 1000000000")
    (diagnostic,) = lint("f.c", data, {"HX110"}, WHOLE_MACRO)
    assert "realign the macro to column 22" in diagnostic.message
    fixed = apply_fixes(data, [diagnostic.fix])
    assert fixed == macro_text("#define F(x)         \\", "    (x) +            \\", "    (x) * 1000000000")


def test_aligned_macro_is_clean_whatever_its_column() -> None:
    data = macro_text("#define F(x)" + " " * 60 + "\\", "    (x)" + " " * 65 + "\\", "    1")
    assert lint("f.c", data, {"HX110", "HX111"}) == []


@pytest.mark.parametrize(
    ("options", "column"),
    [
        ({"mode": "max"}, 30),
        ({"mode": "majority"}, 20),
        ({}, 14),
        ({"pad": 4}, 16),
        ({"target_column": 40}, 40),
        ({"target_column": 5}, 14),
    ],
)
def test_modes_pad_and_target_column_follow_the_upstream_script(options: dict, column: int) -> None:
    # Longest content 12 columns; backslashes at 30 (once) and 20 (twice).
    lines = [
        "#define F(x)" + " " * 17 + "\\",
        "    (x) +" + " " * 10 + "\\",
        "    (x) +" + " " * 10 + "\\",
        "    (x) +",
    ]
    whole_macro = {**options, "realign": "whole-macro"}
    diagnostic = next(hx110_macro_backslash_misaligned.check(Source("f.c", macro_text(*lines)), whole_macro))
    assert f"to column {column}." in diagnostic.message
    # By default only line 1 moves, to the column the other two share.
    (only_moved,) = next(hx110_macro_backslash_misaligned.check(Source("f.c", macro_text(*lines)), options)).fix.edits
    assert only_moved.start == len("#define F(x)")


def test_only_the_misaligned_lines_move_to_the_macros_own_column() -> None:
    lines = ["#define F(x)       \\", "    (x) +          \\", "    (x) +     \\", "    (x) +          \\", "    1"]
    (diagnostic,) = lint("f.c", macro_text(*lines), {"HX110"})
    assert "(line 3 out of the common column 20); move them to column 20" in diagnostic.message
    assert [(related.span.line, related.span.column) for related in diagnostic.related] == [(3, 15)]
    fixed = apply_fixes(macro_text(*lines), [diagnostic.fix])
    assert fixed == macro_text(*lines[:2], "    (x) +          \\", *lines[3:])
    # A misaligned line too long for the macro's column: the others go to the existing column that fits.
    long = [*lines[:2], "    (x) + (x) + (x) + (x) \\", *lines[3:]]
    (diagnostic,) = lint("f.c", macro_text(*long), {"HX110"})
    assert "they do not fit there: move the other lines to column 27" in diagnostic.message
    assert len(diagnostic.fix.edits) == 3


def test_one_more_misaligned_line_is_a_new_finding_for_a_baseline() -> None:
    lines = ["#define F(x)       \\", "    (x) +          \\", "    (x) -     \\", "    (x) *          \\", "    1"]
    (before,) = lint("f.c", macro_text(*lines), {"HX110"})
    worse = [*lines[:3], "    (x) *    \\", lines[4]]
    (after,) = lint("f.c", macro_text(*worse), {"HX110"})
    assert before.fingerprint_text != after.fingerprint_text
    assert [related.span.line for related in after.related] == [3, 4]
    assert "(lines 3, 4 out of the common column 20)" in after.message


@pytest.mark.parametrize(
    "options", [{"pad": 0}, {"pad": "2"}, {"mode": "widest"}, {"tab_width": 0}, {"target_column": -1}]
)
def test_bad_options_are_reported_by_name(options: dict) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        list(hx110_macro_backslash_misaligned.check(Source("f.c", macro_text("#define F \\", "  1 \\", "2")), options))


def test_tab_counts_to_the_next_multiple_of_tab_width() -> None:
    assert _macros.display_width(b"\tab\t", 8) == 16
    assert _macros.display_width(b"ab\t", 4) == 4
    assert _macros.display_width("é中".encode(), 8) == 3
    assert _macros.display_width("e\u0301".encode(), 8) == 1
    assert _macros.display_width(b"caf\xe9", 8) == 4


def test_define_after_a_spliced_line_is_not_a_directive() -> None:
    data = macro_text("int a = 1 + \\", "#define F(x) \\", "  (x) +    \\", "  1")
    assert _macros.find_macros(data) == ()


def test_raw_string_and_digit_separators_do_not_confuse_the_lexer() -> None:
    data = macro_text(
        'const char *s = R"x(/* not a comment )x";',
        "int n = 1'000'000;",
        "#define F(x) \\",
        "   (x) +       \\",
        "   1",
    )
    (macro,) = _macros.find_macros(data)
    assert macro.name == "F"
    assert [line.in_literal for line in macro.continuation_lines] == [False, False]


@pytest.mark.parametrize("after", ["", " "])
def test_a_literal_continued_on_the_last_line_of_the_file_keeps_its_spaces(after: str) -> None:
    # The file ends right after the splice: the lexer must still see it, or the spaces of "str  look movable.
    data = f'#define F \\\n    (x) + 1    \\\n    "str  \\{after}\n'.encode()
    (macro,) = _macros.find_macros(data)
    assert [line.in_literal for line in macro.continuation_lines] == [False, False, True]
    fixed = safe_fixed("f.c", data, set(CHECKS))
    assert b'"str  \\' in fixed and fixed.count(b"\\") == 3


def test_hx111_fix_only_removes_whitespace_after_the_backslash() -> None:
    data = macro_text("#define F(x) \\ \t", "    (x)     \\", "    + 1", ending="\r\n")
    (diagnostic,) = lint("f.c", data, {"HX111"})
    assert (diagnostic.span.line, diagnostic.span.column, diagnostic.span.end_column) == (1, 15, 17)
    assert apply_fixes(data, [diagnostic.fix]) == macro_text(
        "#define F(x) \\", "    (x)     \\", "    + 1", ending="\r\n"
    )


def test_diagnostic_points_at_the_define_and_fingerprints_without_the_backslash_column() -> None:
    data = macro_text("#define F(x) \\", "    (x) +      \\", "    1")
    (diagnostic,) = lint("f.c", data, {"HX110"})
    assert (diagnostic.span.line, diagnostic.span.column, diagnostic.span.end_line) == (1, 14, 3)
    # The #define, then the line out of column (a tie goes to the larger column, so line 1 moves).
    assert diagnostic.fingerprint_text == "#define F(x) | #define F(x)"
    assert diagnostic.name == "macro-backslash-misaligned"


# --- random macro files (hypothesis) --------------------------------------------------------------------------------

hypothesis = pytest.importorskip("hypothesis")
strategies = hypothesis.strategies

BODY_FRAGMENTS = [
    "(x) + 1",
    "int ab",
    "cd = (x);",
    "+",
    "+ (y)",
    '"a\\\\b"',
    '"str  ',
    "'\\\\'",
    "/* c \\\\ */",
    "/* open",
    "close */ (x)",
    "// tail",
    "do {",
    "} while (0)",
    "",
    "\t(x) *\t2",
    "/* caf\udce9 */",
]


@strategies.composite
def macro_files(draw: strategies.DrawFn) -> bytes:
    ending = draw(strategies.sampled_from(["\n", "\r\n"]))
    lines: list[str] = []
    for _ in range(draw(strategies.integers(1, 4))):
        if draw(strategies.booleans()):
            lines.append(draw(strategies.sampled_from(["int v;", "/* #define C(x) \\", "  (x) */", "#if 0", "#endif"])))
        name = draw(strategies.sampled_from(["F", "G(x)", "H(a, b)"]))
        body = draw(strategies.lists(strategies.sampled_from(BODY_FRAGMENTS), min_size=1, max_size=6))
        indent = draw(strategies.sampled_from(["", "    ", "\t"]))
        # Unindented body lines let a splice glue two halves of a token together.
        pads = [draw(strategies.sampled_from(["    ", ""])) for _ in body]
        macro = [f"{indent}#define {name}"] + [f"{pad}{fragment}" for pad, fragment in zip(pads, body, strict=True)]
        for index in range(len(macro) - 1):
            before = draw(strategies.sampled_from(["", " ", "   ", "\t", " \t ", " " * 30]))
            after = draw(strategies.sampled_from(["", "", "", " ", "\t"]))
            macro[index] += before + "\\" + after
        lines.extend(macro)
    text = ending.join(lines) + draw(strategies.sampled_from([ending, ""]))
    return text.encode("utf-8", "surrogateescape")


@hypothesis.settings(max_examples=80, deadline=None)
@hypothesis.given(data=macro_files())
# found by hypothesis: a literal continued on the file's last line (the lexer stopped before that splice)
@hypothesis.example(data=b'#define F\\\n    (x) + 1\\\n    (x) + 1\\\n    "str  \\ \n')
@hypothesis.example(data=b'#define F\\\n    (x) + 1\\\n    (x) + 1\\\n    "str  \\\n')
def test_random_macro_files_keep_their_tokens_and_reach_a_fixed_point(data: bytes) -> None:
    import tempfile

    codes = set(CHECKS)
    fixed = safe_fixed("random.c", data, codes)
    assert safe_fixed("random.c", fixed, codes) == fixed
    assert fixed.count(b"\r\n") == data.count(b"\r\n")
    assert fixed.count(b"\n") == data.count(b"\n")
    with tempfile.TemporaryDirectory() as directory:
        assert_same_program(data, fixed, Path(directory))
    for diagnostic in lint("random.c", fixed, codes):
        assert diagnostic.fix is None or not diagnostic.fix.safe


# --- compatibility with upstream's ggml-hexagon-align-macros.py ------------------------------------------------------

# Fixtures where the upstream script is right: its --fix output must equal ours byte for byte.
SCRIPT_COMPATIBLE = ["misaligned.c", "if_blocks.c", "comments_and_strings.c", "long_line.c"]


def upstream_script() -> Path:
    location = os.environ.get("HEXLINT_UPSTREAM_ALIGN_SCRIPT")
    if not location or not Path(location).is_file():
        pytest.skip("set HEXLINT_UPSTREAM_ALIGN_SCRIPT to a copy of ggml-hexagon-align-macros.py to compare")
    return Path(location)


@functools.cache
def load_script(script: Path) -> Any:
    spec = importlib.util.spec_from_file_location("upstream_align_macros", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def script_fix(script: Path, path: Path) -> bytes:
    """Run the script's own fix on a copy, in process (it has no public API beyond process_file)."""
    module = load_script(script)
    arguments = argparse.Namespace(
        fix=True, diff=False, check=False, mode="min", pad=2, target_col=None, all=False, quiet=True
    )
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        module.process_file(str(path), arguments)
    return path.read_bytes()


@pytest.mark.parametrize("name", SCRIPT_COMPATIBLE)
def test_fix_equals_the_upstream_script_on_compatible_fixtures(name: str, tmp_path: Path) -> None:
    script = upstream_script()
    case = FIXTURES / "HX110" / name
    copy = tmp_path / name
    shutil.copy(case, copy)
    assert safe_fixed(name, case.read_bytes(), {"HX110", "HX111"}, WHOLE_MACRO) == script_fix(script, copy)


@pytest.mark.parametrize("name", SCRIPT_COMPATIBLE)
def test_a_file_the_script_aligned_is_clean(name: str, tmp_path: Path) -> None:
    script = upstream_script()
    copy = tmp_path / name
    shutil.copy(FIXTURES / "HX110" / name, copy)
    assert lint(name, script_fix(script, copy), {"HX110", "HX111"}) == []


def test_fix_equals_the_upstream_script_on_the_upstream_tree(tmp_path: Path) -> None:
    """Byte identity on every C/C++ file of an upstream ggml-hexagon tree (HEXLINT_UPSTREAM_TREE)."""
    script = upstream_script()
    tree = os.environ.get("HEXLINT_UPSTREAM_TREE")
    if not tree or not Path(tree).is_dir():
        pytest.skip("set HEXLINT_UPSTREAM_TREE to an upstream ggml-hexagon directory to compare on it")
    files = sorted(p for p in Path(tree).rglob("*") if p.suffix in {".c", ".h", ".cpp", ".hpp", ".cc"})
    assert files
    different = []
    for path in files:
        copy = tmp_path / "copy.c"
        shutil.copy(path, copy)
        if safe_fixed(str(path), path.read_bytes(), {"HX110", "HX111"}, WHOLE_MACRO) != script_fix(script, copy):
            different.append(str(path))
    assert different == []


def script_and_hexlint(tmp_path: Path, name: str, data: bytes) -> tuple[bytes, bytes]:
    script = upstream_script()
    copy = tmp_path / name
    copy.write_bytes(data)
    return script_fix(script, copy), safe_fixed(name, data, {"HX110", "HX111"}, WHOLE_MACRO)


def fixture_bytes(relative: str) -> bytes:
    return (FIXTURES / relative).read_bytes()


def test_documented_difference_tabs(tmp_path: Path) -> None:
    """Tab-aligned on screen: the script counts a tab as one column and realigns; hexlint leaves it."""
    original = fixture_bytes("HX110/tabs.c")
    tab_aligned = original[original.index(b"#define TAB_ALIGNED") :]
    theirs, ours = script_and_hexlint(tmp_path, "t.c", tab_aligned)
    assert ours == tab_aligned and theirs != tab_aligned


@pytest.mark.parametrize(
    "relative", ["HX110/legal_define_in_block_comment.c", "HX110/legal_string_literal_continuation.c"]
)
def test_documented_difference_comments_and_literals(relative: str, tmp_path: Path) -> None:
    """A #define in a comment and a backslash inside a string: the script rewrites them, hexlint does not."""
    original = fixture_bytes(relative)
    theirs, ours = script_and_hexlint(tmp_path, "c.c", original)
    assert ours == original and theirs != original


def test_documented_difference_line_endings_bytes_and_final_newline(tmp_path: Path) -> None:
    theirs, ours = script_and_hexlint(tmp_path, "crlf.c", fixture_bytes("HX110/crlf.c"))
    assert b"\r\n" not in theirs and ours.count(b"\r\n") == ours.count(b"\n")
    theirs, ours = script_and_hexlint(tmp_path, "latin1.c", fixture_bytes("HX110/non_utf8.c"))
    assert "\ufffd".encode() in theirs and b"caf\xe9" in ours
    theirs, ours = script_and_hexlint(tmp_path, "eof.c", fixture_bytes("HX110/last_line_backslash.c"))
    assert theirs.endswith(b"\\\n") and ours.endswith(b"\\")


def test_documented_difference_whitespace_after_an_aligned_backslash(tmp_path: Path) -> None:
    """Aligned, with a tab after one backslash: the script realigns the macro, hexlint only drops the tab."""
    original = fixture_bytes("HX111/trailing_whitespace.c")
    macro = original[original.index(b"#define TAB_AFTER") :]
    theirs, ours = script_and_hexlint(tmp_path, "w.c", macro)
    assert ours == macro.replace(b"\\\t", b"\\")
    assert theirs != ours and theirs.replace(b" ", b"") == ours.replace(b" ", b"")


def test_documented_difference_form_feed_after_backslash(tmp_path: Path) -> None:
    original = b"#define F(x) \\\f\n    (x) +      \\\n    1\n"
    theirs, ours = script_and_hexlint(tmp_path, "f.c", original)
    assert ours == b"#define F(x) \\\n    (x) +    \\\n    1\n"
    assert b"\f" in theirs


def test_documented_difference_script_diff_does_not_apply(tmp_path: Path) -> None:
    """The script's --diff output is corrupt for git apply (ours applies: see the fixture diff test)."""
    script = upstream_script()
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "m.c").write_bytes(fixture_bytes("HX110/misaligned.c"))
    output = subprocess.run(
        [sys.executable, str(script), "--diff", "-q", "m.c"], cwd=tmp_path, capture_output=True, check=True
    ).stdout
    patch = output[output.index(b"--- a/") : output.index(b"\nSummary:")]
    (tmp_path / "script.patch").write_bytes(patch)
    subprocess.run(["git", "init", "-q", "."], cwd=tmp_path, check=True)
    assert (
        subprocess.run(["git", "apply", "--check", "script.patch"], cwd=tmp_path, capture_output=True).returncode != 0
    )


COMPATIBLE_FRAGMENTS = [
    "(x) + 1",
    "int ab",
    "cd = (x);",
    "+",
    "+ (y)",
    '"a\\\\b"',
    "'\\\\'",
    "/* c \\\\ */",
    "// tail",
    "",
]


@strategies.composite
def script_compatible_files(draw: strategies.DrawFn) -> bytes:
    """Macro files outside every documented difference: LF, final newline, no tabs, nothing after a backslash,
    no literal or comment across lines, a space before every backslash, no non-UTF-8 bytes."""
    lines: list[str] = []
    for _ in range(draw(strategies.integers(1, 4))):
        if draw(strategies.booleans()):
            lines.append(draw(strategies.sampled_from(["int v;", "#if 0", "#endif", "#define ONE_LINE 1", ""])))
        name = draw(strategies.sampled_from(["F", "G(x)", "H(a, b)"]))
        body = draw(strategies.lists(strategies.sampled_from(COMPATIBLE_FRAGMENTS), min_size=1, max_size=6))
        macro = [f"{draw(strategies.sampled_from(['', '  ']))}#define {name}"]
        macro += [draw(strategies.sampled_from(["    ", ""])) + fragment for fragment in body]
        for index in range(len(macro) - 1):
            macro[index] += draw(strategies.sampled_from([" ", "   ", " " * 30])) + "\\"
        lines.extend(macro)
    return ("\n".join(lines) + "\n").encode()


@hypothesis.settings(max_examples=150, deadline=None)
@hypothesis.given(data=script_compatible_files())
def test_random_files_fix_exactly_as_the_upstream_script(data: bytes) -> None:
    """Outside the documented differences, hexlint --fix writes the script's bytes, and the script's output is clean."""
    import tempfile

    script = upstream_script()
    with tempfile.TemporaryDirectory() as directory:
        copy = Path(directory) / "random.c"
        copy.write_bytes(data)
        theirs = script_fix(script, copy)
    assert safe_fixed("random.c", data, {"HX110", "HX111"}, WHOLE_MACRO) == theirs
    assert lint("random.c", theirs, {"HX110", "HX111"}) == []


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(
    data=strategies.lists(
        strategies.sampled_from(
            [
                b"#define F ",
                b"\\",
                b" ",
                b"\t",
                b"\n",
                b"\r\n",
                b"\r",
                b"/*",
                b"*/",
                b"//",
                b'"',
                b"'",
                b'R"(',
                b"x",
                b"\xff",
                b"\xe4\xb8\xad",
                b"\f",
                b"#",
                b"define",
                b"1'0",
            ]
        ),
        max_size=60,
    ).map(b"".join)
)
def test_any_bytes_give_findings_not_exceptions_and_the_fix_converges(data: bytes) -> None:
    """Garbage in (unterminated comments and literals, stray CRs, bytes that are not UTF-8): no crash, and the safe
    fixes only touch horizontal whitespace and reach a fixed point."""
    codes = set(CHECKS)
    fixed = safe_fixed("fuzz.c", data, codes)
    assert HORIZONTAL_WHITESPACE.sub(b"", fixed) == HORIZONTAL_WHITESPACE.sub(b"", data)
    assert safe_fixed("fuzz.c", fixed, codes) == fixed


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_a_byte_order_mark_hides_no_macro_on_the_first_line(ending: bytes) -> None:
    """The mark is not part of the line: the first line's macro is found, its columns are what an editor shows."""
    body = b"#define M(x) \\" + ending + b"    (x)   \\" + ending + b"    + 1" + ending
    whitespace = b"#define W(x) \\ " + ending + b"    (x)" + ending
    plain = {(d.code, d.span.line, d.message) for d in lint("k.c", body, {"HX110"})}
    marked = {(d.code, d.span.line, d.message) for d in lint("k.c", b"\xef\xbb\xbf" + body, {"HX110"})}
    assert marked == plain and len(plain) == 1
    assert [d.span.line for d in lint("k.c", b"\xef\xbb\xbf" + whitespace, {"HX111"})] == [1]
    (finding,) = lint("k.c", b"\xef\xbb\xbf" + body, {"HX110"})
    fixed = apply_fixes(b"\xef\xbb\xbf" + body, [finding.fix])
    assert fixed == b"\xef\xbb\xbf" + apply_fixes(body, [lint("k.c", body, {"HX110"})[0].fix])
