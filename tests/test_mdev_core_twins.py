"""Broken twins of the audited core for the multi-device rules: the core is clean, and one small edit that breaks a
rule of the guide's multi-device sections makes exactly that rule fire, where the edit is."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_hexlint

CORE = REPO_ROOT / "fixtures" / "htp-core"

# The op_binary writeback also stored through the DDR pointer: from a DMA-only writer to one writing DDR itself.
_CPU_WRITE = (
    "binary-ops.c",
    "        dma_queue_push(dmaq, dma_make_ptr(bctx->data_dst + od, d), nbd[1], pitch, rsize, bs);\n",
    "        dma_queue_push(dmaq, dma_make_ptr(bctx->data_dst + od, d), nbd[1], pitch, rsize, bs);\n"
    "        bctx->data_dst[od] = d[0];\n",
)

# (rule, or rule/what for a rule's second twin; edits as (file below htp/, old text, new text); the file and the
# text of the line the finding is on)
TWINS = {
    "HX120": (
        [("binary-ops.c", "htp_tensor_mdev_partition(kparams->total_rows,", "htp_tensor_mdev_partition(dst->ne[1],")],
        ("binary-ops.c", "htp_tensor_mdev_partition(dst->ne[1],"),
    ),
    "HX121": (
        [_CPU_WRITE],
        ("binary-ops.c", "htp_tensor_mdev_partition(kparams->total_rows,"),
    ),
    # The element split of FILL without the contiguity check: padded rows would tear lines between devices.
    "HX121/elements": (
        [
            (
                "fill-ops.c",
                "htp_tensor_is_contiguous(dst, elem_size) && htp_tensor_mdev_data_aligned(dst)",
                "htp_tensor_mdev_data_aligned(dst)",
            )
        ],
        ("fill-ops.c", "htp_tensor_mdev_partition(kparams->total_elems,"),
    ),
    # The element range used without the early return when this device has none.
    "HX122/elements": (
        [
            (
                "fill-ops.c",
                "    if (nelems == 0 || (octx->flags & HTP_OPFLAGS_SKIP_COMPUTE)) {",
                "    if (octx->flags & HTP_OPFLAGS_SKIP_COMPUTE) {",
            )
        ],
        ("fill-ops.c", "htp_tensor_mdev_partition(kparams->total_elems,"),
    ),
    "HX122": (
        [("binary-ops.c", "    if (octx->ctx->mdev.count > 1) {\n", "    {\n")],
        ("binary-ops.c", "htp_tensor_mdev_partition(kparams->total_rows,"),
    ),
    "HX123": (
        [
            (
                "binary-ops.c",
                "    for (uint32_t ir = ir0; ir < ir1;) {\n",
                "    uint32_t i02 = 0;\n    for (uint32_t ir = ir0; ir < ir1;) {\n",
            ),
            (
                "binary-ops.c",
                "        ir += bs;\n    }\n\n    // Epilogue",
                "        ir += bs;\n        i02 += bs;\n    }\n\n    // Epilogue",
            ),
        ],
        ("binary-ops.c", "    uint32_t i02 = 0;"),
    ),
    "HX124": (
        [_CPU_WRITE, ("main.c", "    htp_dcache_flush_dirty_tensors(octx->ctx);\n", "")],
        ("main.c", "    htp_mdev_group_barrier(&octx);\n    return"),
    ),
    "HX125": (
        [("htp-fence.h", "if ((int32_t) (peer_seq - seq) < 0) {", "if (peer_seq < seq) {")],
        ("htp-fence.h", "if (peer_seq < seq) {"),
    ),
}


def lint(tree: Path, code: str) -> list[dict]:
    result = run_hexlint("--select", code, "--format", "json", str(tree))
    assert result.status in (0, 1), result.stderr
    return json.loads(result.stdout)["diagnostics"]


def line_of(path: Path, text: str) -> int:
    """The line the text starts on (its first non-blank character's)."""
    data = path.read_text()
    assert data.count(text) == 1, (path, text)
    start = data.index(text) + len(text) - len(text.lstrip())
    return data[:start].count("\n") + 1


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_a_broken_twin_of_the_core_fires_the_rule_where_it_is_broken(twin: str, tmp_path: Path) -> None:
    code = twin.partition("/")[0]
    tree = tmp_path / "htp-core"
    for part in ("htp", "host", "include"):
        shutil.copytree(CORE / part, tree / part)
    assert lint(tree, code) == []  # the core itself is clean
    edits, (where, marker) = TWINS[twin]
    for name, old, new in edits:
        path = tree / "htp" / name
        data = path.read_text()
        assert data.count(old) == 1, (name, old)
        path.write_text(data.replace(old, new))
    findings = lint(tree, code)
    expected_line = line_of(tree / "htp" / where, marker)
    assert [(Path(f["path"]).name, f["code"], f["line"]) for f in findings] == [(where, code, expected_line)]


def test_the_unflushed_completion_names_the_flush_helper_the_tree_has(tmp_path: Path) -> None:
    """Trees name their flush helper differently: the advice names the first configured one the tree uses."""
    source = (REPO_ROOT / "fixtures" / "rules" / "HX124" / "unflushed.c").read_text()
    kernel = tmp_path / "htp" / "ops.c"
    kernel.parent.mkdir()
    kernel.write_text(source.replace("htp_dcache_flush_dirty_tensors", "htp_flush_dirty_ranges"))
    messages = {finding["message"] for finding in lint(tmp_path, "HX124") if "cache flush" in finding["message"]}
    assert messages and all("call `htp_flush_dirty_ranges()` first" in message for message in messages)
