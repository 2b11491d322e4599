"""Facts the source rules share live on the Project / UnitIndex, so a finished run frees its translation units."""

from __future__ import annotations

import gc
import shutil
import weakref
from pathlib import Path

import pytest

from hexlint.c import index
from hexlint.config import Config
from hexlint.engine import RunSettings, lint

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"
SOURCE_RULES = ("HX101", "HX102", "HX103", "HX104", "HX105", "HX106", "HX107", "HX108")


def copy_kernel_tree(tmp_path: Path) -> Path:
    """A tree where every kernel-params, trace and division fixture is a kernel file and HX105's are host code."""
    kernels = tmp_path / "htp"
    kernels.mkdir()
    for code in ("HX101", "HX102", "HX103", "HX106", "HX107", "HX108"):
        for source in sorted((FIXTURES / code).glob("*.c")):
            shutil.copy(source, kernels / f"{code}_{source.name}")
    for source in sorted((FIXTURES / "HX105").glob("*.cpp")):
        shutil.copy(source, tmp_path / source.name)
    return tmp_path


def test_a_finished_run_keeps_no_translation_unit_alive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_kernel_tree(tmp_path)
    projects: list[weakref.ref[index.Project]] = []
    translation_units: list[weakref.ref[object]] = []
    build = index.build_project

    def recording_build(*args: object, **kwargs: object) -> index.Project:
        project = build(*args, **kwargs)  # type: ignore[arg-type]
        projects.append(weakref.ref(project))
        translation_units.extend(
            weakref.ref(unit.unit.translation_unit) for unit in project.units if unit.unit.translation_unit
        )
        return project

    monkeypatch.setattr(index, "build_project", recording_build)
    result = lint([str(root)], Config(), RunSettings(select=SOURCE_RULES, jobs=1))
    assert {diagnostic.code for diagnostic in result.diagnostics} >= {"HX103", "HX107", "HX108"}
    assert projects and translation_units
    del result
    gc.collect()
    assert [ref for ref in projects if ref() is not None] == []
    assert [ref for ref in translation_units if ref() is not None] == []


def test_memoized_computes_once_per_key() -> None:
    memo: dict = {}
    calls: list[str] = []
    assert index.memoized(memo, "k", lambda: calls.append("k") or 1) == 1
    assert index.memoized(memo, "k", lambda: calls.append("again") or 2) == 1
    assert calls == ["k"]
