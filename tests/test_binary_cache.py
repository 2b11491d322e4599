"""The binary audit's entries in the persistent cache: an unchanged library is not decoded again, and what a run
reports from the cache is byte for byte what it reports without one; a change to anything the result depends on (the
library, an option, a -g build beside it) is audited again."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_hexlint

import hexlint.binary.run as binary_run
from hexlint.engine import binary_namespace

ROOT = Path(__file__).resolve().parent.parent
CORE_LIB = ROOT / "fixtures" / "htp-core" / "lib"
LIBRARIES = sorted(
    str(path.relative_to(ROOT)) for path in [*CORE_LIB.glob("*.so"), *(ROOT / "fixtures" / "binary").glob("*.so")]
)


@pytest.fixture
def cache_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The cache turned back on (conftest turns it off), its seal key in a home of the test's own."""
    monkeypatch.delenv("HEXLINT_NO_CACHE", raising=False)
    monkeypatch.delenv("HEXLINT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    monkeypatch.chdir(ROOT)
    return str(tmp_path / "cache")


def _no_audit(*arguments: object, **keywords: object) -> object:
    raise AssertionError("a library was audited although the cache holds it")


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--spills", "--strict"],
        ["--spills", "-v"],
        ["--promotions", "--division", "--all"],
        ["--format", "json", "--spills", "-v"],
        ["--format", "json"],
    ],
    ids=lambda options: " ".join(options) or "default",
)
def test_a_warm_audit_reports_what_an_uncached_one_does_without_decoding(
    cache_on: str, options: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    uncached = run_hexlint("--no-cache", *options, *LIBRARIES)
    cold = run_hexlint("--cache-dir", cache_on, *options, *LIBRARIES)
    monkeypatch.setattr(binary_run, "library_result", _no_audit)
    warm = run_hexlint("--cache-dir", cache_on, "--jobs", "1", *options, *LIBRARIES)
    assert uncached.status == 1 and uncached.stdout
    assert (cold.status, cold.stdout, cold.stderr) == (uncached.status, uncached.stdout, uncached.stderr)
    assert (warm.status, warm.stdout, warm.stderr) == (uncached.status, uncached.stdout, uncached.stderr)


def test_a_library_whose_bytes_changed_is_audited_again(cache_on: str, tmp_path: Path) -> None:
    library = tmp_path / "lib.so"
    shutil.copyfile(ROOT / "fixtures" / "binary" / "vector_spill.so", library)
    first = run_hexlint("--cache-dir", cache_on, "--spills", str(library))
    shutil.copyfile(ROOT / "fixtures" / "binary" / "division.so", library)
    again = run_hexlint("--cache-dir", cache_on, "--spills", str(library))
    assert again.stdout != first.stdout
    assert again.stdout == run_hexlint("--no-cache", "--spills", str(library)).stdout


def test_an_option_that_changes_the_findings_is_part_of_the_key(cache_on: str) -> None:
    library = "fixtures/binary/vector_spill.so"
    strict = run_hexlint("--cache-dir", cache_on, "--spills", library)
    lenient = run_hexlint("--cache-dir", cache_on, "--spills", "--max-inloop-vspills", "1000", library)
    assert strict.status == 1 and lenient.status == 0
    assert lenient.stdout == run_hexlint("--no-cache", "--spills", "--max-inloop-vspills", "1000", library).stdout


def test_a_debug_build_appearing_beside_a_library_changes_its_note(cache_on: str, tmp_path: Path) -> None:
    library = tmp_path / "libhtp-core-v73.so"
    shutil.copyfile(CORE_LIB / "libhtp-core-v73.so", library)
    alone = run_hexlint("--cache-dir", cache_on, "--spills", str(library))
    shutil.copyfile(CORE_LIB / "libhtp-core-v73-g.so", tmp_path / "libhtp-core-v73-g.so")
    beside = run_hexlint("--cache-dir", cache_on, "--spills", str(library))
    assert "libhtp-core-v73-g.so has DWARF" in beside.stdout and beside.stdout != alone.stdout
    assert beside.stdout == run_hexlint("--no-cache", "--spills", str(library)).stdout


def test_corrupted_entries_are_audited_again(cache_on: str) -> None:
    expected = run_hexlint("--no-cache", "--spills", *LIBRARIES)
    run_hexlint("--cache-dir", cache_on, "--spills", *LIBRARIES)
    entries = sorted(Path(cache_on).rglob("*.json"))
    assert len(entries) == len(LIBRARIES)
    for number, entry in enumerate(entries):
        text = entry.read_bytes()
        entry.write_bytes(text[: len(text) // 2] if number % 2 else text.replace(b"HX201", b"HX999"))
    again = run_hexlint("--cache-dir", cache_on, "--spills", *LIBRARIES)
    assert (again.status, again.stdout) == (expected.status, expected.stdout)


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_counts_every_library_as_it_is_done(cache_on: str, jobs: int) -> None:
    events: list[tuple[str, int, int]] = []

    def progress(event: str, done: int, total: int) -> None:
        events.append((event, done, total))

    arguments = binary_namespace(None)
    total = len(LIBRARIES)
    expected = [("audited", done, total) for done in range(1, total + 1)]
    for cache_dir in (None, cache_on, cache_on):  # uncached, cold, warm
        events.clear()
        binary_run.audit_paths(LIBRARIES, arguments, {}, jobs=jobs, cache_dir=cache_dir, progress=progress)
        assert events == expected


def test_a_warm_run_reads_no_elf_and_loads_no_decoder(tmp_path: Path) -> None:
    """The cache's answer costs start-up and the key: no pyelftools, no decoder, no audit modules."""
    code = (
        "import io, json, sys; from hexlint.cli import main; "
        f"options = ['--cache-dir', {str(tmp_path / 'cache')!r}, '--jobs', '1', '--spills']; "
        "status = main([*options, *sys.argv[1:]], stdout=io.StringIO()); "
        "print(json.dumps({'status': status, 'modules': sorted(sys.modules)}))"
    )
    environment = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", ""), "XDG_CACHE_HOME": str(tmp_path)}

    def run() -> dict:
        command = [sys.executable, "-c", code, *LIBRARIES]
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True, env=environment)
        return json.loads(result.stdout.strip().splitlines()[-1])

    cold, warm = run(), run()
    assert cold["status"] == warm["status"] == 1
    assert {"elftools", "hexlint.hexagon.decode", "hexlint.binary.audit"} <= set(cold["modules"])
    heavy = ("elftools", "hexlint.elf", "hexlint.hexagon", "hexlint.binary.audit", "hexlint.checks.hx2")
    assert not [name for name in warm["modules"] if name.startswith(heavy)]


def test_an_audit_of_a_library_without_dwarf_never_imports_pyelftools(tmp_path: Path) -> None:
    """Its ELF is read with struct alone (elf/reader.py, _read_plain): pyelftools' import is ~10% of a cold run."""
    code = (
        "import io, json, sys; from hexlint.cli import main; "
        "status = main(['--no-cache', '--jobs', '1', '--spills', sys.argv[1]], stdout=io.StringIO()); "
        "print(json.dumps({'status': status, 'modules': sorted(sys.modules)}))"
    )
    environment = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", ""), "XDG_CACHE_HOME": str(tmp_path)}
    command = [sys.executable, "-c", code, str(CORE_LIB / "libhtp-core-v73.so")]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True, env=environment)
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded["status"] in (0, 1) and "hexlint.binary.audit" in loaded["modules"]
    assert not [name for name in loaded["modules"] if name.startswith("elftools")]
