"""Bad input: each case is a finding (HX002) or one line on stderr naming the file or option with exit 2.

Never a traceback, and a lint run without --fix writes nothing to the tree it lints.
"""

from __future__ import annotations

import builtins
import os
from pathlib import Path

import pytest


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(path): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
        if path.is_file() and not path.is_fifo()
    }


@pytest.fixture
def tree(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def one_line_error(run, named: str) -> None:
    assert run.status == 2, run
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith("hexlint: error: ")
    assert named in run.stderr
    assert "Traceback" not in run.stderr


def test_syntax_error_is_hx002_naming_the_first_error(tree: Path, hexlint_cli) -> None:
    (tree / "htp").mkdir()
    (tree / "htp" / "k.c").write_text("static int f(int x) {\n    return x + 1\n}\nint g( {\n")
    before = snapshot(tree)
    run = hexlint_cli("htp/k.c")
    assert run.status == 1
    (line,) = run.stdout.splitlines()
    assert line.startswith("htp/k.c:2:17: HX002 [parse-error] clang error: expected ';'")
    assert "more error" in line
    assert snapshot(tree) == before


def test_missing_header_is_reported_once_per_header(tree: Path, hexlint_cli) -> None:
    (tree / "a.h").write_text('#include "nowhere.h"\n')
    (tree / "k.c").write_text('#include "nowhere.h"\n#include "a.h"\n#include "also-missing.h"\nint x;\n')
    run = hexlint_cli("k.c")
    assert run.status == 1
    lines = run.stdout.splitlines()
    assert len(lines) == 2, lines
    assert sum("'nowhere.h' not found" in line for line in lines) == 1
    assert sum("'also-missing.h' not found" in line for line in lines) == 1


def test_non_utf8_bytes_do_not_break_anything(tree: Path, hexlint_cli) -> None:
    data = b'/* caf\xe9 \xff\xfe */\nstatic const char *s = "\xe9";  // hexlint: ignore[HX110] lat\xe9n-1 reason\n'
    (tree / "latin1.c").write_bytes(data)
    before = snapshot(tree)
    for output in ("text", "json", "sarif", "github"):
        run = hexlint_cli("--format", output, "latin1.c")
        assert run.status in (0, 1), run.stderr
        assert "Traceback" not in run.stderr
    assert snapshot(tree) == before


def test_empty_file_is_clean(tree: Path, hexlint_cli) -> None:
    (tree / "empty.c").write_bytes(b"")
    (tree / "empty.h").write_bytes(b"")
    run = hexlint_cli("empty.c", "empty.h")
    assert (run.status, run.stdout) == (0, "")


def test_directory_with_nothing_to_lint_is_an_error_naming_it(tree: Path, hexlint_cli) -> None:
    (tree / "docs").mkdir()
    (tree / "docs" / "notes.txt").write_text("nothing here")
    one_line_error(hexlint_cli("docs"), "docs")


def test_nonexistent_path(tree: Path, hexlint_cli) -> None:
    one_line_error(hexlint_cli("missing.c"), "missing.c")


def test_fifo_is_refused_without_blocking(tree: Path, hexlint_cli) -> None:
    os.mkfifo(tree / "pipe.c")
    one_line_error(hexlint_cli("pipe.c"), "pipe.c: not a regular file")


def test_unreadable_file_by_permissions(tree: Path, hexlint_cli) -> None:
    secret = tree / "secret.c"
    secret.write_text("int a;\n")
    secret.chmod(0)
    try:
        if os.access(secret, os.R_OK):
            pytest.skip("running as root: permissions do not stop reads (the next test simulates the failure)")
        one_line_error(hexlint_cli("secret.c"), "secret.c")
    finally:
        secret.chmod(0o644)


def test_unreadable_file_simulated_read_failure(tree: Path, monkeypatch, hexlint_cli) -> None:
    """Root reads anything, so make open() fail for this one file the way EACCES would."""
    (tree / "secret.c").write_text("int a;\n")
    real_open = builtins.open

    def failing_open(file, *args, **kwargs):
        if str(file).endswith("secret.c"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", failing_open)
    one_line_error(hexlint_cli("secret.c"), "secret.c: cannot read: Permission denied")


def test_config_with_unknown_key(tree: Path, hexlint_cli) -> None:
    (tree / "hexlint.toml").write_text('select = ["HX0"]\nfrobnicate = true\n')
    (tree / "k.c").write_text("int a;\n")
    one_line_error(hexlint_cli("k.c"), "frobnicate")


def test_select_of_an_unknown_rule(tree: Path, hexlint_cli) -> None:
    (tree / "k.c").write_text("int a;\n")
    one_line_error(hexlint_cli("--select", "HX1234", "k.c"), "--select: unknown rule `HX1234`")


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("garbage.so", b"this is not an ELF file at all"),
        ("truncated.so", b"\x7fELF\x01\x01"),
        ("empty.o", b""),
    ],
)
def test_broken_binaries_never_give_a_traceback(tree: Path, hexlint_cli, name: str, data: bytes) -> None:
    (tree / name).write_bytes(data)
    run = hexlint_cli(name)
    assert "Traceback" not in run.stderr
    if run.status == 2:
        assert run.stderr.count("\n") == 1 and name in run.stderr
    else:
        assert run.status in (0, 1)


def test_bad_input_mixed_with_good_never_writes(tree: Path, hexlint_cli) -> None:
    (tree / "good.c").write_text("#define A(x) \\\n  (x)\nint a;\n")
    (tree / "bad.c").write_text("int f( {\n")
    (tree / "crlf.c").write_bytes(b"#define B(x)   \\ \r\n  (x)\r\n")
    before = snapshot(tree)
    for arguments in ((".",), ("--diff", "."), ("--format", "sarif", "."), ("--statistics", ".")):
        run = hexlint_cli(*arguments)
        assert "Traceback" not in run.stderr
    assert snapshot(tree) == before


def test_header_included_by_a_tu_is_parsed_through_it_once(tree: Path, hexlint_cli) -> None:
    (tree / "htp").mkdir()
    (tree / "htp" / "ops.h").write_text("struct params { int n }\n")
    (tree / "htp" / "a.c").write_text('#include "ops.h"\nint a;\n')
    (tree / "htp" / "b.c").write_text('#include "ops.h"\nint b;\n')
    run = hexlint_cli("--select", "HX002", "htp")
    assert run.status == 1
    assert [line.split(": HX")[0] for line in run.stdout.splitlines()] == ["htp/ops.h:1:24"]


def test_header_no_tu_includes_is_parsed_on_its_own(tree: Path, hexlint_cli) -> None:
    (tree / "lone.h").write_text("static inline int twice(int x) { return x * 2 }\n")
    run = hexlint_cli("--select", "HX002", "lone.h")
    assert run.status == 1
    assert run.stdout.startswith("lone.h:1:")
    assert "HX002" in run.stdout


def test_unreadable_directory_is_an_error_not_a_silent_skip(tree: Path, monkeypatch, hexlint_cli) -> None:
    (tree / "src" / "locked").mkdir(parents=True)
    (tree / "src" / "locked" / "k.c").write_text("int a;\n")
    (tree / "src" / "ok.c").write_text("int b;\n")
    real_scandir = os.scandir

    def failing_scandir(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", failing_scandir)
    one_line_error(hexlint_cli("src"), "src/locked: cannot read directory: Permission denied")


def test_symlink_loop_named_explicitly_is_an_error_naming_it(tree: Path, hexlint_cli) -> None:
    (tree / "loop1.c").symlink_to("loop2.c")
    (tree / "loop2.c").symlink_to("loop1.c")
    one_line_error(hexlint_cli("loop1.c"), "loop1.c: symbolic link to a missing file, or a symbolic link loop")


def test_symlink_loop_met_while_walking_is_skipped(tree: Path, hexlint_cli) -> None:
    (tree / "htp").mkdir()
    (tree / "htp" / "loop1.c").symlink_to("loop2.c")
    (tree / "htp" / "loop2.c").symlink_to("loop1.c")
    (tree / "htp" / "k.c").write_text("int a;\n")
    for arguments in ((".",), ("htp/k.c",)):  # the second walks the tree for context
        run = hexlint_cli(*arguments)
        assert (run.status, run.stdout) == (0, ""), run
        assert run.stderr == "All checks passed: 1 file checked.\n"


def test_c_suffix_on_a_directory_or_on_binary_bytes(tree: Path, hexlint_cli) -> None:
    (tree / "dir.c").mkdir()
    one_line_error(hexlint_cli("dir.c"), "dir.c: no C/C++ sources or ELF files to lint")
    (tree / "blob.c").write_bytes(b"\x00\x01\x02\xff\xfe binary \x00\x00")
    run = hexlint_cli("blob.c")
    assert run.status == 1 and "Traceback" not in run.stderr
    assert run.stdout.startswith("blob.c:1:") and "HX002 [parse-error]" in run.stdout
    (tree / "host.c").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x03\x00\x3e\x00" + bytes(44))
    one_line_error(hexlint_cli("host.c"), "host.c: not a Hexagon ELF")


def test_zero_byte_shared_object(tree: Path, hexlint_cli) -> None:
    (tree / "libempty.so").write_bytes(b"")
    one_line_error(hexlint_cli("libempty.so"), "libempty.so: not an ELF file")


@pytest.mark.parametrize("option", ["--output", "--write-baseline"])
def test_report_onto_a_linted_file_is_refused_and_the_file_kept(tree: Path, hexlint_cli, option: str) -> None:
    (tree / "k.c").write_text("int a;\n")
    one_line_error(hexlint_cli(option, "k.c", "k.c"), f"{option}: k.c: is a file being linted")
    one_line_error(hexlint_cli(option, "./k.c", "."), f"{option}: ./k.c: is a file being linted")
    assert (tree / "k.c").read_text() == "int a;\n"
    report = hexlint_cli(option, "report.txt", ".")
    assert report.status == 0 and (tree / "report.txt").is_file()


@pytest.mark.parametrize("option", ["--output", "--write-baseline"])
def test_report_into_a_missing_directory_fails_before_linting(
    tree: Path, monkeypatch, hexlint_cli, option: str
) -> None:
    from hexlint import cli

    (tree / "k.c").write_text("int a;\n")

    def no_lint(*_arguments: object) -> None:
        raise AssertionError("linted although the report cannot be written")

    monkeypatch.setattr(cli, "lint", no_lint)
    one_line_error(hexlint_cli(option, "missing/out.txt", "k.c"), f"{option}: missing/out.txt: directory missing")
    one_line_error(hexlint_cli(option, ".", "k.c"), f"{option}: .: is a directory")


def test_baseline_that_is_not_json_and_config_that_is_not_toml(tree: Path, hexlint_cli) -> None:
    (tree / "k.c").write_text("int a;\n")
    (tree / "baseline.json").write_text("{ not json")
    one_line_error(hexlint_cli("--baseline", "baseline.json", "k.c"), "baseline.json: baseline is not valid JSON")
    (tree / "baseline.json").write_bytes(b"\xff\xfe")
    one_line_error(hexlint_cli("--baseline", "baseline.json", "k.c"), "baseline.json")
    (tree / "hexlint.toml").write_text("select = [\n")
    one_line_error(hexlint_cli("--config", "hexlint.toml", "k.c"), "hexlint.toml: invalid TOML")
    one_line_error(hexlint_cli("k.c"), "hexlint.toml: invalid TOML")  # found, not named: the same error


@pytest.mark.parametrize(
    ("content", "named"),
    [
        ("{ not json", "compile commands are not valid JSON"),
        ("{}", "compile commands must be a JSON list"),
        ("[1]", "entry 1: needs a `file` string"),
        ('[{"directory": 3, "file": "k.c"}]', "entry 1: `directory` and `command` must be strings"),
        ('[{"file": "k.c", "arguments": "cc k.c"}]', "entry 1: `arguments` must be a list of strings"),
        ('[{"file": "k.c", "command": "cc \\"open"}]', "entry 1: `command` is not valid shell words"),
    ],
)
def test_bad_compile_commands_are_one_line_errors(tree: Path, hexlint_cli, content: str, named: str) -> None:
    (tree / "k.c").write_text("int a;\n")
    (tree / "cc.json").write_text(content)
    one_line_error(hexlint_cli("--compile-commands", "cc.json", "k.c"), f"cc.json: {named}")
    # The same file named in the configuration.
    (tree / "hexlint.toml").write_text('compile-commands = "cc.json"\n')
    one_line_error(hexlint_cli("k.c"), named)


def test_file_name_that_is_not_utf8(tree: Path, hexlint_cli) -> None:
    import subprocess
    import sys

    from conftest import REPO_ROOT

    name = os.fsdecode(b"k\xff.c")
    (tree / name).write_text("int a; // hexlint: ignore[HX104]\n")
    run = hexlint_cli(".")
    assert run.status == 1 and "Traceback" not in run.stderr
    assert [line.split(" [")[0] for line in run.stdout.splitlines()] == [f"{name}: HX002", f"{name}:1:11: HX001"]
    assert "not valid UTF-8" in run.stdout
    assert hexlint_cli("--output", "report.txt", ".").status == 1
    assert os.fsencode(name) in (tree / "report.txt").read_bytes()
    # JSON reports and baselines stay valid UTF-8 and give the name back unchanged.
    import json

    for report_format in ("json", "sarif"):
        assert hexlint_cli("--format", report_format, "--output", f"report.{report_format}", ".").status == 1
        json.loads((tree / f"report.{report_format}").read_bytes().decode("utf-8"))
    assert json.loads((tree / "report.json").read_text(encoding="utf-8"))["diagnostics"][0]["path"] == name
    assert hexlint_cli("--write-baseline", "baseline.json", ".").status == 0
    hidden = hexlint_cli("--baseline", "baseline.json", ".")
    assert (hidden.status, hidden.stdout) == (0, "")
    # A console that refuses undecodable text gets the name's own bytes, not an internal error.
    completed = subprocess.run(
        [sys.executable, "-m", "hexlint", "-q", "."],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONIOENCODING": "utf-8:strict"},
        capture_output=True,
        check=False,
    )
    assert (completed.returncode, completed.stderr) == (1, b"")
    assert completed.stdout.startswith(b"k\xff.c: HX002 [parse-error]")


def test_header_error_reached_through_tus_with_different_error_counts_is_one_finding(tree: Path, hexlint_cli) -> None:
    (tree / "htp").mkdir()
    (tree / "htp" / "ops.h").write_text("struct params { int n }\n")
    (tree / "htp" / "a.c").write_text('#include "ops.h"\nint a = ;\n')  # one more error of its own
    (tree / "htp" / "b.c").write_text('#include "ops.h"\nint b;\n')
    run = hexlint_cli("--select", "HX002", "htp")
    assert run.status == 1
    assert [line.split(": HX")[0] for line in run.stdout.splitlines()] == ["htp/ops.h:1:24"]


@pytest.mark.parametrize("arguments", [("--select", ""), ("--select", " , "), ("--select", "HX104", "--ignore", "")])
def test_empty_rule_selection_is_a_usage_error(tree: Path, hexlint_cli, arguments: tuple[str, ...]) -> None:
    (tree / "k.c").write_text("int a;\n")
    option = arguments[-2]
    one_line_error(hexlint_cli(*arguments, "k.c"), f"{option}: no rule given")


def nested_parentheses(levels: int) -> str:
    return "int f(int x) { return " + "(" * levels + "x" + ")" * levels + "; }\n"


def test_deep_nesting_is_parsed_or_an_hx002_never_a_crash(tree: Path) -> None:
    """2,000 nested parentheses overflowed libclang's 8 MiB parse thread (SIGSEGV, exit 139, nothing said); 5,000 go
    past clang's own limit (-fbracket-depth, 2048), which it reports as an error. Both, and a file beside them, lint."""
    import subprocess
    import sys

    (tree / "deep.c").write_text(nested_parentheses(2000))
    (tree / "deeper.c").write_text(nested_parentheses(5000))
    (tree / "macro.h").write_text("#define M(x) \\\n    (x)   \\\n    + 1\n")
    run = subprocess.run(
        [sys.executable, "-m", "hexlint", "--jobs", "2", "deep.c", "deeper.c", "macro.h"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 1, (run.returncode, run.stderr)
    assert "deep.c:" not in run.stdout
    assert "deeper.c:1:" in run.stdout and "HX002" in run.stdout and "bracket nesting level" in run.stdout
    assert "macro.h:1:" in run.stdout and "HX110" in run.stdout  # the run went on to the other files


def test_parses_run_on_threads_with_deep_stacks(tree: Path, monkeypatch) -> None:
    """Every parse, alone or in parallel, runs on a thread of PARSE_STACK_BYTES, never on the main thread."""
    import threading

    from hexlint.c import parse

    seen = []
    real_parse = parse.cindex.Index.parse

    def spy(self, *arguments, **keywords):
        seen.append((threading.current_thread() is threading.main_thread(), threading.stack_size()))
        return real_parse(self, *arguments, **keywords)

    monkeypatch.setattr(parse.cindex.Index, "parse", spy)
    for name in ("a.c", "b.c", "c.c"):
        (tree / name).write_text("int x;\n")
    from hexlint.cli import main

    for jobs in ("1", "2"):
        seen.clear()
        assert main(["--no-cache", "--jobs", jobs, "a.c", "b.c", "c.c"]) == 0
        assert len(seen) == 3 and not any(on_main for on_main, _ in seen), seen
    assert threading.stack_size() == 0  # set only while the parse threads start


def test_a_file_libclang_cannot_parse_without_crashing_is_an_hx002_from_a_child(tree: Path, monkeypatch) -> None:
    """Past what the deep stack holds (here made small), the parse crashes in a child process, not in hexlint."""
    from hexlint.c import parse
    from hexlint.cli import main

    monkeypatch.setattr(parse, "PARSE_STACK_BYTES", 1 << 20)
    monkeypatch.setattr(parse, "DEEP_STRETCH_BYTES", 1000)
    (tree / "deep.c").write_text(nested_parentheses(2000))
    (tree / "fine.c").write_text("".join(f"int f{i}(int x) {{ return (x + {i}) * 2; }}\n" for i in range(100)))
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    assert main(["--jobs", "1", "deep.c", "fine.c"], stdout=stdout, stderr=stderr) == 1
    (line,) = stdout.getvalue().splitlines()
    assert line.startswith("deep.c:") and "HX002" in line and "libclang crashed" in line, line
    assert "signal 11" in line


def test_longest_unbroken_stretch() -> None:
    from hexlint.c.parse import longest_unbroken_stretch

    assert longest_unbroken_stretch(b"") == 0
    assert longest_unbroken_stretch(b"int x;") == 5
    assert longest_unbroken_stretch(b"a;bbbb,cc{d}") == 4
    assert longest_unbroken_stretch(b"x;" + b"!" * 50) == 50


def test_fix_refuses_a_read_only_file_before_writing_any(tree: Path, hexlint_cli) -> None:
    import stat

    misaligned = "#define M(x) \\\n    (x)   \\\n    + 1\n"
    (tree / "a.h").write_text(misaligned)
    (tree / "b.h").write_text(misaligned)
    (tree / "b.h").chmod(0o444)
    before = snapshot(tree)
    one_line_error(hexlint_cli("--fix", "a.h", "b.h"), "b.h: is read-only")
    assert snapshot(tree) == before
    run = hexlint_cli("--fix", "--fix-read-only", "a.h", "b.h")
    assert run.status == 0, run
    assert (tree / "b.h").read_text() == (tree / "a.h").read_text() != misaligned
    assert stat.S_IMODE((tree / "b.h").stat().st_mode) == 0o444
    one_line_error(hexlint_cli("--fix-read-only", "a.h"), "--fix-read-only: only with --fix")
