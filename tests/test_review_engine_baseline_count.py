"""write_baseline counts what it rendered instead of parsing its own output back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hexlint.baseline import load_baseline, write_baseline
from hexlint.core import Diagnostic, Severity, Span


def finding(line: int, text: str, path: str) -> Diagnostic:
    return Diagnostic("HX110", "n", Severity.ERROR, "m", Span(path, line, 1), fingerprint_text=text)


@pytest.mark.parametrize("count", [0, 1, 4])
def test_count_matches_the_file_unparsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    findings = [finding(line, "x = a / b;", str(tmp_path / "k.c")) for line in range(1, count + 1)]
    target = tmp_path / "baseline.json"

    def no_parsing(*_arguments, **_keywords):
        raise AssertionError("write_baseline parsed JSON")

    with monkeypatch.context() as patched:
        patched.setattr(json, "loads", no_parsing)
        recorded = write_baseline(target, findings)
    assert recorded == count
    assert len(json.loads(target.read_text(encoding="utf-8"))["findings"]) == count
    assert len(load_baseline(target)) == count
