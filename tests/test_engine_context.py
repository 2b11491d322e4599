"""Partial runs (a pre-commit hook passes only the staged files): the cross-file rules see the rest of the tree as
context, and findings are reported only for the files of the run."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hexlint import engine
from hexlint.config import Config, load_config_file
from hexlint.engine import RunSettings, lint

OPS_H = """\
#ifndef OPS_H
#define OPS_H

#include <stdint.h>

enum htp_op_code { HTP_OP_ADD, HTP_OP_MUL, HTP_OP_INVALID };

struct htp_binary_kernel_params {
    uint32_t n_threads;
    uint32_t rows_per_thread;
    uint32_t row_stride;
    union {
        struct {
            uint32_t tile_rows;
        } add;
        struct {
            uint32_t block;
            uint32_t lanes;
        } mul;
    } u;
};

struct htp_ops_context {
    uint32_t op;
    int32_t  kernel_params[32];
};

int op_add(struct htp_ops_context * octx);
int op_mul(struct htp_ops_context * octx);
uint32_t add_rows(const struct htp_binary_kernel_params * kparams);

#endif
"""

MAIN_C = """\
#include "ops.h"

int execute_op(struct htp_ops_context * octx) {
    switch (octx->op) {
        case HTP_OP_ADD:
            return op_add(octx);
        case HTP_OP_MUL:
            return op_mul(octx);
        default:
            return -1;
    }
}
"""

# op_add reads rows_per_thread only through a helper defined in another kernel file.
ADD_OPS_C = """\
#include "ops.h"

int op_add(struct htp_ops_context * octx) {
    const struct htp_binary_kernel_params * kparams = (const struct htp_binary_kernel_params *) octx->kernel_params;
    return (int) (kparams->n_threads * add_rows(kparams) + kparams->u.add.tile_rows);
}
"""

ADD_ROWS_C = """\
#include "ops.h"

uint32_t add_rows(const struct htp_binary_kernel_params * kparams) {
    return kparams->rows_per_thread * 2;
}
"""

MUL_OPS_C = """\
#include "ops.h"

int op_mul(struct htp_ops_context * octx) {
    const struct htp_binary_kernel_params * kparams = (const struct htp_binary_kernel_params *) octx->kernel_params;
    return (int) (kparams->n_threads * kparams->u.mul.block * kparams->u.mul.lanes);
}
"""

HOST_CPP = """\
#include "../htp/ops.h"

struct htp_opnode {
    uint32_t opcode;
    int32_t  kernel_params[32];
};

static void prep_add(uint32_t nrows, struct htp_binary_kernel_params * kparams) {
    kparams->n_threads       = 4;
    kparams->rows_per_thread = nrows / 4;
    kparams->row_stride      = nrows * 4;
    kparams->u.add.tile_rows = 8;
}

static void prep_mul(struct htp_binary_kernel_params * kparams) {
    kparams->n_threads   = 4;
    kparams->u.mul.block = 32;
}

void prep_node(struct htp_opnode & node, uint32_t nrows) {
    switch (node.opcode) {
        case HTP_OP_ADD:
            prep_add(nrows, (struct htp_binary_kernel_params *) node.kernel_params);
            break;
        case HTP_OP_MUL:
            prep_mul((struct htp_binary_kernel_params *) node.kernel_params);
            break;
        default:
            break;
    }
}
"""

KPARAMS_TREE = {
    "htp/ops.h": OPS_H,
    "htp/main.c": MAIN_C,
    "htp/add-ops.c": ADD_OPS_C,
    "htp/add-rows.c": ADD_ROWS_C,
    "htp/mul-ops.c": MUL_OPS_C,
    "host/ggml-host.cpp": HOST_CPP,
}
# The whole tree's findings: `row_stride` is written for ADD and read by no kernel; `u.mul.lanes` is read for MUL
# and never written.
HOST_UNREAD = ("host/ggml-host.cpp", 11, "HX101")
KERNEL_UNWRITTEN = ("htp/mul-ops.c", 5, "HX102")

# A DMA-only worker is traced by the event its header helper emits: the header must be seen to know it.
QUEUE_H = """\
#ifndef QUEUE_H
#define QUEUE_H

#include <stdint.h>

enum { HTP_TRACE_EVT_DMA = 3, HTP_TRACE_EVT_HVX_COMP = 20 };
struct htp_thread_trace;
void htp_trace_event_start(struct htp_thread_trace * tr, uint16_t id, uint16_t info);
void htp_trace_event_stop(struct htp_thread_trace * tr, uint16_t id, uint16_t info);
typedef void (*worker_callback_t)(unsigned int n, unsigned int i, void * data);
void worker_pool_run_func(void * pool, worker_callback_t func, void * data, unsigned int n);

static inline void gather_rows(struct htp_thread_trace * tr, uint8_t * dst, const uint8_t * src, uint32_t n) {
    htp_trace_event_start(tr, HTP_TRACE_EVT_DMA, 0);
    for (uint32_t i = 0; i < n; i++) {
        dst[i] = src[i];
    }
    htp_trace_event_stop(tr, HTP_TRACE_EVT_DMA, 0);
}

#endif
"""

GATHER_OPS_C = """\
#include "queue.h"

struct gather_context {
    struct htp_thread_trace * tr;
    uint8_t *                 dst;
    const uint8_t *           src;
    uint32_t                  rows_per_thread;
};

static void gather_thread(unsigned int n, unsigned int i, void * data) {
    struct gather_context * gctx = (struct gather_context *) data;
    gather_rows(gctx->tr, gctx->dst + i * gctx->rows_per_thread, gctx->src + i * gctx->rows_per_thread,
                gctx->rows_per_thread);
}

int op_gather(void * pool, struct gather_context * gctx) {
    worker_pool_run_func(pool, gather_thread, gctx, 4);
    return 0;
}
"""

TRACE_TREE = {"htp/queue.h": QUEUE_H, "htp/gather-ops.c": GATHER_OPS_C}

Finding = tuple[str, int, str]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def kparams_tree(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_tree(tmp_path, KPARAMS_TREE)


KPARAMS_RULES = "HX101,HX102,HX103"


def findings(paths: list[str], select: str = KPARAMS_RULES, context: str | None = None) -> Counter[Finding]:
    settings = RunSettings(select=tuple(select.split(",")), jobs=1, context=context)
    result = lint(paths, Config(), settings)
    return Counter((Path(item.span.path).as_posix(), item.span.line or 0, item.code) for item in result.diagnostics)


def test_host_file_alone_reports_the_unread_field_at_its_write(kparams_tree: Path) -> None:
    assert findings(["host/ggml-host.cpp"]) == Counter([HOST_UNREAD])


def test_kernel_file_alone_reports_its_unwritten_read_and_nothing_of_other_files(kparams_tree: Path) -> None:
    assert findings(["htp/mul-ops.c"]) == Counter([KERNEL_UNWRITTEN])


def test_kernel_file_reading_through_a_helper_elsewhere_is_clean_alone(kparams_tree: Path) -> None:
    assert findings(["host/ggml-host.cpp", "htp/add-ops.c"]) == Counter([HOST_UNREAD])
    assert findings(["htp/add-ops.c"]) == Counter()


def test_every_partial_run_agrees_with_the_full_run_on_its_files(kparams_tree: Path) -> None:
    full = findings(["."])
    assert full == Counter([HOST_UNREAD, KERNEL_UNWRITTEN])
    for relative in KPARAMS_TREE:
        alone = findings([relative])
        assert alone == Counter({item: count for item, count in full.items() if item[0] == relative}), relative


def test_files_context_sees_only_the_named_files(kparams_tree: Path) -> None:
    # Without context the rules hold back (the other side is not in the run): nothing is found.
    assert findings(["host/ggml-host.cpp"], context="files") == Counter()
    assert findings(["host/ggml-host.cpp"], context="tree") == Counter([HOST_UNREAD])


def test_suppression_of_a_cross_file_rule_is_not_called_unused_without_context(kparams_tree: Path) -> None:
    host = kparams_tree / "host" / "ggml-host.cpp"
    host.write_text(
        host.read_text().replace("nrows * 4;", "nrows * 4;  // hexlint: ignore[HX101] read by the next kernel"),
        encoding="utf-8",
    )
    select = "HX001," + KPARAMS_RULES
    assert findings(["host/ggml-host.cpp"], select=select) == Counter()  # found with context, and suppressed
    assert findings(["host/ggml-host.cpp"], select=select, context="files") == Counter()
    # A suppression of a rule that looks at one file at a time is still judged.
    host.write_text(host.read_text() + "int unused_guard; // hexlint: ignore[HX108] no division here\n")
    last_line = len(host.read_text().splitlines())
    assert findings(["host/ggml-host.cpp"], select="HX001,HX108", context="files") == Counter(
        [("host/ggml-host.cpp", last_line, "HX001")]
    )


def test_context_comes_from_the_config_key(kparams_tree: Path) -> None:
    (kparams_tree / "hexlint.toml").write_text('context = "files"\n', encoding="utf-8")
    config = load_config_file(kparams_tree / "hexlint.toml")
    settings = RunSettings(select=("HX101",), jobs=1)
    assert lint(["host/ggml-host.cpp"], config, settings).diagnostics == ()
    # The command line wins over the file.
    overridden = lint(["host/ggml-host.cpp"], config, RunSettings(select=("HX101",), jobs=1, context="tree"))
    assert [(item.span.line, item.code) for item in overridden.diagnostics] == [(11, "HX101")]


def test_runs_from_different_directories_in_one_process(tmp_path: Path, monkeypatch) -> None:
    # Relative paths name different files in each run; nothing memoized from the first run may leak into the next.
    for name in ("first", "second"):
        monkeypatch.chdir(write_tree(tmp_path / name, KPARAMS_TREE))
        assert findings(["."]) == Counter([HOST_UNREAD, KERNEL_UNWRITTEN]), name


def test_header_helper_of_a_kernel_alone_is_seen_no_trace_false_positive(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(write_tree(tmp_path, TRACE_TREE))
    assert findings(["."], select="HX106") == Counter()
    assert findings(["htp/gather-ops.c"], select="HX106") == Counter()
    # The same run without the tree: the helper's trace event is not seen.
    assert findings(["htp/gather-ops.c"], select="HX106", context="files") == Counter(
        [("htp/gather-ops.c", 10, "HX106")]
    )


def test_context_is_parsed_only_for_cross_file_rules(kparams_tree: Path) -> None:
    per_file = lint(["htp/mul-ops.c"], Config(), RunSettings(select=("HX105", "HX108"), jobs=1))
    cross_file = lint(["htp/mul-ops.c"], Config(), RunSettings(select=("HX101",), jobs=1))
    assert (per_file.context_files, cross_file.context_files) == (0, len(KPARAMS_TREE) - 1)
    assert per_file.files_checked == cross_file.files_checked == 1


def test_context_files_problems_are_not_reported(kparams_tree: Path) -> None:
    (kparams_tree / "htp" / "broken.c").write_text('#include "missing.h"\nint f( {\n', encoding="utf-8")
    # A per-file rule's finding in a context file stays unreported too.
    (kparams_tree / "htp" / "guard.c").write_text(
        '#include "ops.h"\nint op_guard(struct htp_ops_context * octx) {\n    if (!octx) {\n        return -1;\n'
        "    }\n    return 0;\n}\n",
        encoding="utf-8",
    )
    assert findings(["htp/guard.c"], select="HX104") == Counter([("htp/guard.c", 3, "HX104")])
    # The tree has no trace API, so HX106 asks no kernel for trace events (see test_trace.py).
    assert findings(["htp/mul-ops.c"], select="ALL") == Counter([KERNEL_UNWRITTEN])


def test_parse_error_in_a_header_of_the_run_that_only_context_files_include(kparams_tree: Path) -> None:
    header = kparams_tree / "htp" / "ops.h"
    header.write_text(header.read_text().replace("uint32_t n_threads;", "uint32_t n_threads"), encoding="utf-8")
    for context in ("tree", "files"):
        assert findings(["htp/ops.h"], select="HX002,HX101", context=context) == Counter([("htp/ops.h", 9, "HX002")])


def test_an_unreadable_context_file_is_left_out(kparams_tree: Path, monkeypatch) -> None:
    from hexlint.c import parse

    real_parse_unit = parse.parse_unit

    def parse_unit(path: str, *arguments: object) -> object:
        if path.endswith("add-rows.c"):
            raise parse.InputError(path, "cannot read: Permission denied")
        return real_parse_unit(path, *arguments)  # type: ignore[arg-type]

    monkeypatch.setattr(parse, "parse_unit", parse_unit)
    assert findings(["htp/mul-ops.c"]) == Counter([KERNEL_UNWRITTEN])
    with pytest.raises(engine.InputError, match=r"add-rows\.c"):
        findings(["htp/add-rows.c"])


def test_project_root_for_a_tree_without_htp_dir(tmp_path: Path, monkeypatch) -> None:
    renamed = {path.replace("htp/", "npu/"): text.replace("../htp/", "../npu/") for path, text in KPARAMS_TREE.items()}
    monkeypatch.chdir(write_tree(tmp_path, renamed))
    (tmp_path / "hexlint.toml").write_text('kernel-globs = ["npu/*"]\nproject-root = "."\n', encoding="utf-8")
    config = load_config_file(tmp_path / "hexlint.toml")
    result = lint(["host/ggml-host.cpp"], config, RunSettings(select=("HX101",), jobs=1))
    assert [(item.span.line, item.code) for item in result.diagnostics] == [(11, "HX101")]
    without_root = lint(["host/ggml-host.cpp"], Config(kernel_globs=("npu/*",)), RunSettings(select=("HX101",), jobs=1))
    assert without_root.diagnostics == ()


def test_tree_root_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "htp").mkdir()
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    assert engine.tree_root_for(str(tmp_path / "repo" / "src" / "a.cpp")) is None
    assert engine.tree_root_for(str(tmp_path / "htp" / "k.c")) == str(tmp_path.resolve())
    assert engine.tree_root_for(str(tmp_path / "x.cpp")) == str(tmp_path.resolve())


def test_cli_context_options(kparams_tree: Path, hexlint_cli) -> None:
    tree = hexlint_cli("--select", KPARAMS_RULES, "-v", "host/ggml-host.cpp")
    assert tree.status == 1
    assert tree.stdout.startswith("host/ggml-host.cpp:11:14: HX101 ")
    assert "5 more files of the tree used as context" in tree.stderr
    files = hexlint_cli("--select", KPARAMS_RULES, "--context", "files", "host/ggml-host.cpp")
    assert (files.status, files.stdout) == (0, "")
    bad_root = hexlint_cli("--project-root", "nowhere", "host/ggml-host.cpp")
    assert bad_root.status == 2
    assert bad_root.stderr == "hexlint: error: --project-root: nowhere: not a directory\n"
    bad_mode = hexlint_cli("--context", "all", "host/ggml-host.cpp")
    assert bad_mode.status == 2
    assert "--context" in bad_mode.stderr


def test_a_partial_run_writes_nothing_in_the_tree(kparams_tree: Path, hexlint_cli) -> None:
    def snapshot() -> dict[str, tuple[bytes, int]]:
        files = [path for path in kparams_tree.rglob("*") if path.is_file()]
        return {str(path): (path.read_bytes(), path.stat().st_mtime_ns) for path in files}

    before = snapshot()
    for arguments in (("host/ggml-host.cpp",), ("--diff", "htp/mul-ops.c"), ("--format", "sarif", "htp/add-ops.c")):
        assert hexlint_cli(*arguments).status in (0, 1)
    assert snapshot() == before
