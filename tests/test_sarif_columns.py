"""SARIF columns are Unicode code points (its columnKind); hexlint's own columns count bytes, as libclang does."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_hexlint

KERNEL = """int sum(const int *x, int n, int d) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        /* ééé */ s += x[i] / d;
    }
    return s;
}
"""


def test_sarif_column_counts_characters_where_text_output_counts_bytes(tmp_path: Path) -> None:
    source = tmp_path / "htp" / "div.c"
    source.parent.mkdir()
    source.write_text(KERNEL, encoding="utf-8")
    text = run_hexlint("--select", "HX108", str(source)).stdout
    byte_column = int(text.split(":")[2])
    sarif = json.loads(run_hexlint("--select", "HX108", "--format", "sarif", str(source)).stdout)
    (result,) = sarif["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    line = KERNEL.splitlines()[3]
    assert sarif["runs"][0]["columnKind"] == "unicodeCodePoints"
    assert byte_column - region["startColumn"] == 3  # three two-byte characters before the division
    assert line[region["startColumn"] - 1 :].startswith("x[i] / d")


def test_github_annotation_column_counts_characters_too(tmp_path: Path) -> None:
    source = tmp_path / "htp" / "div.c"
    source.parent.mkdir()
    source.write_text(KERNEL, encoding="utf-8")
    annotation = run_hexlint("--select", "HX108", "--format", "github", str(source)).stdout
    column = int(annotation.split(",col=")[1].split(",")[0])
    assert KERNEL.splitlines()[3][column - 1 :].startswith("x[i] / d")


def test_a_file_edited_between_two_reports_gets_its_new_columns(tmp_path: Path) -> None:
    source = tmp_path / "htp" / "div.c"
    source.parent.mkdir()
    source.write_text(KERNEL, encoding="utf-8")
    run_hexlint("--select", "HX108", "--format", "sarif", str(source))
    source.write_text(KERNEL.replace("/* ééé */ ", "/* eee */ "), encoding="utf-8")
    sarif = json.loads(run_hexlint("--select", "HX108", "--format", "sarif", str(source)).stdout)
    (result,) = sarif["runs"][0]["results"]
    text = run_hexlint("--select", "HX108", str(source)).stdout
    assert result["locations"][0]["physicalLocation"]["region"]["startColumn"] == int(text.split(":")[2])
