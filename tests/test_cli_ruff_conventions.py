"""ruff's conventions on the command line: --extend-select/--extend-ignore, --show-settings, --show-files, stdin
input, --add-suppressions, --fail-on/--warnings-as-errors, --statistics in JSON, and -p BUILD_DIR."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from test_engine_context import HOST_CPP, KPARAMS_TREE, write_tree

UNUSED = "int a; // hexlint: ignore[HX110]\n"  # an HX001 finding (a warning): the suppression has no reason
MISALIGNED = "#define ADD(a, b) \\\n    ((a) + \\\n     (b))\n"  # HX110 (a warning) on line 1, with a safe fix
BAD_C = "int f( {\n"  # HX002 (an error)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def codes_reported(run) -> list[str]:
    return sorted({line.split(": ")[1].split()[0] for line in run.stdout.splitlines() if ": HX" in line})


# ---------------------------------------------------------------- extend-select / extend-ignore


def test_extend_select_adds_to_the_select_in_effect_and_extend_ignore_adds_to_ignore(tree: Path, hexlint_cli) -> None:
    write(tree / "m.c", MISALIGNED + UNUSED)
    write(tree / "hexlint.toml", 'select = ["HX001"]\nextend-select = ["HX110"]\n')
    assert codes_reported(hexlint_cli(".")) == ["HX001", "HX110"]
    assert codes_reported(hexlint_cli("--extend-ignore", "HX110", ".")) == ["HX001"]
    # --select replaces the file's select and its extend-select (ruff's layering); --extend-select adds to it.
    assert codes_reported(hexlint_cli("--select", "HX001", ".")) == ["HX001"]
    assert codes_reported(hexlint_cli("--select", "HX001", "--extend-select", "macro-backslash-misaligned", ".")) == [
        "HX001",
        "HX110",
    ]
    write(tree / "hexlint.toml", 'extend-ignore = ["HX001"]\n')
    assert "HX001" not in codes_reported(hexlint_cli("."))
    unknown = hexlint_cli("--extend-select", "HX999", ".")
    assert unknown.status == 2 and "--extend-select" in unknown.stderr and "HX999" in unknown.stderr


# ---------------------------------------------------------------- --fail-on / --warnings-as-errors


def test_fail_on_decides_which_severities_make_exit_1(tree: Path, hexlint_cli) -> None:
    write(tree / "w.c", UNUSED)  # one warning
    assert hexlint_cli("--select", "HX001", "w.c").status == 1  # default: every finding fails
    assert hexlint_cli("--select", "HX001", "--fail-on", "warning", "w.c").status == 1
    assert hexlint_cli("--select", "HX001", "--fail-on", "error", "w.c").status == 0
    write(tree / "e.c", BAD_C)  # one error
    assert hexlint_cli("--fail-on", "error", "e.c").status == 1
    assert hexlint_cli("--fail-on", "fatal", "e.c").status == 2


def test_warnings_as_errors_reports_them_as_errors_and_fails_on_them(tree: Path, hexlint_cli) -> None:
    write(tree / "w.c", UNUSED)
    run = hexlint_cli("--select", "HX001", "--fail-on", "error", "--warnings-as-errors", "--format", "json", "w.c")
    assert run.status == 1
    assert [item["severity"] for item in json.loads(run.stdout)["diagnostics"]] == ["error"]
    assert "(1 error)" in hexlint_cli("--select", "HX001", "--warnings-as-errors", "w.c").stderr


# ---------------------------------------------------------------- --statistics --format json


def test_statistics_in_json_mode_is_one_json_object(tree: Path, hexlint_cli) -> None:
    write(tree / "a.c", UNUSED + MISALIGNED)
    write(tree / "b.c", UNUSED)
    listed = json.loads(hexlint_cli("--format", "json", ".").stdout)["diagnostics"]
    run = hexlint_cli("--statistics", "--format", "json", ".")
    assert run.status == 1
    document = json.loads(run.stdout)
    assert document["total"] == len(listed)
    counts = {row["code"]: row["count"] for row in document["statistics"]}
    assert counts == {code: [item["code"] for item in listed].count(code) for code in counts}
    assert counts["HX001"] == 2
    assert {row["code"]: row["fixable"] for row in document["statistics"]}["HX110"] is True
    refused = hexlint_cli("--statistics", "--format", "sarif", ".")
    assert refused.status == 2 and "--statistics" in refused.stderr


# ---------------------------------------------------------------- -p BUILD_DIR


def test_compile_commands_accepts_a_build_directory(tree: Path, hexlint_cli) -> None:
    source = write(tree / "host.c", "#ifndef FROM_THE_BUILD\n#error not built with the build's flags\n#endif\n")
    entry = {"directory": str(tree), "file": str(source), "command": "cc -DFROM_THE_BUILD=1 -c host.c"}
    write(tree / "build" / "compile_commands.json", json.dumps([entry]))
    assert hexlint_cli("--select", "HX002", "host.c").status == 1  # without the build's flags, the #error
    assert hexlint_cli("--select", "HX002", "-p", "build", "host.c").status == 0
    assert hexlint_cli("--select", "HX002", "--compile-commands", "build/", "host.c").status == 0
    assert hexlint_cli("--select", "HX002", "--compile-commands", "build/compile_commands.json", "host.c").status == 0
    (tree / "empty").mkdir()
    empty = hexlint_cli("-p", "empty", "host.c")
    assert empty.status == 2 and "empty" in empty.stderr and "compile_commands.json" in empty.stderr
    write(tree / "hexlint.toml", 'compile-commands = "build"\n')
    assert hexlint_cli("--select", "HX002", "host.c").status == 0


# ---------------------------------------------------------------- --show-settings


def test_show_settings_names_where_each_value_came_from(tree: Path, hexlint_cli) -> None:
    config = write(
        tree / "hexlint.toml",
        'select = ["HX1"]\ninclude-dirs = ["inc"]\n[rules.HX104]\ninternal-pointer-names = ["ctx"]\n',
    )
    run = hexlint_cli("--show-settings", "--format", "json", "--arch", "v79", "--ignore", "HX108", ".")
    assert run.status == 0
    document = json.loads(run.stdout)
    settings = document["settings"]
    assert document["config_file"] == str(config)
    assert settings["select"] == {"value": ["HX1"], "source": str(config)}
    assert settings["arch"] == {"value": "v79", "source": "command line"}
    assert settings["ignore"] == {"value": ["HX108"], "source": "command line"}
    assert settings["context"] == {"value": "tree", "source": "default"}
    assert settings["include-dirs"]["source"] == str(config)
    assert settings["rules.HX104.internal-pointer-names"] == {"value": ["ctx"], "source": str(config)}
    assert settings["rules.HX104.worker-data-names"]["source"] == "default"
    assert "HX104" in document["enabled_rules"] and "HX108" not in document["enabled_rules"]
    assert not any(key.startswith("rules.HX001.") or key.startswith("rules.HX108.") for key in settings)
    text = hexlint_cli("--show-settings", "--arch", "v79", ".").stdout
    assert f'select = ["HX1"]  # {config}\n' in text
    assert 'arch = "v79"  # command line\n' in text


def test_show_settings_without_a_configuration_file_is_all_defaults(
    tree: Path, hexlint_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HEXLINT_NO_CACHE", raising=False)  # the suite's, which would turn the cache off
    monkeypatch.delenv("HEXLINT_CACHE_DIR", raising=False)
    document = json.loads(hexlint_cli("--show-settings", "--format", "json", ".").stdout)
    assert document["config_file"] is None
    assert {entry["source"] for entry in document["settings"].values()} == {"default"}
    assert document["settings"]["select"]["value"] == ["ALL"]


# ---------------------------------------------------------------- --show-files


def test_show_files_lists_what_a_run_would_lint_with_its_role(tree: Path, hexlint_cli) -> None:
    write_tree(tree, KPARAMS_TREE)
    write(tree / "vendor" / "v.c", "int v;\n")
    write(tree / "hexlint.toml", 'exclude = ["vendor"]\n')
    run = hexlint_cli("--show-files", ".")
    assert run.status == 0
    rows = [line.split() for line in run.stdout.splitlines()]
    roles = {path: role for role, path in rows}
    assert roles == {
        "host/ggml-host.cpp": "host",
        "htp/add-ops.c": "kernel",
        "htp/add-rows.c": "kernel",
        "htp/main.c": "kernel",
        "htp/mul-ops.c": "kernel",
        "htp/ops.h": "kernel",
    }
    # A partial run with a cross-file rule on parses the rest of the tree as context; without one, no context.
    partial = json.loads(hexlint_cli("--show-files", "--format", "json", "htp/add-ops.c").stdout)["files"]
    assert partial[0] == {"path": "htp/add-ops.c", "role": "kernel"}
    context = {entry["path"] for entry in partial if entry["role"] == "context"}
    assert context == {"host/ggml-host.cpp", "htp/add-rows.c", "htp/main.c", "htp/mul-ops.c", "htp/ops.h"}
    alone = hexlint_cli("--show-files", "--select", "HX110", "htp/add-ops.c").stdout
    assert alone == "kernel   htp/add-ops.c\n"


# ---------------------------------------------------------------- stdin


def feed_stdin(monkeypatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))


def test_stdin_is_linted_as_the_named_file_with_the_tree_around_it_as_context(
    tree: Path, hexlint_cli, monkeypatch
) -> None:
    write_tree(tree, KPARAMS_TREE)
    # On disk the host no longer writes row_stride; the text on stdin (the editor's buffer) still does.
    write(tree / "host" / "ggml-host.cpp", HOST_CPP.replace("    kparams->row_stride      = nrows * 4;\n", ""))
    assert hexlint_cli("--select", "HX101", "host/ggml-host.cpp").status == 0
    feed_stdin(monkeypatch, HOST_CPP)
    run = hexlint_cli("--select", "HX101", "--stdin-filename", "host/ggml-host.cpp", "-")
    assert run.status == 1
    assert [line.split(":")[:2] for line in run.stdout.splitlines()] == [["host/ggml-host.cpp", "11"]]
    assert "1 of 1 file" in run.stderr


def test_stdin_text_is_what_libclang_parses(tree: Path, hexlint_cli, monkeypatch) -> None:
    write(tree / "k.c", "int fine;\n")
    feed_stdin(monkeypatch, BAD_C)
    run = hexlint_cli("--select", "HX002", "--stdin-filename", "k.c")
    assert run.status == 1 and run.stdout.startswith("k.c:")
    feed_stdin(monkeypatch, BAD_C)
    new_file = hexlint_cli("--select", "HX002", "--stdin-filename", "not-yet-saved.c", "-")
    assert new_file.status == 1 and new_file.stdout.startswith("not-yet-saved.c:")
    assert (tree / "k.c").read_text() == "int fine;\n"


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (("-",), "--stdin-filename"),
        (("--stdin-filename", "k.c", "other.c"), "--stdin-filename"),
        (("--stdin-filename", "k.c", "--fix", "-"), "stdin"),
        (("--stdin-filename", "k.c", "--add-suppressions", "why", "-"), "stdin"),
    ],
)
def test_stdin_misuse_is_a_usage_error(tree: Path, hexlint_cli, arguments, named) -> None:
    write(tree / "other.c", "int a;\n")
    run = hexlint_cli(*arguments)
    assert run.status == 2 and named in run.stderr and run.stderr.count("\n") == 1


# ---------------------------------------------------------------- --add-suppressions


def test_add_suppressions_writes_a_directive_per_finding_line_once(tree: Path, hexlint_cli) -> None:
    source = write(
        tree / "m.c",
        MISALIGNED
        + "int x = 1;\n"
        + "#define SUB(a, b)                                             \\\n    ((a) - (b))\n",
    )
    source.write_text(source.read_text().replace("     (b))\n", "     (b))  // the sum\n", 1))
    before = hexlint_cli("--select", "HX110", "--format", "json", "m.c")
    lines = sorted({item["line"] for item in json.loads(before.stdout)["diagnostics"]})
    assert before.status == 1 and lines
    run = hexlint_cli("--select", "HX110", "--add-suppressions", "legacy macro", "m.c")
    assert run.status == 0
    assert run.stderr.startswith(f"Added {len(lines)} suppression")
    text = source.read_text().splitlines()
    for line in lines:
        assert "hexlint: ignore[HX110] legacy macro" in text[line - 1]
    # Every line still ends in its continuation backslash, so the macros are the same macros.
    assert text[0].endswith("\\") and text[1].endswith("\\")
    assert hexlint_cli("--select", "HX110", "m.c").status == 0
    assert hexlint_cli("--select", "HX001", "m.c").status == 0  # each directive suppresses something and has a reason
    written = source.read_bytes()
    again = hexlint_cli("--select", "HX110", "--add-suppressions", "legacy macro", "m.c")
    assert again.status == 0 and again.stderr.startswith("Added 0 suppressions")
    assert source.read_bytes() == written


def test_add_suppressions_goes_before_an_existing_line_comment_and_names_every_code(tree: Path, hexlint_cli) -> None:
    source = write(tree / "k.c", "int f( {  // half-written\n")
    run = hexlint_cli("--add-suppressions", "work in progress", "k.c")
    assert run.status == 0, run.stderr
    first = source.read_text().splitlines()[0]
    assert first.startswith("int f( {  /* hexlint: ignore[HX002] work in progress */ // half-written")
    assert hexlint_cli("k.c").status == 0


def test_add_suppressions_leaves_findings_no_comment_can_hide_and_says_so(tree: Path, hexlint_cli) -> None:
    source = write(tree / "w.c", UNUSED)
    run = hexlint_cli("--select", "HX001", "--add-suppressions", "why", "w.c")
    assert run.status == 0
    assert "1 finding left" in run.stderr
    assert source.read_text() == UNUSED


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (("--add-suppressions", "  ", "k.c"), "reason"),
        (("--add-suppressions", "a */ b", "k.c"), "*/"),
        (("--add-suppressions", "why", "--fix", "k.c"), "--fix"),
        (("--add-suppressions", "why", "--diff", "k.c"), "--diff"),
    ],
)
def test_add_suppressions_misuse_is_a_usage_error(tree: Path, hexlint_cli, arguments, named) -> None:
    source = write(tree / "k.c", BAD_C)
    run = hexlint_cli(*arguments)
    assert run.status == 2 and named in run.stderr and run.stderr.count("\n") == 1
    assert source.read_text() == BAD_C


def test_add_suppressions_also_hides_what_moving_a_backslash_causes(tree: Path, hexlint_cli) -> None:
    # HX111 on the middle line; no room before its backslash, so the directive moves it: a new HX110 on the macro.
    source = write(tree / "m.c", "#define ADD(a, b) \\\n    ((a) +        \\ \n     (b))\n")
    assert codes_reported(hexlint_cli("--select", "HX110,HX111", "m.c")) == ["HX111"]
    run = hexlint_cli("--select", "HX110,HX111", "--add-suppressions", "old macro", "m.c")
    assert run.status == 0 and run.stderr.startswith("Added 2 suppressions (2 findings) in 1 file(s).")
    assert [line.endswith("\\") or line.endswith("\\ ") for line in source.read_text().splitlines()] == [
        True,
        True,
        False,
    ]
    assert hexlint_cli("--select", "HX110,HX111,HX001", "m.c").status == 0
