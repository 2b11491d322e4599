"""The rules that read kernel units alone run while the host units parse: a run finds what it would find with every
rule run on the whole project, and a rule that asks for the host units early runs again on the whole project."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hexlint import engine
from hexlint.c.index import HostUnitsPending, Project
from hexlint.config import Config
from hexlint.core import Rule, RuleDoc, Severity
from hexlint.engine import RunSettings, lint

DOC = RuleDoc(what="", why="", example="", use_instead="")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"
# Host and kernel code: the kernel_params rules' cases, and those of rules that read kernel code alone.
# The single-file cases are kernel code, as the fixture tests lint them.
KERNEL_CASES = ("*.c",)
MIXED = [str(FIXTURES / code) for code in ("HX101", "HX104", "HX108", "HX109", "HX113", "HX114", "HX115", "HX124")]


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def findings(paths: list[str], kernel_globs: tuple[str, ...] = ()) -> list[tuple[str, str, int, str]]:
    run = lint(paths, Config(), RunSettings(jobs=1, kernel_globs=kernel_globs))
    return [(item.code, item.span.path, item.span.line, item.message) for item in run.diagnostics]


class EarlySpy:
    """Records what each early phase ran, and whether its findings were kept."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, enabled: bool = True) -> None:
        self.ran: list[set[str]] = []
        self.kept: list[bool] = []
        run, holds = engine._EarlyRules.run, engine._EarlyRules.holds

        def spy_run(early: engine._EarlyRules, *arguments: object) -> None:
            if enabled:
                run(early, *arguments)
            self.ran.append(set(early.findings))

        def spy_holds(early: engine._EarlyRules, indexes: object) -> bool:
            self.kept.append(holds(early, indexes))
            return self.kept[-1]

        monkeypatch.setattr(engine._EarlyRules, "run", spy_run)
        monkeypatch.setattr(engine._EarlyRules, "holds", spy_holds)


def test_a_project_whose_hosts_still_parse_gives_its_kernel_units_and_refuses_the_rest() -> None:
    project = Project([], hosts_pending=True)
    assert project.kernel_units() == []
    with pytest.raises(HostUnitsPending):
        _ = project.units
    with pytest.raises(HostUnitsPending):
        project.host_units()
    project.complete([])
    assert project.units == [] and project.host_units() == []
    # Not an Exception: a rule's own `except Exception` does not take it for a failure of its own.
    assert not issubclass(HostUnitsPending, Exception)


def test_kernel_rules_run_while_hosts_parse_and_find_what_whole_project_rules_find(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with monkeypatch.context() as patch:
        EarlySpy(patch, enabled=False)
        whole = findings(MIXED, KERNEL_CASES)
    spy = EarlySpy(monkeypatch)
    assert findings(MIXED, KERNEL_CASES) == whole
    assert {"HX101", "HX104", "HX108", "HX109", "HX113", "HX114", "HX115", "HX124"} <= {code for code, *_ in whole}
    (ran,) = spy.ran
    assert spy.kept == [True]
    # The kernel-pipeline rules ran early; the kernel_params rules read the host's writes and could not.
    assert {"HX109", "HX113", "HX114", "HX115"} <= ran
    assert not ran & {"HX101", "HX102", "HX103", "HX105"}


def test_a_rule_that_asks_for_host_units_early_leaves_no_fact_behind(tmp_path: Path) -> None:
    from hexlint.c.index import build_project, memoized
    from hexlint.c.parse import ParseSettings, parse_unit

    write(tmp_path, {"htp/k.c": "int k(void) { return 1; }\n"})
    unit = parse_unit(str(tmp_path / "htp/k.c"), "kernel", ParseSettings())
    project = build_project([unit])
    project.hosts_pending = True

    def kernel_only(model: object, _options: object) -> list[object]:
        memoized(project.memo, "kernel fact", lambda: 1)
        return []

    def asks_for_hosts(model: object, _options: object) -> list[object]:
        memoized(project.memo, "half fact", lambda: 2)
        memoized(project.kernel_units()[0].memo, "unit fact", lambda: 3)
        return [unit.path for unit in project.host_units()]

    early = engine._EarlyRules(project, project, ())
    rules = [
        Rule("HX901", "kernel-only", Severity.WARNING, "source", "", docs=lambda: DOC, check=kernel_only),
        Rule("HX902", "asks-for-hosts", Severity.WARNING, "source", "", docs=lambda: DOC, check=asks_for_hosts),
    ]
    early.run(rules, {"HX901": {}, "HX902": {}})
    assert set(early.findings) == {"HX901"}
    assert "kernel fact" in project.memo and "half fact" not in project.memo
    assert "unit fact" not in project.kernel_units()[0].memo


def test_a_lone_kernel_header_after_the_units_sends_every_rule_to_the_whole_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A header no unit includes is parsed after the units: a kernel unit then comes after the early rules.
    write(
        tmp_path,
        {
            "htp/k.c": "int k(int n, int d) { int s = 0; for (int i = 0; i < n; i++) { s += i / d; } return s; }\n",
            "htp/lone.h": "static inline int lone(int n, int d) { int s = 0; while (n--) { s += n / d; } return s; }\n",
            "host/h.cpp": "int host_side(void) { return 0; }\n",
        },
    )
    spy = EarlySpy(monkeypatch)
    found = findings([str(tmp_path)])
    assert spy.kept == [False] and spy.ran and "HX108" in spy.ran[0]
    assert sorted((code, Path(path).name) for code, path, *_ in found if code == "HX108") == [
        ("HX108", "k.c"),
        ("HX108", "lone.h"),
    ]


def test_a_header_both_roles_include_is_indexed_in_the_kernel_unit(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "htp/ops.h": "static inline int shared(int n, int d) { int s = 0; while (n--) s += n / d; return s; }\n",
            "htp/k.c": '#include "ops.h"\nint k(void) { return shared(4, 2); }\n',
            "a-host.cpp": '#include "htp/ops.h"\nint host_side(void) { return shared(4, 2); }\n',
        },
    )
    # The host file sorts first, yet the header is kernel code: kernel rules (HX108) see it in the kernel unit.
    found = findings([str(tmp_path)])
    assert [(code, Path(path).name) for code, path, *_ in found if code == "HX108"] == [("HX108", "ops.h")]


PARTIAL_TREE = {
    "htp/ops.h": "static inline int shared(int n, int d) { int s = 0; while (n--) s += n / d; return s; }\n",
    "htp/k.c": '#include "ops.h"\nint k(int n, int d) { int s = 0; for (int i = 0; i < n; i++) s += i / d; return s; }',
    "htp/other.c": '#include "ops.h"\nint other(void) { return shared(4, 2); }\n',
    "host/h.cpp": '#include "../htp/ops.h"\nint host_side(int n, int d) { return shared(n, d); }\n',
    "host/z.cpp": "int more_host(void) { return 0; }\n",
}


def test_a_run_of_kernel_files_runs_its_rules_early_with_the_tree_as_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, PARTIAL_TREE)
    monkeypatch.chdir(tmp_path)
    with monkeypatch.context() as patch:
        EarlySpy(patch, enabled=False)
        whole = findings(["htp/k.c", "htp/ops.h"])
    spy = EarlySpy(monkeypatch)
    assert findings(["htp/k.c", "htp/ops.h"]) == whole
    assert sorted(Path(path).name for code, path, *_ in whole if code == "HX108") == ["k.c", "ops.h"]
    assert spy.kept == [True] and "HX108" in spy.ran[0]


def test_a_run_of_a_host_file_before_kernel_context_runs_every_rule_on_the_whole_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run's host unit comes before the context's kernel units: it owns what it includes, kernel code among it.
    write(tmp_path, PARTIAL_TREE)
    monkeypatch.chdir(tmp_path)
    spy = EarlySpy(monkeypatch)
    findings(["host/h.cpp"])
    assert spy.ran == []
