"""The command line: exit status, discovery, rule docs, --fix/--diff, --jobs, errors as one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from hexlint import __version__, registry
from hexlint.discover import discover, is_ignored, parse_gitignore

MISALIGNED_MACRO = b"#define ADD(a, b) \\\n    ((a) + \\\n     (b))\n"
UNUSED = "int a; // hexlint: ignore[HX110]\n"  # an HX001 finding (no reason), made by the engine itself


@pytest.fixture
def macro_rules_registered(monkeypatch):
    """HX110/HX111 with their checks, whether or not hexlint/checks/__init__.py lists them yet."""
    from hexlint import checks
    from hexlint.checks import hx110_macro_backslash_misaligned, hx111_macro_backslash_whitespace

    monkeypatch.setitem(checks.CHECKS, "HX110", hx110_macro_backslash_misaligned.check)
    monkeypatch.setitem(checks.CHECKS, "HX111", hx111_macro_backslash_whitespace.check)
    monkeypatch.setattr(registry, "CHECKS", checks.CHECKS)
    registry.forget_rules()
    yield
    registry.forget_rules()


def test_version_help_and_module_entry_point() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "hexlint", "--version"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        check=False,
    )
    assert (completed.returncode, completed.stdout.strip()) == (0, f"hexlint {__version__}")


def test_help_exits_zero(hexlint_cli) -> None:
    run = hexlint_cli("--help")
    assert run.status == 0


def test_list_rules_lists_every_registered_rule(hexlint_cli) -> None:
    run = hexlint_cli("--list-rules")
    assert run.status == 0
    listed = [line.split()[0] for line in run.stdout.splitlines()]
    assert listed == [rule.code for rule in registry.all_rules()]


@pytest.mark.parametrize("selector", ["HX001", "unused-suppression", "hx001"])
def test_rule_subcommand_prints_the_docs(hexlint_cli, selector: str) -> None:
    run = hexlint_cli("rule", selector)
    assert run.status == 0
    rule = registry.find_rule("HX001")
    assert run.stdout.startswith("HX001 unused-suppression (warning, tool rule)")
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert heading in run.stdout
    assert rule is not None and rule.doc.why.strip().splitlines()[0] in run.stdout


def test_rule_docs_say_which_rules_see_the_tree_as_context(hexlint_cli) -> None:
    assert "## Scope\nCross-file:" in hexlint_cli("rule", "kernel-params-unread").stdout
    assert "## Scope" not in hexlint_cli("rule", "HX108").stdout


def test_rule_subcommand_unknown_rule_is_exit_2(hexlint_cli) -> None:
    run = hexlint_cli("rule", "HX999")
    assert run.status == 2
    assert run.stderr.count("\n") == 1 and "HX999" in run.stderr


def test_exit_status_and_summary(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clean.c").write_text("int a;\n")
    (tmp_path / "dirty.c").write_text(UNUSED)
    clean = hexlint_cli("clean.c")
    assert (clean.status, clean.stdout, clean.stderr) == (0, "", "All checks passed: 1 file checked.\n")
    dirty = hexlint_cli("--select", "HX001", "clean.c", "dirty.c")
    assert dirty.status == 1
    assert dirty.stdout.startswith("dirty.c:1:11: HX001 [unused-suppression] ")
    assert dirty.stderr == "Found 1 finding (1 warning) in 1 of 2 files.\n"
    assert hexlint_cli("--select", "HX001", "--exit-zero", "dirty.c").status == 0
    quiet = hexlint_cli("-q", "--select", "HX001", "dirty.c")
    assert quiet.stderr == "" and quiet.stdout


def test_default_path_is_the_working_directory(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dirty.c").write_text(UNUSED)
    assert hexlint_cli("--select", "HX001").status == 1


def test_directory_walk_skips_hidden_and_gitignored(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("build/\n*.gen.c\n!keep.gen.c\n")
    for relative in ("src/a.c", "src/b.h", "src/c.cpp", "src/d.hpp", "src/e.cc", "src/x.gen.c", "src/keep.gen.c",
                     "build/out.c", ".hidden/h.c", "src/notes.txt", "src/sub/build/deep.c"):  # fmt: skip
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(UNUSED)
    run = hexlint_cli("--select", "HX001", ".")
    linted = sorted({line.split(":")[0] for line in run.stdout.splitlines()})
    assert linted == ["src/a.c", "src/b.h", "src/c.cpp", "src/d.hpp", "src/e.cc", "src/keep.gen.c"]
    # A file named explicitly is linted even when ignored.
    assert hexlint_cli("--select", "HX001", "build/out.c").status == 1


def test_gitignore_matcher_semantics(tmp_path: Path) -> None:
    patterns = parse_gitignore(
        "/top.c\ndocs/*.c\n**/gen/**\n*.o\n!lib/keep.o\nbuild/\n# comment\n\\#hash.c\n", tmp_path
    )

    def ignored(relative: str, is_dir: bool = False) -> bool:
        return is_ignored(tmp_path / relative, is_dir, patterns)

    assert ignored("top.c") and not ignored("sub/top.c")
    assert ignored("docs/a.c") and not ignored("docs/deeper/a.c")
    assert ignored("a/gen/b/c.c")
    assert ignored("x.o") and ignored("deep/x.o") and not ignored("lib/keep.o")
    assert ignored("build", is_dir=True) and ignored("a/build/x.c") and not ignored("build")
    assert ignored("#hash.c")


def test_git_info_exclude_is_relative_to_the_work_tree_root(tmp_path: Path) -> None:
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("/src/gen.c\nscratch/\n")
    for relative in ("src/gen.c", "src/k.c", "src/scratch/s.c"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("")
    found = discover([tmp_path / "src"])
    assert [os.path.basename(path) for path in found.sources] == ["k.c"]


def test_gitignore_of_parent_directories_applies_when_walking_a_subdirectory(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "src" / "generated").mkdir(parents=True)
    (tmp_path / "src" / "generated" / "g.c").write_text("")
    (tmp_path / "src" / "k.c").write_text("")
    found = discover([tmp_path / "src"])
    assert [os.path.basename(path) for path in found.sources] == ["k.c"]


def test_fix_rewrites_only_with_fix_and_diff_writes_nothing(
    tmp_path: Path, monkeypatch, hexlint_cli, macro_rules_registered
) -> None:
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "m.c"
    source.write_bytes(MISALIGNED_MACRO)
    stamp = source.stat().st_mtime_ns
    plain = hexlint_cli("--select", "HX110", "m.c")
    assert plain.status == 1 and "HX110" in plain.stdout
    assert "1 fixable with --fix" in plain.stderr
    diff = hexlint_cli("--select", "HX110", "--diff", "m.c")
    assert diff.status == 1
    assert diff.stdout.startswith("--- a/m.c\n+++ b/m.c\n")
    assert source.read_bytes() == MISALIGNED_MACRO and source.stat().st_mtime_ns == stamp
    fixed = hexlint_cli("--select", "HX110", "--fix", "m.c")
    assert fixed.status == 0, fixed.stdout
    assert "Fixed" in fixed.stderr
    assert source.read_bytes() != MISALIGNED_MACRO
    assert hexlint_cli("--select", "HX110", "m.c").status == 0
    again = hexlint_cli("--select", "HX110", "--diff", "m.c")
    assert (again.status, again.stdout) == (0, "")


def test_diff_goes_to_the_output_file(tmp_path: Path, monkeypatch, hexlint_cli, macro_rules_registered) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.c").write_bytes(MISALIGNED_MACRO)
    to_stdout = hexlint_cli("--select", "HX110", "--diff", "m.c")
    to_file = hexlint_cli("--select", "HX110", "--diff", "--output", "fix.patch", "m.c")
    assert (to_file.status, to_file.stdout) == (1, "")
    assert (tmp_path / "fix.patch").read_text() == to_stdout.stdout
    assert (tmp_path / "m.c").read_bytes() == MISALIGNED_MACRO
    # A trailing slash names the same new file (as pathlib read it), for the diff and for a report.
    assert hexlint_cli("--select", "HX110", "--diff", "--output", "slash.patch/", "m.c").status == 1
    assert (tmp_path / "slash.patch").read_text() == to_stdout.stdout
    assert hexlint_cli("--select", "HX110", "--output", "report.txt/", "m.c").status == 1
    assert "HX110" in (tmp_path / "report.txt").read_text()


def test_fix_and_diff_together_is_a_usage_error(hexlint_cli) -> None:
    run = hexlint_cli("--fix", "--diff", ".")
    assert run.status == 2 and "--diff" in run.stderr


def test_parallel_parsing_gives_the_same_findings(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    for number in range(6):
        body = f"int f{number}( {{\n" if number % 2 else f"int g{number}(void) {{ return {number}; }}\n"
        (tmp_path / f"u{number}.c").write_text(body)
    serial = hexlint_cli("-j", "1", ".")
    parallel = hexlint_cli("-j", "4", ".")
    assert serial.status == parallel.status == 1
    assert serial.stdout == parallel.stdout
    assert serial.stdout.count("HX002") == 3


def test_internal_error_is_one_line_and_traceback_only_with_verbose(
    tmp_path: Path, monkeypatch, hexlint_cli, macro_rules_registered
) -> None:
    from hexlint import checks

    def broken_check(source, options):
        raise RuntimeError("boom")
        yield

    monkeypatch.setitem(checks.CHECKS, "HX110", broken_check)
    registry.forget_rules()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.c").write_text("int a;\n")
    run = hexlint_cli("--select", "HX110", "k.c")
    assert run.status == 2
    assert run.stderr == "hexlint: error: k.c: internal error in HX110 macro-backslash-misaligned: RuntimeError: boom\n"
    verbose = hexlint_cli("-v", "--select", "HX110", "k.c")
    assert verbose.status == 2 and "Traceback" in verbose.stderr


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (("--select", "HX999", "."), "HX999"),
        (("--ignore", "nonsense", "."), "nonsense"),
        (("--format", "xml", "."), "xml"),
        (("--arch", "v60", "."), "v60"),
        (("--jobs", "-1", "."), "--jobs"),
        (("--no-such-option",), "--no-such-option"),
        (("--compile-commands", "missing.json", "."), "missing.json"),
        (("--config", "missing.toml", "."), "missing.toml"),
    ],
)
def test_usage_errors_are_one_line_exit_2(tmp_path: Path, monkeypatch, hexlint_cli, arguments, named) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.c").write_text("int a;\n")
    run = hexlint_cli(*arguments)
    assert run.status == 2
    assert run.stderr.count("\n") == 1, run.stderr
    assert named in run.stderr
    assert "Traceback" not in run.stderr


BINARY_TWIN = REPO_ROOT / "fixtures" / "binary" / "division.so"
CORE_LIBRARY = REPO_ROOT / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73.so"


def test_binary_findings_through_the_cli_in_every_format(hexlint_cli) -> None:
    import json

    import jsonschema
    from test_report import sarif_schema

    if not BINARY_TWIN.is_file():
        pytest.skip("fixtures/binary/division.so is not built")
    text = hexlint_cli(str(BINARY_TWIN))
    assert text.status == 1
    assert any(": HX204 [" in line and "@0x" in line for line in text.stdout.splitlines())
    document = json.loads(hexlint_cli("--format", "json", str(BINARY_TWIN)).stdout)
    entry = document["diagnostics"][0]
    assert entry["line"] is None and entry["symbol"] and isinstance(entry["address"], int)
    log = json.loads(hexlint_cli("--format", "sarif", str(BINARY_TWIN)).stdout)
    jsonschema.validate(log, sarif_schema())
    assert log["runs"][0]["results"][0]["locations"][0]["logicalLocations"][0]["kind"] == "function"
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
    assert log["runs"][0]["results"][0]["properties"]["address"].startswith("0x")
    nothing = hexlint_cli("--select", "HX1", str(BINARY_TWIN))
    assert nothing.status == 2 and "no binary rule (HX2xx) is selected" in nothing.stderr


def test_binary_audit_options_are_wired(hexlint_cli) -> None:
    if not CORE_LIBRARY.is_file():
        pytest.skip("the core libraries are not built")
    strict = hexlint_cli("--spills", "--strict", str(CORE_LIBRARY))
    assert strict.status == 0, strict.stdout + strict.stderr
    assert "vspill" in strict.stdout  # the per-function table
    unknown = hexlint_cli("--spills", "--func", "no_such_function_anywhere", str(CORE_LIBRARY))
    assert unknown.status == 2
    assert unknown.stderr.count("\n") == 1 and "no_such_function_anywhere" in unknown.stderr


def test_rule_docs_print_option_defaults_as_pasteable_toml(hexlint_cli) -> None:
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")

    for rule in registry.all_rules():
        if not rule.options:
            continue
        printed = hexlint_cli("rule", rule.code).stdout.split("## Options", 1)[1].splitlines()[1:]
        # Printed in kebab-case, the spelling a configuration uses.
        kebab = {name.replace("_", "-"): value for name, value in rule.options.items()}
        assert tomllib.loads("\n".join(line.strip() for line in printed)) == kebab


def test_hexagon_sdk_root_headers_replace_the_stand_ins(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "htp").mkdir()
    (tmp_path / "htp" / "k.c").write_text(
        '#include "HAP_farf.h"\n#ifndef FROM_THE_SDK\n#error the stand-in was used\n#endif\nint a;\n'
    )
    (tmp_path / "sdk" / "incs").mkdir(parents=True)
    (tmp_path / "sdk" / "incs" / "HAP_farf.h").write_text("#define FROM_THE_SDK 1\n")
    monkeypatch.delenv("HEXAGON_SDK_ROOT", raising=False)
    stand_in = hexlint_cli("--select", "HX002", "htp/k.c")
    assert stand_in.status == 1 and "the stand-in was used" in stand_in.stdout
    monkeypatch.setenv("HEXAGON_SDK_ROOT", str(tmp_path / "sdk"))
    assert hexlint_cli("--select", "HX002", "htp/k.c").status == 0
    monkeypatch.setenv("HEXAGON_SDK_ROOT", str(tmp_path / "no-sdk"))
    wrong = hexlint_cli("htp/k.c")
    assert (wrong.status, wrong.stdout) == (2, "")
    assert wrong.stderr == f"hexlint: error: HEXAGON_SDK_ROOT: {tmp_path / 'no-sdk'}: not a directory\n"


ERROR_PATHS = {
    "unknown option": ["--frob", "k.c"],
    "option without its value": ["k.c", "--select"],
    "bad choice": ["--format", "nope", "k.c"],
    "bad int": ["--jobs", "x", "k.c"],
    "negative jobs": ["--jobs", "-1", "k.c"],
    "empty define name": ["-D", "=1", "k.c"],
    "define not a name": ["-D", "1X=2", "k.c"],
    "unknown rule": ["--select", "HX999", "k.c"],
    "empty selection": ["--select", "", "k.c"],
    "fix and diff": ["--fix", "--diff", "k.c"],
    "fix-read-only alone": ["--fix-read-only", "k.c"],
    "missing path": ["nowhere.c"],
    "missing config": ["--config", "nowhere.toml", "k.c"],
    "bad config": ["--config", "bad.toml", "k.c"],
    "missing baseline": ["--baseline", "nowhere.json", "k.c"],
    "missing compile commands": ["--compile-commands", "nowhere.json", "k.c"],
    "output into a directory": ["--output", "sub", "k.c"],
    "rule subcommand without a rule": ["rule"],
    "unknown rule documentation": ["rule", "HX999"],
}


@pytest.mark.parametrize("case", sorted(ERROR_PATHS))
def test_every_error_is_one_line_starting_hexlint_error(case: str, tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    """argparse's usage errors, bad values, bad files: all one line `hexlint: error: ...` on stderr, exit 2."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.c").write_text("int x;\n")
    (tmp_path / "bad.toml").write_text("select = [\n")
    (tmp_path / "sub").mkdir()
    run = hexlint_cli(*ERROR_PATHS[case])
    assert run.status == 2, run
    assert run.stdout == ""
    assert run.stderr.startswith("hexlint: error: ") and run.stderr.count("\n") == 1, run.stderr
    assert "usage:" not in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("define", ["NAME", "NAME=", "NAME=1", "F(x)=x+1", "F(a, b)=a", "_X=a b"])
def test_defines_clang_takes_are_accepted(define: str, tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.c").write_text("int x;\n")
    assert hexlint_cli("-D", define, "k.c").status == 0
