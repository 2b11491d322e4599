"""Kernel or host is decided by where a file sits, not by how the path was typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_hexlint

KERNEL = b"""int sum(const int *x, int n, int d) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += x[i] / d;
    }
    return s;
}
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "htp").mkdir()
    (tmp_path / "htp" / "div.c").write_bytes(KERNEL)
    return tmp_path


def test_the_same_kernel_file_gets_the_same_findings_from_any_directory(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree)
    from_above = run_hexlint("--select", "HX108", "htp/div.c")
    monkeypatch.chdir(tree / "htp")
    from_inside = run_hexlint("--select", "HX108", "div.c")
    whole_directory = run_hexlint("--select", "HX108", ".")
    assert from_above.status == from_inside.status == whole_directory.status == 1
    assert "HX108" in from_inside.stdout and "HX108" in whole_directory.stdout


def test_an_htp_directory_above_the_repository_does_not_make_host_code_kernel_code(tmp_path: Path) -> None:
    repository = tmp_path / "htp" / "project"
    (repository / ".git").mkdir(parents=True)
    (repository / "div.c").write_bytes(KERNEL)
    assert "HX108" not in run_hexlint("--select", "HX108", str(repository / "div.c")).stdout
