"""The audit on programs built with clang-22: per-loop spill counts against LLVM's own register allocator remarks,
loop kinds from the CFG, helper calls through the PLT, promotions and divisions in and out of loops."""

from __future__ import annotations

import re
import subprocess
from dataclasses import FrozenInstanceError

import pytest
from test_binary_support import CLANG, HEXAGON_FLAGS, build_library, require_toolchain

from hexlint.binary.audit import StackAccess, _stack_access, audit_image
from hexlint.elf import load_elf
from hexlint.registry import find_rule

MIXED_SPILLS = r"""
#include <hexagon_types.h>
#include <hvx_hexagon_protos.h>

void mixed(HVX_Vector *out, const HVX_Vector *in, int *counts, const int *idx, int rows) {
    HVX_Vector acc[36];
    int c0 = 0, c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0, c6 = 0, c7 = 0, c8 = 0, c9 = 0;
    int d0 = 0, d1 = 0, d2 = 0, d3 = 0, d4 = 0, d5 = 0, d6 = 0, d7 = 0, d8 = 0, d9 = 0;
    for (int k = 0; k < 36; k++) acc[k] = in[k];
    for (int r = 0; r < rows; r++) {
        const int *p = counts + idx[r];
#pragma unroll
        for (int k = 0; k < 36; k++) acc[k] = Q6_Vw_vadd_VwVw(acc[k], in[r * 36 + k]);
        c0 += p[0] * c9; c1 += p[1] * c8; c2 += p[2] ^ c7; c3 += p[3] * c6; c4 += p[4] ^ c5;
        c5 += p[5] * c4; c6 += p[6] ^ c3; c7 += p[7] * c2; c8 += p[8] ^ c1; c9 += p[9] * c0;
        d0 += p[10] * d9; d1 += p[11] * d8; d2 += p[12] ^ d7; d3 += p[13] * d6; d4 += p[14] ^ d5;
        d5 += p[15] * d4; d6 += p[16] ^ d3; d7 += p[17] * d2; d8 += p[18] ^ d1; d9 += p[19] * d0;
    }
    for (int k = 0; k < 36; k++) out[k] = acc[k];
    counts[0] = c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9;
    counts[1] = d0 + d1 + d2 + d3 + d4 + d5 + d6 + d7 + d8 + d9;
}
"""

# A switch inside the loop: clang-22 dispatches it through a jump table (`jumpr` to a loaded address), and every
# case block holds reloads; the cases are in the loop only when the CFG follows the table.
SWITCH_IN_LOOP = r"""
#include <hexagon_types.h>
#include <hvx_hexagon_protos.h>

void process(float *dst, int n);

void switch_rows(HVX_Vector *out, const HVX_Vector *in, const int *ops, int rows) {
    HVX_Vector acc[40];
    for (int k = 0; k < 40; k++) acc[k] = in[k];
    for (int r = 0; r < rows; r++) {
        switch (ops[r]) {
            case 0:
#pragma unroll
                for (int k = 0; k < 40; k++) acc[k] = Q6_Vw_vadd_VwVw(acc[k], in[r * 40 + k]);
                break;
            case 1:
#pragma unroll
                for (int k = 0; k < 40; k++) acc[k] = Q6_Vw_vsub_VwVw(acc[k], in[r * 40 + k]);
                break;
            case 2:
#pragma unroll
                for (int k = 0; k < 40; k++) acc[k] = Q6_V_vand_VV(acc[k], in[r * 40 + k]);
                break;
            case 3:
#pragma unroll
                for (int k = 0; k < 40; k++) acc[k] = Q6_V_vor_VV(acc[k], in[r * 40 + k]);
                break;
            case 4:
#pragma unroll
                for (int k = 0; k < 40; k++) acc[k] = Q6_V_vxor_VV(acc[k], in[r * 40 + k]);
                break;
            case 5:
#pragma unroll
                for (int k = 0; k < 40; k++) acc[k] = Q6_Vw_vmax_VwVw(acc[k], in[r * 40 + k]);
                break;
            default:
                process((float *) out, r);
                break;
        }
    }
    for (int k = 0; k < 40; k++) out[k] = acc[k];
}
"""

PROGRAM = r"""
#include <hexagon_types.h>
#include <hvx_hexagon_protos.h>

extern float external_step(float x);

void vector_add(HVX_Vector *out, const HVX_Vector *a, const HVX_Vector *b, int n) {
    for (int i = 0; i < n; i++) out[i] = Q6_Vw_vadd_VwVw(a[i], b[i]);
}

float call_in_loop(const float *v, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += external_step(v[i]);
    return s;
}

int nested_division(const int *v, int rows, int cols, int d) {
    int s = 0;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) s += v[r * cols + c] / d;
    return s;
}

unsigned long long wide_division_in_loop(const unsigned long long *v, int n, unsigned long long d) {
    unsigned long long s = 0;
    for (int i = 0; i < n; i++) s += v[i] / d;
    return s;
}

double promote_once(float x, float y) {
    return (double) x / (double) y;
}

unsigned long long wide_modulo(unsigned long long a, unsigned long long b) {
    return a % b;
}
"""


def regalloc_loop_remarks(tmp_path, source: str) -> list[tuple[int, int]]:
    """(spill stores, reloads) of each `generated in loop` remark of clang-22 -Rpass-missed=regalloc."""
    c_file = tmp_path / "remarks.c"
    c_file.write_text(source)
    result = subprocess.run(
        [
            CLANG,
            *HEXAGON_FLAGS,
            "-mcpu=hexagonv73",
            "-O3",
            "-c",
            str(c_file),
            "-o",
            "/dev/null",
            "-Rpass-missed=regalloc",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    remarks = []
    for line in result.stderr.splitlines():
        if "generated in loop" not in line:
            continue
        numbers = {
            kind: int(count)
            for count, kind in re.findall(r"(\d+) (folded spills|spills|folded reloads|reloads) ", line)
        }
        stores = numbers.get("spills", 0) + numbers.get("folded spills", 0)
        reloads = numbers.get("reloads", 0) + numbers.get("folded reloads", 0)
        if stores or reloads:
            remarks.append((stores, reloads))
    return remarks


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(find_rule("HX201").doc.example, id="vector-accumulators"),
        pytest.param(find_rule("HX202").doc.example, id="scalar-accumulators"),
        pytest.param(MIXED_SPILLS, id="vector-and-scalar"),
        pytest.param(SWITCH_IN_LOOP, id="switch-in-loop"),
    ],
)
def test_in_loop_spills_match_llvm_register_allocator_remarks(tmp_path, source):
    require_toolchain()
    remarks = regalloc_loop_remarks(tmp_path, source)
    assert len(remarks) == 1, remarks  # each program has one loop that spills
    audit = audit_image(load_elf(build_library(tmp_path, source)))
    (function,) = [function for function in audit.functions if function.loops]
    stores = sum(1 for access in function.stack_accesses if access.is_spill and access.loop and access.is_store)
    reloads = sum(1 for access in function.stack_accesses if access.is_spill and access.loop and not access.is_store)
    assert (stores, reloads) == remarks[0]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    return audit_image(load_elf(build_library(tmp_path_factory.mktemp("program"), PROGRAM, extra=("-g",))))


def test_hvx_loop_without_calls_is_a_hardware_loop(program):
    function = program.function("vector_add")
    assert function.loops and {loop.kind for loop in function.loops} <= {"hardware", "pipelined"}
    assert function.hvx_instructions > 0
    assert function.inloop_vector_spills == 0 and function.calls == ()


def test_loop_with_a_call_is_a_branch_loop_and_the_call_is_in_it(program):
    function = program.function("call_in_loop")
    assert any(loop.kind == "branch" for loop in function.loops)
    helpers = {call.helper for call in function.calls if call.loop is not None}
    assert helpers == {"external_step"}


def test_nested_loops_and_division_through_the_plt(program):
    function = program.function("nested_division")
    assert max(loop.depth for loop in function.loops) == 2
    divisions = [call for call in function.calls if call.is_division]
    assert divisions and all(call.helper == "__hexagon_divsi3" for call in divisions)
    inner = {loop.header for loop in function.loops if loop.depth == 2}
    assert any(call.loop in inner for call in divisions)
    assert function.inloop_divisions == len(divisions)


def test_64_bit_division_helper_in_a_loop_is_a_division(program):
    # (clang-22 expands float division inline with sfrecipa: no helper call, so nothing to report there)
    function = program.function("wide_division_in_loop")
    assert function.inloop_divisions > 0
    assert {call.helper for call in function.calls if call.is_division} == {"__hexagon_udivdi3"}
    assert function.promotions == 0


def test_double_helpers_and_conversions_are_promotions_outside_loops(program):
    function = program.function("promote_once")
    assert function.promotions > 0 and function.inloop_promotions == 0
    assert any(call.helper == "__hexagon_divdf3" and call.is_promotion for call in function.calls) or any(
        operation.is_conversion for operation in function.double_operations
    )
    assert function.inloop_divisions == 0


def test_64_bit_modulo_helper_is_a_division_outside_loops(program):
    function = program.function("wide_modulo")
    assert function.divisions == 1 and function.inloop_divisions == 0
    assert function.calls[0].helper.startswith("__hexagon_umoddi3") or "mod" in function.calls[0].helper


def test_findings_carry_dwarf_source_spans(program):
    from hexlint.checks import hx204_division_in_loop

    (diagnostic,) = [d for d in hx204_division_in_loop.check(program, {}) if d.span.symbol == "nested_division"]
    assert diagnostic.source_span is not None and diagnostic.source_span.path.endswith("prog.c")
    assert (
        diagnostic.source_span.line
        == PROGRAM.splitlines().index("        for (int c = 0; c < cols; c++) s += v[r * cols + c] / d;") + 1
    )
    assert diagnostic.fingerprint_text == "nested_division division-in-loop"
    assert diagnostic.span.address is not None and diagnostic.span.path == program.path


def test_function_filter_audits_only_matching_functions(tmp_path):
    require_toolchain()
    library = build_library(tmp_path, PROGRAM)
    audit = audit_image(load_elf(library), function_filter=lambda name: name.startswith("call_"))
    assert [function.name for function in audit.functions] == ["call_in_loop"]


def test_decoding_only_the_filtered_functions_gives_the_same_facts():
    from pathlib import Path

    library = Path(__file__).resolve().parent.parent / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73.so"
    image = load_elf(library)
    whole = audit_image(image)
    wanted = {function.name for function in whole.functions[::3]}
    filtered = audit_image(image, function_filter=lambda name: name in wanted)
    assert {function.name for function in filtered.functions} == wanted
    for function in filtered.functions:
        reference = whole.function(function.name)
        assert function.stack_accesses == reference.stack_accesses
        assert function.calls == reference.calls
        assert function.loops == reference.loops
        assert function.hvx_instructions == reference.hvx_instructions


def test_a_section_laid_over_the_code_gets_each_packet_audited_once(tmp_path):
    """Overlapping executable sections (here .comment turned into a copy of .text, same address and bytes): each
    address's packet is audited once, from the first section holding it, so the results are the library's own."""
    import struct
    from pathlib import Path

    from elftools.elf.elffile import ELFFile

    library = Path(__file__).resolve().parent.parent / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73.so"
    data = bytearray(library.read_bytes())
    with library.open("rb") as stream:
        elf = ELFFile(stream)
        sections = list(elf.iter_sections())
        text = next(section for section in sections if section.name == ".text")
        number = next(index for index, section in enumerate(sections) if section.name == ".comment")
        header = elf.header["e_shoff"] + number * elf.header["e_shentsize"]
    name = struct.unpack_from("<I", data, header)[0]
    shf_alloc_execinstr, sht_progbits = 6, 1
    fields = (name, sht_progbits, shf_alloc_execinstr, text["sh_addr"], text["sh_offset"], text["sh_size"], 0, 0, 32, 0)
    struct.pack_into("<10I", data, header, *fields)
    overlapping = tmp_path / "overlapping.so"
    overlapping.write_bytes(bytes(data))

    original, laid_over = audit_image(load_elf(library)), audit_image(load_elf(overlapping))
    assert len(load_elf(overlapping).code_sections) == len(load_elf(library).code_sections) + 1
    assert [function.name for function in laid_over.functions] == [function.name for function in original.functions]
    for function, reference in zip(laid_over.functions, original.functions, strict=True):
        assert function.stack_accesses == reference.stack_accesses, function.name
        assert (function.calls, function.loops) == (reference.calls, reference.loops), function.name


LIBM = """
double log2(double);
double floor(double);
float log2f(float);

float octaves(const float *x, float *out, int n) {
    float s = 0.0f;
    for (int i = 0; i < n; i++) out[i] = (float)log2(x[i]);  /* double libm call in the loop */
    s += (float)floor(x[0]);                                   /* and one outside */
    return s + log2f(x[1]);                                    /* the float one is fine */
}
"""


def test_double_precision_libm_calls_through_the_plt_are_promotions(tmp_path):
    library = build_library(tmp_path, LIBM, extra=("-fno-builtin",))
    function = audit_image(load_elf(library)).function("octaves")
    promoted = {(call.helper, call.loop is not None) for call in function.calls if call.is_promotion}
    assert promoted == {("floor", False), ("log2", True)}  # the loop is unrolled: several log2 calls, all in it
    assert any(call.helper == "log2f" and not call.is_promotion for call in function.calls)
    assert function.inloop_promotions >= 1


FRAME_ARRAY = """
#include <hexagon_protos.h>
#include <hexagon_types.h>

void sortnet(HVX_Vector *out, const HVX_Vector *in, int n, int k) {
    HVX_Vector V[32];
    for (int i = 0; i < 32; i++) V[i] = in[i];
    for (int r = 0; r < n; r++) {
        for (int i = 0; i < 31; i++) {
            HVX_Vector a = V[i], b = V[i + 1];
            V[i] = Q6_Vw_vmin_VwVw(a, b);
            V[i + 1] = Q6_Vw_vmax_VwVw(a, b);
        }
        V[k & 31] = Q6_Vw_vadd_VwVw(V[k & 31], in[r]);
    }
    for (int i = 0; i < 32; i++) out[i] = V[i];
}
"""


def test_constant_offset_accesses_inside_a_dwarf_frame_variable_are_not_spills(tmp_path):
    from dataclasses import replace

    from hexlint.binary.audit import AuditSettings
    from hexlint.elf import DebugInfo, FrameObject

    image = load_elf(build_library(tmp_path, FRAME_ARRAY, extra=("-g",)))
    symbol = next(function for function in image.functions if function.name == "sortnet")
    assert DebugInfo(image).frame_objects(symbol.address) == (FrameObject("V", "r29", 0, 32 * 128),)
    without = audit_image(image, replace(AuditSettings(), frame_variables_from_dwarf=False)).function("sortnet")
    slots_in_v = [access for access in without.spills(vector=True, in_loop=True) if 0 <= access.slot[1] < 4096]
    assert slots_in_v  # V[k & 31] after unrolling: constant offsets inside V, counted as spills without DWARF
    with_dwarf = audit_image(image).function("sortnet")
    assert with_dwarf.inloop_vector_spills == without.inloop_vector_spills - len(slots_in_v)
    reasons = {access.address: access.buffer_reason for access in with_dwarf.stack_accesses}
    assert {reasons[access.address] for access in slots_in_v} == {"stack variable `V` (DWARF)"}
    loop_spills = sum(loop.vector_spills for loop in with_dwarf.loops if loop.depth == 1)
    assert loop_spills == sum(loop.vector_spills for loop in without.loops if loop.depth == 1) - len(slots_in_v)


def test_without_debug_information_there_are_no_frame_objects(tmp_path):
    from hexlint.elf import DebugInfo

    image = load_elf(build_library(tmp_path, FRAME_ARRAY))
    symbol = next(function for function in image.functions if function.name == "sortnet")
    assert DebugInfo(image).frame_objects(symbol.address) == ()


def test_a_stack_access_built_from_its_field_dict_is_the_record_its_constructor_builds() -> None:
    fields = {
        "address": 0x100,
        "packet_address": 0xFC,
        "text": "memw(r29+#8) = r0",
        "is_store": True,
        "is_vector": False,
        "size": 4,
        "slot": ("r29", 8),
        "loop": None,
        "is_predicated": False,
    }
    fast = _stack_access(dict(fields))
    built = StackAccess(**fields)
    assert fast == built and hash(fast) == hash(built) and repr(fast) == repr(built)
    assert fast.buffer_reason is None and fast.is_spill
    with pytest.raises(FrozenInstanceError):
        fast.size = 8  # type: ignore[misc]


def test_a_switch_in_a_loop_keeps_its_cases_in_the_loop(tmp_path):
    audit = audit_image(load_elf(build_library(tmp_path, SWITCH_IN_LOOP)))
    function = audit.function("switch_rows")
    assert function is not None
    cfg = function.cfg
    fanout = max(len(successors) for successors in cfg.block_successors)
    assert fanout >= 6  # the table's jump reaches every case (the default shares a block with the range check)
    in_loop = {start for loop in cfg.loops for start in loop.blocks}
    cases = {
        cfg.block_starts[number]
        for successors in cfg.block_successors
        if len(successors) == fanout
        for number in successors
    }
    assert cases <= in_loop
    assert not any(loop.irreducible for loop in cfg.loops)


# A local array filled element by element through a computed index, then read as one vector: the load has a
# constant frame offset, but nothing stores there at a constant offset, so it reads an object, not a spill slot.
ARRAY_READ_AS_A_VECTOR = r"""
#include <hexagon_types.h>
#include <hvx_hexagon_protos.h>

void gather_rows(HVX_Vector *out, const float *in, const int *index, int rows) {
    float row[32] __attribute__((aligned(128)));
    for (int r = 0; r < rows; r++) {
        for (int i = 0; i < 32; i++) row[index[i] & 31] = in[r * 32 + i];
        out[r] = Q6_Vqf32_vmpy_VsfVsf(*(const HVX_Vector *) row, out[r]);
    }
}
"""


def test_a_vector_load_of_a_slot_nothing_stores_at_a_constant_offset_is_no_reload(tmp_path):
    require_toolchain()
    assert regalloc_loop_remarks(tmp_path, ARRAY_READ_AS_A_VECTOR) == []  # the compiler spills nothing
    function = audit_image(load_elf(build_library(tmp_path, ARRAY_READ_AS_A_VECTOR))).function("gather_rows")
    assert function is not None
    loads = [access for access in function.stack_accesses if access.is_vector and access.slot is not None]
    assert loads and all(access.buffer_reason == "never stored at a constant offset" for access in loads)
    assert function.inloop_vector_spills == 0
