"""The backend model: one object per project, its facts computed once and shared by every rule that asks."""

from __future__ import annotations

import gc
import shutil
import weakref
from pathlib import Path

import c_projects
import pytest

from hexlint.backend import dispatch, names, trace
from hexlint.backend.loops import assignment_count, written_in
from hexlint.backend.model import BackendModel, model_of
from hexlint.c import index
from hexlint.c.index import Project
from hexlint.checks import hx106_trace_missing
from hexlint.config import Config
from hexlint.engine import RunSettings, lint
from hexlint.registry import find_rule

KERNEL = """
#include <stdint.h>
struct htp_ops_context { uint32_t n_threads; };
typedef void (*worker_fn)(unsigned int n, unsigned int i, void * data);
void work_queue_run(void * queue, worker_fn fn, void * data, uint32_t n);
void * the_queue;
static void add_worker(unsigned int n, unsigned int i, void * data) {
    for (unsigned int r = i; r < 64; r += n) { }
}
static int op_add(struct htp_ops_context * octx) {
    work_queue_run(the_queue, add_worker, octx, octx->n_threads);
    return 0;
}
int execute_op(struct htp_ops_context * octx, int opcode) {
    switch (opcode) {
    case 1: return op_add(octx);
    }
    return 1;
}
"""


def project_of(tmp_path: Path, text: str) -> Project:
    return c_projects.kernel_project(tmp_path, text)


def test_one_model_per_project_and_each_fact_computed_once(tmp_path: Path) -> None:
    project = project_of(tmp_path, KERNEL)
    model = model_of(project)
    assert model_of(project) is model
    assert model_of(Project(list(project.units))) is not model
    settings = trace.settings_from(find_rule("HX106").options)
    assert model.entry_points(settings) is model.entry_points(settings)
    assert model.call_graph() is model.call_graph()
    unit = project.units[0]
    assert model.loops(unit) is model.loops(unit)


def test_entry_points_know_the_workers_they_hand_to_the_pool(tmp_path: Path) -> None:
    model = BackendModel(project_of(tmp_path, KERNEL))
    entries = model.entry_points(trace.settings_from(find_rule("HX106").options))
    assert [(entry.name, entry.workers) for entry in entries] == [("op_add", ("add_worker",))]
    assert model.reachable("execute_op") >= {"execute_op", "op_add", "add_worker"}
    unit = model.kernel_units()[0]
    (loop,) = model.loops(unit)
    assert unit.enclosing_function(loop.loop).spelling == "add_worker"


def test_rules_share_the_backend_helpers() -> None:
    assert trace.reachable is dispatch.reachable
    assert trace.matches_any is names.matches_any
    assert hx106_trace_missing.matches_any is names.matches_any


def test_reachable_follows_cycles_and_includes_the_start() -> None:
    graph = {"entry": {"a", "b"}, "a": {"c"}, "c": {"a", "entry"}, "unrelated": {"entry"}}
    assert dispatch.reachable(graph, "entry") == {"entry", "a", "b", "c"}
    assert dispatch.reachable(graph, "leaf") == {"leaf"}


def test_matches_any_is_a_case_sensitive_glob() -> None:
    assert names.matches_any("htp_op_matmul", ("htp_op_*",))
    assert not names.matches_any("HTP_OP_MATMUL", ("htp_op_*",))
    assert not names.matches_any("anything", ())


def test_nodes_named_finds_names_written_and_pasted_and_skips_units_that_never_write_them(tmp_path: Path) -> None:
    project = c_projects.project_of(
        tmp_path,
        {
            "htp/ops.h": """
                #define CALL_OP(op, x) hvx_##op##_f32(x)
                static inline int hvx_add_f32(int x) { return x + 1; }
                static inline int hvx_mul_f32(int x) { return x * 2; }
            """,
            "htp/a.c": """
                #include "ops.h"
                int a(int x) { return CALL_OP(add, x) + hvx_mul_f32(x); }
            """,
            "htp/b.c": """
                int b(int x) { return x; }
            """,
            "htp/d.c": """
                #include "ops.h"
                int d(int x) { return CALL_OP(mul, x); }
            """,
        },
    )
    unit_a, unit_b, unit_d = project.units  # ops.h is indexed with a.c, the first unit to include it
    assert [call.spelling for call in names.nodes_named(project, unit_a, "CALL_EXPR", "hvx_add_f32")] == ["hvx_add_f32"]
    assert len(names.nodes_named(project, unit_a, "CALL_EXPR", "hvx_mul_f32")) == 1
    # d.c never writes `hvx_mul_f32`: its call is pasted from `hvx_`, the argument `mul` and `_f32`.
    assert [call.spelling for call in names.nodes_named(project, unit_d, "CALL_EXPR", "hvx_mul_f32")] == ["hvx_mul_f32"]
    assert not names.may_spell(project, unit_b, "hvx_sub_f32")  # no `sub` anywhere
    assert names.nodes_named(project, unit_b, "CALL_EXPR", "hvx_mul_f32") == []
    assert ("names.by_spelling", "CALL_EXPR") not in unit_b.memo  # its calls' spellings were never read


# Facts the source rules share live on the Project / UnitIndex, so a finished run


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
    build = index.ProjectBuilder.project

    def recording_build(builder: index.ProjectBuilder, hosts_pending: bool = False) -> index.Project:
        project = build(builder, hosts_pending)
        projects.append(weakref.ref(project))
        units = project.kernel_units() if hosts_pending else project.units
        translation_units.extend(
            weakref.ref(unit.unit.translation_unit) for unit in units if unit.unit.translation_unit
        )
        return project

    monkeypatch.setattr(index.ProjectBuilder, "project", recording_build)
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


# The textual "is it written in the loop" helpers: binary `&`/`&&` and member stor


@pytest.mark.parametrize(
    "text",
    [
        b"s += x[i] / d; s ^= (i & d);",
        b"s ^= i&d;",
        b"s ^= x[i] & d;",
        b"s ^= (i) & d;",
        b"i < n && d;",
        b"i < n &&d;",
        b"p->d = i;",
        b"q.d = i;",
        b"p->d++;",
        b"++p->d;",
        b"dd = 1; d_max = 2; if (d == 3) {}",
    ],
)
def test_lookalikes_are_not_writes(text: bytes) -> None:
    assert not written_in(text, "d")


@pytest.mark.parametrize(
    "text",
    [
        b"d = i;",
        b"d += 2;",
        b"d <<= 1;",
        b"d++;",
        b"--d;",
        b"f(&d);",
        b"f(x, & d);",
        b"int *q = &d;",
        b"return &d;",
        b"s += (d = 3);",
    ],
)
def test_real_writes_are_writes(text: bytes) -> None:
    assert written_in(text, "d")


def test_assignment_count_skips_members_comparisons_and_compound_assignment() -> None:
    text = b"int *p = a; p = b; ctx->p = c; s.p = d; if (p == e) {} p += 1; pp = f;"
    assert assignment_count(text, "p") == 2
