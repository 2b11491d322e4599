"""The backend model: one object per project, its facts computed once and shared by every rule that asks."""

from __future__ import annotations

from pathlib import Path

from hexlint.backend import dispatch, names, trace
from hexlint.backend.model import BackendModel, model_of
from hexlint.c.index import Project, build_project
from hexlint.c.parse import ParseSettings, classify, parse_unit
from hexlint.checks import hx106_trace_missing
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
    path = tmp_path / "htp" / "k.c"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    unit = parse_unit(str(path), classify(str(path)), ParseSettings())
    return build_project([unit], [str(path)])


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
