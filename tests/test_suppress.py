"""Suppression comments: syntax, what they match, and HX001 for the ones that do not earn their place."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hexlint.core import Diagnostic, Severity, Source, Span
from hexlint.suppress import apply_suppressions, find_suppressions, iter_comments


def source(text: str, path: str = "k.c") -> Source:
    return Source(path, text.encode("utf-8"))


def finding(line: int, code: str = "HX110", path: str = "k.c") -> Diagnostic:
    return Diagnostic(code, "macro-backslash-misaligned", Severity.ERROR, "m", Span(path, line, 5))


def everything_ran(_path: str) -> frozenset[str]:
    return frozenset({"HX110", "HX111", "HX002"})


def test_same_line_and_next_line_directives_and_their_targets() -> None:
    text = (
        "int a; // hexlint: ignore[HX110] checked by the caller\n"
        "/* hexlint: ignore-next-line[HX110, HX111] the SDK may hand us NULL */\n"
        "int b;\n"
    )
    first, second = find_suppressions(source(text))
    assert (first.line, first.target_line, first.codes, first.reason) == (1, 1, ("HX110",), "checked by the caller")
    assert (second.line, second.target_line, second.codes) == (2, 3, ("HX110", "HX111"))
    assert second.reason == "the SDK may hand us NULL"


def test_next_line_after_a_multiline_block_comment_is_the_line_after_its_end() -> None:
    text = "/*\n * hexlint: ignore-next-line[HX110] reason\n */\nint b;\n"
    (suppression,) = find_suppressions(source(text))
    assert suppression.line == 2
    assert suppression.target_line == 4


def test_directives_inside_string_literals_are_not_directives() -> None:
    text = 'const char *s = "// hexlint: ignore[HX110] no";\nchar c = \'"\'; // hexlint: ignore[HX110] yes\n'
    suppressions = find_suppressions(source(text))
    assert [item.line for item in suppressions] == [2]


def test_comment_lexer_tracks_lines_through_block_comments() -> None:
    comments = list(iter_comments("/* a\n b */ x; // c\n// d\n"))
    assert [(comment.line, comment.end_line) for comment in comments] == [(1, 2), (2, 2), (3, 3)]


def test_a_matching_directive_hides_the_finding_and_is_not_reported() -> None:
    text = "int a; // hexlint: ignore[macro-backslash-misaligned] caller guarantees it\n"
    result = apply_suppressions([finding(1)], find_suppressions(source(text)), everything_ran)
    assert result.kept == ()
    assert len(result.suppressed) == 1
    assert result.problems == ()


def test_directive_only_covers_its_own_line_and_codes() -> None:
    text = "int a; // hexlint: ignore[HX111] reason\n"
    result = apply_suppressions(
        [finding(1, "HX110"), finding(2, "HX111")], find_suppressions(source(text)), everything_ran
    )
    assert [diagnostic.span.line for diagnostic in result.kept] == [1, 2]
    assert [problem.code for problem in result.problems] == ["HX001"]
    assert "matches no finding" in result.problems[0].message


@pytest.mark.parametrize(
    ("comment", "message_part"),
    [
        ("// hexlint: ignore[HX110]", "no reason"),
        ("// hexlint: ignore", "names no rule"),
        ("// hexlint: ignore[] because", "empty rule list"),
        ("// hexlint: ignore[HX999] because", "unknown rule"),
    ],
)
def test_malformed_directives_are_hx001_even_when_they_match(comment: str, message_part: str) -> None:
    text = f"int a; {comment}\n"
    result = apply_suppressions([finding(1)], find_suppressions(source(text)), everything_ran)
    assert len(result.problems) == 1
    problem = result.problems[0]
    assert problem.code == "HX001"
    assert message_part in problem.message
    assert (problem.span.line, problem.span.column) == (1, 11)  # where "hexlint:" starts


def test_directive_for_a_rule_that_did_not_run_is_not_unused() -> None:
    text = "int a; // hexlint: ignore[HX111] kept for the full run\n"
    result = apply_suppressions([], find_suppressions(source(text)), lambda _path: frozenset({"HX110"}))
    assert result.problems == ()


def test_hx001_cannot_be_suppressed() -> None:
    text = "int a; // hexlint: ignore[HX001] trying\n"
    unused = Diagnostic("HX001", "unused-suppression", Severity.WARNING, "m", Span("k.c", 1, 8))
    result = apply_suppressions([unused], find_suppressions(source(text)), everything_ran)
    assert result.kept == (unused,)


def test_binary_findings_are_never_suppressed_by_comments() -> None:
    binary = Diagnostic("HX110", "x", Severity.ERROR, "m", Span("k.c", 1, None, symbol="f", address=16))
    text = "int a; // hexlint: ignore[HX110] reason\n"
    result = apply_suppressions([binary], find_suppressions(source(text)), everything_ran)
    assert result.kept == (binary,)


def test_paths_are_compared_through_the_key_function() -> None:
    text = "int a; // hexlint: ignore[HX110] reason\n"
    result = apply_suppressions(
        [finding(1, path="/abs/k.c")],
        find_suppressions(source(text, "k.c")),
        everything_ran,
        key=lambda p: Path(p).name,
    )
    assert result.kept == ()


def test_end_to_end_parse_error_suppressed_and_unused_directive_reported(
    tmp_path: Path, monkeypatch, hexlint_cli
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.c").write_text("int f( {  // hexlint: ignore[parse-error] generated, fixed upstream\n")
    (tmp_path / "fine.c").write_text("int g(void) { return 0; }  // hexlint: ignore[HX002] stale\n")
    run = hexlint_cli("--select", "HX001,HX002", "broken.c", "fine.c")
    assert run.status == 1
    assert run.stdout.splitlines() == [
        "fine.c:1:31: HX001 [unused-suppression] Suppression of HX002 matches no finding on line 1; remove it."
    ]


def test_directive_positions_survive_literals_with_slashes() -> None:
    text = "url = \"http://x\"; c = '/'; /* a */ x; // hexlint: ignore[HX110] reason\n"
    (suppression,) = find_suppressions(source(text))
    assert (suppression.line, suppression.column) == (1, text.index("hexlint") + 1)


@given(st.binary(max_size=300))
def test_scanning_arbitrary_bytes_never_raises(data: bytes) -> None:
    for suppression in find_suppressions(Source("f.c", data + b"/* hexlint: ignore-next-line[HX110" + data)):
        assert suppression.line >= 1 and suppression.column >= 1
