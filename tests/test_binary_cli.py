"""The binary audit through the `hexlint` command line: modes, thresholds, --func, exit codes, output formats."""

from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_hexlint

ROOT = Path(__file__).resolve().parent.parent
TWINS = ROOT / "fixtures" / "binary"
CORE_V73 = ROOT / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73.so"
VECTOR_TWIN = str(TWINS / "vector_spill.so")


def finding_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "] " in line and ": HX" in line]


def test_the_table_mode_reports_the_findings_lint_mode_reports():
    run = run_hexlint("--spills", "--promotions", "--division", VECTOR_TWIN)
    assert run.status == 1, run.stderr
    assert "spill_kernel" in run.stdout and "legal_stack_array" in run.stdout
    header = next(line for line in run.stdout.splitlines() if line.strip().startswith("function"))
    assert header.split() == [
        "function",
        "loops",
        "vspill",
        "sspill",
        "trips",
        "frame",
        "array",
        "promo",
        "promo@loop",
        "div@loop",
        "div",
        "calls@loop",
        "hvx",
    ]
    row = next(line.split() for line in run.stdout.splitlines() if line.strip().startswith("spill_kernel "))
    assert int(row[2]) > 0  # in-loop vector spills
    assert finding_lines(run.stdout) == finding_lines(run_hexlint(VECTOR_TWIN).stdout)
    assert any("HX201" in line for line in finding_lines(run.stdout))
    assert run.stderr.startswith("Found 2 findings") and "passed" not in run.stderr


@pytest.mark.parametrize("twin", ["vector_spill.so", "scalar_spill.so", "division.so", "dma_worker.so"])
def test_strict_changes_nothing(twin):
    library = str(TWINS / twin)
    for mode in ([], ["--spills", "--promotions", "--division"]):
        plain, strict = run_hexlint(*mode, library), run_hexlint(*mode, "--strict", library)
        assert (plain.status, plain.stdout, plain.stderr) == (strict.status, strict.stdout, strict.stderr)
        assert plain.status == 1 and finding_lines(plain.stdout)


def test_an_audit_flag_runs_its_rules_and_hx205():
    division = str(TWINS / "division.so")
    assert "HX204" in run_hexlint(division).stdout
    assert finding_lines(run_hexlint("--spills", division).stdout) == []
    assert run_hexlint("--spills", division).status == 0
    assert "HX204" in run_hexlint("--division", division).stdout
    dma = str(TWINS / "dma_worker.so")
    assert "HX205" in run_hexlint("--division", dma).stdout  # with any audit: the `hvx` column of every table
    assert run_hexlint("--spills", "--ignore", "HX205", dma).status == 0  # and --ignore still turns it off


def test_json_and_sarif_of_the_table_mode_hold_the_findings():
    document = json.loads(run_hexlint("--spills", "--format", "json", VECTOR_TWIN).stdout)
    assert {d["code"] for d in document["diagnostics"]} == {"HX201"} and document["libraries"]
    log = json.loads(run_hexlint("--spills", "--format", "sarif", VECTOR_TWIN).stdout)
    assert {result["ruleId"] for result in log["runs"][0]["results"]} == {"HX201"}


def test_only_the_selected_columns_are_shown():
    run = run_hexlint("--division", VECTOR_TWIN)
    header = next(line for line in run.stdout.splitlines() if line.strip().startswith("function"))
    assert "div@loop" in header and "vspill" not in header and "promo" not in header


def test_strict_fails_on_in_loop_vector_spills():
    run = run_hexlint("--spills", "--strict", VECTOR_TWIN)
    assert run.status == 1
    assert "HX201" in run.stdout and "spill_kernel" in run.stdout
    assert "legal_stack_array" not in [line.split(":")[1].split("@")[0] for line in finding_lines(run.stdout)]


def test_threshold_options_raise_the_bar():
    assert run_hexlint("--spills", "--strict", "--max-inloop-vspills", "100000", VECTOR_TWIN).status == 0
    division = str(TWINS / "division.so")
    assert run_hexlint("--division", "--strict", division).status == 1
    assert run_hexlint("--division", "--strict", "--max-inloop-divisions", "1000", division).status == 0
    assert run_hexlint("--spills", "--strict", "--max-inloop-divisions", "-1", division).status == 2


def test_scalar_spills_are_findings_in_every_mode():
    scalar = str(TWINS / "scalar_spill.so")
    for mode in ([], ["--spills"], ["--spills", "--strict"], ["--baseline-lib", str(TWINS / "division.so")]):
        run = run_hexlint(*mode, scalar)
        assert run.status == 1 and "HX202" in run.stdout, mode
        assert run_hexlint(*mode, "--ignore", "HX202", scalar).status == 0, mode
        assert run_hexlint(*mode, "--max-inloop-sspills", "1000", scalar).status == 0, mode


def test_strict_always_checks_hvx_in_dma_workers_and_the_pattern_is_configurable():
    dma = str(TWINS / "dma_worker.so")
    run = run_hexlint("--spills", "--strict", dma)
    assert run.status == 1 and "HX205" in run.stdout and "dma_worker_hvx" in run.stdout
    assert run_hexlint("--spills", "--strict", "--dma-pattern", "^nothing_matches$", dma).status == 0
    assert run_hexlint("--spills", "--strict", "--max-dma-vec-ops", "10000", dma).status == 0
    bad = run_hexlint("--spills", "--strict", "--dma-pattern", "(", dma)
    assert bad.status == 2 and "--dma-pattern" in bad.stderr


def test_func_limits_the_audit_and_must_match_something():
    run = run_hexlint("--spills", "--strict", "--func", "^legal_", VECTOR_TWIN)
    assert run.status == 0 and "spill_kernel" not in run.stdout
    miss = run_hexlint("--spills", "--func", "^compute_nothing$", VECTOR_TWIN)
    assert miss.status == 2
    assert "matches no function" in miss.stderr and miss.stderr.count("\n") == 1
    bad = run_hexlint("--spills", "--func", "(", VECTOR_TWIN)
    assert bad.status == 2 and "--func" in bad.stderr


def test_verbose_lists_every_loop():
    run = run_hexlint("--spills", "-v", "--func", "^spill_kernel$", VECTOR_TWIN)
    loop_lines = [line for line in run.stdout.splitlines() if line.strip().startswith("loop 0x")]
    assert loop_lines and "branch" in loop_lines[0] and "vspill" in loop_lines[0]
    assert "vector_spill.c:" in loop_lines[0]  # the twin is a -g build: loops carry file:line


def test_lint_mode_runs_the_rules_with_their_options():
    run = run_hexlint(VECTOR_TWIN)
    assert run.status == 1 and "HX201" in run.stdout
    assert run_hexlint(str(CORE_V73)).status == 0


def test_core_builds_pass_the_documented_gate():
    for version in (73, 75, 79, 81):
        library = ROOT / "fixtures" / "htp-core" / "lib" / f"libhtp-core-v{version}.so"
        run = run_hexlint("--spills", "--strict", "--promotions", "--division", str(library))
        assert run.status == 0, run.stdout + run.stderr


def test_findings_carry_the_dwarf_source_line_and_a_stable_fingerprint():
    run = run_hexlint("--spills", "--strict", "--format", "json", VECTOR_TWIN)
    assert run.status == 1
    document = json.loads(run.stdout)
    findings = document if isinstance(document, list) else document.get("diagnostics", document.get("findings", []))
    spill = next(finding for finding in findings if finding["code"] == "HX201")
    text = json.dumps(spill)
    assert "vector_spill.c" in text and "spill_kernel" in text


def test_sarif_output_names_the_library_and_the_source(tmp_path):
    run = run_hexlint("--spills", "--strict", "--format", "sarif", VECTOR_TWIN)
    assert run.status == 1
    sarif = json.loads(run.stdout)
    results = sarif["runs"][0]["results"]
    assert any(result["ruleId"] == "HX201" for result in results)
    text = json.dumps(results)
    assert "vector_spill.so" in text and "vector_spill.c" in text


def test_bad_inputs_are_one_line_errors(tmp_path):
    text_file = tmp_path / "libnot.so"
    text_file.write_text("hello")
    run = run_hexlint("--spills", str(text_file))
    assert run.status == 2
    assert str(text_file) in run.stderr and "not an ELF file" in run.stderr
    assert "Traceback" not in run.stderr and run.stderr.count("\n") == 1
    truncated = tmp_path / "libcut.so"
    truncated.write_bytes(CORE_V73.read_bytes()[:200])
    run = run_hexlint("--spills", "--strict", str(truncated))
    assert run.status == 2 and str(truncated) in run.stderr and "Traceback" not in run.stderr


def test_a_lint_run_never_modifies_the_library(tmp_path):
    library = tmp_path / "vector_spill.so"
    library.write_bytes(Path(VECTOR_TWIN).read_bytes())
    before = (library.read_bytes(), library.stat().st_mtime_ns)
    run_hexlint("--spills", "--promotions", "--division", "--strict", str(library))
    run_hexlint("--disasm", "spill_kernel", "--objdump", "none", str(library))
    assert (library.read_bytes(), library.stat().st_mtime_ns) == before


def test_table_records_hold_the_text_table_as_data():
    from hexlint.binary.audit import audit_image
    from hexlint.binary.table import render_table, table_records
    from hexlint.elf import load_elf

    audit = audit_image(load_elf(TWINS / "vector_spill.so"))
    families = ["spills", "promotions", "division"]
    records = table_records(audit, families, verbose=True)
    json.dumps(records)  # JSON-ready
    assert records["library"] == audit.path
    rows = {record["function"]: record for record in records["functions"]}
    text_rows = {
        line.split()[0]: line.split()[1:]
        for line in render_table(records, families).splitlines()
        if line.startswith("  ") and line.split()[0] in rows
    }
    assert set(text_rows) == set(rows)
    for name, cells in text_rows.items():  # the same numbers as the text table, column for column
        assert [str(rows[name][title]) for title in ("loops", "vspill", "sspill", "trips", "frame", "array")] == cells[
            :6
        ]
    spill_loops = rows["spill_kernel"]["per_loop"]
    assert spill_loops and sum(loop["vector_spill_stores"] + loop["vector_reloads"] for loop in spill_loops) > 0
    assert any("vector_spill.c:" in (loop["source"] or "") for loop in spill_loops)


ALL_LIBRARIES = [str(path) for path in sorted((ROOT / "fixtures" / "htp-core" / "lib").glob("*.so"))] + [
    VECTOR_TWIN,
    str(TWINS / "division.so"),
    str(TWINS / "float_promotion.so"),
]
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libraries run in parallel on Linux only")


@pytest.mark.parametrize(
    "arguments",
    [
        ["--spills", "--promotions", "--division", "--strict", "--max-inloop-sspills", "0"],
        ["--format", "json", "--spills", "--division", "-v"],
        ["--format", "sarif"],
    ],
)
def test_libraries_audited_at_once_report_what_one_after_another_do(arguments, monkeypatch):
    monkeypatch.setattr("hexlint.binary.run.PARALLEL_MIN_BYTES", 0)  # whatever the fixtures add up to
    one_after_another = run_hexlint("--jobs", "1", *arguments, *ALL_LIBRARIES)
    at_once = run_hexlint("--jobs", "2", *arguments, *ALL_LIBRARIES)
    assert one_after_another.stdout and one_after_another.status in (0, 1)
    assert (at_once.status, at_once.stdout, at_once.stderr) == (
        one_after_another.status,
        one_after_another.stdout,
        one_after_another.stderr,
    )


@linux_only
def test_several_libraries_are_audited_in_worker_processes(monkeypatch):
    from hexlint.binary import run as binary_run

    audit_here = binary_run.library_result

    def reporting_its_process(*arguments):
        result = audit_here(*arguments)
        return replace(result, table={**(result.table or {}), "notes": [f"pid {os.getpid()}"]})

    # pickled by name: the forked worker finds this very function where library_result was
    reporting_its_process.__module__, reporting_its_process.__qualname__ = binary_run.__name__, "library_result"
    monkeypatch.setattr(binary_run, "library_result", reporting_its_process)

    def processes(jobs: str) -> set[str]:
        run = run_hexlint("--jobs", jobs, "--spills", *ALL_LIBRARIES)
        return {line.split()[-1] for line in run.stdout.splitlines() if " pid " in line and "note" in line}

    assert processes("1") == {str(os.getpid())}
    assert len(processes("2")) in (1, 2) and str(os.getpid()) not in processes("2")
    monkeypatch.setattr(binary_run, "PARALLEL_MIN_BYTES", sum(Path(path).stat().st_size for path in ALL_LIBRARIES) + 1)
    assert processes("2") == {str(os.getpid())}  # too little to audit to pay for the workers
    monkeypatch.setattr(binary_run, "PARALLEL_MIN_BYTES", 0)
    stop = threading.Event()
    other_thread = threading.Thread(target=stop.wait)
    other_thread.start()
    try:
        assert processes("2") == {str(os.getpid())}  # never forks a process running other threads
    finally:
        stop.set()
        other_thread.join()
    assert str(os.getpid()) not in processes("2")


def test_a_bad_library_among_several_is_the_same_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setattr("hexlint.binary.run.PARALLEL_MIN_BYTES", 0)  # small libraries in parallel too
    text_file = tmp_path / "libnot.so"
    text_file.write_text("hello")
    truncated = tmp_path / "libcut.so"
    truncated.write_bytes(CORE_V73.read_bytes()[:200])
    libraries = [VECTOR_TWIN, str(text_file), str(CORE_V73), str(truncated)]
    one_after_another = run_hexlint("--jobs", "1", "--spills", "--strict", *libraries)
    at_once = run_hexlint("--jobs", "2", "--spills", "--strict", *libraries)
    assert one_after_another.status == 2 and one_after_another.stderr.count("\n") == 1
    assert str(text_file) in one_after_another.stderr  # the first bad library of the command line
    assert (at_once.status, at_once.stdout, at_once.stderr) == (
        one_after_another.status,
        one_after_another.stdout,
        one_after_another.stderr,
    )


def test_a_func_that_matches_nothing_in_any_library_is_an_error_at_once_too(monkeypatch):
    monkeypatch.setattr("hexlint.binary.run.PARALLEL_MIN_BYTES", 0)
    run = run_hexlint("--jobs", "2", "--spills", "--func", "^no_such_function$", VECTOR_TWIN, str(CORE_V73))
    assert run.status == 2 and "--func" in run.stderr and "matches no function" in run.stderr
    run = run_hexlint("--jobs", "2", "--spills", "--func", "^legal_stack_array$", VECTOR_TWIN, str(CORE_V73))
    assert run.status == 0 and "legal_stack_array" in run.stdout


CORE_BUILDS = [ROOT / "fixtures" / "htp-core" / "lib" / f"libhtp-core-v{version}.so" for version in (73, 75, 79, 81)]


def table_rows(output: str) -> list[list[str]]:
    """The data rows of the text tables: a name, then numbers or `-`."""
    rows = []
    for line in output.splitlines():
        cells = line.split()
        if line.startswith("  ") and len(cells) > 1 and all(cell.isdigit() or cell == "-" for cell in cells[1:]):
            rows.append(cells)
    return rows


def test_table_rows_are_worst_first_and_the_header_says_how_many_are_hidden():
    every = run_hexlint("--spills", "--all", str(CORE_V73))
    rows = table_rows(every.stdout)
    count = len(rows)  # one per function of the core
    assert count > 20 and "hidden" not in every.stdout
    ranks = [(int(row[2]), int(row[3]), int(row[4])) for row in rows]  # vspill, sspill, trips
    assert ranks == sorted(ranks, reverse=True) and ranks[0] > ranks[-1]
    worst = run_hexlint("--spills", "--top", "3", str(CORE_V73))
    assert table_rows(worst.stdout) == rows[:3]
    assert f"the 3 worst of {count} shown ({count - 3} hidden: --all shows every row" in worst.stdout
    default = table_rows(run_hexlint("--spills", str(CORE_V73)).stdout)
    assert default == rows[:20]


def test_the_column_legend_heads_the_table():
    lines = run_hexlint("--spills", "--division", VECTOR_TWIN).stdout.splitlines()
    legend = next(index for index, line in enumerate(lines) if line.strip().startswith("columns:"))
    titles = next(index for index, line in enumerate(lines) if line.strip().startswith("function "))
    assert legend < titles
    text = " ".join(lines[legend:titles])
    assert all(f"{title} = " in text for title in ("vspill", "sspill", "trips", "div@loop", "calls@loop", "hvx"))


def test_builds_of_one_library_for_several_cpus_make_one_table_with_a_column_per_cpu():
    merged = run_hexlint("--spills", "--all", *map(str, CORE_BUILDS))
    assert merged.stdout.count("functions audited") == 1
    assert "libhtp-core-vNN.so for v73, v75, v79, v81" in merged.stdout
    rows = {row[0]: row[1:] for row in table_rows(merged.stdout)}
    assert all(len(cells) == 3 * 4 for cells in rows.values())  # vspill, sspill, trips: one column per CPU each
    for index, build in enumerate(CORE_BUILDS):  # each CPU's column holds that build's own numbers
        alone = {row[0]: row[1:] for row in table_rows(run_hexlint("--spills", "--all", str(build)).stdout)}
        for name, cells in alone.items():
            assert [rows[name][index + 4 * column] for column in range(3)] == cells[1:4]
    per_loop = run_hexlint("--spills", "-v", *map(str, CORE_BUILDS[:2]))
    assert per_loop.stdout.count("functions audited") == 2  # per-loop rows are per build
    other = run_hexlint("--spills", VECTOR_TWIN, str(TWINS / "scalar_spill.so"))
    assert other.stdout.count("functions audited") == 2  # different libraries stay apart


def test_a_merged_table_keeps_two_functions_of_one_name_apart():
    from hexlint.binary.table import render_tables

    def table(cpu: str, rows: list[tuple[str, int]]) -> dict[str, object]:
        columns = ["loops", "vspill", "sspill", "trips"]
        functions = [{"function": name, "loops": 1, "vspill": spills, "sspill": 0, "trips": 0} for name, spills in rows]
        return {"library": f"lib/libx-{cpu}.so", "cpu": f"hexagon{cpu}", "notes": [], "functions_audited": 2} | {
            "loops": 2,
            "columns": columns,
            "functions": functions,
        }

    text = render_tables([table("v73", [("f.12", 9), ("f.40", 4)]), table("v79", [("f.3", 8), ("f.7", 5)])], ["spills"])
    rows = {row[0]: row[1:] for row in table_rows(text)}
    assert rows["f"][:2] == ["9", "8"] and rows["f#2"][:2] == ["4", "5"]  # static copies: not summed
