"""Facts of hexlint/backend/trace_regions.py on small kernels: open events at calls, DMA wait helpers, trace starts
with their loops and induction variables."""

from __future__ import annotations

import textwrap
from pathlib import Path

import c_projects

from hexlint.backend import trace_regions
from hexlint.backend.trace import settings_from
from hexlint.c.index import Project
from hexlint.registry import find_rule

PRELUDE = """
#include <stdint.h>
enum { HTP_TRACE_EVT_DMA = 0, HTP_TRACE_EVT_INIT = 2, HTP_TRACE_EVT_HVX_COMP = 20 };
struct htp_thread_trace;
typedef struct { void * dst; const void * src; } dma_ptr;
typedef struct dma_queue dma_queue;
void htp_trace_event_start(struct htp_thread_trace * tr, uint16_t id, uint16_t info);
void htp_trace_event_stop(struct htp_thread_trace * tr, uint16_t id, uint16_t info);
dma_ptr dma_queue_pop(dma_queue * q);
void work(int x);
"""


def kernel_project(tmp_path: Path, body: str) -> Project:
    return c_projects.kernel_project(tmp_path, PRELUDE + textwrap.dedent(body))


SETTINGS = settings_from(find_rule("HX117").options)


def open_events_at(project: Project, function: str, callee: str) -> list[set[tuple[str, ...]]]:
    trace = trace_regions.function_traces(project, SETTINGS)[function]
    return [
        {tuple(event.event for event in state) for state in call.open_events}
        for call in sorted(trace.calls, key=lambda call: call.node.line)
        if call.callee == callee
    ]


def test_open_events_follow_each_path(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        void f(struct htp_thread_trace * tr, int c) {
            work(0);
            htp_trace_event_start(tr, HTP_TRACE_EVT_DMA, 0);
            if (c) {
                htp_trace_event_start(tr, HTP_TRACE_EVT_HVX_COMP, 0);
            }
            work(1);
            if (c) {
                htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, 0);
            }
            htp_trace_event_stop(tr, HTP_TRACE_EVT_DMA, 0);
            work(2);
        }
        """,
    )
    # work(0) runs with no event open: it is in no region. Merged paths keep `start taken, stop not` (the two
    # `if (c)` are not correlated), so work(2) is seen both with no event and with the compute event open.
    inside, after = open_events_at(project, "f", "work")
    assert inside == {("HTP_TRACE_EVT_DMA",), ("HTP_TRACE_EVT_DMA", "HTP_TRACE_EVT_HVX_COMP")}
    assert () in after


def test_open_events_carry_around_a_loop_and_stop_at_break(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        void f(struct htp_thread_trace * tr, int n) {
            for (int i = 0; i < n; i++) {
                work(i);
                htp_trace_event_start(tr, HTP_TRACE_EVT_HVX_COMP, i);
                if (i > 3) {
                    htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, i);
                    break;
                }
                htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, i);
            }
            work(n);
        }
        """,
    )
    assert open_events_at(project, "f", "work") == []  # both calls run with no event open, on every path


def test_wait_helpers_are_the_called_functions_that_always_wait_outside_a_dma_event(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        static void flush(dma_queue * q) { while (dma_queue_pop(q).dst) { } }
        static void drain_twice(dma_queue * q) { flush(q); flush(q); }
        static void maybe(dma_queue * q, int c) { if (c) { dma_queue_pop(q); } }
        static void early(dma_queue * q, int c) { if (c) { return; } dma_queue_pop(q); }
        static void in_loop(dma_queue * q, int n) { for (int i = 0; i < n; i++) { dma_queue_pop(q); } }
        static void traced(struct htp_thread_trace * tr, dma_queue * q) {
            htp_trace_event_start(tr, HTP_TRACE_EVT_DMA, 0);
            dma_queue_pop(q);
            htp_trace_event_stop(tr, HTP_TRACE_EVT_DMA, 0);
        }
        static void calls_traced(struct htp_thread_trace * tr, dma_queue * q) { traced(tr, q); }
        void worker(struct htp_thread_trace * tr, dma_queue * q) {
            drain_twice(q);
            maybe(q, 1);
            early(q, 1);
            in_loop(q, 1);
            calls_traced(tr, q);
        }
        """,
    )
    waits = trace_regions.dma_wait_helpers(project, SETTINGS, ("dma_queue_pop",), ("HTP_TRACE_EVT_DMA",))
    # `worker` waits too, but nothing calls it: it is nobody's helper
    assert waits == {"dma_queue_pop": "dma_queue_pop", "flush": "dma_queue_pop", "drain_twice": "dma_queue_pop"}


def test_trace_starts_know_their_loops_and_the_induction_variable(tmp_path: Path) -> None:
    project = kernel_project(
        tmp_path,
        """
        void f(struct htp_thread_trace * tr, int n, int m) {
            htp_trace_event_start(tr, HTP_TRACE_EVT_INIT, 0);
            for (int b = 0; b < n; b++) {
                int j = 0;
                while (j < m) {
                    htp_trace_event_start(tr, HTP_TRACE_EVT_HVX_COMP, b);
                    j += 2;
                    htp_trace_event_stop(tr, HTP_TRACE_EVT_HVX_COMP, b);
                }
            }
            htp_trace_event_stop(tr, HTP_TRACE_EVT_INIT, 0);
        }
        """,
    )
    outside, inside = sorted(trace_regions.trace_starts(project, SETTINGS, 2), key=lambda start: start.node.line)
    assert (outside.event, outside.loops) == ("HTP_TRACE_EVT_INIT", ())
    assert inside.event == "HTP_TRACE_EVT_HVX_COMP" and len(inside.loops) == 2
    inner, outer = inside.loops
    assert trace_regions.induction_variables(inside.unit, inner) == ("j",)
    assert trace_regions.induction_variables(inside.unit, outer) == ("b",)
    assert inside.info is not None
    assert not trace_regions.changes_in_loop(inside.unit, inner, inside.info)
    assert trace_regions.changes_in_loop(inside.unit, outer, inside.info)
