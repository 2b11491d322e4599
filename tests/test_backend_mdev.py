"""Focused tests of the multi-device facts behind HX120-HX125: partitions, DMA-only writers, workers, completions."""

from __future__ import annotations

import glob
import textwrap
from pathlib import Path

import c_projects

from hexlint.backend import mdev, workers
from hexlint.c import index, parse
from hexlint.c.index import Project
from tests.conftest import REPO_ROOT

PRELUDE = (REPO_ROOT / "fixtures" / "rules" / "HX121" / "legal_line_safe.c").read_text()


def project_of(tmp_path: Path, body: str = "") -> Project:
    return c_projects.kernel_project(tmp_path, PRELUDE + textwrap.dedent(body), "htp/ops.c")


def test_partitions_record_their_units_guard_range_variables_and_early_return(tmp_path: Path) -> None:
    facts = mdev.mdev_facts(project_of(tmp_path), mdev.MdevSettings())
    by_function = {partition.place.function: partition for partition in facts.partitions()}
    rows = by_function["op_rows"]
    assert (rows.total, rows.total_resolved) == ("total_rows", "dst->ne[1] * dst->ne[2] * dst->ne[3]")
    assert rows.units_from_rows_helper and rows.guarded and rows.early_return
    assert (rows.start.name, rows.start.declaration) == ("row_start", "0")
    assert (rows.count.name, rows.count.declaration) == ("nrows", "total_rows")
    elems = by_function["op_elems"]
    assert not elems.units_from_rows_helper and sorted(elems.units_leaves) == ["0", "32", "64"]
    assert elems.checks_contiguity and elems.checks_alignment


def test_an_op_writing_through_dma_alone_is_told_from_one_storing_through_the_pointer(tmp_path: Path) -> None:
    facts = mdev.mdev_facts(project_of(tmp_path), mdev.MdevSettings())
    assert facts.dma_only_writer("op_rows_by_dma")
    assert not facts.dma_only_writer("op_rows")  # rows_task stores through rc->data_dst


def test_workers_named_from_the_runners_text_are_the_launches_the_ast_finds() -> None:
    files = sorted(glob.glob(str(REPO_ROOT / "fixtures" / "htp-core" / "htp" / "*.c")))
    units = [parse.parse_unit(path, "kernel", parse.ParseSettings()) for path in files]
    project = index.build_project(units, files)
    textual = mdev.mdev_facts(project, mdev.MdevSettings()).worker_names()
    assert textual == set(workers.worker_names(project, {})) and len(textual) >= 6


def test_a_flush_one_call_down_clears_the_work_before_the_barrier(tmp_path: Path) -> None:
    project = project_of(
        tmp_path,
        """
        int execute(struct htp_ops_context * octx) {
            const int status = op_rows(octx);
            htp_dcache_flush_dirty_tensors(octx->ctx);
            return status;
        }
        int run_flushed(struct htp_ops_context * octx) {
            const int status = execute(octx);
            htp_mdev_group_barrier(octx);
            return status;
        }
        int run_unflushed(struct htp_ops_context * octx) {
            const int status = op_rows(octx);
            htp_mdev_group_barrier(octx);
            return status;
        }
        """,
    )
    completions = mdev.completions(project, mdev.MdevSettings())
    assert [(c.place.function, c.missing, c.cause) for c in completions] == [("run_unflushed", "flush", "op_rows")]
