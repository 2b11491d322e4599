"""--format json carries the binary audit's per-function table next to the findings."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_hexlint

ROOT = Path(__file__).resolve().parent.parent
TWIN = ROOT / "fixtures" / "binary" / "vector_spill.so"
CORE = ROOT / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73.so"


def functions_by_name(document: dict) -> dict[str, dict]:
    (library,) = document["libraries"]
    return {record["function"]: record for record in library["functions"]}


def test_audit_table_is_in_the_json_document() -> None:
    run = run_hexlint("--spills", "--format", "json", str(TWIN))
    assert run.status == 1  # the findings are findings whichever table is shown
    document = json.loads(run.stdout)
    assert {diagnostic["code"] for diagnostic in document["diagnostics"]} == {"HX201"}
    (library,) = document["libraries"]
    vector_spills = [record["vspill"] for record in library["functions"]]
    assert vector_spills == sorted(vector_spills, reverse=True)  # worst first, as the text table
    assert library["functions_audited"] == 3 and library["columns"][:2] == ["loops", "vspill"]
    functions = functions_by_name(document)
    assert functions["spill_kernel"]["vspill"] > 0
    assert functions["legal_stack_array"]["vspill"] == 0


def test_strict_json_has_the_findings_and_the_same_table() -> None:
    run = run_hexlint("--spills", "--strict", "--format", "json", str(TWIN))
    assert run.status == 1
    document = json.loads(run.stdout)
    flagged = {diagnostic["symbol"] for diagnostic in document["diagnostics"] if diagnostic["code"] == "HX201"}
    table = functions_by_name(document)
    assert flagged == {name for name, record in table.items() if record["vspill"] > 0}


def test_verbose_json_has_per_loop_rows_and_lint_mode_has_no_table() -> None:
    verbose = json.loads(run_hexlint("--spills", "-v", "--format", "json", str(CORE)).stdout)
    loops = [loop for record in verbose["libraries"][0]["functions"] for loop in record.get("per_loop", [])]
    assert loops and all(loop["vector_reloads"] == 0 for loop in loops)
    lint = json.loads(run_hexlint("--format", "json", str(CORE)).stdout)
    assert "libraries" not in lint
