"""Where binary findings' source lines come from: --debug-file, the -g build beside a stripped library, and
--source-prefix-map for the build machine's DWARF paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_hexlint

from hexlint.binary.audit import audit_image
from hexlint.binary.sources import map_prefix
from hexlint.elf import load_elf

ROOT = Path(__file__).resolve().parent.parent
TWIN = ROOT / "fixtures" / "binary" / "vector_spill.so"
CORE_LIB = ROOT / "fixtures" / "htp-core" / "lib"
TAIL = os.path.join("fixtures", "binary", "vector_spill.c")


def stripped_copy(directory: Path, name: str = "libtwin.so") -> Path:
    """The twin without its DWARF: the same code, its .debug_* sections renamed out of sight (what strip -g leaves)."""
    library = directory / name
    library.write_bytes(TWIN.read_bytes().replace(b".debug_", b".nodbg_"))
    return library


def finding_lines(output: str) -> list[str]:
    return [line.split(": ", 1)[1] for line in output.splitlines() if ": HX" in line]


def test_a_debug_file_with_the_same_code_gives_the_stripped_build_its_source_lines(tmp_path: Path) -> None:
    stripped = stripped_copy(tmp_path)
    bare = run_hexlint(str(stripped))
    assert "vector_spill.c:" not in bare.stdout and "no DWARF line information" in bare.stdout
    lent = run_hexlint("--debug-file", str(TWIN), str(stripped))
    assert lent.status == 1 and "DWARF line information from" in lent.stdout
    assert finding_lines(lent.stdout) == finding_lines(run_hexlint(str(TWIN)).stdout)  # the -g build's own lines


def test_a_stripped_library_names_the_g_build_beside_it(tmp_path: Path) -> None:
    stripped = stripped_copy(tmp_path)
    (tmp_path / "libtwin-g.so").write_bytes(TWIN.read_bytes())
    run = run_hexlint("--spills", str(stripped))
    assert "libtwin-g.so has it for the same code: --debug-file " in run.stdout


def test_a_g_build_of_other_code_is_not_lent_and_the_note_says_so() -> None:
    stripped, g_build = CORE_LIB / "libhtp-core-v73.so", CORE_LIB / "libhtp-core-v73-g.so"  # -g moved some code
    beside = run_hexlint("--spills", str(stripped))
    assert g_build.name in beside.stdout and "other code" in beside.stdout and "--debug-file" not in beside.stdout
    given = run_hexlint("--spills", "--debug-file", str(g_build), str(stripped))
    assert "differs from this build's" in given.stdout and "DWARF line information from" not in given.stdout


def test_a_debug_file_without_dwarf_is_a_one_line_error(tmp_path: Path) -> None:
    run = run_hexlint("--debug-file", str(CORE_LIB / "libhtp-core-v75.so"), str(stripped_copy(tmp_path)))
    assert run.status == 2 and "no DWARF" in run.stderr and run.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("path", "pairs", "mapped"),
    [
        ("/build/ci/ggml/htp/a.c", [("/build/ci", "/src")], "/src/ggml/htp/a.c"),
        ("/build/ci/ggml/htp/a.c", [("/build/ci/", "")], "ggml/htp/a.c"),
        ("/build/ci/ggml/htp/a.c", [("/build/ci", ".")], "ggml/htp/a.c"),
        ("/build/cix/a.c", [("/build/ci", "/src")], "/build/cix/a.c"),  # whole components only
        ("/build/ci/a.c", [("/build", "/one"), ("/build/ci", "/two")], "/two/a.c"),  # the last match wins
        ("/build/ci/a.c", [("/build/ci", "/two"), ("/build", "/one")], "/one/ci/a.c"),
        ("htp/a.c", [("/build", "/one")], "htp/a.c"),
    ],
)
def test_prefix_map_replaces_the_last_matching_prefix(path: str, pairs: list, mapped: str) -> None:
    assert map_prefix(path, pairs) == mapped


def dwarf_prefix() -> str:
    """The build directory the twin's DWARF names (the machine that built it), from the audit itself."""
    audit = audit_image(load_elf(TWIN))
    function = audit.function("spill_kernel")
    assert function is not None
    location = audit.locate(function.spills(vector=True, in_loop=True)[0].address)
    assert location is not None and location.file.endswith(TAIL)
    return location.file[: -len(TAIL)].rstrip("/")


def test_source_prefix_map_makes_dwarf_paths_repo_relative(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    old = dwarf_prefix()
    for new in (str(ROOT), "."):
        run = run_hexlint("--format", "github", "--source-prefix-map", f"{old}={new}", str(TWIN))
        assert run.stdout.count(f"file={TAIL},line=") == 2, run.stdout
    document = json.loads(
        run_hexlint(
            "--format", "json", "--source-prefix-map", f"{old}=/nowhere", "--source-prefix-map", f"{old}=.", str(TWIN)
        ).stdout
    )
    assert {diagnostic["source"]["path"] for diagnostic in document["diagnostics"]} == {TAIL}
    with_table = run_hexlint("--spills", "-v", "--source-prefix-map", f"{old}=.", "--func", "^spill_kernel$", str(TWIN))
    assert f"  {TAIL}:" in with_table.stdout  # the per-loop rows too


def test_paths_of_another_machine_get_the_prefix_map_to_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    elsewhere = "/nonexistent-build-machine/ggml"
    run = run_hexlint("--source-prefix-map", f"{dwarf_prefix()}={elsewhere}", str(TWIN))
    assert f"--source-prefix-map {elsewhere}=. maps them onto this tree" in run.stdout
    assert "maps them onto" not in run_hexlint("--source-prefix-map", f"{dwarf_prefix()}=.", str(TWIN)).stdout


def test_a_prefix_map_without_an_equals_sign_is_a_usage_error() -> None:
    run = run_hexlint("--source-prefix-map", "/build", str(TWIN))
    assert run.status == 2 and "OLD=NEW" in run.stderr
