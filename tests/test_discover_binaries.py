"""A directory walk audits Hexagon objects only; a foreign ELF named explicitly is still an error."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from conftest import run_hexlint

from hexlint.discover import discover, is_hexagon_elf

ROOT = Path(__file__).resolve().parent.parent
CORE_LIBRARY = ROOT / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73.so"


def host_elf() -> Path:
    # The running interpreter is an ELF for the host machine, never for Hexagon.
    return Path(sys.executable).resolve()


def test_hexagon_elf_is_recognised_by_its_machine_field(tmp_path: Path) -> None:
    assert is_hexagon_elf(CORE_LIBRARY)
    assert not is_hexagon_elf(host_elf())
    (tmp_path / "short.so").write_bytes(b"\x7fELF\x01")
    assert not is_hexagon_elf(tmp_path / "short.so")


def test_walk_skips_host_libraries_but_keeps_hexagon_ones(tmp_path: Path) -> None:
    shutil.copy(CORE_LIBRARY, tmp_path / "libhtp.so")
    shutil.copy(host_elf(), tmp_path / "libhost.so")
    found = discover([tmp_path])
    assert [os.path.basename(path) for path in found.binaries] == ["libhtp.so"]


def test_foreign_elf_named_explicitly_is_a_one_line_error(tmp_path: Path) -> None:
    foreign = tmp_path / "libhost.so"
    shutil.copy(host_elf(), foreign)
    run = run_hexlint("--spills", str(foreign))
    assert run.status == 2
    assert str(foreign) in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
