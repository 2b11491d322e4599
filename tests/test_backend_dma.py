"""Focused tests of the DMA queue facts behind HX109 and HX112: queue names, helpers, in-flight counts per exit."""

from __future__ import annotations

import textwrap
from pathlib import Path

import c_projects

from hexlint.backend import dma
from hexlint.c.index import Project

HEADER = """
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
typedef struct { void * dst; const void * src; } dma_ptr;
typedef struct dma_queue_s dma_queue;
dma_ptr dma_make_ptr(void * dst, const void * src);
bool dma_queue_push(dma_queue * q, dma_ptr p, size_t dst_stride, size_t src_stride, size_t row_size, size_t nrows);
dma_ptr dma_queue_pop(dma_queue * q);
void dma_queue_flush(dma_queue * q);
bool dma_queue_empty(dma_queue * q);
struct htp_context { dma_queue * dma[4]; };
struct job { struct htp_context * ctx; uint8_t * vtcm; const uint8_t * src; uint32_t n; };
"""


def project_of(tmp_path: Path, body: str) -> Project:
    return c_projects.kernel_project(tmp_path, textwrap.dedent(HEADER) + textwrap.dedent(body), "htp/ops.c")


def functions_of(project: Project) -> dict[str, dma.FunctionDma]:
    return {function.name: function for function in dma.dma_functions(project, dma.DmaSettings())}


def test_a_local_initialised_once_names_the_queue_it_points_to(tmp_path: Path) -> None:
    project = project_of(
        tmp_path,
        """
        void worker(unsigned int nth, unsigned int ith, void * data) {
            struct job * j = (struct job *) data;
            dma_queue * q = j->ctx->dma[ith];
            dma_queue_push(j->ctx->dma[ith], dma_make_ptr(j->vtcm, j->src), 1, 1, 1, 1);
            dma_queue_pop(q);
        }
        """,
    )
    worker = functions_of(project)["worker"]
    assert {op.queue.key for op in worker.ops} == {"%2.ctx.dma[%1]"}
    assert {op.queue.name for op in worker.ops} == {"q", "j->ctx->dma[ith]"}
    assert worker.in_flight == ()


def test_a_helper_is_found_by_what_it_calls_and_counts_at_its_call(tmp_path: Path) -> None:
    project = project_of(
        tmp_path,
        """
        static void prime(dma_queue * d, const struct job * j) {
            dma_queue_push(d, dma_make_ptr(j->vtcm, j->src), 1, 1, 1, 1);
            dma_queue_push(d, dma_make_ptr(j->vtcm, j->src), 1, 1, 1, 1);
        }
        void owner(struct htp_context * ctx, const struct job * j) {
            prime(ctx->dma[0], j);
            if (j->n == 0) {
                return;
            }
            dma_queue_pop(ctx->dma[0]);
            dma_queue_pop(ctx->dma[0]);
        }
        """,
    )
    functions = functions_of(project)
    assert functions["prime"].helper_queues == frozenset({"%0"})
    assert functions["prime"].in_flight == ()
    (in_flight,) = functions["owner"].in_flight
    assert in_flight.queue.key == "%0.dma[0]"
    assert in_flight.exit_node is not None and in_flight.exit_node.kind == "RETURN_STMT"
    assert (in_flight.lo, in_flight.hi) == (2, 2)
    assert [push.spelling for push in in_flight.pushes] == ["prime"]


def test_flush_levels_separate_a_drained_queue_from_writebacks_in_flight(tmp_path: Path) -> None:
    project = project_of(
        tmp_path,
        """
        void drained(dma_queue * q, const struct job * j) {
            for (uint32_t i = 0; i < j->n; i++) {
                dma_queue_push(q, dma_make_ptr(j->vtcm, j->src), 1, 1, 1, 1);
            }
            while (!dma_queue_empty(q)) {
                dma_queue_pop(q);
            }
            dma_queue_flush(q);
        }
        void writebacks(dma_queue * q, const struct job * j) {
            for (uint32_t i = 0; i < j->n; i++) {
                dma_queue_pop(q);
                dma_queue_push(q, dma_make_ptr(j->vtcm, j->src), 1, 1, 1, 1);
            }
            dma_queue_flush(q);
        }
        """,
    )
    functions = functions_of(project)
    (drained,) = functions["drained"].flushes
    assert (drained.hi, drained.pushed_before) == (0, True)
    (writebacks,) = functions["writebacks"].flushes
    assert (writebacks.hi, writebacks.pushed_before) == (1, True)  # each iteration pops before it pushes
    assert functions["writebacks"].in_flight == ()


def test_the_end_counts_loops_as_run_an_early_return_needs_a_sure_transfer(tmp_path: Path) -> None:
    project = project_of(
        tmp_path,
        """
        int pipeline(dma_queue * q, const struct job * j) {
            for (uint32_t k = 0; k < 2 && k < j->n; k++) {
                dma_queue_push(q, dma_make_ptr(j->vtcm, j->src), 1, 1, 1, 1);
            }
            if (j->n == 0) {
                return -1;
            }
            for (uint32_t i = 0; i < j->n; i++) {
                dma_queue_pop(q);
                dma_queue_push(q, dma_make_ptr(j->vtcm, j->src), 1, 1, 1, 1);
            }
            return 0;
        }
        """,
    )
    (in_flight,) = functions_of(project)["pipeline"].in_flight
    assert in_flight.lo == 1 and in_flight.hi == dma.INFINITE
    final_return = in_flight.exit_node
    assert final_return is not None
    assert "return 0" in project.units[0].source_line(final_return.path, final_return.line)
