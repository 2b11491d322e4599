"""The audited C core (fixtures/htp-core): committed libraries, their rebuild, oracle dumps and audit cleanliness.

Tests on the committed files run everywhere; those that rebuild need clang-22 / ld.lld-22 / llvm-objdump-22
and skip with a reason when a tool is missing.
"""

from __future__ import annotations

import gzip
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from core_layout import kernel_params_layout

from hexlint.elf.reader import ElfImage, load_elf

CORE = Path(__file__).resolve().parent.parent / "fixtures" / "htp-core"
LIB = CORE / "lib"
VERSIONS = ("v73", "v75", "v79", "v81")
OPS = ("op_binary", "op_activations", "op_rms_norm", "op_softmax", "op_matmul", "op_get_rows", "op_fill")
WORKERS = ("binary_task", "act_task", "rms_norm_task", "softmax_task", "matmul_task", "get_rows_task", "fill_task")

# llvm-objdump lines: "   10270: { \tr13:12 = convert_sf2df(r1)" and function headers "00010200 <name>:"
FUNCTION_HEADER = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
VECTOR_STACK_ACCESS = re.compile(r"vmem\(r(29|30)[+)]")
DOUBLE_PRECISION = re.compile(r"\b(convert_sf2df|convert_df2sf|dfadd|dfsub|dfmpy\w*|dfcmp\.\w+)\b|:df\b")
SOFTWARE_DIVISION = re.compile(r"call .*<__hexagon_(u?div|u?mod)\w*@plt>")


def require_tools(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (apt-get install clang-22 lld-22 llvm-22)")


def library(version: str, suffix: str = "") -> Path:
    return LIB / f"libhtp-core-{version}{suffix}.so"


def committed_dump(version: str) -> str:
    return gzip.decompress((LIB / f"libhtp-core-{version}.objdump.txt.gz").read_bytes()).decode()


def dump_by_function(dump: str) -> dict[str, list[str]]:
    """Instruction lines of an llvm-objdump listing, grouped by the function they belong to."""
    functions: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in dump.splitlines():
        header = FUNCTION_HEADER.match(line)
        if header:
            current = functions.setdefault(header.group(1), [])
        elif current is not None and line.strip():
            current.append(line)
    return functions


def text_bytes(image: ElfImage) -> bytes:
    return b"".join(section.data for section in image.code_sections if section.name == ".text")


def exported_functions(image: ElfImage) -> set[str]:
    return {function.name for function in image.functions if not function.is_local}


@pytest.mark.parametrize("version", VERSIONS)
def test_committed_library_targets_its_cpu_and_exports_every_op(version: str) -> None:
    image = load_elf(library(version))
    assert image.cpu_name == f"hexagon{version}"
    assert not image.is_relocatable
    assert set(OPS) | {"htp_op_dispatch", "htp_op_node_run"} <= exported_functions(image)
    assert not image.has_debug_info


def test_debug_build_has_dwarf_and_the_same_functions() -> None:
    debug = load_elf(library("v73", "-g"))
    release = load_elf(library("v73"))
    assert debug.has_debug_info
    assert debug.cpu_name == "hexagonv73"
    assert {f.name for f in debug.functions} >= set(OPS) | set(WORKERS)
    assert exported_functions(debug) == exported_functions(release)


@pytest.mark.parametrize("version", VERSIONS)
def test_dump_has_no_vector_stack_access(version: str) -> None:
    """No vmem(r29/r30) anywhere: nothing to spill, in loops or out (stronger than the audit's in-loop gate)."""
    offenders = {
        name: [line for line in lines if VECTOR_STACK_ACCESS.search(line)]
        for name, lines in dump_by_function(committed_dump(version)).items()
    }
    assert {name: lines for name, lines in offenders.items() if lines} == {}


@pytest.mark.parametrize("version", VERSIONS)
def test_dump_has_no_double_precision(version: str) -> None:
    dump = committed_dump(version)
    assert [line for line in dump.splitlines() if DOUBLE_PRECISION.search(line)] == []


@pytest.mark.parametrize("version", VERSIONS)
def test_software_division_only_in_op_entry_points(version: str) -> None:
    """The one runtime division (chunks per device) happens once per op, never in a worker or compute loop."""
    callers = {
        name
        for name, lines in dump_by_function(committed_dump(version)).items()
        if any(SOFTWARE_DIVISION.search(line) for line in lines)
    }
    assert callers <= set(OPS)
    assert not callers & (set(WORKERS) | {"q8_0_dot_row", "q8_0_dot_rows"})


@pytest.mark.parametrize("version", VERSIONS)
def test_dump_matches_committed_library(version: str) -> None:
    """The gzipped oracle is llvm-objdump of exactly the committed library (decoder tests rely on it)."""
    require_tools("llvm-objdump-22")
    fresh = subprocess.run(
        ["llvm-objdump-22", "-d", "--no-show-raw-insn", f"--mcpu=hexagon{version}", str(library(version))],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.replace(f"{LIB}/", "")
    assert fresh == committed_dump(version)


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_tools("clang-22", "ld.lld-22", "llvm-objdump-22")
    out = tmp_path_factory.mktemp("htp-core-lib")
    subprocess.run([str(CORE / "build.sh"), str(out)], check=True, capture_output=True, text=True)
    return out


def same_toolchain(rebuilt: Path) -> bool:
    return (rebuilt / "BUILD-INFO.txt").read_text() == (LIB / "BUILD-INFO.txt").read_text()


@pytest.mark.parametrize(("version", "suffix"), [*((version, "") for version in VERSIONS), ("v73", "-g")])
def test_rebuild_matches_committed(rebuilt: Path, version: str, suffix: str) -> None:
    """Same compiler: the build is byte-reproducible (no build id, relative paths), so .text must be identical.
    Another clang-22 release may schedule differently; then the stable facts are compared instead."""
    fresh = load_elf(rebuilt / library(version, suffix).name)
    committed = load_elf(library(version, suffix))
    assert fresh.cpu == committed.cpu
    assert {f.name for f in fresh.functions} == {f.name for f in committed.functions}
    if same_toolchain(rebuilt):
        assert text_bytes(fresh) == text_bytes(committed)


@pytest.mark.parametrize("version", VERSIONS)
def test_rebuild_is_still_clean(rebuilt: Path, version: str) -> None:
    """Whatever the compiler release, a rebuild must keep the properties the audit gates on."""
    dump = gzip.decompress((rebuilt / f"libhtp-core-{version}.objdump.txt.gz").read_bytes()).decode()
    assert not VECTOR_STACK_ACCESS.search(dump)
    assert not DOUBLE_PRECISION.search(dump)


def test_host_compiles_standalone() -> None:
    require_tools("clang++-22")
    subprocess.run(
        [
            "clang++-22",
            "-std=c++20",
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
            f"-I{CORE / 'include'}",
            str(CORE / "host" / "ggml-htp-core.cpp"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(
    ("struct", "kernel"),
    [
        ("htp_unary_kernel_params", "act-ops.c"),
        ("htp_binary_kernel_params", "binary-ops.c"),
        ("htp_norm_kernel_params", "unary-ops.c"),
        ("htp_softmax_kernel_params", "softmax-ops.c"),
        ("htp_mm_kernel_params", "matmul-ops.c"),
        ("htp_get_rows_kernel_params", "get-rows-ops.c"),
        ("htp_fill_kernel_params", "fill-ops.c"),
    ],
)
def test_every_kernel_params_field_is_written_by_the_host_and_read_by_its_kernel(struct: str, kernel: str) -> None:
    """A text-level version of the contract HX101/HX102 check on the AST: host writes exactly what kernels read."""
    fields = [name for _, name in kernel_params_layout(struct)]
    assert len(fields) >= 8
    host = (CORE / "host" / "ggml-htp-core.cpp").read_text()
    source = (CORE / "htp" / kernel).read_text()
    unwritten = [f for f in fields if not re.search(rf"(\.|->){f}\s*=[^=]", host)]
    unread = [f for f in fields if not re.search(rf"kparams->{f}\b", source)]
    assert unwritten == []
    assert unread == []


COMPUTE_FUNCTION = re.compile(r"^static (?:inline )?(?:__attribute__\(\(\w+\)\) )?\w+ (\w+)\(", re.M)
REMARK = re.compile(r"^[^:]+:(\d+):\d+: remark: (.*) generated in loop")


def compute_function_lines(source: str) -> dict[str, range]:
    """Line ranges of the HVX compute helpers (`*_rows`, `*_run`, `q8_0_dot_*`, `copy_row_vtcm`) of a kernel file."""
    lines = source.splitlines()
    ranges: dict[str, range] = {}
    for match in COMPUTE_FUNCTION.finditer(source):
        name = match.group(1)
        if not (name.endswith(("_rows", "_run")) or name.startswith("q8_0_dot") or name == "copy_row_vtcm"):
            continue
        first = source.count("\n", 0, match.start()) + 1
        last = next(i for i in range(first, len(lines) + 1) if lines[i - 1] == "}")
        ranges[name] = range(first, last + 1)
    return ranges


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "kernel",
    ["binary-ops.c", "act-ops.c", "unary-ops.c", "softmax-ops.c", "matmul-ops.c", "get-rows-ops.c", "fill-ops.c"],
)
def test_compiler_reports_no_spill_in_compute_loops(version: str, kernel: str) -> None:
    """clang's register-allocation remarks give per-loop spill/reload counts with the loop's line: no loop inside
    an HVX compute helper may spill or reload (the scalar pipeline loops of the workers are not gated here)."""
    require_tools("clang-22")
    source_path = CORE / "htp" / kernel
    helpers = compute_function_lines(source_path.read_text())
    assert helpers, kernel
    remarks = subprocess.run(
        [
            "clang-22",
            "--target=hexagon-unknown-none-elf",
            f"-mcpu=hexagon{version}",
            "-mhvx",
            "-mhvx-length=128b",
            "-O3",
            "-fPIC",
            "-ffreestanding",
            f"-I{CORE / 'htp'}",
            "-c",
            str(source_path),
            "-o",
            "/dev/null",
            "-Rpass-missed=regalloc",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    spilling = [
        (int(match.group(1)), match.group(2))
        for line in remarks.splitlines()
        if line.startswith(str(source_path)) and (match := REMARK.match(line)) and re.search(r"spills|reloads", line)
    ]
    in_helpers = [(line, text) for line, text in spilling if any(line in lines for lines in helpers.values())]
    assert in_helpers == []


# ---- binary twins (fixtures/binary): the committed .so and oracles are what build.sh makes ----

TWINS = Path(__file__).resolve().parent.parent / "fixtures" / "binary"
TWIN_NAMES = sorted(path.stem for path in TWINS.glob("*.c"))


@pytest.fixture(scope="module")
def rebuilt_twins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_tools("clang-22", "ld.lld-22", "llvm-objdump-22")
    out = tmp_path_factory.mktemp("binary-twins")
    subprocess.run([str(TWINS / "build.sh"), str(out)], check=True, capture_output=True, text=True)
    return out


@pytest.mark.parametrize("name", TWIN_NAMES)
def test_binary_twin_is_committed_with_oracle_and_sidecar(name: str) -> None:
    image = load_elf(TWINS / f"{name}.so")
    assert image.cpu_name == "hexagonv73"
    assert image.has_debug_info
    dump = (TWINS / f"{name}.objdump.txt").read_text()
    functions = set(dump_by_function(dump))
    assert {f.name for f in image.functions if not f.is_local} <= functions
    sidecar = (TWINS / f"{name}.expect.toml").read_text()
    for function in re.findall(r'^function = "(\w+)"', sidecar, re.M):
        assert function in functions, function


@pytest.mark.parametrize("name", TWIN_NAMES)
def test_binary_twin_rebuild_matches_committed(rebuilt_twins: Path, name: str) -> None:
    fresh = load_elf(rebuilt_twins / f"{name}.so")
    committed = load_elf(TWINS / f"{name}.so")
    assert {f.name for f in fresh.functions} == {f.name for f in committed.functions}
    if (rebuilt_twins / "BUILD-INFO.txt").read_text() == (TWINS / "BUILD-INFO.txt").read_text():
        assert text_bytes(fresh) == text_bytes(committed)
        assert (rebuilt_twins / f"{name}.objdump.txt").read_text() == (TWINS / f"{name}.objdump.txt").read_text()
