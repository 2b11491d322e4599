"""Focused tests of the trace facts behind HX106 (coverage) and HX107 (balance along every path)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import c_projects
import pytest

from hexlint.backend import trace as _trace
from hexlint.backend.model import model_of
from hexlint.c.index import Project, build_project
from hexlint.c.parse import ParseSettings, classify, parse_unit
from hexlint.checks import hx106_trace_missing, hx107_trace_unbalanced
from hexlint.registry import find_rule

PRELUDE = """
#include <stdint.h>
enum { HTP_TRACE_EVT_DMA = 0, HTP_TRACE_EVT_INIT = 2, HTP_TRACE_EVT_HVX_COMP = 20 };
struct htp_thread_trace;
void htp_trace_event_start(struct htp_thread_trace * tr, uint16_t id, uint16_t info);
void htp_trace_event_stop(struct htp_thread_trace * tr, uint16_t id, uint16_t info);
typedef void (*worker_callback_t)(unsigned int n, unsigned int i, void * data);
void worker_pool_run_func(void * pool, worker_callback_t func, void * data, unsigned int n);
"""


def kernel_project(tmp_path: Path, body: str) -> Project:
    return c_projects.kernel_project(tmp_path, PRELUDE + textwrap.dedent(body))


def line_of(tmp_path: Path, needle: str) -> int:
    lines = (tmp_path / "htp" / "k.c").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if needle in line)


def unbalanced(project: Project, options: dict | None = None) -> list[tuple[int, str]]:
    findings = hx107_trace_unbalanced.check(
        model_of(project), find_rule("HX107").options if options is None else options
    )
    return sorted((finding.span.line, finding.message.split(" ")[0]) for finding in findings)


def test_goto_ends_a_path_without_a_verdict_and_do_while_runs_its_body(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        int with_goto(struct htp_thread_trace * tr, int bad) {
            htp_trace_event_start(tr, HTP_TRACE_EVT_INIT, 0);
            if (bad) {
                goto out;
            }
            htp_trace_event_stop(tr, HTP_TRACE_EVT_INIT, 0);
            return 0;
        out:
            return -1;
        }
        void with_do(struct htp_thread_trace * tr, int n) {
            do {
                htp_trace_event_start(tr, HTP_TRACE_EVT_HVX_COMP, 0);
                n--;
                htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, 0);
            } while (n > 0);
        }
        """,
    )
    assert unbalanced(project) == []


def test_switch_fall_through_and_a_missing_default_are_paths(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        void by_mode(struct htp_thread_trace * tr, int mode) {
            htp_trace_event_start(tr, HTP_TRACE_EVT_HVX_COMP, 0);
            switch (mode) {
                case 0:
                    htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, 0);
                    break;
                case 1:
                    htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, 0);
                    return;
            }
        }
        """,
    )
    # Without a default, the path that skips every case leaves the event open.
    assert unbalanced(project) == [(line_of(tmp_path, "htp_trace_event_start(tr, HTP_TRACE_EVT_HVX"), "Trace")]


def test_a_stop_that_some_path_matches_is_not_reported_as_unopened(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        void conditional(struct htp_thread_trace * tr, int on) {
            if (on) {
                htp_trace_event_start(tr, HTP_TRACE_EVT_HVX_COMP, 0);
            }
            htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, 0);
        }
        """,
    )
    assert unbalanced(project) == []


def test_split_pairs_are_configuration(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        void ring_push(struct htp_thread_trace * tr) { htp_trace_event_start(tr, HTP_TRACE_EVT_DMA, 0); }
        void ring_pop(struct htp_thread_trace * tr) { htp_trace_event_stop(tr, HTP_TRACE_EVT_DMA, 0); }
        """,
    )
    options = dict(find_rule("HX107").options)
    assert len(unbalanced(project, options)) == 2
    options["split_pairs"] = [{"start": "ring_push", "stop": "ring_pop", "event": "HTP_TRACE_EVT_DMA"}]
    assert unbalanced(project, options) == []
    options["split_pairs"] = [{"start": "ring_push", "stop": "ring_pop", "event": "HTP_TRACE_EVT_HVX_*"}]
    assert len(unbalanced(project, options)) == 2


def test_trace_function_names_are_configuration(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        void my_begin(int id);
        void my_end(int id);
        void work(int n) {
            my_begin(7);
            if (n < 0) {
                return;
            }
            my_end(7);
        }
        """,
    )
    assert unbalanced(project) == []
    options = {"start_functions": ["my_begin"], "stop_functions": ["my_end"], "event_argument": 0}
    findings = list(hx107_trace_unbalanced.check(model_of(project), options))
    assert [finding.span.line for finding in findings] == [line_of(tmp_path, "my_begin(7)")]
    assert "the return at line" in findings[0].message
    assert findings[0].related[0].span.line == line_of(tmp_path, "return;")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"f(a, g(b, c), d[1, 2]);", ["a", "g(b, c)", "d[1, 2]"]),
        (b"f();", [""]),
        (b"f(x, (y));", ["x", "(y)"]),
    ],
)
def test_split_arguments_keeps_nested_commas(text: bytes, expected: list[str]) -> None:
    assert _trace._split_arguments(text, text.index(b"(") + 1) == expected


def coverage(project: Project, options: dict | None = None) -> list[str]:
    findings = hx106_trace_missing.check(model_of(project), find_rule("HX106").options if options is None else options)
    return sorted(finding.message.split("`")[1] for finding in findings)


def test_workers_are_found_through_parameters_and_assignments(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        static void plain(unsigned int n, unsigned int i, void * data) { (void) n; (void) i; (void) data; }
        static void picked(unsigned int n, unsigned int i, void * data) { (void) n; (void) i; (void) data; }
        static void passed(unsigned int n, unsigned int i, void * data) { (void) n; (void) i; (void) data; }
        static void run(void * pool, worker_callback_t job) { worker_pool_run_func(pool, job, 0, 2); }
        int op_a(void * pool, int k) {
            worker_callback_t func = plain;
            if (k) {
                func = picked;
            }
            worker_pool_run_func(pool, func, 0, 2);
            run(pool, passed);
            return 0;
        }
        """,
    )
    assert coverage(project) == ["passed", "picked", "plain"]


def test_compute_events_are_configuration(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        typedef long HVX_Vector __attribute__((__vector_size__(128)));
        static void copy(unsigned int n, unsigned int i, void * data) {
            htp_trace_event_start((struct htp_thread_trace *) data, HTP_TRACE_EVT_DMA, (uint16_t) i);
            htp_trace_event_stop((struct htp_thread_trace *) data, HTP_TRACE_EVT_DMA, (uint16_t) (i + n));
            HVX_Vector * v = (HVX_Vector *) data;
            v[1] = v[0];
        }
        int op_copy(void * pool) {
            worker_pool_run_func(pool, copy, 0, 2);
            return 0;
        }
        """,
    )
    assert coverage(project) == ["copy"]
    options = dict(find_rule("HX106").options)
    options["compute_events"] = ["HTP_TRACE_EVT_*"]
    assert coverage(project, options) == []
    # Without vector compute the DMA events are enough.
    options = dict(find_rule("HX106").options)
    options["compute_markers"] = ["nothing_matches_*"]
    assert coverage(project, options) == []


def test_an_inner_dispatch_target_is_not_an_entry_point(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        enum { HTP_OP_ADD, HTP_OP_MUL };
        static void vec_add(float * d) { d[0] += 1.0f; }
        int op_binary(struct htp_thread_trace * tr, float * d, int op) {
            htp_trace_event_start(tr, HTP_TRACE_EVT_HVX_COMP, 0);
            switch (op) {
                case HTP_OP_ADD:
                    vec_add(d);
                    break;
                default:
                    break;
            }
            htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, 0);
            return 0;
        }
        int execute(struct htp_thread_trace * tr, float * d, int op) {
            switch (op) {
                case HTP_OP_ADD:
                case HTP_OP_MUL:
                    return op_binary(tr, d, op);
                default:
                    return -1;
            }
        }
        """,
    )
    entries = _trace.entry_points(project, _trace.settings_from(find_rule("HX106").options), _trace.KernelText(project))
    assert [(entry.name, sorted(entry.ops)) for entry in entries] == [("op_binary", ["HTP_OP_ADD", "HTP_OP_MUL"])]
    assert coverage(project) == []


def test_a_start_and_a_stop_under_the_same_condition_are_balanced(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        void guarded(struct htp_thread_trace * tr, float * dst, int on) {
            if (on) {
                htp_trace_event_start(tr, HTP_TRACE_EVT_HVX_COMP, 0);
            }
            dst[0] = 1.0f;
            if (on) {
                htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, 0);
            }
        }
        void never_stopped(struct htp_thread_trace * tr, float * dst, int on) {
            if (on) {
                htp_trace_event_start(tr, HTP_TRACE_EVT_INIT, 0);
            }
            dst[0] = 1.0f;
        }
        """,
    )
    assert unbalanced(project) == [(line_of(tmp_path, "htp_trace_event_start(tr, HTP_TRACE_EVT_INIT"), "Trace")]


def test_exempt_functions_are_not_reported(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        static void fill_thread(unsigned int n, unsigned int i, void * data) { ((float *) data)[i] = (float) n; }
        int op_fill(void * pool, float * dst) {
            worker_pool_run_func(pool, fill_thread, dst, 2);
            return 0;
        }
        """,
    )
    options = dict(find_rule("HX106").options)
    assert coverage(project, options) == ["fill_thread"]
    options["exempt_functions"] = ["fill_*"]
    assert coverage(project, options) == []


def test_a_call_through_a_pointer_may_be_compute_so_dma_events_do_not_cover_it(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        struct ctx {
            struct htp_thread_trace * trace;
            void (*vec_dot)(float * dst, unsigned int i);
            float * dst;
        };
        static void dot_thread(unsigned int n, unsigned int i, void * data) {
            struct ctx * c = (struct ctx *) data;
            htp_trace_event_start(c->trace, HTP_TRACE_EVT_DMA, (uint16_t) i);
            htp_trace_event_stop(c->trace, HTP_TRACE_EVT_DMA, (uint16_t) n);
            c->vec_dot(c->dst, i);
        }
        int op_dot(void * pool, struct ctx * c) {
            worker_pool_run_func(pool, dot_thread, c, 2);
            return 0;
        }
        """,
    )
    assert coverage(project) == ["dot_thread"]


def test_a_tree_without_the_trace_api_gets_no_coverage_findings_and_one_note(tmp_path: Path) -> None:
    path = tmp_path / "htp" / "k.c"
    path.parent.mkdir(parents=True)
    path.write_text(
        "typedef void (*worker_callback_t)(unsigned int n, unsigned int i, void * data);\n"
        "void worker_pool_run_func(void * pool, worker_callback_t func, void * data, unsigned int n);\n"
        "// htp_trace_event_start is named in this comment only\n"
        "static void rows(unsigned int n, unsigned int i, void * data) { (void) n; (void) i; (void) data; }\n"
        "int op_rows(void * pool) { worker_pool_run_func(pool, rows, 0, 2); return 0; }\n"
    )
    project = build_project([parse_unit(str(path), classify(str(path)), ParseSettings())], [str(path)])
    model = model_of(project)
    assert list(hx106_trace_missing.check(model, find_rule("HX106").options)) == []
    (note,) = model.notes
    assert "htp_trace_event_start" in note and "start_functions" in note
    # Named otherwise in the tree: configured, the rule is on again.
    options = {**find_rule("HX106").options, "start_functions": ["worker_pool_run_func"]}
    assert [finding.message.split("`")[1] for finding in hx106_trace_missing.check(model, options)] == ["rows"]


def test_a_worker_run_by_two_entries_names_both(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        static void shared(unsigned int n, unsigned int i, void * data) { (void) n; (void) i; (void) data; }
        int op_first(void * pool) { worker_pool_run_func(pool, shared, 0, 2); return 0; }
        int op_second(void * pool) { worker_pool_run_func(pool, shared, 0, 2); return 0; }
        """,
    )
    (finding,) = hx106_trace_missing.check(model_of(project), find_rule("HX106").options)
    assert "run by `op_first`, `op_second`" in finding.message
    assert [related.span.line for related in finding.related] == [
        line_of(tmp_path, "int op_first"),
        line_of(tmp_path, "int op_second"),
    ]
