"""`hexlint trace`: runtime op traces read on one timeline, the HX3xx rules in the usual formats, budgets, and the
static finding behind a runtime one with --tree (fixtures/splits/trace-tree: a softmax worker without events, a
rope worker that returns early with its event open, an add worker tracing every row with info 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO_ROOT, run_hexlint

from hexlint.runtime.trace import busy_cycles, parse_trace, read_trace

LOGS = REPO_ROOT / "fixtures" / "splits"
DEFECTS = str(LOGS / "trace-defects.log")


def codes(stdout: str) -> list[tuple[int, str]]:
    return [(int(line.split(":")[1]), line.split()[1]) for line in stdout.splitlines() if ": HX3" in line]


def test_events_are_placed_in_their_op_across_a_counter_wrap() -> None:
    trace = read_trace(DEFECTS)
    (batch,) = trace.batches
    assert batch.record.start == 0xFFFFFFFF - 150000  # the ops' and events' 32-bit values wrap inside the batch
    assert [op.name for op in batch.ops] == ["ROPE", "SOFT_MAX", "ADD", "MUL", "MUL_MAT"]
    assert [len(op.events) for op in batch.ops] == [7, 0, 8, 4, 8]
    assert not batch.unplaced
    starts = [op.start for op in batch.ops]
    assert starts == sorted(starts) and starts[-1] > 0xFFFFFFFF  # unwrapped past 2**32
    up = batch.ops[4]
    assert busy_cycles(up, 0, dma=True) == 70000 and busy_cycles(up, 0, dma=False) == 25000


def test_findings_without_budgets() -> None:
    run = run_hexlint("trace", DEFECTS)
    assert run.status == 1
    assert codes(run.stdout) == [(3, "HX301"), (9, "HX304"), (27, "HX302")]
    assert "Found 3 findings (1 error, 2 warnings) in 1 of 1 file." in run.stderr


def test_budgets_from_the_command_line_and_the_configuration(tmp_path: Path) -> None:
    run = run_hexlint("trace", "--select", "HX305,HX306", "--max-hvx-idle", "60", "--max-dma-wait", "50", DEFECTS)
    assert codes(run.stdout) == [(5, "HX305"), (5, "HX305"), (6, "HX305"), (6, "HX305"), (6, "HX306"), (6, "HX306")]
    loose = run_hexlint("trace", "--select", "HX305", "--max-hvx-idle", "85", DEFECTS)
    assert loose.status == 0 and codes(loose.stdout) == []
    config = tmp_path / "hexlint.toml"
    config.write_text("[rules.HX306]\nmax-dma-wait-percent = 65\n")
    configured = run_hexlint("trace", "--select", "HX306", "--config", str(config), DEFECTS)
    assert codes(configured.stdout) == [(6, "HX306"), (6, "HX306")]


def test_json_sarif_and_github_formats() -> None:
    data = json.loads(run_hexlint("trace", "--format", "json", DEFECTS).stdout)
    assert [(d["code"], d["line"]) for d in data["diagnostics"]] == [("HX301", 3), ("HX304", 9), ("HX302", 27)]
    sarif = json.loads(run_hexlint("trace", "--format", "sarif", DEFECTS).stdout)
    assert {rule["id"] for rule in sarif["runs"][0]["tool"]["driver"]["rules"]} >= {"HX301", "HX302", "HX304"}
    github = run_hexlint("trace", "--format", "github", DEFECTS).stdout
    assert github.startswith("::warning file=") and "title=HX301" in github


def test_with_the_tree_a_runtime_finding_names_the_static_one() -> None:
    run = run_hexlint("trace", "--tree", str(LOGS / "trace-tree"), "-v", DEFECTS)
    assert run.status == 1
    lines = {line.split()[1]: line for line in run.stdout.splitlines() if ": HX3" in line}
    assert "explained statically: HX106 trace-missing at " in lines["HX301"] and "ops.c:5)" in lines["HX301"]
    assert "explained statically: HX107 trace-unbalanced at " in lines["HX302"] and "ops.c:14)" in lines["HX302"]
    assert "explained statically: HX118 trace-info-constant at " in lines["HX304"] and "ops.c:27)" in lines["HX304"]
    assert "rope_rows" in run.stdout  # the static message, as a note


def test_an_op_whose_kernel_is_clean_is_not_explained(tmp_path: Path) -> None:
    text = (LOGS / "trace-defects.log").read_text().replace("profile-op SOFT_MAX", "profile-op MUL", 1)
    log = tmp_path / "renamed.log"
    log.write_text(text)
    run = run_hexlint("trace", "--tree", str(LOGS / "trace-tree"), "--select", "HX301", str(log))
    assert codes(run.stdout) == [(3, "HX301")] and "explained" not in run.stdout


def test_an_untraced_profile_is_clean_and_no_profile_is_an_error() -> None:
    assert run_hexlint("trace", str(LOGS / "trace-clean.log")).status == 0
    run = run_hexlint("trace", str(LOGS / "transformer-layer.log"))
    assert run.status == 2 and "no profile-op lines" in run.stderr and run.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--select", "HX999", DEFECTS], "--select: unknown rule `HX999`"),
        (["missing.log"], "missing.log: cannot read"),
        (["--max-hvx-idle", "lots", DEFECTS], "argument --max-hvx-idle: invalid float value"),
        (["--tree", "nowhere", DEFECTS], "--tree: nowhere: not a directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(arguments: list[str], message: str) -> None:
    run = run_hexlint("trace", *arguments)
    assert run.status == 2 and message in run.stderr and run.stderr.count("\n") == 1


def test_a_log_prefix_and_another_threads_text_before_a_line_are_read() -> None:
    text = (
        "0.00.001.000 D ggml-hex: HTP0 profile-op OPBATCH|----|n-ops 1|evt-cnt 1,0,0,0,0,0,0,0,0,0,0|----|----|"
        "usec 1 cycles 1000 start 50 mhz 1000.0\n"
        "ggml-hex: HTP0 profile-op ADD|a x b -> c|2:2 x 2:2 -> 2:2|f32 x f32 -> f32|----|----|usec 1 cycles 1000 "
        "start 50 mhz 1000.0\n"
        "node #  3 (       ADD):                    c (   0K) [ HTP0         ] use=1,c=1:ggml-hex: HTP0 trace-evt "
        "HVX_COMP: thread 0 info 0 start 60\n"
    )
    trace = parse_trace(text, "t.log")
    assert trace.profile_ops == 1 and [len(op.events) for op in trace.batches[0].ops] == [1]


def test_a_lint_run_with_only_runtime_rules_says_where_they_run() -> None:
    run = run_hexlint("--select", "HX3", str(LOGS / "tree"))
    assert run.status == 0 and "run them with `hexlint trace LOG...`" in run.stderr
    assert "hexlint trace" not in run_hexlint("--select", "HX1", str(LOGS / "tree")).stderr


def test_two_sessions_interleaving_keep_their_own_batches() -> None:
    lines = (LOGS / "trace-defects.log").read_text().splitlines()
    other = [line.replace("HTP0", "HTP1") for line in (LOGS / "trace-clean.log").read_text().splitlines()]
    mixed = []
    for index, line in enumerate(lines):
        mixed.append(line)
        if index < len(other):
            mixed.append(other[index])
    mixed += other[len(lines) :]
    trace = parse_trace("\n".join(mixed) + "\n", "mixed.log")
    assert [batch.record.session for batch in trace.batches] == ["HTP0", "HTP1"]
    assert [[len(op.events) for op in batch.ops] for batch in trace.batches] == [[7, 0, 8, 4, 8], [16, 16]]
    assert not any(batch.unplaced for batch in trace.batches)
