"""Units are parsed on threads and each is indexed as soon as it arrives, in the order a whole run indexes them."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from hexlint.c import index
from hexlint.c.parse import deep_stack_results
from hexlint.config import Config
from hexlint.engine import RunSettings, lint


def test_each_result_is_handed_over_before_the_later_items_are_done() -> None:
    first_taken = threading.Event()

    def work(item: str) -> str:
        if item == "b":
            # Were results handed over only when every item is done, this would wait in vain.
            assert first_taken.wait(5), "b ran to the end before a was handed over"
        return item.upper()

    results = deep_stack_results(work, ["a", "b"], 1)
    assert next(results) == "A"
    first_taken.set()
    assert list(results) == ["B"]


def test_an_error_is_raised_when_its_items_turn_comes() -> None:
    def work(item: str) -> str:
        if item == "bad":
            raise ValueError(item)
        return item

    results = deep_stack_results(work, ["ok", "bad", "later"], 2)
    assert next(results) == "ok"
    with pytest.raises(ValueError, match="bad"):
        next(results)


def owner_of_shared_header(tree: Path, run: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    """The file whose unit indexes htp/shared.h in a run of `run` (the rest of the tree as context)."""
    projects: list[index.Project] = []
    build = index.ProjectBuilder.project

    def recording(builder: index.ProjectBuilder) -> index.Project:
        projects.append(build(builder))
        return projects[-1]

    monkeypatch.setattr(index.ProjectBuilder, "project", recording)
    monkeypatch.chdir(tree)
    lint(run, Config(), RunSettings(select=("HX101", "HX106"), context="tree", jobs=1))
    shared = str((tree / "htp" / "shared.h").resolve())
    (owner,) = [Path(unit.path).name for unit in projects[-1].units if shared in unit.indexed_files]
    return owner


def test_a_lone_header_of_the_run_indexes_what_it_includes_before_the_context_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    htp = tmp_path / "htp"
    htp.mkdir()
    (htp / "shared.h").write_text("static inline int twice(int x) { return 2 * x; }\n")
    (htp / "lone.h").write_text('#include "shared.h"\nstatic inline int four(int x) { return twice(twice(x)); }\n')
    (htp / "user-ops.c").write_text('#include "shared.h"\nint op_user(int x) { return twice(x); }\n')
    # The whole tree: translation units first, so the kernel file owns the header both include.
    assert owner_of_shared_header(tmp_path, ["htp"], monkeypatch) == "user-ops.c"
    # The lone header alone: it comes before the context, though the context's unit was parsed (and walked) first.
    assert owner_of_shared_header(tmp_path, ["htp/lone.h"], monkeypatch) == "lone.h"


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"


def test_facts_prepared_while_parsing_give_the_findings_computed_on_demand(monkeypatch: pytest.MonkeyPatch) -> None:
    from hexlint import checks
    from hexlint.backend import model

    prepared: list[str] = []
    prepare = model.prepare_unit
    preparer = checks.unit_preparer

    def recording(unit: index.UnitIndex) -> None:
        prepared.append(unit.role)
        prepare(unit)

    def recording_hook(code: str):  # a rule's own facts (HX113's flows), recorded as they are prepared
        hook = preparer(code)
        if hook is None:
            return None

        def prepare_for_rule(unit: index.UnitIndex, options: object) -> None:
            prepared.append(code)
            hook(unit, options)

        return prepare_for_rule

    codes = ("HX108", "HX113", "HX114", "HX123", "HX124")
    paths = [str(FIXTURES / code) for code in codes]
    # kernel_globs: the single-file cases are kernel code, as the fixture tests lint them
    settings = RunSettings(select=codes, kernel_globs=("*.c",), jobs=1)
    monkeypatch.setattr(model, "prepare_unit", recording)
    monkeypatch.setattr(checks, "unit_preparer", recording_hook)
    ahead = lint(paths, Config(), settings).diagnostics
    # the facts were computed ahead, so the comparison below compares something
    assert "kernel" in prepared and "HX113" in prepared
    monkeypatch.setattr(model, "prepare_unit", lambda unit: None)
    monkeypatch.setattr(checks, "unit_preparer", lambda code: None)
    on_demand = lint(paths, Config(), settings).diagnostics
    assert ahead == on_demand
    assert len(ahead) > 15
