"""HX110's pad: the fix always leaves one space before a backslash, so a pad below 2 could never converge."""

from __future__ import annotations

from pathlib import Path

from conftest import run_hexlint

MISALIGNED = b"#define A(x) \\\n    foo(x);  \\\n    barbaz(x);   \\\n    baz\n"


def test_pad_below_two_is_a_one_line_error_naming_the_option(tmp_path: Path) -> None:
    source = tmp_path / "htp" / "a.c"
    source.parent.mkdir()
    source.write_bytes(MISALIGNED)
    config = tmp_path / "hexlint.toml"
    config.write_text("[rules.HX110]\npad = 1\n")
    run = run_hexlint("--config", str(config), "--select", "HX110", "--fix", str(source))
    assert run.status == 2
    assert "pad" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert source.read_bytes() == MISALIGNED


def test_pad_two_fixes_in_one_pass(tmp_path: Path) -> None:
    source = tmp_path / "htp" / "a.c"
    source.parent.mkdir()
    source.write_bytes(MISALIGNED)
    assert run_hexlint("--select", "HX110", "--fix", str(source)).status == 0
    assert run_hexlint("--select", "HX110", str(source)).status == 0
