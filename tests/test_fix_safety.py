"""Fix safety levels (ruff's): safe fixes with --fix, unsafe ones only with --unsafe-fixes; and the HX103/HX104 fixes
change only the tokens they mean to change, leave code that parses, and reach a fixed point (generated functions)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_hexlint

from hexlint.config import Config
from hexlint.core import Edit
from hexlint.engine import RunSettings, lint
from hexlint.fixer import apply_edits, plan_fixes

cindex = pytest.importorskip("clang.cindex", reason="libclang-ng tokenizes the before and after files")
hypothesis = pytest.importorskip("hypothesis")
strategies = hypothesis.strategies

# An HX110 fix that could split a token (`ab\` + `cd` is one token): unsafe.
GLUED = "#define F \\\nab\\\ncd  \\\n1\n"


def test_unsafe_fixes_are_held_back_and_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("g.c").write_text(GLUED)
    plain = run_hexlint("--select", "HX110", "g.c")
    assert "(1 unsafe fix held back: --unsafe-fixes applies it)" in plain.stderr
    assert "fixable with --fix" not in plain.stderr
    diff = run_hexlint("--select", "HX110", "--diff", "g.c")
    assert diff.status == 0 and diff.stdout == "" and "held back" in diff.stderr
    fixed = run_hexlint("--select", "HX110", "--fix", "g.c")
    assert Path("g.c").read_text() == GLUED and "held back" in fixed.stderr
    unsafe_diff = run_hexlint("--select", "HX110", "--diff", "--unsafe-fixes", "g.c")
    assert unsafe_diff.status == 1 and "+ab        \\" in unsafe_diff.stdout and "held back" not in unsafe_diff.stderr
    run_hexlint("--select", "HX110", "--fix", "--unsafe-fixes", "g.c")
    assert Path("g.c").read_text() == "#define F \\\nab        \\\ncd        \\\n1\n"


def test_the_configuration_can_take_unsafe_fixes_and_the_command_line_refuse_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("hexlint.toml").write_text("unsafe-fixes = true\n")
    Path("g.c").write_text(GLUED)
    plain = run_hexlint("--select", "HX110", "g.c")
    assert "1 fixable with --fix." in plain.stderr and "held back" not in plain.stderr
    refused = run_hexlint("--select", "HX110", "--fix", "--no-unsafe-fixes", "g.c")
    assert Path("g.c").read_text() == GLUED and "held back" in refused.stderr
    run_hexlint("--select", "HX110", "--fix", "g.c")
    assert Path("g.c").read_text() == "#define F \\\nab        \\\ncd        \\\n1\n"
    both = run_hexlint("--fix", "--unsafe-fixes", "--no-unsafe-fixes", "g.c")
    assert both.status == 2 and "cannot be combined" in both.stderr
    Path("hexlint.toml").write_text('unsafe-fixes = "yes"\n')
    wrong = run_hexlint("g.c")
    assert wrong.status == 2 and "`unsafe-fixes` must be true or false" in wrong.stderr


def test_unsafe_fixes_without_fix_or_diff_is_a_usage_error(tmp_path: Path) -> None:
    run = run_hexlint("--unsafe-fixes", str(tmp_path))
    assert run.status == 2 and run.stderr == "hexlint: error: --unsafe-fixes: only with --fix or --diff\n"


# ---------------------------------------------------------------- generated kernels

PRELUDE = """\
#include <stddef.h>
#include <stdint.h>
struct htp_context { int n_threads; int trace[8]; };
struct htp_rows_kernel_params { uint32_t n_threads; uint32_t nrows; uint32_t rows_per_thread; };
struct htp_ops_context { struct htp_context *ctx; uint32_t n_threads; int32_t kernel_params[32]; };
#define HEX_ASSERT(condition) do { if (!(condition)) { __builtin_trap(); } } while (0)
"""
NULL_TESTS = ["!octx", "octx == NULL", "NULL == octx->ctx", "!octx->ctx", "(octx->ctx == 0)"]
LIVE_TESTS = ["octx", "octx->ctx != NULL", "octx->ctx"]
OTHER_TESTS = ["n == 0", "n > 4", "!n"]
RUNTIME = ["octx->n_threads", "octx->ctx->n_threads"]


@strategies.composite
def statements(draw: strategies.DrawFn) -> str:
    kind = draw(
        strategies.sampled_from(
            ["dead", "live", "else", "assert", "ternary", "one_line", "recomputed", "runtime", "plain"]
        )
    )
    comment = draw(strategies.sampled_from(["", "  // a comment"]))
    if kind == "dead":
        terms = draw(strategies.lists(strategies.sampled_from(NULL_TESTS + OTHER_TESTS), min_size=1, max_size=3))
        return f"    if ({' || '.join(terms)}) {{{comment}\n        return -1;\n    }}\n"
    if kind == "live":
        terms = draw(strategies.lists(strategies.sampled_from(LIVE_TESTS), min_size=1, max_size=2))
        return f"    if ({' && '.join(terms)}) {{{comment}\n        int k = 1;\n        n += k;\n    }}\n"
    if kind == "else":
        if draw(strategies.booleans()):
            terms = draw(strategies.lists(strategies.sampled_from(NULL_TESTS + OTHER_TESTS), min_size=1, max_size=3))
            condition = " || ".join(terms)
        else:
            terms = draw(strategies.lists(strategies.sampled_from(LIVE_TESTS + OTHER_TESTS), min_size=1, max_size=3))
            condition = " && ".join(terms)
        return f"    if ({condition}) {{{comment}\n        n += 1;\n    }} else {{\n        n += 2;\n    }}\n"
    if kind == "assert":
        terms = draw(strategies.lists(strategies.sampled_from(LIVE_TESTS + OTHER_TESTS), min_size=1, max_size=3))
        message = draw(strategies.sampled_from(["", ' && "a message"']))
        return f"    HEX_ASSERT({' && '.join(terms)}{message});{comment}\n"
    if kind == "ternary":
        live = draw(strategies.sampled_from(["&octx->ctx->trace[n]", "octx->ctx->trace + n + 1"]))
        return f"    {{ const int *t = octx->ctx ? {live} : NULL; (void) t; }}{comment}\n"
    if kind == "one_line":
        return f"    if ({draw(strategies.sampled_from(NULL_TESTS))}) return -2;{comment}\n"
    if kind == "recomputed":
        value = draw(strategies.sampled_from(["(n + kparams->n_threads - 1) / kparams->n_threads", "n / 2"]))
        return f"    {{ uint32_t rows_per_thread = {value}; n += rows_per_thread; }}{comment}\n"
    if kind == "runtime":
        return f"    n += {draw(strategies.sampled_from(RUNTIME))} * 2;{comment}\n"
    return f"    n = n * 3 + 1;{comment}\n"


@strategies.composite
def kernels(draw: strategies.DrawFn) -> str:
    body = "".join(draw(strategies.lists(statements(), min_size=1, max_size=6)))
    return (
        PRELUDE
        + "int op_rows(struct htp_ops_context *octx, uint32_t n) {\n"
        + "    const struct htp_rows_kernel_params *kparams =\n"
        + "        (const struct htp_rows_kernel_params *) octx->kernel_params;\n"
        + body
        + "    return (int) (n + kparams->nrows);\n}\n"
    )


def tokens(path: Path) -> list[tuple[int, int, str]]:
    unit = cindex.Index.create().parse(str(path), args=["-x", "c", "-std=gnu11"])
    found = []
    for token in unit.get_tokens(extent=unit.cursor.extent):
        if token.kind.name != "COMMENT":
            found.append((token.extent.start.offset, token.extent.end.offset, token.spelling))
    return found


def snippet_tokens(text: bytes, directory: Path) -> list[str]:
    snippet = directory / "snippet.c"
    snippet.write_bytes(text)
    return [spelling for _, _, spelling in tokens(snippet)]


def expected_tokens(before: Path, edits: list[Edit], directory: Path) -> list[str]:
    """The tokens of `before` outside the edits, with each edit's replacement tokens where it stood: what the
    fixed file must hold if the fixes changed nothing but what they replaced. Fails if an edit splits a token."""
    result: list[str] = []
    ordered = sorted(edits, key=lambda edit: edit.start)
    index = 0
    for start, end, spelling in tokens(before):
        while index < len(ordered) and ordered[index].start <= start:
            result += snippet_tokens(ordered[index].replacement, directory)
            index += 1
        inside = any(edit.start <= start and end <= edit.end for edit in ordered if edit.start < edit.end)
        straddles = any(start < edit.start < end or start < edit.end < end for edit in ordered)
        assert not straddles, f"an edit splits the token {spelling!r}"
        if not inside:
            result.append(spelling)
    for edit in ordered[index:]:
        result += snippet_tokens(edit.replacement, directory)
    return result


def removed_tokens_only(before: list[str], replaced: list[str]) -> bool:
    """A removal fix: what stands in place of the check is a subsequence of the removed tokens (plus parentheses)."""
    remaining = iter(before)
    return all(token in ("(", ")") or any(token == other for other in remaining) for token in replaced)


@pytest.mark.slow
@hypothesis.settings(max_examples=30, deadline=None)
@hypothesis.given(source=kernels())
def test_generated_kernels_fix_only_what_the_fixes_mean_to_change(source: str, tmp_path_factory) -> None:
    directory = tmp_path_factory.mktemp("kernel")
    scratch = tmp_path_factory.mktemp("scratch")  # outside the tree: its files must not become context
    kernel = directory / "htp" / "k.c"
    kernel.parent.mkdir()
    kernel.write_text(source)
    settings = RunSettings(select=("HX103", "HX104"), jobs=1)
    found = lint([str(kernel)], Config(), settings).diagnostics
    assert not [finding for finding in found if finding.code == "HX002"], source
    original = kernel.read_bytes()
    for finding in found:
        if finding.code == "HX104" and finding.fix is not None:
            (edit,) = finding.fix.edits
            removed = snippet_tokens(original[edit.start : edit.end], scratch)
            assert removed_tokens_only(removed, snippet_tokens(edit.replacement, scratch))
        if finding.code == "HX103" and finding.fix is not None:
            for edit in finding.fix.edits:
                assert edit.replacement.strip().startswith(b"kparams->")
    # One pass of the fixer: the tokens are the original's, but for what each applied edit replaced.
    plan = plan_fixes(original, [finding.fix for finding in found if finding.fix is not None])
    one_pass = scratch / "htp" / "one_pass.c"
    one_pass.parent.mkdir()
    one_pass.write_bytes(apply_edits(original, plan.edits))
    assert [spelling for _, _, spelling in tokens(one_pass)] == expected_tokens(kernel, list(plan.edits), scratch)
    assert not [d for d in lint([str(one_pass)], Config(), settings).diagnostics if d.code == "HX002"]
    # The engine's --fix --unsafe-fixes: to a fixed point that parses, and a second run changes nothing.
    fixing = RunSettings(select=("HX103", "HX104"), jobs=1, fix=True, unsafe_fixes=True)
    fixed = lint([str(kernel)], Config(), fixing)
    assert not [finding for finding in fixed.diagnostics if finding.code == "HX002"], kernel.read_text()
    assert fixed.fixed >= len(plan.applied)
    once = kernel.read_bytes()
    again = lint([str(kernel)], Config(), fixing)
    assert kernel.read_bytes() == once and again.fixed == 0
    assert all(finding.fix is None for finding in again.diagnostics)
