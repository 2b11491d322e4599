"""`hexlint --watch`: real sessions in a subprocess (edit, see `+`, fix, see `-`, Ctrl-C), the change computation,
what is watched and which events count, and the options it refuses."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import as_from_a_terminal

from hexlint import watch
from hexlint.config import Config
from hexlint.core import Diagnostic, Severity, Span
from hexlint.engine import LintResult, RunSettings, enabled_rules

ROOT = Path(__file__).resolve().parent.parent
WAIT = 15.0  # seconds any one expected line may take (a busy machine); a passing session takes a second or two

MISALIGNED = "#define ROW(t) \\\n    x = 1; \\\n    y = 2;\n"
ALIGNED = "#define ROW(t) \\\n    x = 1;     \\\n    y = 2;\n"


class WatchProcess:
    """`python -m hexlint --watch ...` with both streams read line by line on threads, each wait bounded."""

    def __init__(self, arguments: list[str], cwd: Path) -> None:
        environment = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "hexlint", "--watch", *arguments],
            cwd=cwd,
            env=environment,
            preexec_fn=as_from_a_terminal,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self.seen: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self.cursor = {"stdout": 0, "stderr": 0}
        self._readers = [
            threading.Thread(target=self._read, args=(name, stream), daemon=True)
            for name, stream in (("stdout", self.process.stdout), ("stderr", self.process.stderr))
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, name: str, stream) -> None:
        for line in stream:
            self.lines.put((name, line.rstrip("\n")))

    def wait_for(self, stream: str, start: str) -> str:
        """The next line of `stream` (after the last one a wait returned) starting with `start`; fails after WAIT
        seconds, showing what came. The two streams are read apart, so only the order within one is known."""
        deadline = time.monotonic() + WAIT
        while True:
            for index in range(self.cursor[stream], len(self.seen[stream])):
                if self.seen[stream][index].startswith(start):
                    self.cursor[stream] = index + 1
                    return self.seen[stream][index]
            self.cursor[stream] = len(self.seen[stream])
            left = deadline - time.monotonic()
            try:
                name, line = self.lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                pytest.fail(f"no {stream} line starting {start!r} within {WAIT} s; seen: {self.seen}")
            self.seen[name].append(line)

    def stdout_since(self, index: int) -> list[str]:
        return self.seen["stdout"][index:]

    def interrupt(self) -> tuple[int, str]:
        """Ctrl-C: the exit status and what stderr said after the last line read."""
        self.process.send_signal(signal.SIGINT)
        try:
            status = self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            pytest.fail("the watch did not end on SIGINT")
        for reader in self._readers:
            reader.join(WAIT)
        while not self.lines.empty():
            name, line = self.lines.get_nowait()
            self.seen[name].append(line)
        return status, "\n".join(self.seen["stderr"])

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(WAIT)


@pytest.fixture
def session_in():
    started: list[WatchProcess] = []

    def start(cwd: Path, *arguments: str) -> WatchProcess:
        process = WatchProcess(list(arguments), cwd)
        started.append(process)
        return process

    yield start
    for process in started:
        process.close()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------- sessions


def test_a_session_shows_the_first_report_then_only_what_changed_and_ends_on_ctrl_c(tmp_path: Path, session_in) -> None:
    write(tmp_path / "htp" / "old.c", MISALIGNED)
    session = session_in(tmp_path, "--select", "HX110", "htp")
    assert session.wait_for("stdout", "htp/old.c:1:16: HX110")  # the report a normal run prints
    session.wait_for("stderr", "Found 1 finding")
    session.wait_for("stderr", "hexlint: watching")

    write(tmp_path / "htp" / "new.c", MISALIGNED)
    assert session.wait_for("stdout", "+ ").startswith("+ htp/new.c:1:16: HX110 [macro-backslash-misaligned]")
    assert re.fullmatch(r"1 new, 0 fixed\. Found 2 findings .* \(\d+\.\d\d s\)", session.wait_for("stderr", "1 new"))

    # Lines added above a finding move it; it is the same finding (its baseline fingerprint), so nothing is shown.
    mark = len(session.seen["stdout"])
    write(tmp_path / "htp" / "old.c", "\n\n" + MISALIGNED)
    session.wait_for("stderr", "No change in findings.")
    assert session.stdout_since(mark) == []

    write(tmp_path / "htp" / "new.c", ALIGNED)
    assert session.wait_for("stdout", "- ").startswith("- htp/new.c:1:16: HX110")
    session.wait_for("stderr", "0 new, 1 fixed. Found 1 finding")

    status, stderr = session.interrupt()
    assert status == 0
    assert "Traceback" not in stderr
    assert stderr.endswith("hexlint: stopped watching")


def test_a_change_to_the_configuration_is_linted_again(tmp_path: Path, session_in) -> None:
    write(tmp_path / "htp" / "a.c", MISALIGNED)
    session = session_in(tmp_path, "htp", "--select", "HX110,HX111")
    session.wait_for("stderr", "hexlint: watching")
    write(tmp_path / "hexlint.toml", 'ignore = ["HX110"]\n')
    assert session.wait_for("stdout", "- ").startswith("- htp/a.c:1:16: HX110")
    write(tmp_path / "hexlint.toml", "ignore = [\n")  # half written: one error line, the session goes on
    assert "hexlint.toml" in session.wait_for("stderr", "hexlint: error: ")
    (tmp_path / "hexlint.toml").unlink()
    assert session.wait_for("stdout", "+ ").startswith("+ htp/a.c:1:16: HX110")
    status, stderr = session.interrupt()
    assert (status, "Traceback" in stderr) == (0, False)


def test_a_source_rule_session_sees_a_header_included_from_outside_the_tree(tmp_path: Path, session_in) -> None:
    # HX108 (libclang): the divisor comes from a header in an include directory outside the linted tree.
    write(
        tmp_path / "tree" / "htp" / "kernel.c",
        '#include <stdint.h>\n#include "divisor.h"\n\n'
        "void rows(uint32_t *plane, const uint32_t *row, uint32_t n_rows, uint32_t ne01) {\n"
        "    for (uint32_t ir = 0; ir < n_rows; ir++) {\n"
        "        plane[ir] = row[ir] / DIVISOR;\n"
        "    }\n"
        "}\n",
    )
    write(tmp_path / "include" / "divisor.h", "#define DIVISOR 4\n")
    session = session_in(tmp_path, "-I", "include", "--select", "HX108", "tree")
    session.wait_for("stderr", "All checks passed")
    session.wait_for("stderr", "hexlint: watching")
    write(tmp_path / "include" / "divisor.h", "#define DIVISOR ne01\n")
    assert session.wait_for("stdout", "+ ").startswith("+ tree/htp/kernel.c:6:")
    summary = session.wait_for("stderr", "1 new, 0 fixed.")
    assert re.search(r"\(\d+\.\d\d s, [01] of 1 units parsed\)$", summary)  # 0 when a suite-wide cache has it
    status, stderr = session.interrupt()
    assert (status, "Traceback" in stderr) == (0, False)


# ---------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--format", "json"], "json"),
        (["--format", "sarif"], "sarif"),
        (["--format", "github"], "github"),
        (["--fix"], "--fix"),
        (["--diff"], "--diff"),
        (["--write-baseline", "base.json"], "--write-baseline"),
        (["--add-suppressions", "legacy code"], "--add-suppressions"),
        (["--stdin-filename", "htp/a.c", "-"], "--stdin-filename"),
        (["--statistics"], "--statistics"),
    ],
)
def test_watch_refuses_what_is_not_a_text_report(tmp_path: Path, hexlint_cli, arguments, named) -> None:
    write(tmp_path / "htp" / "a.c", ALIGNED)
    run = hexlint_cli("--watch", *arguments, str(tmp_path))
    assert run.status == 2
    assert run.stderr.startswith("hexlint: error: --watch") and named in run.stderr
    assert run.stderr.count("\n") == 1
    assert not (tmp_path / "base.json").exists()


def test_watch_without_watchfiles_says_what_to_install(tmp_path: Path, hexlint_cli, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # `import watchfiles` raises ImportError
    run = hexlint_cli("--watch", str(tmp_path))
    assert run.status == 2
    assert run.stderr.startswith("hexlint: error: --watch needs the watchfiles package: install hexlint[watch]")
    assert run.stderr.count("\n") == 1


def test_a_run_without_watch_imports_neither_watchfiles_nor_the_watch_module(tmp_path: Path) -> None:
    write(tmp_path / "htp" / "a.c", ALIGNED)
    code = (
        "import io, json, sys; from hexlint.cli import main; "
        f"main(['--select', 'HX110', {str(tmp_path)!r}], stdout=io.StringIO(), stderr=io.StringIO()); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    environment = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", ""), "HEXLINT_NO_CACHE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=60)
    modules = json.loads(done.stdout.splitlines()[-1])
    assert [name for name in modules if name.startswith(("watchfiles", "hexlint.watch", "anyio"))] == []


# ---------------------------------------------------------------- what changed


def finding(path: str, line: int, text: str, code: str = "HX110", message: str = "misaligned") -> Diagnostic:
    return Diagnostic(code, code.lower(), Severity.WARNING, message, Span(path, line, 1), fingerprint_text=text)


def test_a_finding_that_only_moved_is_not_a_change(tmp_path: Path) -> None:
    before = [finding("htp/a.c", 3, "#define ROW(t) \\")]
    after = [finding("htp/a.c", 30, "#define ROW(t)   \\")]  # moved, and re-spaced: whitespace does not count
    assert not watch.finding_changes(before, after, str(tmp_path))


def test_new_and_fixed_findings_are_told_apart_by_code_path_and_line_text(tmp_path: Path) -> None:
    kept = finding("htp/a.c", 3, "#define ROW(t) \\")
    gone = finding("htp/a.c", 9, "#define COL(t) \\")
    other_rule = finding("htp/a.c", 3, "#define ROW(t) \\", code="HX111")
    other_file = finding("htp/b.c", 3, "#define ROW(t) \\")
    changes = watch.finding_changes([kept, gone], [kept, other_rule, other_file], str(tmp_path))
    assert changes.new == (other_rule, other_file)
    assert changes.fixed == (gone,)


def test_a_second_identical_line_is_a_new_finding(tmp_path: Path) -> None:
    first = finding("htp/a.c", 3, "y = a / n;")
    second = finding("htp/a.c", 7, "y = a / n;")
    changes = watch.finding_changes([first], [first, second], str(tmp_path))
    assert len(changes.new) == 1 and changes.fixed == ()


def test_change_lines_are_in_report_order_with_the_finding_gone_first_at_one_place(tmp_path: Path) -> None:
    old = finding("htp/a.c", 5, "old text", message="old message")
    new = finding("htp/a.c", 5, "new text", message="new message")
    later = finding("htp/a.c", 2, "later text")
    lines = watch.change_lines(watch.finding_changes([old], [new, later], str(tmp_path)))
    assert lines == [
        "+ htp/a.c:2:1: HX110 [hx110] misaligned",
        "- htp/a.c:5:1: HX110 [hx110] old message",
        "+ htp/a.c:5:1: HX110 [hx110] new message",
    ]


def test_the_header_names_a_few_files_and_counts_the_rest() -> None:
    header = watch.changed_header([f"htp/{name}.c" for name in "edcba"], when=0.0)
    assert header.endswith("] htp/a.c, htp/b.c, htp/c.c and 2 more changed")
    assert header.startswith("[") and header[9] == "]"


def test_the_summary_counts_the_changes_and_the_units_parsed() -> None:
    result = LintResult(diagnostics=(finding("a.c", 1, "x"),), rules=(), files_checked=3, parsed_units=1, units=4)
    changes = watch.FindingChanges(new=(finding("a.c", 1, "x"),))
    summary = watch.change_summary(changes, result, 0.25)
    assert summary.startswith("1 new, 0 fixed. Found 1 finding (1 warning) in 1 of 3 files.")
    assert summary.endswith("(0.25 s, 1 of 4 units parsed)")
    assert watch.change_summary(watch.FindingChanges(), replace(result, units=0), 0.5).startswith(
        "No change in findings. Found 1 finding"
    )


# ---------------------------------------------------------------- what is watched


def test_the_plan_watches_the_tree_and_the_headers_from_elsewhere_but_not_the_system_headers(tmp_path: Path) -> None:
    write(tmp_path / "tree" / "htp" / "kernel.c", ALIGNED)
    write(tmp_path / "tree" / "host" / "host.cpp", ALIGNED)
    write(tmp_path / "include" / "divisor.h", "")
    (tmp_path / ".git").mkdir()  # the checkout's root bounds where a configuration is looked for
    kernel = str(tmp_path / "tree" / "htp" / "kernel.c")
    result = LintResult(
        diagnostics=(),
        rules=enabled_rules(Config(), RunSettings()),
        files_checked=1,
        dependencies=(kernel, str(tmp_path / "include" / "divisor.h"), "/usr/include/stdint.h", f"dir:{tmp_path}"),
    )
    plan = watch.watch_plan([str(tmp_path / "tree" / "htp")], Config(), RunSettings(), result)
    # The cross-file rules parse the whole tree (htp/ and host/): it is watched, not just the named directory.
    assert plan.trees == {str(tmp_path / "tree")}
    assert str(tmp_path / "include" / "divisor.h") in plan.files
    assert not [path for path in plan.files if path.startswith("/usr")]
    assert str(tmp_path / "include") in plan.directories
    assert str(tmp_path) in plan.directories  # where a hexlint.toml may appear
    assert not any(directory.startswith("/usr") for directory in plan.directories)


def test_with_context_files_only_the_named_directory_is_watched(tmp_path: Path) -> None:
    write(tmp_path / "tree" / "htp" / "kernel.c", ALIGNED)
    settings = RunSettings(context="files")
    plan = watch.watch_plan([str(tmp_path / "tree" / "htp")], Config(), settings)
    assert plan.trees == {str(tmp_path / "tree" / "htp")}


def test_relevant_events_are_sources_configuration_and_the_files_of_the_plan(tmp_path: Path) -> None:
    tree = str(tmp_path / "tree")
    header = str(tmp_path / "include" / "divisor.h")
    plan = watch.WatchPlan(
        trees=frozenset({tree}), directories=frozenset({str(tmp_path / "include")}), files=frozenset({header})
    )
    relevant = watch.Relevance(plan, cache_dir=str(tmp_path / "tree" / "lint-cache"))
    yes = [
        f"{tree}/htp/a.c",
        f"{tree}/host/ggml-hexagon.cpp",
        f"{tree}/htp/ops.h",
        f"{tree}/hexlint.toml",
        f"{tree}/.gitignore",
        f"{tree}/htp/CMakeLists.txt",
        f"{tree}/htp/htp_iface.idl",
        f"{tree}/build/libggml-htp-v73.so",
        header,
        str(tmp_path / "include" / "hexlint.toml"),
    ]
    no = [
        f"{tree}/htp/notes.txt",
        f"{tree}/htp/.a.c.swp",
        f"{tree}/htp/.#a.c",
        f"{tree}/.venv/lib/x.h",
        f"{tree}/lint-cache/source-runs/ab/abcd.json",
        f"{tree}/lint-cache/x.c",
        str(tmp_path / "include" / "other.h"),
        str(tmp_path / "elsewhere" / "a.c"),
    ]
    assert [path for path in yes if not relevant(None, path)] == []
    assert [path for path in no if relevant(None, path)] == []


def test_an_error_of_the_first_run_ends_the_watch_as_it_ends_a_run(tmp_path: Path, hexlint_cli) -> None:
    run = hexlint_cli("--watch", str(tmp_path / "missing"))
    assert run.status == 2
    assert run.stderr.startswith("hexlint: error: ") and "missing" in run.stderr
    assert run.stderr.count("\n") == 1
    assert [thread.name for thread in threading.enumerate() if thread.name == "hexlint-watch"] == []


def test_the_watching_line_names_the_trees_and_counts_the_other_directories(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    plan = watch.WatchPlan(
        trees=frozenset({str(tmp_path / "tree")}), directories=frozenset({"/a", "/b"}), files=frozenset()
    )
    assert watch.watching_line(plan) == (
        "hexlint: watching tree (and 2 directories of the configuration and headers) for changes; Ctrl-C stops"
    )


def test_a_baseline_inside_the_tree_counts_though_it_is_no_source(tmp_path: Path) -> None:
    write(tmp_path / "htp" / "a.c", ALIGNED)
    write(tmp_path / "baseline.json", "{}")
    settings = RunSettings(baseline=str(tmp_path / "baseline.json"))
    plan = watch.watch_plan([str(tmp_path)], Config(), settings)
    relevant = watch.Relevance(plan)
    assert relevant(None, str(tmp_path / "baseline.json"))
    assert not relevant(None, str(tmp_path / "other.json"))


def test_ctrl_c_stops_the_watcher_threads_and_exits_0(tmp_path: Path, hexlint_cli, monkeypatch) -> None:
    write(tmp_path / "htp" / "a.c", MISALIGNED)
    started: list[threading.Thread] = []

    def interrupted(self) -> set[str]:
        started.extend(thread for thread in threading.enumerate() if thread.name == "hexlint-watch")
        raise KeyboardInterrupt

    monkeypatch.setattr(watch.Watcher, "next_changes", interrupted)
    run = hexlint_cli("--watch", "--select", "HX110", str(tmp_path / "htp"))
    assert run.status == 0
    assert "HX110" in run.stdout  # the first report
    assert run.stderr.endswith("hexlint: stopped watching\n")
    assert started and not [thread for thread in started if thread.is_alive()]


def test_batches_waiting_together_are_one_change_and_a_watcher_failure_is_raised() -> None:
    watcher = watch.Watcher()
    watcher.batches.put({"htp/a.c"})
    watcher.batches.put({"htp/a.c", "htp/b.c"})  # an editor's second write, batched apart
    assert watcher.next_changes() == {"htp/a.c", "htp/b.c"}
    watcher.batches.put(watch.InputError("--watch: cannot watch htp: gone"))
    with pytest.raises(watch.InputError, match="cannot watch"):
        watcher.next_changes()
