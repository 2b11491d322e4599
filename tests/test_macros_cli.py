"""HX110/HX111 through the command line: --diff applies with git apply and patch -p1, --fix is safe on disk."""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hexlint import registry
from hexlint.cli import main

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures" / "rules"
SELECT = ("--select", "HX110,HX111")


@pytest.fixture(autouse=True)
def macro_rules_registered(monkeypatch: pytest.MonkeyPatch):
    """HX110/HX111 with their checks, whether or not hexlint/checks/__init__.py lists them yet."""
    from hexlint import checks
    from hexlint.checks import hx110_macro_backslash_misaligned, hx111_macro_backslash_whitespace

    monkeypatch.setitem(checks.CHECKS, "HX110", hx110_macro_backslash_misaligned.check)
    monkeypatch.setitem(checks.CHECKS, "HX111", hx111_macro_backslash_whitespace.check)
    monkeypatch.setattr(registry, "CHECKS", checks.CHECKS)
    registry.forget_rules()
    yield
    registry.forget_rules()


def run(*arguments: str) -> tuple[int, bytes, str]:
    """hexlint in-process with a byte stdout, as a terminal or pipe has: (status, stdout bytes, stderr)."""
    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    stderr = io.StringIO()
    status = main(list(arguments), stdout=stdout, stderr=stderr)
    stdout.flush()
    return status, raw.getvalue(), stderr.getvalue()


def fixture_tree(destination: Path) -> dict[str, bytes]:
    """Copies of every HX110/HX111 case (not the .fixed.c twins) below destination/src; name -> original bytes."""
    originals = {}
    for rule in ("HX110", "HX111"):
        for case in sorted((FIXTURES / rule).glob("*.c")):
            if case.name.endswith(".fixed.c"):
                continue
            target = destination / "src" / f"{rule}-{case.name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(case, target)
            originals[target.name] = case.read_bytes()
    return originals


def expected_after_fix(name: str) -> bytes:
    rule, case = name.split("-", 1)
    twin = FIXTURES / rule / case.replace(".c", ".fixed.c")
    return twin.read_bytes() if twin.exists() else (FIXTURES / rule / case).read_bytes()


def test_lint_reports_and_modifies_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    originals = fixture_tree(tmp_path)
    stamps = {path.name: path.stat().st_mtime_ns for path in (tmp_path / "src").iterdir()}
    status, stdout, _ = run(*SELECT, "src")
    assert status == 1
    assert b"HX110" in stdout and b"HX111" in stdout
    for path in (tmp_path / "src").iterdir():
        assert path.read_bytes() == originals[path.name]
        assert path.stat().st_mtime_ns == stamps[path.name]


@pytest.mark.parametrize("tool", ["git", "patch"])
def test_diff_applies_and_equals_what_fix_writes(tool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    monkeypatch.chdir(tmp_path)
    originals = fixture_tree(tmp_path)
    status, diff, _ = run(*SELECT, "--diff", "src")
    assert status == 1 and diff.startswith(b"--- a/src/")
    # Nothing written by --diff.
    assert all(path.read_bytes() == originals[path.name] for path in (tmp_path / "src").iterdir())
    patch_file = tmp_path / "macros.patch"
    patch_file.write_bytes(diff)
    if tool == "git":
        subprocess.run(["git", "init", "-q", "."], check=True)
        command = ["git", "apply", "--whitespace=nowarn", str(patch_file)]
    else:
        command = ["patch", "-p1", "--batch", "--quiet", "-i", str(patch_file)]
    applied = subprocess.run(command, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr + applied.stdout
    for path in (tmp_path / "src").iterdir():
        assert path.read_bytes() == expected_after_fix(path.name), path.name


def test_fix_writes_the_fixed_twins_keeps_modes_and_leaves_clean_files_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    originals = fixture_tree(tmp_path)
    files = sorted((tmp_path / "src").iterdir())
    for index, path in enumerate(files):
        path.chmod(0o640 if index % 2 else 0o755)
        os.utime(path, ns=(10**9, 10**9))
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in files}
    status, _, stderr = run(*SELECT, "--fix", "src")
    assert "Fixed" in stderr
    # Left: only findings whose fix is unsafe (glued_token.c).
    assert status == 1
    for path in files:
        assert path.read_bytes() == expected_after_fix(path.name), path.name
        assert stat.S_IMODE(path.stat().st_mode) == modes[path.name]
        if expected_after_fix(path.name) == originals[path.name]:
            assert path.stat().st_mtime_ns == 10**9, f"{path.name} was rewritten without a change"
    assert sorted(p.name for p in (tmp_path / "src").iterdir()) == [p.name for p in files], "temp files left"
    # A second --fix changes nothing.
    stamps = {path.name: path.stat().st_mtime_ns for path in files}
    run(*SELECT, "--fix", "src")
    assert {path.name: path.stat().st_mtime_ns for path in files} == stamps


def test_non_utf8_and_crlf_survive_the_diff_through_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    original = b"// caf\xe9\r\n#define F(x) \\\r\n    /* \xff */ (x) +   \\\r\n    1\r\n"
    (tmp_path / "k.c").write_bytes(original)
    status, diff, _ = run(*SELECT, "--diff", "k.c")
    assert status == 1
    # The backslashes are in columns 14 and 21 (the byte 0xff counts one column); a tie goes to the larger column.
    assert diff == (
        b"--- a/k.c\n+++ b/k.c\n@@ -1,4 +1,4 @@\n // caf\xe9\r\n"
        b"-#define F(x) \\\r\n"
        b"+#define F(x)        \\\r\n"
        b"     /* \xff */ (x) +   \\\r\n     1\r\n"
    )


def test_unreadable_file_is_one_line_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, stderr = run(*SELECT, "missing.c")
    assert status == 2
    assert stderr.count("\n") == 1 and "missing.c" in stderr and "Traceback" not in stderr


def test_fix_matches_the_upstream_script_on_an_upstream_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`hexlint --fix` and the script's --fix write the same bytes on every file of an upstream ggml-hexagon tree."""
    script = os.environ.get("HEXLINT_UPSTREAM_ALIGN_SCRIPT")
    tree = os.environ.get("HEXLINT_UPSTREAM_TREE")
    if not script or not Path(script).is_file() or not tree or not Path(tree).is_dir():
        pytest.skip("set HEXLINT_UPSTREAM_ALIGN_SCRIPT and HEXLINT_UPSTREAM_TREE to compare with the upstream script")
    ours, theirs = tmp_path / "hexlint" / "ggml-hexagon", tmp_path / "script" / "ggml-hexagon"
    shutil.copytree(tree, ours)
    shutil.copytree(tree, theirs)
    monkeypatch.chdir(ours.parent)
    (ours.parent / "hexlint.toml").write_text('[rules.HX110]\nrealign = "whole-macro"\n')  # the script's way
    run(*SELECT, "--fix", "ggml-hexagon")
    subprocess.run(
        [sys.executable, script, "--fix", "-q", "ggml-hexagon"], cwd=theirs.parent, check=True, capture_output=True
    )
    compared = 0
    for path in sorted(theirs.rglob("*")):
        if path.is_file():
            assert (ours / path.relative_to(theirs)).read_bytes() == path.read_bytes(), path.relative_to(theirs)
            compared += 1
    assert compared > 0
