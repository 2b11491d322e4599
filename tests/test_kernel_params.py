"""Focused tests of the kernel_params facts behind HX101-HX103: fields, host writes, kernel reads, op attribution."""

from __future__ import annotations

from pathlib import Path

import pytest
from c_projects import project_of
from conftest import run_hexlint

from hexlint.backend import kernel_params as kp
from hexlint.backend.model import model_of
from hexlint.c.index import build_project
from hexlint.c.parse import ParseSettings, classify, parse_unit
from hexlint.checks import hx101_kernel_params_unread, hx102_kernel_params_unwritten, hx103_kernel_params_recomputed
from hexlint.registry import find_rule

HEADER = """
#include <stdint.h>
enum htp_op_code { HTP_OP_ADD, HTP_OP_MUL, HTP_OP_SOFTMAX, HTP_OP_INVALID };
struct fastdiv_values { uint32_t magic; uint32_t shift; };
struct htp_x_kernel_params {
    uint32_t n_threads;
    uint32_t ne[4];
    struct fastdiv_values div;
    union {
        struct { uint32_t rows; int32_t flag; } hmx;
        struct { uint32_t cols; } hvx;
    } u;
};
struct htp_ops_context { uint32_t op; uint32_t n_threads; int32_t kernel_params[32]; };
"""


def writes_of(facts: kp.KernelParamsFacts) -> dict[str, set[str] | None]:
    found: dict[str, set[str] | None] = {}
    for write in facts.host_writes:
        ops = None if write.ops is None else set(write.ops)
        previous = found.get(write.path, set())
        found[write.path] = None if ops is None or previous is None else previous | ops
    return found


def test_fields_are_followed_to_nested_union_leaves(tmp_path: Path) -> None:
    project = project_of(tmp_path, {"htp/x.h": HEADER, "htp/k.c": '#include "x.h"\n'})
    facts = kp.gather(project, {})
    paths = {path for struct, path in facts.fields if struct == "htp_x_kernel_params"}
    assert paths == {"n_threads", "ne", "div", "u.hmx.rows", "u.hmx.flag", "u.hvx.cols"}


def test_every_kind_of_host_write_is_seen_and_zero_fills_and_reads_are_not(tmp_path: Path) -> None:
    host = """
    #include <string.h>
    #include "htp/x.h"
    static void set_div(struct fastdiv_values * d, uint32_t n) { d->magic = n; }
    void prep(struct htp_x_kernel_params * kp, uint32_t n) {
        memset(kp, 0, sizeof(*kp));
        struct htp_x_kernel_params zero = {0};
        struct htp_x_kernel_params init = { .u = { .hvx = { .cols = 4 } } };
        struct htp_x_kernel_params positional = { 2 };
        kp->ne[1] = n;
        kp->u.hmx.flag += 1;
        set_div(&kp->div, n);
        uint32_t copy = kp->u.hmx.rows;
        memcpy(kp, &init, sizeof(init) + copy + zero.n_threads + positional.n_threads);
    }
    """
    project = project_of(tmp_path, {"htp/x.h": HEADER, "host.cpp": host})
    written = writes_of(kp.gather(project, {}))
    assert set(written) == {"u.hvx.cols", "n_threads", "ne", "u.hmx.flag", "div"}


def test_host_ops_come_from_cases_conditions_predicates_blocks_and_callers(tmp_path: Path) -> None:
    host = """
    #include "htp/x.h"
    struct node_t { uint32_t opcode; int32_t kernel_params[32]; node_t(uint32_t op) : opcode(op) {} };
    static bool is_binary(uint32_t op) {
        switch (op) { case HTP_OP_ADD: case HTP_OP_MUL: return true; default: return false; }
    }
    static void fill_div(struct htp_x_kernel_params * kp, uint32_t n) { kp->div.magic = n; }
    void prep(struct node_t & node, uint32_t n) {
        struct htp_x_kernel_params * kp = (struct htp_x_kernel_params *) node.kernel_params;
        switch (node.opcode) {
            case HTP_OP_ADD:
                kp->u.hmx.rows = n;
                break;
            case HTP_OP_MUL:
                kp->u.hvx.cols = n;
                break;
            default:
                break;
        }
        if (is_binary(node.opcode)) {
            kp->n_threads = 4;
        }
        if (node.opcode == HTP_OP_SOFTMAX) {
            fill_div(kp, n);
        }
    }
    void fused(uint32_t n) {
        struct node_t node(HTP_OP_SOFTMAX);
        ((struct htp_x_kernel_params *) node.kernel_params)->ne[0] = n;
    }
    """
    project = project_of(tmp_path, {"htp/x.h": HEADER, "host.cpp": host})
    written = writes_of(kp.gather(project, {}))
    assert written == {
        "u.hmx.rows": {"HTP_OP_ADD"},
        "u.hvx.cols": {"HTP_OP_MUL"},
        "n_threads": {"HTP_OP_ADD", "HTP_OP_MUL"},
        "div": {"HTP_OP_SOFTMAX"},
        "ne": {"HTP_OP_SOFTMAX"},
    }


def test_kernel_reads_follow_aliases_contexts_helpers_and_the_dispatch(tmp_path: Path) -> None:
    kernel = """
    #include "x.h"
    struct job { const struct htp_x_kernel_params * kparams; };
    static uint32_t helper(const struct htp_x_kernel_params * p) { return p->u.hmx.rows; }
    static uint32_t worker(struct job * job) { return job->kparams->div.magic + helper(job->kparams); }
    int op_add(struct htp_ops_context * octx) {
        const struct htp_x_kernel_params * kparams = (const struct htp_x_kernel_params *) octx->kernel_params;
        const struct htp_x_kernel_params * alias = kparams;
        struct job job = { kparams };
        return (int) (alias->n_threads + worker(&job));
    }
    int op_unreached(struct htp_ops_context * octx) {
        return ((const struct htp_x_kernel_params *) octx->kernel_params)->ne[2];
    }
    int execute(struct htp_ops_context * octx) {
        switch (octx->op) { case HTP_OP_ADD: return op_add(octx); default: return -1; }
    }
    """
    project = project_of(tmp_path, {"htp/x.h": HEADER, "htp/k.c": kernel})
    facts = kp.gather(project, {})
    reads = {(read.path, read.function): read.ops for read in facts.kernel_reads}
    add = frozenset({"HTP_OP_ADD"})
    assert reads == {
        ("u.hmx.rows", "helper"): add,
        ("div", "worker"): add,
        ("n_threads", "op_add"): add,
        ("ne", "op_unreached"): None,
    }
    assert facts.dispatched_ops == add


def test_facts_are_gathered_once_per_project_and_settings(tmp_path: Path) -> None:
    project = project_of(tmp_path, {"htp/x.h": HEADER, "htp/k.c": '#include "x.h"\n'})
    first = kp.gather(project, {})
    assert kp.gather(project, {}) is first
    other = kp.gather(project, {"struct_pattern": "^nothing$"})
    assert other is not first and not other.fields


def test_struct_pattern_is_configuration(tmp_path: Path) -> None:
    header = HEADER.replace("htp_x_kernel_params", "npu_x_args")
    host = '#include "htp/x.h"\nvoid prep(struct npu_x_args * a) { a->n_threads = 1; a->ne[0] = 2; }\n'
    kernel = '#include "x.h"\nint op_x(const struct npu_x_args * a) { return (int) a->n_threads; }\n'
    project = project_of(tmp_path, {"htp/x.h": header, "host.cpp": host, "htp/k.c": kernel})
    assert not list(hx101_kernel_params_unread.check(model_of(project), {}))
    findings = list(hx101_kernel_params_unread.check(model_of(project), {"struct_pattern": r"^npu_\w+_args$"}))
    assert [(finding.span.line, "`ne`" in finding.message) for finding in findings] == [(2, True)]


def test_findings_name_the_field_the_ops_and_the_declaration(tmp_path: Path) -> None:
    host = """
    #include "htp/x.h"
    void prep(uint32_t op, struct htp_x_kernel_params * kp) {
        if (op == HTP_OP_ADD) {
            kp->n_threads = 4;
            kp->u.hmx.rows = 8;
        }
    }
    """
    kernel = """
    #include "x.h"
    int op_add(struct htp_ops_context * octx) {
        const struct htp_x_kernel_params * kparams = (const struct htp_x_kernel_params *) octx->kernel_params;
        return (int) (kparams->n_threads + kparams->u.hvx.cols);
    }
    int execute(struct htp_ops_context * octx) {
        switch (octx->op) { case HTP_OP_ADD: return op_add(octx); default: return -1; }
    }
    """
    project = project_of(tmp_path, {"htp/x.h": HEADER, "host.cpp": host, "htp/k.c": kernel})
    unread = list(hx101_kernel_params_unread.check(model_of(project), find_rule("HX101").options))
    unwritten = list(hx102_kernel_params_unwritten.check(model_of(project), find_rule("HX102").options))
    assert [finding.span.line for finding in unread] == [6]
    assert "`u.hmx.rows`" in unread[0].message and "HTP_OP_ADD" in unread[0].message
    assert unread[0].related[0].span.path.endswith("x.h") and unread[0].related[0].span.line == 10
    assert unread[0].fingerprint_text == "kp->u.hmx.rows = 8;"
    assert [finding.span.line for finding in unwritten] == [5]
    assert "`u.hvx.cols`" in unwritten[0].message and unwritten[0].code == "HX102"


def test_runtime_fields_are_configuration(tmp_path: Path) -> None:
    kernel = """
    #include "x.h"
    struct pool { uint32_t workers; };
    int op_x(struct htp_ops_context * octx, struct pool * pool) {
        const struct htp_x_kernel_params * kparams = (const struct htp_x_kernel_params *) octx->kernel_params;
        return (int) (kparams->ne[0] / pool->workers);
    }
    """
    project = project_of(tmp_path, {"htp/x.h": HEADER, "htp/k.c": kernel})
    assert not list(hx103_kernel_params_recomputed.check(model_of(project), find_rule("HX103").options))
    options = {"runtime_fields": [{"runtime": "pool->workers", "field": "n_threads"}]}
    findings = list(hx103_kernel_params_recomputed.check(model_of(project), options))
    assert len(findings) == 1 and "`kparams->n_threads`" in findings[0].message and findings[0].span.line == 6


def test_a_broken_host_file_and_non_utf8_kernel_still_give_facts(tmp_path: Path) -> None:
    (tmp_path / "htp").mkdir()
    (tmp_path / "htp" / "x.h").write_text(HEADER)
    host = '#include "htp/x.h"\nvoid prep(struct htp_x_kernel_params * kp) { kp->n_threads = ; kp->ne[0] = 1; }\n'
    (tmp_path / "host.cpp").write_text(host)
    kernel = b'#include "x.h"\nint op_x(const struct htp_x_kernel_params * k) { return k->ne[0]; } /* \xff */\n'
    (tmp_path / "htp" / "k.c").write_bytes(kernel)
    paths = [str(tmp_path / "host.cpp"), str(tmp_path / "htp" / "k.c")]
    units = [parse_unit(path, classify(path), ParseSettings()) for path in paths]
    assert units[0].diagnostics  # the syntax error is HX002's business
    project = build_project(units, [*paths, str(tmp_path / "htp" / "x.h")])
    facts = kp.gather(project, {})
    assert {write.path for write in facts.host_writes} == {"ne"}
    assert [(read.path, read.function) for read in facts.kernel_reads] == [("ne", "op_x")]
    assert not list(hx101_kernel_params_unread.check(model_of(project), {}))
    assert not list(hx102_kernel_params_unwritten.check(model_of(project), {}))


@pytest.mark.parametrize("case", ["unread_field", "op_specific_write"])
def test_hx101_cli_reports_the_fixture_findings_with_exit_status_one(case: str) -> None:
    from conftest import REPO_ROOT

    result = run_hexlint("--select", "HX101", str(REPO_ROOT / "fixtures" / "rules" / "HX101" / case))
    assert result.status == 1
    assert result.stdout.count(": HX101 [kernel-params-unread]") == 2
