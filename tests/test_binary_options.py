"""Binary rule options at their edges: -1 turns a rule off, an empty DMA pattern names no worker, the gate follows the
rules' options as every other mode does."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest
from conftest import run_hexlint
from hypothesis import given, settings
from hypothesis import strategies as st

from hexlint.binary.audit import matches_any

ROOT = Path(__file__).resolve().parent.parent
TWINS = ROOT / "fixtures" / "binary"


def config_with(tmp_path: Path, table: str) -> Path:
    config = tmp_path / "hexlint.toml"
    config.write_text(table)
    return config


@pytest.mark.parametrize(
    ("code", "option", "twin"),
    [
        ("HX201", "max_inloop_vector_spills", "vector_spill.so"),
        ("HX203", "max_promotions", "float_promotion.so"),
        ("HX204", "max_inloop_divisions", "division.so"),
        ("HX205", "max_dma_vec_ops", "dma_worker.so"),
    ],
)
def test_minus_one_turns_a_binary_rule_off(tmp_path: Path, code: str, option: str, twin: str) -> None:
    library = str(TWINS / twin)
    assert code in run_hexlint("--select", code, library).stdout  # the twin does break the rule
    config = config_with(tmp_path, f"[rules.{code}]\n{option} = -1\n")
    run = run_hexlint("--config", str(config), "--select", code, library)
    assert (run.status, run.stdout) == (0, ""), run.stderr


def test_empty_dma_pattern_names_no_dma_worker() -> None:
    library = str(TWINS / "vector_spill.so")  # HVX everywhere, no function named like a DMA worker
    assert "HX205" not in run_hexlint("--dma-pattern", "", "--select", "HX205", library).stdout
    gate = run_hexlint("--dma-pattern", "", "--baseline-lib", str(TWINS / "division.so"), library)
    assert "HX205" not in gate.stdout


def test_the_gate_follows_the_rules_options(tmp_path: Path) -> None:
    old, new = str(TWINS / "division.so"), str(TWINS / "scalar_spill.so")
    gate = run_hexlint("--spills", "--baseline-lib", old, new)
    assert gate.status == 1 and "HX202" in gate.stdout  # on, as in every mode
    off = config_with(tmp_path, "[rules.HX202]\nmax_inloop_scalar_spills = -1\n")
    assert "HX202" not in run_hexlint("--config", str(off), "--spills", "--baseline-lib", old, new).stdout
    allowed = run_hexlint("--spills", "--max-inloop-sspills", "49", "--baseline-lib", old, new)
    assert allowed.status == 0, allowed.stdout  # 0 -> 49 grew, but to what the rule allows
    assert run_hexlint("--spills", "--max-inloop-sspills", "48", "--baseline-lib", old, new).status == 1


@settings(max_examples=500, deadline=None)
@given(st.text("ab_*?[]!", max_size=6), st.lists(st.text("ab_*?[]!", max_size=5), max_size=4))
def test_helper_patterns_match_as_fnmatchcase_does(name: str, patterns: list[str]) -> None:
    """Plain names are looked up, the other patterns matched by one regex: the answer is fnmatchcase's."""
    assert matches_any(name, patterns) == any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
