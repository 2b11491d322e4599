"""The facts behind HX114 and HX115: where fastdiv values flow, which workers write what, and the rules' options."""

from __future__ import annotations

import textwrap
from pathlib import Path

import c_projects

from hexlint.backend.fastdiv import fastdiv_inits
from hexlint.backend.model import model_of
from hexlint.backend.workers import workers
from hexlint.c.index import Project
from hexlint.checks import hx114_fastdiv_single_use, hx115_worker_shared_write
from hexlint.registry import find_rule

PRELUDE = """
#include <stdint.h>
struct fastdiv_values { uint32_t mp; uint32_t l; };
struct fastdiv_values init_fastdiv_values(uint32_t d);
uint32_t fastdiv(uint32_t n, const struct fastdiv_values * vals);
uint32_t fastmodulo(uint32_t n, uint32_t d, const struct fastdiv_values * vals);
typedef void (*worker_callback_t)(unsigned int n, unsigned int i, void * data);
void work_queue_run(void * queue, worker_callback_t func, void * data, unsigned int n);
void spin_lock(void * lock);
void spin_unlock(void * lock);
void consume(const struct fastdiv_values * d);
"""


def kernel_project(tmp_path: Path, body: str) -> Project:
    return c_projects.kernel_project(tmp_path, PRELUDE + textwrap.dedent(body))


def line_of(tmp_path: Path, needle: str) -> int:
    lines = (tmp_path / "htp" / "k.c").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if needle in line)


def inits_by_function(project: Project) -> dict[str, object]:
    return {init.function: init for init in fastdiv_inits(project, find_rule("HX114").options)}


def test_each_division_says_why_it_repeats(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        static uint32_t helper(uint32_t x, const struct fastdiv_values * d) { return fastdiv(x, d); }
        void in_loop(uint32_t * out, uint32_t n, uint32_t d) {
            struct fastdiv_values v = init_fastdiv_values(d);
            for (uint32_t i = 0; i < n; i++) { out[i] = fastdiv(i, &v); }
        }
        void helper_in_loop(uint32_t * out, uint32_t n, uint32_t d) {
            struct fastdiv_values v = init_fastdiv_values(d);
            for (uint32_t i = 0; i < n; i++) { out[i] = helper(i, &v); }
        }
        struct job { struct fastdiv_values div; uint32_t * dst; };
        static void job_worker(unsigned int n, unsigned int i, void * data) {
            struct job * j = data;
            j->dst[i] = fastdiv(i, &j->div);
        }
        void op_job(void * q, uint32_t * dst, uint32_t d, uint32_t n) {
            struct job j = { .div = init_fastdiv_values(d), .dst = dst };
            work_queue_run(q, job_worker, &j, n);
        }
        """,
    )
    inits = inits_by_function(project)
    assert [use.repeats.split(" at line")[0] for use in inits["in_loop"].divisions] == ["inside the loop"]
    assert [use.function for use in inits["helper_in_loop"].divisions] == ["helper"]
    assert inits["helper_in_loop"].divisions[0].repeats.startswith("inside the loop")
    assert inits["op_job"].divisions[0].function == "job_worker"
    assert "runs on every thread" in inits["op_job"].divisions[0].repeats
    assert not any(init.single_use for init in inits.values())


def test_a_value_that_leaves_is_an_escape_and_never_single_use(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        struct fastdiv_values returned(uint32_t d) { return init_fastdiv_values(d); }
        uint32_t handed_out(uint32_t x, uint32_t d) {
            struct fastdiv_values v = init_fastdiv_values(d);
            consume(&v);
            return fastdiv(x, &v);
        }
        uint32_t by_fields(uint32_t x, uint32_t d) {
            struct fastdiv_values v = init_fastdiv_values(d);
            return fastdiv(x, &v) + v.mp;
        }
        uint32_t once(uint32_t x, uint32_t d) {
            struct fastdiv_values v = init_fastdiv_values(d);
            return fastdiv(x, &v);
        }
        uint32_t modulo_once(uint32_t x, uint32_t d) {
            struct fastdiv_values v = init_fastdiv_values(d);
            return fastmodulo(x, d, &v);
        }
        """,
    )
    inits = inits_by_function(project)
    assert inits["returned"].escapes == ("returned by `returned`",)
    assert inits["handed_out"].escapes == ("passed to `consume`",)
    assert inits["by_fields"].escapes == ("read field by field",)
    assert [name for name, init in inits.items() if init.single_use] == ["once", "modulo_once"]
    findings = list(hx114_fastdiv_single_use.check(model_of(project), find_rule("HX114").options))
    once = line_of(tmp_path, "uint32_t once")
    assert [finding.span.line for finding in findings] == [once + 1, line_of(tmp_path, "uint32_t modulo_once") + 1]
    assert findings[0].related[0].span.line == once + 2
    assert "`d`" in findings[0].message and "divide with `/`" in findings[0].message
    assert "take `%`" in findings[1].message


def test_option_names_the_helpers(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        uint32_t once(uint32_t x, uint32_t d) {
            struct fastdiv_values v = init_fastdiv_values(d);
            return fastdiv(x, &v);
        }
        """,
    )
    options = {**find_rule("HX114").options, "fastdiv": "other_fastdiv", "fastmod": "other_fastmodulo"}
    # Under other names `fastdiv` is an unknown function: the value escapes into it and nothing is said.
    assert list(hx114_fastdiv_single_use.check(model_of(project), options)) == []


def test_worker_facts_context_struct_and_write_kinds(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        static uint32_t g_total;
        struct ctx_t { uint32_t sum; uint32_t part[8]; void * lock; uint32_t locked; uint32_t first; };
        static void worker(unsigned int n, unsigned int ith, void * data) {
            struct ctx_t * ctx = (struct ctx_t *) data;
            ctx->sum += ith;
            ctx->part[ith] = n;
            g_total++;
            spin_lock(ctx->lock);
            ctx->locked = 1;
            spin_unlock(ctx->lock);
            if (ith == 0) { ctx->first = 1; }
        }
        void op_x(void * q, struct ctx_t * c, uint32_t n) { work_queue_run(q, worker, c, n); }
        """,
    )
    (worker,) = workers(project, find_rule("HX115").options)
    assert (worker.name, worker.thread_index, worker.context, worker.context_struct) == (
        "worker",
        "ith",
        "data",
        "ctx_t",
    )
    assert worker.launches[0].launcher == "op_x" and worker.launches[0].count == "n"
    facts = [(write.target, write.kind, write.guard) for write in worker.writes]
    assert facts == [
        ("ctx->sum", "shared_field", ""),
        ("ctx->part[ith]", "per_thread", ""),
        ("g_total", "global", ""),
        ("ctx->locked", "shared_field", "lock"),
        ("ctx->first", "shared_field", "single_thread"),
    ]
    findings = list(hx115_worker_shared_write.check(model_of(project), find_rule("HX115").options))
    assert [finding.span.line for finding in findings] == [
        line_of(tmp_path, "ctx->sum += ith"),
        line_of(tmp_path, "g_total++"),
    ]
    # With no legal guards, the locked and the thread-0 writes are reported too.
    strict = {**find_rule("HX115").options, "legal_guards": []}
    assert len(list(hx115_worker_shared_write.check(model_of(project), strict))) == 4


def test_workers_named_by_other_runners_and_one_thread_launches(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        void my_pool_run(void * pool, worker_callback_t f, void * data, unsigned int n);
        struct ctx_t { uint32_t sum; };
        static void worker(unsigned int n, unsigned int ith, void * data) { ((struct ctx_t *) data)->sum = ith; }
        void op_x(void * q, struct ctx_t * c) { my_pool_run(q, worker, c, 1); }
        void op_y(void * q, struct ctx_t * c, unsigned int n) { my_pool_run(q, worker, c, n); }
        """,
    )
    options = find_rule("HX115").options
    assert workers(project, options) == []
    custom = {**options, "worker_runners": ["my_pool_run"]}
    (worker,) = workers(project, custom)
    assert [launch.count for launch in worker.launches] == ["1", "n"] and not worker.runs_on_one_thread
    assert len(list(hx115_worker_shared_write.check(model_of(project), custom))) == 1
