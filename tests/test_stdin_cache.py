"""`--stdin-filename PATH -` with the persistent cache on: the text on stdin keys the entry (as the language server's
runs, which lint an editor's buffer the same way)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from conftest import run_hexlint

MISALIGNED = b"#define TWO(x) \\\n    ((x) +  \\\n    (x))\n"


def lint_stdin(path: Path, cache_dir: Path, text: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    run = run_hexlint("--cache-dir", str(cache_dir), "-v", "--stdin-filename", str(path), "-")
    return run.status, run.stderr


def test_a_stdin_run_is_cached_under_the_text_it_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HEXLINT_NO_CACHE", raising=False)
    path = tmp_path / "htp" / "macro.c"
    path.parent.mkdir()
    path.write_bytes(b"int clean;\n")
    cache_dir = tmp_path / "cache"
    first = lint_stdin(path, cache_dir, MISALIGNED, monkeypatch)
    second = lint_stdin(path, cache_dir, MISALIGNED, monkeypatch)
    clean = lint_stdin(path, cache_dir, b"int clean;\n", monkeypatch)
    assert first[0] == second[0] == 1, first[1]
    assert "cache: miss" in first[1] and "cache: hit" in second[1]
    assert clean[0] == 0 and "cache: miss" in clean[1]
