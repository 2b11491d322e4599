"""`hexlint splits`: the scheduler-dump parser, the op table of a tree, boundary classes and the reports.

The logs in fixtures/splits/ are written by fixtures/splits/generate.py from graphs it describes, in the line format
of ggml's printing code; the tree in fixtures/splits/tree is a small backend of ours whose op table those graphs
were described against (SET_ROWS has no kernel, the softmax predicate takes an f32 mask only).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from c_projects import project_of
from conftest import REPO_ROOT, run_hexlint

from hexlint.backend.model import model_of
from hexlint.runtime.hexlog import OperandFields, SupportsOp, parse_line
from hexlint.splits.analysis import DEFAULT_NPU_PATTERN, analyse
from hexlint.splits.predicates import judge
from hexlint.splits.schedlog import parse_log, read_log
from hexlint.splits.tree import load_model

LOGS = REPO_ROOT / "fixtures" / "splits"
TREE = LOGS / "tree"


def generator():
    spec = importlib.util.spec_from_file_location("splits_generate", LOGS / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["splits_generate"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def table():
    return load_model(str(TREE), jobs=1).op_table()


def boundaries(report):
    return [(b.kind, b.op, b.tensor) for graph in report.graphs for b in graph.boundaries]


def test_the_fixture_logs_are_what_the_generator_writes() -> None:
    run = subprocess.run([sys.executable, str(LOGS / "generate.py"), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_a_dump_is_read_node_by_node_with_cut_names_and_copies() -> None:
    log = read_log(str(LOGS / "transformer-layer.log"))
    (graph,) = log.graphs
    assert len(graph.splits) == 11 and [split.number for split in graph.splits] == list(range(11))
    assert graph.splits[1].backend == "HTP0" and graph.splits[1].inputs == (("inp_embd", "7K"), ("inp_pos", "0K"))
    assert len(graph.nodes) == 48  # the views (RESHAPE, PERMUTE, VIEW) are not printed
    assert not {node.op for node in graph.nodes} & {"RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE"}
    mul = next(node for node in graph.nodes if node.name == "attn_norm-0")
    assert [source.name for source in mul.sources] == ["norm-0", "blk.0.attn_norm.weig"]  # cut to 20
    rms = graph.nodes[1]
    assert rms.op == "RMS_NORM" and rms.sources[0].name == "HTP0#inp_embd#0"  # the split's copy of its input
    assert any(node.name == "ffn_swiglu_fused_out" for node in graph.nodes)  # ffn_swiglu_fused_out-0, cut
    assert log.torn_records == 0 and not log.unreadable


def test_torn_lines_read_as_the_untorn_dump_of_the_same_graph() -> None:
    torn = read_log(str(LOGS / "torn.log"))
    clean = read_log(str(LOGS / "two-builds.log"))  # its first build is the same one-layer graph
    assert torn.torn_records == 3 and not torn.unreadable
    strip = [(node.index, node.op, node.tensor, node.sources) for node in torn.graphs[0].nodes]
    assert strip == [(node.index, node.op, node.tensor, node.sources) for node in clean.graphs[0].nodes]
    # the other threads' supports-op lines are read too, at their own line numbers
    other = [record for record in torn.hex_records if isinstance(record, SupportsOp) and record.session == "HTP1"]
    assert len(other) == 3 and all(record.names.output == "Kcur-3" for record in other)


def test_two_graph_builds_are_two_graphs() -> None:
    log = read_log(str(LOGS / "two-builds.log"))
    assert [len(graph.nodes) for graph in log.graphs] == [26, 27]  # SiLU * up is one node more than SwiGLU
    assert [graph.splits[0].number for graph in log.graphs] == [0, 0]
    assert log.graphs[0].end_line < log.graphs[1].line


def test_a_dump_whose_split_header_was_lost_still_starts_a_new_graph() -> None:
    text = (LOGS / "two-builds.log").read_text()
    second = text.index("\n## SPLIT #0", text.index("reserving"))
    lost = text[:second] + text[second:].replace("## SPLIT #0: CPU # 0 inputs\n", "", 1)
    assert len(parse_log(lost, "lost.log").graphs) == 2


def test_with_the_tree_each_boundary_has_its_class_and_predicate(table) -> None:
    report = analyse([read_log(str(LOGS / "transformer-layer.log"))], table, DEFAULT_NPU_PATTERN, str(TREE))
    assert boundaries(report) == [
        ("hard", "SET_ROWS", "cache_k_l0 (view)"),
        ("movable", "SOFT_MAX", "kq_soft_max-0"),
        ("hard", "SET_ROWS", "cache_k_l1 (view)"),
        ("movable", "SOFT_MAX", "kq_soft_max-1"),
        ("free", "MUL_MAT", "result_output"),
    ]
    (graph,) = report.graphs
    assert (len(graph.segments), graph.floor, graph.splits) == (5, 3, 11)
    # The CPU reads the NPU's host buffers in place: its split lists no inputs, yet SET_ROWS is not free.
    assert read_log(str(LOGS / "transformer-layer.log")).graphs[0].splits[2].n_inputs == 0
    softmax = graph.boundaries[1]
    assert softmax.predicate == "ggml_hexagon_supported_softmax"
    assert softmax.reached.startswith("ggml_backend_hexagon_device_supports_op -> ggml_hexagon_supported_softmax (")
    assert softmax.rejections == ("src1 && src1->type != GGML_TYPE_F32",) and softmax.tests == ("types",)
    assert softmax.layer == 0 and graph.boundaries[2].layer == 1
    assert "output.weight (CPU)" in graph.boundaries[4].reason
    by_op = {(op.op, op.kind): op.boundaries for op in report.ops}
    assert by_op == {("SET_ROWS", "hard"): 2, ("SOFT_MAX", "movable"): 2, ("MUL_MAT", "free"): 1}


def test_without_the_tree_the_log_decides_hard_or_movable() -> None:
    log = read_log(str(LOGS / "transformer-layer.log"))
    assert [kind for kind, _, _ in boundaries(analyse([log], None, DEFAULT_NPU_PATTERN, None))] == [
        "hard", "hard", "hard", "hard", "free"
    ]  # fmt: skip
    # one softmax node the backend took elsewhere in the log: a kernel exists, so the others are movable
    accepted = (
        "ggml-hex: HTP0 supports-op SOFT_MAX|x x m -> y|32:7 x 32:7 -> 32:7|f32 x f32 -> f32|"
        "4:128 x 4:128 -> 4:128|NONE x NONE -> NONE|yes\n"
    )
    log = parse_log(accepted + (LOGS / "transformer-layer.log").read_text(), "x.log")
    kinds = [(kind, op) for kind, op, _ in boundaries(analyse([log], None, DEFAULT_NPU_PATTERN, None))]
    assert kinds == [("hard", "SET_ROWS"), ("movable", "SOFT_MAX"), ("hard", "SET_ROWS"), ("movable", "SOFT_MAX"),
                     ("free", "MUL_MAT")]  # fmt: skip


def test_a_truncated_backend_name_is_the_split_headers_whole_name(table) -> None:
    report = analyse([read_log(str(LOGS / "snapdragon-mixed.log"))], table, DEFAULT_NPU_PATTERN, None)
    (graph,) = report.graphs
    assert graph.boundaries[1].backend == "OpenCL" and "OpenCL" in graph.backends  # `OpenC` in node lines
    assert graph.boundaries[1].kind == "movable"


def test_free_boundaries_zero_input_split_and_supported_node(table) -> None:
    gen = generator()
    model = gen.Model()
    leaf = gen.graph_input("inp_scale", (256, 7, 1, 1))
    a = gen.Tensor("a-0", "RMS_NORM", (256, 7, 1, 1), "f32", [leaf], backend="HTP0", supported=True)
    b = gen.Tensor("b-0", "ADD", (256, 7, 1, 1), "f32", [leaf, leaf], backend="CPU", supported=False)
    c = gen.Tensor("c-0", "MUL", (256, 7, 1, 1), "f32", [b, leaf], backend="HTP0", supported=True)
    d = gen.Tensor("d-0", "ADD", (256, 7, 1, 1), "f32", [c, c], backend="CPU", supported=True)
    assert model.npu == "HTP0"
    text = gen.graph_log([a, b, c, d])
    assert "## SPLIT #1: CPU # 0 inputs" in text
    report = analyse([parse_log(text, "free.log")], table, DEFAULT_NPU_PATTERN, None)
    kinds = [(boundary.kind, boundary.tensor) for boundary in report.graphs[0].boundaries]
    assert kinds == [("free", "b-0"), ("free", "d-0")]
    assert "no inputs" in report.graphs[0].boundaries[0].reason
    assert "supports_op took it" in report.graphs[0].boundaries[1].reason


def test_a_buffer_rejection_of_an_intermediate_is_movable(table) -> None:
    gen = generator()
    leaf = gen.graph_input("x", (256, 7, 1, 1))
    a = gen.Tensor("a-0", "RMS_NORM", (256, 7, 1, 1), "f32", [leaf], backend="HTP0", supported=True)
    b = gen.Tensor("b-0", "ADD", (256, 7, 1, 1), "f32", [a, a], backend="CPU", supported=False)
    a.buffer = "CPU"  # an intermediate the NPU produced, in a CPU buffer: not by design
    report = analyse([parse_log(gen.graph_log([a, b]), "buf.log")], table, DEFAULT_NPU_PATTERN, None)
    (boundary,) = report.graphs[0].boundaries
    assert boundary.kind == "movable" and boundary.predicate == "ggml_hexagon_supported_buffers"


# ------------------------------------------------------------------ the op table (backend model)


def test_the_op_table_reads_cases_predicates_mapping_and_dispatch(table) -> None:
    assert table.supports_op == "ggml_backend_hexagon_device_supports_op"
    assert table.support("SET_ROWS") is None
    softmax = table.support("SOFT_MAX")
    assert (softmax.predicate, softmax.htp_ops, softmax.kernel) == (
        "ggml_hexagon_supported_softmax", ("HTP_OP_SOFTMAX",), True
    )  # fmt: skip
    assert table.support("CONT").htp_ops == ("HTP_OP_CPY",)
    assert table.support("SWIGLU").predicate == "ggml_hexagon_supported_activations"  # a case of the GLU switch
    assert table.support("VIEW").always and not table.support("VIEW").kernel
    gelu = table.support("GELU")  # declared in the tree's ggml_unary_op, no case of its own
    assert gelu is not None and gelu.label == "GGML_OP_UNARY" and not gelu.kernel
    assert table.buffer_checks == ("ggml_hexagon_supported_buffers",)
    kinds = [sorted(rejection.kinds) for rejection in table.predicates["ggml_hexagon_supported_rope"].rejections]
    assert kinds == [["op-params"], ["types"], ["strides"], ["session"]]
    assert table.resolve("FLASH_ATTN") == "FLASH_ATTN"  # not an op this tree knows: kept as printed


def test_an_op_the_host_maps_but_no_kernel_dispatches_is_hard(tmp_path: Path) -> None:
    host = (
        (TREE / "host" / "ggml-hexagon.cpp")
        .read_text()
        .replace('#include "../htp/htp-ops.h"', '#include "htp/htp-ops.h"')
    )
    kernel = (
        (TREE / "htp" / "main.c")
        .read_text()
        .replace("        case HTP_OP_ROPE:\n            return op_rope(op);\n", "")
    )
    project = project_of(
        tmp_path,
        {"htp/htp-ops.h": (TREE / "htp" / "htp-ops.h").read_text(), "htp/main.c": kernel, "ggml-hexagon.cpp": host},
    )
    table = model_of(project).op_table()
    rope = table.support("ROPE")
    assert rope.htp_ops == ("HTP_OP_ROPE",) and not rope.kernel
    assert table.support("MUL_MAT").kernel


# ------------------------------------------------------------------ predicates against a supports-op line


def supports(fields: str) -> SupportsOp:
    record = parse_line(f"ggml-hex: HTP0 supports-op {fields}", "t.log", 1)
    assert isinstance(record, SupportsOp)
    return record


def test_a_type_rejection_holds_and_a_passing_one_does_not(table) -> None:
    softmax = table.predicates["ggml_hexagon_supported_softmax"]
    f16_mask = supports(
        "SOFT_MAX|kq x m -> s|32:7 x 32:7 -> 32:7|f32 x f16 -> f32|4:128 x 2:64 -> 4:128|NONE x NONE -> NONE|no"
    )
    assert [r.text for r in judge(softmax, f16_mask).rejected_by] == ["src1 && src1->type != GGML_TYPE_F32"]
    wide_mask = supports(
        "SOFT_MAX|kq x m -> s|32:7 x 64:7 -> 32:7|f32 x f32 -> f32|4:128 x 4:256 -> 4:128|NONE x NONE -> NONE|no"
    )
    assert [r.text for r in judge(softmax, wide_mask).rejected_by] == ["src1 && src1->ne[0] != src0->ne[0]"]
    no_mask = supports("SOFT_MAX|kq -> s|32:7 -> 32:7|f32 -> f32|4:128 -> 4:128|NONE -> NONE|no")
    verdict = judge(softmax, no_mask)
    assert not verdict.rejected_by and [r.text for r in verdict.possible] == ["!(sess->id >= 0)"]


def test_op_params_and_strides_rejections(table) -> None:
    rope = table.predicates["ggml_hexagon_supported_rope"]
    strided = supports(
        "ROPE|q x p -> r|64:4:7:1 x 7:1 -> 64:4:7:1|f32 x i32 -> f32|8:512:2048:14336! x 4:28 -> 4:256:1024:7168|"
        "NONE x NONE -> NONE|no"
    )
    verdict = judge(rope, strided)
    assert [r.text for r in verdict.rejected_by] == ["op->src[0]->nb[0] != sizeof(float)"]
    assert "mode & 1" in [r.text for r in verdict.possible]  # op params: the log cannot show them
    cont = table.predicates["ggml_hexagon_supported_cont"]
    permuted = supports("CONT|x -> y|64:4:7:1 -> 256:7|f32 -> f32|4:1792:256:7168! -> 4:1024!|NONE -> NONE|no")
    assert judge(cont, permuted).rejected_by
    dense = supports("CONT|x -> y|64:4:7:1 -> 256:7|f32 -> f32|4:1792:256:7168! -> 4:1024|NONE -> NONE|no")
    assert not judge(cont, dense).rejected_by


def test_operand_fields_split_inputs_and_output() -> None:
    assert OperandFields.parse("a x b -> c") == OperandFields(("a", "b"), "c")
    assert OperandFields.parse("c") == OperandFields((), "c")


# ------------------------------------------------------------------ the command


def test_text_report_names_floor_and_ops() -> None:
    run = run_hexlint("splits", "--tree", str(TREE), str(LOGS / "transformer-layer.log"))
    assert run.status == 0, run.stderr
    assert "5 NPU segments, floor 3 (2 hard + 1)" in run.stdout
    assert "movable  SOFT_MAX       kq_soft_max-0" in run.stdout
    assert "hard     SET_ROWS         2 in 1 graph" in run.stdout


def test_json_report(tmp_path: Path) -> None:
    out = tmp_path / "splits.json"
    run = run_hexlint("splits", "--format", "json", "--output", str(out), str(LOGS / "two-builds.log"))
    assert run.status == 0 and run.stdout == ""
    data = json.loads(out.read_text())
    assert [graph["floor"] for graph in data["graphs"]] == [3, 3]
    assert [b["op"] for b in data["graphs"][1]["boundaries"]] == ["SET_ROWS", "SOFT_MAX", "MUL_MAT"]


def test_a_log_without_a_dump_is_nothing_to_analyse() -> None:
    run = run_hexlint("splits", str(LOGS / "no-dump.log"))
    assert run.status == 2 and run.stdout == ""
    assert run.stderr.startswith("hexlint: error: ") and "GGML_SCHED_DEBUG=2" in run.stderr
    assert run.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["missing.log"], "missing.log: cannot read"),
        (["--tree", "no-such-dir", "LOG"], "--tree: no-such-dir: not a directory"),
        (["--npu", "(", "LOG"], "--npu: (: not a regular expression"),
        (["--format", "pdf", "LOG"], "argument --format: invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(arguments: list[str], message: str) -> None:
    arguments = [str(LOGS / "transformer-layer.log") if item == "LOG" else item for item in arguments]
    run = run_hexlint("splits", *arguments)
    assert run.status == 2 and message in run.stderr and run.stderr.count("\n") == 1


def test_a_null_test_of_an_operand_is_its_presence(tmp_path: Path) -> None:
    host = """
        #include <stddef.h>
        enum ggml_type { GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1 };
        struct ggml_tensor { enum ggml_type type; struct ggml_tensor * src[4]; };
        static bool ggml_hexagon_supported_scale(const struct ggml_tensor * op) {
            const struct ggml_tensor * bias = op->src[1];
            if (bias != NULL && bias->type != GGML_TYPE_F32) {
                return false;
            }
            if (bias == NULL && op->src[0]->type != GGML_TYPE_F32) {
                return false;
            }
            return true;
        }
    """
    table = model_of(project_of(tmp_path, {"host.cpp": host})).op_table()
    predicate = table.predicates["ggml_hexagon_supported_scale"]
    with_f16_bias = supports(
        "SCALE|x x b -> y|4:4 x 4:4 -> 4:4|f32 x f16 -> f32|4:16 x 2:8 -> 4:16|NONE x NONE -> NONE|no"
    )
    assert [r.text for r in judge(predicate, with_f16_bias).rejected_by] == [
        "bias != NULL && bias->type != GGML_TYPE_F32"
    ]
    no_bias = supports("SCALE|x -> y|4:4 -> 4:4|f16 -> f32|2:8 -> 4:16|NONE -> NONE|no")
    assert [r.text for r in judge(predicate, no_bias).rejected_by] == [
        "bias == NULL && op->src[0]->type != GGML_TYPE_F32"
    ]


def test_an_op_name_cut_to_ten_characters_is_the_supports_op_lines_whole_name(table) -> None:
    gen = generator()
    leaf = gen.graph_input("q", (64, 7, 4, 1))
    a = gen.Tensor("q_scaled-0", "SCALE", (64, 7, 4, 1), "f32", [leaf], backend="HTP0", supported=True)
    b = gen.Tensor("fattn-0", "FLASH_ATTN_EXT", (64, 4, 7, 1), "f32", [a, leaf], backend="CPU", supported=False)
    text = gen.graph_log([a, b])
    assert "(FLASH_ATTN):" in text
    report = analyse([parse_log(text, "fa.log")], table, DEFAULT_NPU_PATTERN, None)
    (boundary,) = report.graphs[0].boundaries
    assert (boundary.op, boundary.kind) == ("FLASH_ATTN_EXT", "hard")
    unlogged = "".join(line + "\n" for line in text.splitlines() if "supports-op" not in line)
    (boundary,) = analyse([parse_log(unlogged, "fa.log")], table, DEFAULT_NPU_PATTERN, None).graphs[0].boundaries
    assert boundary.op == "FLASH_ATTN"  # no line to read the whole name from, and no op of the tree starts so


def test_per_layer_counts_and_floor() -> None:
    run = run_hexlint("splits", "--tree", str(TREE), str(LOGS / "transformer-layer.log"))
    assert "per layer: 0: 1 hard, 1 movable (floor 2); 1: 1 hard, 1 movable (floor 2)" in run.stdout


def test_a_record_that_does_not_parse_is_named_and_left_out(tmp_path: Path) -> None:
    text = (LOGS / "transformer-layer.log").read_text()
    broken = text.replace(
        "node #  3 (   MUL_MAT):               Qcur-0 (   7K) [ HTP0", "node #  3 (   MUL_MAT): Qcur", 1
    )
    log = tmp_path / "broken.log"
    log.write_bytes(broken.encode() + b"\xff\xfe not UTF-8\n")
    parsed = read_log(str(log))
    assert len(parsed.unreadable) == 1 and len(parsed.graphs[0].nodes) == 47
    run = run_hexlint("splits", str(log))
    assert run.status == 0 and f"{log}:{parsed.unreadable[0]}: warning: a dump record that does not parse" in run.stdout


def test_the_op_table_alone() -> None:
    run = run_hexlint("splits", "--tree", str(TREE), "--op-table")
    assert run.status == 0
    assert "  SOFT_MAX         HTP kernel (HTP_OP_SOFTMAX) if ggml_hexagon_supported_softmax accepts" in run.stdout
    assert "SET_ROWS" not in run.stdout.split("Ops with no case")[0]
    data = json.loads(run_hexlint("splits", "--tree", str(TREE), "--op-table", "--format", "json").stdout)
    rope = next(row for row in data["ops"] if row["op"] == "ROPE")
    assert rope["kernel"] and next(r["tests"] for r in rope["rejections"]) == ["op-params"]
    missing = run_hexlint("splits", "--op-table")
    assert missing.status == 2 and "--op-table: needs --tree PATH" in missing.stderr
    assert "give the logs to read" in run_hexlint("splits").stderr


def test_a_rejection_under_an_if_keeps_its_or_together(tmp_path: Path) -> None:
    host = """
        struct ggml_tensor { int type; struct ggml_tensor * src[4]; };
        bool ggml_is_contiguous(const struct ggml_tensor * t);
        static bool ggml_hexagon_supported_norm(const struct ggml_tensor * op) {
            const struct ggml_tensor * src1 = op->src[1];
            if (src1) {
                if (!ggml_is_contiguous(src1) || !ggml_is_contiguous(op)) {
                    return false;
                }
            }
            return true;
        }
    """
    table = model_of(project_of(tmp_path, {"host.cpp": host})).op_table()
    (rejection,) = table.predicates["ggml_hexagon_supported_norm"].rejections
    assert rejection.text == "src1 && (!ggml_is_contiguous(src1) || !ggml_is_contiguous(op))"


def test_a_checker_named_otherwise_is_the_cases_predicate(tmp_path: Path) -> None:
    host = """
        enum ggml_op { GGML_OP_NONE, GGML_OP_ROPE };
        struct ggml_tensor { enum ggml_op op; int type; };
        void log_op(const struct ggml_tensor * op);
        static bool rope_ok(const struct ggml_tensor * op) {
            if (op->type != 0) {
                return false;
            }
            return true;
        }
        bool my_supports_op(const struct ggml_tensor * op) {
            bool supp = false;
            switch (op->op) {
                case GGML_OP_ROPE:
                    log_op(op);
                    supp = rope_ok(op);
                    break;
                default:
                    break;
            }
            return supp;
        }
    """
    table = model_of(project_of(tmp_path, {"host.cpp": host})).op_table()
    assert table.support("ROPE").predicate == "rope_ok"
    assert [r.text for r in table.predicates["rope_ok"].rejections] == ["op->type != 0"]


def test_a_build_without_supports_op_lines_of_its_own_reads_the_earlier_ones(table) -> None:
    text = (LOGS / "two-builds.log").read_text()
    start = text.index("llama_context: reserving")
    second = "".join(line + "\n" for line in text[start:].splitlines() if "supports-op" not in line)
    report = analyse([parse_log(text[:start] + second, "x.log")], table, DEFAULT_NPU_PATTERN, None)
    assert [b.kind for b in report.graphs[1].boundaries] == ["hard", "movable", "free"]


def test_llama_log_prefixes_between_the_pieces_of_a_record_are_read_around() -> None:
    prefixed = read_log(str(LOGS / "prefixed.log"))  # --log-prefix --log-timestamps: one per log call
    plain = read_log(str(LOGS / "torn.log"))  # the same graph
    assert not prefixed.unreadable
    assert [(n.index, n.op, n.tensor, n.sources) for n in prefixed.graphs[0].nodes] == [
        (n.index, n.op, n.tensor, n.sources) for n in plain.graphs[0].nodes
    ]
    assert [(s.number, s.backend, s.inputs) for s in prefixed.graphs[0].splits] == [
        (s.number, s.backend, s.inputs) for s in plain.graphs[0].splits
    ]
    supports = [record for record in prefixed.hex_records if isinstance(record, SupportsOp)]
    assert len(supports) == 33 and supports[0].op == "GET_ROWS"
