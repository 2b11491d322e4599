"""The audited C core run under qemu-hexagon: host prep + integer kernels, checked against numpy.

The harness (fixtures/htp-core/qemu/harness.cpp) prepares each op with the host code (supports_op, kernel_params),
runs it through the NPU dispatcher, work queue and DMA queue, and prints inputs and outputs as hex. Here every
output is recomputed with numpy from the printed inputs. Integer ops and data movement must match exactly; the
q8_0 dot products accumulate in float32 and must be within 1e-5 of the float64 reference, relative to the sum of
the absolute block terms (plus 1e-6 absolute).

QEMU 7.2 has no IEEE-float HVX, so SILU/GELU, RMS_NORM, SOFTMAX and F32 ADD/MUL run in a second build of the same
harness on the host, with fixtures/htp-core/emu standing in for the HVX intrinsics (last section). The QEMU part
needs qemu-hexagon and rebuilds the harness when clang-22 is present, else runs the committed one.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from core_layout import decode_kernel_params

CORE = Path(__file__).resolve().parent.parent / "fixtures" / "htp-core"
COMMITTED_HARNESS = CORE / "qemu" / "htp-core-qemu"
UNTOUCHED = 0xEE  # the harness fills every dst with this byte before an op (a group's op: with 0x11 too)
FILLS = (0xEE, 0x11)
LINE = 128  # DDR cache line: devices never share one
TYPE_F32, TYPE_Q8_0, TYPE_I32 = 0, 8, 26
QK8_0 = 32

EXPECTED_CASES = {
    "supports_op",
    "float_kparams",
    "add_i32_contiguous",
    "add_i32_strided",
    "add_i32_mdev2",
    "add_i32_mdev_fallback",
    "mul_mat_q8_0",
    "mul_mat_q8_0_mdev2",
    "get_rows_f32",
    "get_rows_f32_mdev2",
    "fill_f32",
    "fill_f32_padded",
    "fill_f32_mdev2",
    "fill_f32_mdev_fallback",
    "fill_f32_mdev_one_line",
}


@dataclass(frozen=True)
class Tensor:
    type: int
    ne: tuple[int, int, int, int]
    nb: tuple[int, int, int, int]
    data: bytes

    @property
    def row_size(self) -> int:
        return self.ne[0] * 34 // QK8_0 if self.type == TYPE_Q8_0 else self.ne[0] * 4

    @property
    def nrows(self) -> int:
        return self.ne[1] * self.ne[2] * self.ne[3]

    def row_offset(self, row: int) -> int:
        i1, rest = row % self.ne[1], row // self.ne[1]
        i2, i3 = rest % self.ne[2], rest // self.ne[2]
        return i1 * self.nb[1] + i2 * self.nb[2] + i3 * self.nb[3]

    def row_bytes(self, row: int) -> bytes:
        offset = self.row_offset(row)
        return self.data[offset : offset + self.row_size]

    def rows(self, dtype: str) -> np.ndarray:
        return np.stack([np.frombuffer(self.row_bytes(r), dtype=dtype) for r in range(self.nrows)])


@dataclass
class Case:
    name: str
    tensors: dict[str, Tensor] = field(default_factory=dict)
    statuses: list[tuple[bool, str]] = field(default_factory=list)
    fences: list[tuple[str, int, bool]] = field(default_factory=list)  # (pre|post, device, reached), in order


def parse(output: str) -> tuple[dict[str, Case], str]:
    cases: dict[str, Case] = {}
    current: Case | None = None
    end = ""
    for line in output.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "case":
            current = cases.setdefault(rest, Case(rest))
        elif kind == "tensor" and current is not None:
            name, *numbers, hexdata = rest.split(" ")
            values = [int(n) for n in numbers]
            current.tensors[name] = Tensor(values[0], tuple(values[1:5]), tuple(values[5:9]), bytes.fromhex(hexdata))
        elif kind == "status" and current is not None:
            verdict, _, what = rest.partition(" ")
            current.statuses.append((verdict == "OK", what))
        elif kind == "fence" and current is not None:
            _name, fence, device, verdict = rest.split(" ")
            current.fences.append((fence, int(device), verdict == "reached"))
        elif kind == "end":
            end = rest
    return cases, end


def fresh_harness(tmp_dir: Path) -> Path:
    if shutil.which("clang-22") and shutil.which("clang++-22"):
        built = tmp_dir / "htp-core-qemu"
        subprocess.run([str(CORE / "qemu" / "build.sh"), str(built)], check=True, capture_output=True, text=True)
        return built
    return COMMITTED_HARNESS


def run_qemu(binary: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["qemu-hexagon", "-cpu", "v67", str(binary)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def qemu_result(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    if shutil.which("qemu-hexagon") is None:
        pytest.skip("needs qemu-hexagon (apt-get install qemu-user)")
    return run_qemu(fresh_harness(tmp_path_factory.mktemp("qemu")))


@pytest.fixture(scope="module")
def qemu_run(qemu_result: subprocess.CompletedProcess[str]) -> tuple[dict[str, Case], str, int]:
    cases, end = parse(qemu_result.stdout)
    return cases, end, qemu_result.returncode


# ---- expected multi-device split, written from the developer guide, independent of the C code ----


def rows_per_chunk(dst: Tensor) -> int:
    """Rows per 128-byte-aligned chunk of dst, 0 when dst cannot be split on lines (device 0 then does it all)."""
    if dst.nb[1] != dst.row_size:
        return 0
    chunk = LINE // math.gcd(dst.row_size, LINE)
    contiguous = dst.nb[2] == dst.nb[1] * dst.ne[1] and dst.nb[3] == dst.nb[2] * dst.ne[2]
    if contiguous:
        return chunk
    outer_on_lines = (dst.ne[2] == 1 or dst.nb[2] % LINE == 0) and (dst.ne[3] == 1 or dst.nb[3] % LINE == 0)
    return chunk if outer_on_lines and dst.ne[1] % chunk == 0 else 0


def partition(total: int, units_per_chunk: int, idx: int, count: int) -> range:
    chunks = total // units_per_chunk if units_per_chunk else 0
    if chunks < count:
        return range(0, total) if idx == 0 else range(0)
    per_device = chunks // count
    start = idx * per_device * units_per_chunk
    end = total if idx == count - 1 else start + per_device * units_per_chunk
    return range(start, end)


def group_snapshots(case: Case, fill: int) -> list[Tensor]:
    """The shared dst of a group's op, filled with `fill`, as it was after each device ran its slice."""
    names = sorted(name for name in case.tensors if name.startswith(f"fill{fill:02x}_dev"))
    return [case.tensors[name] for name in names]


def written_masks(case: Case) -> list[np.ndarray]:
    """Per device, the bytes of the shared dst it wrote: those that changed during its slice under either fill."""
    masks = []
    for fill in FILLS:
        snapshots = group_snapshots(case, fill)
        before = np.full(len(snapshots[0].data), fill, dtype=np.uint8) if snapshots else None
        for device, snapshot in enumerate(snapshots):
            after = np.frombuffer(snapshot.data, dtype=np.uint8)
            changed = after != before
            if len(masks) <= device:
                masks.append(changed)
            else:
                masks[device] = masks[device] | changed
            before = after
    return masks


def device_outputs(case: Case) -> list[Tensor]:
    """Per device, what it wrote into the shared dst, on an UNTOUCHED background (as if it had run alone)."""
    snapshots = group_snapshots(case, UNTOUCHED)
    if not snapshots:
        return []
    final = np.frombuffer(snapshots[-1].data, dtype=np.uint8)
    views = []
    for mask in written_masks(case):
        data = np.where(mask, final, np.uint8(UNTOUCHED)).astype(np.uint8).tobytes()
        views.append(Tensor(snapshots[0].type, snapshots[0].ne, snapshots[0].nb, data))
    return views


def assert_rows_untouched(dst: Tensor, rows: range | list[int]) -> None:
    for row in rows:
        assert set(dst.row_bytes(row)) == {UNTOUCHED}, f"row {row} was written"


def assert_only_rows_written(dst: Tensor) -> None:
    """Bytes that belong to no row (row padding, gaps) keep the fill value: DMA writes row_size bytes per row."""
    covered = np.zeros(len(dst.data), dtype=bool)
    for row in range(dst.nrows):
        offset = dst.row_offset(row)
        covered[offset : offset + dst.row_size] = True
    gaps = np.frombuffer(dst.data, dtype=np.uint8)[~covered]
    assert (gaps == UNTOUCHED).all()


# ---- the tests ----


def test_harness_ran_every_case_and_every_check_passed(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    cases, end, returncode = qemu_run
    assert set(cases) == EXPECTED_CASES
    failed = [(name, what) for name, case in cases.items() for ok, what in case.statuses if not ok]
    assert failed == []
    assert end == "OK"
    assert returncode == 0


def test_every_device_run_drained_its_dma_queue_and_closed_its_trace_events(
    qemu_run: tuple[dict[str, Case], str, int],
) -> None:
    cases, _, _ = qemu_run
    op_cases = [case for case in cases.values() if "dst" in case.tensors or device_outputs(case)]
    assert len(op_cases) == 13
    for case in op_cases:
        devices = len(device_outputs(case))
        runs_expected = devices * len(FILLS) if devices else 1  # a group's op runs once per fill
        drained = [what for ok, what in case.statuses if ok and "dma-and-trace-drained" in what]
        runs = [what for ok, what in case.statuses if ok and " run dev" in what]
        assert len(drained) == len(runs) == runs_expected, case.name


def add_reference(case: Case) -> np.ndarray:
    return case.tensors["src0"].rows("<i4") + case.tensors["src1"].rows("<i4")


@pytest.mark.parametrize("name", ["add_i32_contiguous", "add_i32_strided"])
def test_add_i32_matches_numpy_exactly(qemu_run: tuple[dict[str, Case], str, int], name: str) -> None:
    case = qemu_run[0][name]
    dst = case.tensors["dst"]
    np.testing.assert_array_equal(dst.rows("<i4"), add_reference(case))
    assert_only_rows_written(dst)


def test_add_i32_strided_really_is_strided(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    """The case exercises padded rows in src0/dst but dense src1: different strides per operand."""
    tensors = qemu_run[0]["add_i32_strided"].tensors
    assert tensors["src0"].nb[1] > tensors["src0"].row_size
    assert tensors["dst"].nb[1] > tensors["dst"].row_size
    assert tensors["src1"].nb[1] == tensors["src1"].row_size


def check_row_split(case: Case, reference: np.ndarray) -> list[range]:
    outputs = device_outputs(case)
    assert len(outputs) == 2
    chunk = rows_per_chunk(outputs[0])
    ranges = [partition(outputs[0].nrows, chunk, idx, len(outputs)) for idx in range(len(outputs))]
    covered: list[int] = []
    for dst, rows in zip(outputs, ranges, strict=True):
        got = dst.rows("<i4")
        np.testing.assert_array_equal(got[rows.start : rows.stop], reference[rows.start : rows.stop])
        assert_rows_untouched(dst, [r for r in range(dst.nrows) if r not in rows])
        covered.extend(rows)
    assert sorted(covered) == list(range(outputs[0].nrows))
    return ranges


def test_add_i32_two_devices_split_rows_on_cache_lines(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    case = qemu_run[0]["add_i32_mdev2"]
    ranges = check_row_split(case, add_reference(case))
    assert all(len(r) > 0 for r in ranges)
    boundary = device_outputs(case)[0].row_offset(ranges[1].start)
    assert boundary % LINE == 0


def test_add_i32_unsplittable_dst_falls_back_to_device_0(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    case = qemu_run[0]["add_i32_mdev_fallback"]
    assert rows_per_chunk(device_outputs(case)[0]) == 0
    ranges = check_row_split(case, add_reference(case))
    assert len(ranges[1]) == 0


FILL_GROUP_CASES = ["fill_f32_mdev2", "fill_f32_mdev_fallback", "fill_f32_mdev_one_line"]
GROUP_CASES = ["add_i32_mdev2", "add_i32_mdev_fallback", "mul_mat_q8_0_mdev2", "get_rows_f32_mdev2", *FILL_GROUP_CASES]


def bytes_of_rows(dst: Tensor) -> np.ndarray:
    rows = np.zeros(len(dst.data), dtype=bool)
    for row in range(dst.nrows):
        rows[dst.row_offset(row) : dst.row_offset(row) + dst.row_size] = True
    return rows


@pytest.mark.parametrize("name", ["add_i32_mdev2", "add_i32_mdev_fallback", "get_rows_f32_mdev2", *FILL_GROUP_CASES])
def test_no_cache_line_is_written_by_two_devices(qemu_run: tuple[dict[str, Case], str, int], name: str) -> None:
    """Byte by byte on the shared dst of a row split: the lines each device wrote are disjoint, and together they
    hold every byte of the result (the dst is 128-byte aligned, so line = offset // 128)."""
    case = qemu_run[0][name]
    masks = written_masks(case)
    assert len(masks) == 2
    lines = [set(np.flatnonzero(mask) // LINE) for mask in masks]
    assert lines[0] and not lines[0] & lines[1]
    assert ((masks[0] | masks[1]) == bytes_of_rows(group_snapshots(case, UNTOUCHED)[-1])).all()


def test_mul_mat_devices_share_lines_but_never_a_byte(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    """MUL_MAT splits dst columns (weight rows) in lines of 32 floats, but a dst row of 70 floats is not whole
    lines, so the devices meet inside lines of the later rows. Its dst is written by DMA only, which the guide
    exempts from line ownership (DMA writes DDR, no cache line is involved): the bytes must still be disjoint."""
    case = qemu_run[0]["mul_mat_q8_0_mdev2"]
    masks = written_masks(case)
    lines = [set(np.flatnonzero(mask) // LINE) for mask in masks]
    assert lines[0] & lines[1]  # what makes the DMA exemption matter here
    assert not (masks[0] & masks[1]).any()
    assert ((masks[0] | masks[1]) == bytes_of_rows(group_snapshots(case, UNTOUCHED)[-1])).all()


@pytest.mark.parametrize("name", GROUP_CASES)
def test_the_fences_release_no_device_before_every_peer_arrived(
    qemu_run: tuple[dict[str, Case], str, int], name: str
) -> None:
    """Per fill: device 0 asks before device 1 arrives (blocked), then every device asks (reached), at the pre-op
    fence and at the post-op fence. The post-op fence's sequence number wraps from 0xffffffff to 0: an unsigned
    comparison would have released device 0 early."""
    once = [
        ("pre", 0, False),
        ("pre", 0, True),
        ("pre", 1, True),
        ("post", 0, False),
        ("post", 0, True),
        ("post", 1, True),
    ]
    assert qemu_run[0][name].fences == once * len(FILLS)


def q8_0_rows(tensor: Tensor) -> tuple[np.ndarray, np.ndarray]:
    """Repacked q8_0 rows: ne0 int8 quants, then ne0/32 fp16 scales."""
    quants, scales = [], []
    k = tensor.ne[0]
    for row in range(tensor.nrows):
        data = tensor.row_bytes(row)
        quants.append(np.frombuffer(data[:k], dtype=np.int8).astype(np.int64))
        scales.append(np.frombuffer(data[k:], dtype="<f2").astype(np.float64))
    return np.stack(quants), np.stack(scales)


def mul_mat_reference(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """(reference[m, n], bound[m, n]): float64 dot products and the sum of |block terms| for the tolerance."""
    wq, wd = q8_0_rows(case.tensors["src0"])
    xq, xd = q8_0_rows(case.tensors["src1"])
    nblocks = wq.shape[1] // QK8_0
    block_sums = np.einsum("nbk,mbk->mnb", wq.reshape(-1, nblocks, QK8_0), xq.reshape(-1, nblocks, QK8_0))
    terms = block_sums * np.einsum("nb,mb->mnb", wd, xd)
    return terms.sum(axis=2), np.abs(terms).sum(axis=2)


def assert_close_to_reference(got: np.ndarray, reference: np.ndarray, bound: np.ndarray) -> None:
    error = np.abs(got.astype(np.float64) - reference)
    assert (error <= 1e-5 * bound + 1e-6).all(), f"max error {error.max()}"


def test_mul_mat_q8_0_matches_numpy(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    case = qemu_run[0]["mul_mat_q8_0"]
    reference, bound = mul_mat_reference(case)
    got = case.tensors["dst"].rows("<f4")
    assert got.shape == reference.shape
    assert_close_to_reference(got, reference, bound)
    assert np.abs(reference).max() > 1.0  # the inputs exercise real magnitudes, not zeros


def test_mul_mat_q8_0_two_devices_split_dst_columns(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    case = qemu_run[0]["mul_mat_q8_0_mdev2"]
    reference, bound = mul_mat_reference(case)
    outputs = device_outputs(case)
    n = reference.shape[1]
    # dst columns are weight rows; chunks of one cache line of floats
    ranges = [partition(n, LINE // 4, idx, len(outputs)) for idx in range(len(outputs))]
    assert all(len(r) > 0 for r in ranges)
    for dst, cols in zip(outputs, ranges, strict=True):
        raw = np.stack([np.frombuffer(dst.row_bytes(r), dtype=np.uint8).reshape(n, 4) for r in range(dst.nrows)])
        inside = raw[:, cols.start : cols.stop, :].copy().view("<f4")[..., 0]
        assert_close_to_reference(inside, reference[:, cols.start : cols.stop], bound[:, cols.start : cols.stop])
        outside = np.delete(raw, list(cols), axis=1)
        assert (outside == UNTOUCHED).all()


def get_rows_reference(case: Case, row: int) -> bytes:
    src0, idx = case.tensors["src0"], case.tensors["src1"]
    i10, i11 = row % idx.ne[0], row // idx.ne[0]
    index = int(np.frombuffer(idx.row_bytes(i11), dtype="<i4")[i10])
    return src0.row_bytes(index + i11 * src0.ne[1])


def test_get_rows_gathers_the_indexed_rows(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    case = qemu_run[0]["get_rows_f32"]
    dst = case.tensors["dst"]
    for row in range(dst.nrows):
        assert dst.row_bytes(row) == get_rows_reference(case, row), row
    indices = case.tensors["src1"].rows("<i4")
    assert len(np.unique(indices)) > 1


def test_get_rows_two_devices(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    case = qemu_run[0]["get_rows_f32_mdev2"]
    outputs = device_outputs(case)
    chunk = rows_per_chunk(outputs[0])
    assert chunk > 0
    seen: list[int] = []
    for idx, dst in enumerate(outputs):
        rows = partition(dst.nrows, chunk, idx, len(outputs))
        assert len(rows) > 0
        for row in rows:
            assert dst.row_bytes(row) == get_rows_reference(case, row)
        assert_rows_untouched(dst, [r for r in range(dst.nrows) if r not in rows])
        seen.extend(rows)
    assert sorted(seen) == list(range(outputs[0].nrows))


FILL_VALUES = {  # the value each FILL case of the harness writes
    "fill_f32": 2.5,
    "fill_f32_padded": -1.0,
    "fill_f32_mdev2": 0.75,
    "fill_f32_mdev_fallback": 3.0,
    "fill_f32_mdev_one_line": 5.0,
}


def assert_filled(dst: Tensor, value: float) -> None:
    """Every element holds the value; no byte outside the elements (row padding) was written."""
    assert (dst.rows("<f4") == np.float32(value)).all()
    assert_only_rows_written(dst)


@pytest.mark.parametrize("name", ["fill_f32", "fill_f32_padded"])
def test_fill_writes_every_element_and_nothing_else(qemu_run: tuple[dict[str, Case], str, int], name: str) -> None:
    assert_filled(qemu_run[0][name].tensors["dst"], FILL_VALUES[name])


def element_bytes(dst: Tensor, elements: range) -> np.ndarray:
    """The bytes of flat elements [start, stop) of a contiguous dst."""
    mask = np.zeros(len(dst.data), dtype=bool)
    mask[elements.start * 4 : elements.stop * 4] = True
    return mask


def test_fill_two_devices_split_the_flat_elements_on_cache_lines(qemu_run: tuple[dict[str, Case], str, int]) -> None:
    """An element-partitioned op: the guide's split of N = ne0 * ne1 * ne2 * ne3 elements in 128-byte lines
    (32 floats), the last device taking the remainder, each device writing exactly its elements."""
    case = qemu_run[0]["fill_f32_mdev2"]
    outputs, masks = device_outputs(case), written_masks(case)
    total = outputs[0].ne[0] * outputs[0].nrows
    ranges = [partition(total, LINE // 4, idx, 2) for idx in range(2)]
    assert ranges == [range(0, 128), range(128, 315)]  # not whole rows of 45: the split ignores rows
    for mask, elements in zip(masks, ranges, strict=True):
        assert (mask == element_bytes(outputs[0], elements)).all()
    assert_filled(group_snapshots(case, UNTOUCHED)[-1], FILL_VALUES["fill_f32_mdev2"])


@pytest.mark.parametrize("name", ["fill_f32_mdev_fallback", "fill_f32_mdev_one_line"])
def test_fill_that_cannot_be_split_on_lines_runs_on_device_0(
    qemu_run: tuple[dict[str, Case], str, int], name: str
) -> None:
    """Padded rows are not one contiguous run, and one whole line is fewer chunks than devices: device 0 fills
    everything, device 1 writes nothing."""
    case = qemu_run[0][name]
    masks = written_masks(case)
    assert not masks[1].any()
    final = group_snapshots(case, UNTOUCHED)[-1]
    assert (masks[0] == bytes_of_rows(final)).all()
    assert_filled(final, FILL_VALUES[name])


def test_committed_harness_matches_the_sources(tmp_path: Path) -> None:
    """The prebuilt harness (for machines without clang) prints exactly what a fresh build prints."""
    if shutil.which("qemu-hexagon") is None or shutil.which("clang-22") is None:
        pytest.skip("needs qemu-hexagon and clang-22")
    fresh = run_qemu(fresh_harness(tmp_path))
    committed = run_qemu(COMMITTED_HARNESS)
    assert committed.returncode == fresh.returncode == 0
    assert committed.stdout == fresh.stdout


# ---- host side of the ops QEMU cannot run: supports_op decisions and kernel_params ----

HTP_MAX_NTHREADS = 8

EXPECTED_SUPPORT = {
    "softmax": True,
    "softmax_mask": True,
    "softmax_mask_f16": False,
    "softmax_mask_short": False,
    "softmax_alibi": False,
    "rms_norm": True,
    "rms_norm_eps0": False,
    "silu": True,
    "gelu": True,
    "neg": False,
    "add_f32": True,
    "mul_f32": True,
    "mul_f32_broadcast": False,
    "add_i32": True,
    "mul_i32": False,
    "mul_mat_q8_0": True,
    "mul_mat_f32_activations": False,
    "mul_mat_k96": False,
    "get_rows": True,
    "get_rows_f16": False,
}


def harness_records(output: str, kind: str) -> dict[str, list[str]]:
    return {fields[1]: fields[2:] for line in output.splitlines() if (fields := line.split(" "))[0] == kind}


@pytest.fixture(scope="module")
def qemu_stdout(qemu_result: subprocess.CompletedProcess[str]) -> str:
    return qemu_result.stdout


def test_supports_op_decides_from_static_properties_only(qemu_stdout: str) -> None:
    """Each decision is made twice: with buffer/data/extra set, then all NULL (as at scheduling time)."""
    records = harness_records(qemu_stdout, "supports")
    decisions = {name: (values[0] == "1", values[1] == "1") for name, values in records.items()}
    assert {name: with_buffers for name, (with_buffers, _) in decisions.items()} == EXPECTED_SUPPORT
    assert all(with_buffers == without for with_buffers, without in decisions.values())


def assert_fastdiv(values: tuple[int, int], divisor: int) -> None:
    mp, shift = values
    for n in [*range(0, 4096), 65535, 1 << 20, (1 << 31) - 1]:
        assert ((n * mp >> 32) + n) >> shift == n // divisor, (n, divisor)


def assert_row_split(kp: dict[str, object], total_rows: int, ne0: int, session_threads: int, vtcm: int) -> None:
    n_threads = kp["n_threads"]
    assert n_threads == min(session_threads, HTP_MAX_NTHREADS, total_rows)
    assert kp["total_rows"] == total_rows
    per_thread = kp["rows_per_thread"]
    assert per_thread * n_threads >= total_rows > (per_thread - 1) * n_threads
    assert kp["row_size"] == ne0 * 4
    assert kp["row_size_aligned"] == -(-ne0 * 4 // 128) * 128
    assert 1 <= kp["block"] <= per_thread
    assert kp["vtcm_half_size"] == kp["block"] * kp["row_size_aligned"]
    assert kp["vtcm_size_per_thread"] == 2 * kp["vtcm_half_size"]
    assert 2 * kp["vtcm_size_per_thread"] * n_threads <= vtcm  # src + dst buffers of every thread fit
    # contiguous operands: one flat run of rows
    assert (kp["ne1"], kp["ne2"]) == (total_rows, 1)
    assert_fastdiv(kp["div_ne1"], kp["ne1"])
    assert_fastdiv(kp["div_ne2"], kp["ne2"])
    assert kp["mdev_rows_per_chunk"] == 0  # single device


def kparams_record(qemu_stdout: str, name: str) -> tuple[int, bytes]:
    opcode, data = harness_records(qemu_stdout, "kparams")[name]
    return int(opcode), bytes.fromhex(data)


def test_rms_norm_kernel_params(qemu_stdout: str) -> None:
    opcode, data = kparams_record(qemu_stdout, "rms_norm")
    kp = decode_kernel_params("htp_norm_kernel_params", data)
    assert opcode == 3  # HTP_OP_RMS_NORM
    assert_row_split(kp, total_rows=21, ne0=100, session_threads=4, vtcm=64 * 1024)
    assert (kp["nvec_full"], kp["tail_bytes"]) == (3, 16)
    assert kp["eps"] == np.float32(1e-5)
    assert kp["inv_ne0"] == np.float32(1.0) / np.float32(100.0)


def test_softmax_kernel_params(qemu_stdout: str) -> None:
    opcode, data = kparams_record(qemu_stdout, "softmax")
    kp = decode_kernel_params("htp_softmax_kernel_params", data)
    assert opcode == 6  # HTP_OP_SOFTMAX
    assert_row_split(kp, total_rows=21, ne0=100, session_threads=4, vtcm=64 * 1024)
    assert (kp["nvec_full"], kp["tail_bytes"]) == (3, 16)
    assert kp["scale"] == 0.125


def test_gelu_kernel_params_clamp_threads_to_the_npu(qemu_stdout: str) -> None:
    """The session asks for 16 threads; the NPU has HTP_MAX_NTHREADS DMA queues and trace buffers."""
    opcode, data = kparams_record(qemu_stdout, "gelu")
    kp = decode_kernel_params("htp_unary_kernel_params", data)
    assert opcode == 5  # HTP_OP_UNARY_GELU
    assert_row_split(kp, total_rows=10, ne0=70, session_threads=16, vtcm=16 * 1024)
    assert kp["nvec"] == kp["row_size_aligned"] // 128


# ---- the same harness on the host, HVX intrinsics emulated (fixtures/htp-core/emu): the float kernels ----
#
# QEMU cannot run qf32/IEEE-float HVX, so the float kernels run natively with emu/hexagon_protos.h standing in
# for the intrinsics (qf32 modelled as IEEE float). The emulation itself is checked against QEMU on every integer
# case. Tolerances against float64 numpy: ADD/MUL exact in float32; SILU, GELU, RMS_NORM and SOFTMAX within
# 1e-5 relative + 1e-6 absolute (the exp polynomial and Newton steps are good to about 4e-6 relative).

FLOAT_CASES = {
    "add_f32_strided",
    "mul_f32",
    "silu_f32",
    "gelu_f32",
    "rms_norm_f32",
    "rms_norm_f32_mdev2",
    "softmax_f32",
    "softmax_f32_tail4",
    "softmax_f32_mask",
}


@pytest.fixture(scope="module")
def emu_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Case], str, str]:
    if shutil.which("clang-22") is None or shutil.which("clang++-22") is None:
        pytest.skip("needs clang-22 and clang++-22 to build the host harness")
    binary = tmp_path_factory.mktemp("emu") / "htp-core-emu"
    subprocess.run([str(CORE / "emu" / "build.sh"), str(binary)], check=True, capture_output=True, text=True)
    result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    cases, end = parse(result.stdout)
    return cases, end, result.stdout


def test_emulated_run_passes_every_check(emu_run: tuple[dict[str, Case], str, str]) -> None:
    cases, end, _ = emu_run
    assert set(cases) == EXPECTED_CASES | FLOAT_CASES
    assert [(name, what) for name, case in cases.items() for ok, what in case.statuses if not ok] == []
    assert end == "OK"


def test_emulation_agrees_with_qemu_on_the_integer_cases(
    emu_run: tuple[dict[str, Case], str, str], qemu_run: tuple[dict[str, Case], str, int]
) -> None:
    """Same inputs, same kernels: integer results are identical; the q8_0 float accumulation may differ in the
    last bits (Hexagon fuses the multiply-add, the host does not)."""
    emulated, _, _ = emu_run
    qemu_cases, _, _ = qemu_run
    assert set(qemu_cases) <= set(emulated)
    for name, case in qemu_cases.items():
        for tensor_name, tensor in case.tensors.items():
            other = emulated[name].tensors[tensor_name]
            if name.startswith("mul_mat") and tensor_name.startswith(("dst", "fill")):
                np.testing.assert_allclose(other.rows("<f4"), tensor.rows("<f4"), rtol=1e-5, atol=1e-6)
            else:
                assert other == tensor, (name, tensor_name)


def close_enough(got: np.ndarray, reference: np.ndarray) -> None:
    error = np.abs(got.astype(np.float64) - reference)
    assert (error <= 1e-5 * np.abs(reference) + 1e-6).all(), f"max error {error.max()}"


@pytest.mark.parametrize(("name", "op"), [("add_f32_strided", np.add), ("mul_f32", np.multiply)])
def test_binary_f32(emu_run: tuple[dict[str, Case], str, str], name: str, op: np.ufunc) -> None:
    case = emu_run[0][name]
    expected = op(case.tensors["src0"].rows("<f4"), case.tensors["src1"].rows("<f4"))
    np.testing.assert_array_equal(case.tensors["dst"].rows("<f4"), expected)
    assert_only_rows_written(case.tensors["dst"])


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1.0 + np.exp(-x))


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize(("name", "function"), [("silu_f32", silu), ("gelu_f32", gelu)])
def test_activations(emu_run: tuple[dict[str, Case], str, str], name: str, function) -> None:
    case = emu_run[0][name]
    x = case.tensors["src0"].rows("<f4").astype(np.float64)
    assert x.min() < -5 and x.max() > 5  # both tails of the sigmoid
    close_enough(case.tensors["dst"].rows("<f4"), function(x))


def rms_norm(x: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt((x**2).mean(axis=1, keepdims=True) + eps)


def test_rms_norm(emu_run: tuple[dict[str, Case], str, str]) -> None:
    case = emu_run[0]["rms_norm_f32"]
    x = case.tensors["src0"].rows("<f4").astype(np.float64)
    assert x.shape[1] * 4 % 128 != 0  # the row ends in a partial vector: the tail mask matters
    close_enough(case.tensors["dst"].rows("<f4"), rms_norm(x, float(np.float32(1e-5))))


def test_rms_norm_two_devices(emu_run: tuple[dict[str, Case], str, str]) -> None:
    case = emu_run[0]["rms_norm_f32_mdev2"]
    reference = rms_norm(case.tensors["src0"].rows("<f4").astype(np.float64), float(np.float32(1e-6)))
    outputs = device_outputs(case)
    chunk = rows_per_chunk(outputs[0])
    seen: list[int] = []
    for idx, dst in enumerate(outputs):
        rows = partition(dst.nrows, chunk, idx, len(outputs))
        assert len(rows) > 0
        close_enough(dst.rows("<f4")[rows.start : rows.stop], reference[rows.start : rows.stop])
        assert_rows_untouched(dst, [r for r in range(dst.nrows) if r not in rows])
        seen.extend(rows)
    assert sorted(seen) == list(range(outputs[0].nrows))


@pytest.mark.parametrize(("name", "scale"), [("softmax_f32", 0.5), ("softmax_f32_tail4", 1.0)])
def test_softmax(emu_run: tuple[dict[str, Case], str, str], name: str, scale: float) -> None:
    case = emu_run[0][name]
    x = case.tensors["src0"].rows("<f4").astype(np.float64) * scale
    e = np.exp(x - x.max(axis=1, keepdims=True))
    got = case.tensors["dst"].rows("<f4")
    close_enough(got, e / e.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


def test_softmax_with_optional_mask(emu_run: tuple[dict[str, Case], str, str]) -> None:
    """The mask row is the dim-1 index of the row, shared by every (i2, i3); -inf entries get probability 0."""
    case = emu_run[0]["softmax_f32_mask"]
    src, mask = case.tensors["src0"], case.tensors["src1"]
    x = src.rows("<f4").astype(np.float64) * 0.25
    mask_rows = mask.rows("<f4").astype(np.float64)
    v = x + mask_rows[[r % src.ne[1] for r in range(src.nrows)]]
    assert np.isneginf(v).any() and src.ne[2] > 1
    e = np.exp(v - v.max(axis=1, keepdims=True))
    got = case.tensors["dst"].rows("<f4")
    close_enough(got, e / e.sum(axis=1, keepdims=True))
    assert (got[np.isneginf(v)] < 1e-30).all()
