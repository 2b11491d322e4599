"""Focused decoder tests: hand-built packets, single instructions assembled by llvm-mc-22, and a never-raises property.

The single-instruction encodings are committed in tests/data/decoder/mc_cases.json so the cases run without LLVM;
where llvm-mc-22 is installed, a test re-assembles every case and checks the committed words are still what it emits.
Regenerate with: PYTHONPATH=. python tests/test_decode.py
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexlint.hexagon import decode as decode_module
from hexlint.hexagon.decode import DecodeCache, Instruction, MemoryAccess, RegisterWrite, decode_packets

CASES_FILE = Path(__file__).resolve().parent / "data" / "decoder" / "mc_cases.json"
LLVM_MC = "llvm-mc-22"

# (assembly of one packet, expected fields of its instruction at `index`); targets are relative to address 0
CASES: list[tuple[str, dict[str, Any]]] = [
    # jumps and calls
    ("jump 0x100", {"branch": "jump", "target": 0x100, "conditional": False}),
    ("call 0x1000", {"branch": "call", "target": 0x1000}),
    ("if (p0) jump:nt 0x40", {"branch": "jump", "target": 0x40, "conditional": True}),
    ("if (!p1) call 0x80", {"branch": "call", "target": 0x80, "conditional": True}),
    ("p0 = cmp.eq(r1,#0); if (p0.new) jump:nt 0x20", {"branch": "jump", "target": 0x20, "conditional": True}),
    ("p1 = cmp.gt(r2,r3); if (!p1.new) jump:t 0x1fc", {"branch": "jump", "target": 0x1FC, "conditional": True}),
    ("r1 = #5 ; jump 0x30", {"branch": "jump", "target": 0x30, "writes": [("r1", "other", None, 5)]}),
    ("r2 = r17 ; jump 0x30", {"branch": "jump", "target": 0x30, "writes": [("r2", "copy", "r17", None)]}),
    ("if (r3!=#0) jump:nt 0x44", {"branch": "jump", "target": 0x44, "conditional": True}),
    ("jumpr r31", {"branch": "return", "conditional": False}),
    ("jumpr r5", {"branch": "jumpr"}),
    ("if (p0) jumpr:nt r31", {"branch": "return", "conditional": True}),
    ("callr r6", {"branch": "callr"}),
    ("if (!p2) callr r6", {"branch": "callr", "conditional": True}),
    ("dealloc_return", {"branch": "return", "mnemonic": "dealloc_return"}),
    ("if (p0) dealloc_return", {"branch": "return", "conditional": True}),
    ("jump ##0x12345678", {"index": 1, "branch": "jump", "target": 0x12345678}),
    ("call 0x7ffffc", {"branch": "call", "target": 0x7FFFFC}),
    # hardware loops
    ("loop0(0x40,#10)", {"loop": (0, 0x40, 10, None, 0)}),
    ("loop0(0x40,r3)", {"loop": (0, 0x40, None, "r3", 0)}),
    ("loop1(0xfc,#1023)", {"loop": (1, 0xFC, 1023, None, 0)}),
    ("loop1(0x8,r29)", {"loop": (1, 8, None, "r29", 0)}),
    ("p3 = sp1loop0(0x10,#4)", {"loop": (0, 0x10, 4, None, 1)}),
    ("p3 = sp2loop0(0x10,r7)", {"loop": (0, 0x10, None, "r7", 2)}),
    ("p3 = sp3loop0(0x20,#3)", {"loop": (0, 0x20, 3, None, 3)}),
    # scalar loads and stores
    ("r2 = memw(r29+#8)", {"memory": ("r29", 8, False, False, 4), "writes": [("r2", "other", None, None)]}),
    ("memw(r29+#8) = r2", {"memory": ("r29", 8, True, False, 4), "register": "r2"}),
    ("memd(r30+#-16) = r17:16", {"memory": ("r30", -16, True, False, 8), "register": "r17:16"}),
    ("r17:16 = memd(r30+#-8)", {"memory": ("r30", -8, False, False, 8), "register": "r17:16"}),
    ("r1 = memb(r2+#-1024)", {"memory": ("r2", -1024, False, False, 1)}),
    ("r1 = memub(r2+#1023)", {"memory": ("r2", 1023, False, False, 1)}),
    ("r1 = memh(r2+#-2)", {"memory": ("r2", -2, False, False, 2)}),
    ("r1 = memuh(r2+#2046)", {"memory": ("r2", 2046, False, False, 2)}),
    ("memb(r3+#7) = r4", {"memory": ("r3", 7, True, False, 1)}),
    ("memh(r3+#6) = r4.h", {"memory": ("r3", 6, True, False, 2), "register": "r4"}),
    ("r2 = memw(r29+##100000)", {"index": 1, "memory": ("r29", 100000, False, False, 4)}),
    ("memd(r29+##-4096) = r1:0", {"index": 1, "memory": ("r29", -4096, True, False, 8)}),
    (
        "r3 = memw(r2++#4)",
        {"memory": ("r2", 0, False, True, 4), "increment": 4, "writes": [("r3", "other"), ("r2", "add_imm", "r2", 4)]},
    ),
    ("memd(r5++#-8) = r3:2", {"memory": ("r5", 0, True, True, 8), "increment": -8}),
    ("r3 = memw(r2++m0)", {"memory": ("r2", 0, False, True, 4), "increment": None}),
    ("r3 = memw(r2+r4<<#2)", {"memory": ("r2", None, False, False, 4)}),
    ("memh(r2+r4<<#1) = r5", {"memory": ("r2", None, True, False, 2)}),
    ("if (p0) r1 = memw(r29+#12)", {"memory": ("r29", 12, False, False, 4), "conditional": True}),
    ("if (!p1) memd(r29+#16) = r3:2", {"memory": ("r29", 16, True, False, 8), "conditional": True}),
    ("if (p2) memd(r30+#-8) = r1:0", {"index": 1, "memory": ("r30", -8, True, False, 8), "conditional": True}),
    ("r1 = memw(gp+#64)", {"memory": ("gp", 64, False, False, 4)}),
    ("memw(##0x4000) = r1", {"index": 1, "memory": ("abs", 0x4000, True, False, 4)}),
    ("memw(r29+#4) = #-1", {"memory": ("r29", 4, True, False, 4)}),
    ("if (p0) memb(r1+#3) = #5", {"memory": ("r1", 3, True, False, 1), "conditional": True}),
    ("memw(r29+#8) += r2", {"memory": ("r29", 8, True, False, 4)}),
    ("allocframe(#64)", {"mnemonic": "allocframe", "memory": None, "writes": [("r29", "add_imm", "r29", -72)]}),
    ("deallocframe", {"mnemonic": "deallocframe", "branch": None}),
    # register writes that carry stack addresses
    ("r2 = add(r29,#16)", {"writes": [("r2", "add_imm", "r29", 16)]}),
    ("r2 = add(r30,#-32768)", {"writes": [("r2", "add_imm", "r30", -32768)]}),
    ("r2 = add(r29,##70000)", {"index": 1, "writes": [("r2", "add_imm", "r29", 70000)]}),
    ("r2 = r29", {"writes": [("r2", "copy", "r29", None)]}),
    ("if (p0) r2 = add(r29,#8)", {"writes": [("r2", "add_imm", "r29", 8)], "conditional": True}),
    ("r1:0 = combine(r29,r30)", {"writes": [("r1", "copy", "r29"), ("r0", "copy", "r30")]}),
    ("r5 = #-7", {"writes": [("r5", "other", None, -7)]}),
    ("r2 = add(r29,r3)", {"writes": [("r2", "other", "r29")]}),
    ("r2 = sub(r30,r3)", {"writes": [("r2", "other", "r30")]}),
    ("r28 = addasl(r14,r28,#7)", {"writes": [("r28", "other", "r14")], "mnemonic": "addasl"}),
    ("r2 = and(r29,#-128)", {"writes": [("r2", "other", "r29", -128)]}),
    ("r1:0 = combine(r29,#-3)", {"writes": [("r1", "copy", "r29"), ("r0", "other", None, -3)]}),
    ("r3:2 = combine(#5,r29)", {"writes": [("r3", "other", None, 5), ("r2", "copy", "r29")]}),
    ("r3:2 = combine(r30,##100000)", {"index": 1, "writes": [("r3", "copy", "r30"), ("r2", "other", None, 100000)]}),
    # doubles
    ("r1:0 = convert_sf2df(r2)", {"float_to_double": True, "double_arith": False}),
    ("r1:0 = dfadd(r3:2,r5:4)", {"double_arith": True, "float_to_double": False}),
    ("r1:0 = dfsub(r3:2,r5:4)", {"double_arith": True}),
    ("r1:0 = dfmpyfix(r3:2,r5:4)", {"double_arith": True}),
    ("r1:0 = dfmpyll(r3:2,r5:4)", {"double_arith": True}),
    ("r1:0 += dfmpylh(r3:2,r5:4)", {"double_arith": True}),
    ("r1:0 += dfmpyhh(r3:2,r5:4)", {"double_arith": True}),
    ("p0 = dfcmp.eq(r3:2,r5:4)", {"double_arith": True}),
    ("p1 = dfcmp.ge(r3:2,r5:4)", {"double_arith": True}),
    ("r1 = convert_df2sf(r3:2)", {"double_arith": True}),
    ("r1:0 = convert_w2df(r2)", {"double_arith": True}),
    ("r1:0 = convert_ud2df(r3:2)", {"double_arith": True}),
    ("r1 = convert_df2w(r3:2):chop", {"double_arith": True}),
    ("r1 = sfadd(r2,r3)", {"double_arith": False, "float_to_double": False}),
    # HVX
    ("v1 = vmem(r2+#1)", {"memory": ("r2", 128, False, False, 128), "register": "v1", "is_hvx": True}),
    ("vmem(r29+#-2) = v3", {"memory": ("r29", -256, True, False, 128), "is_hvx": True}),
    ("v1 = vmemu(r2+#3)", {"memory": ("r2", 384, False, False, 128), "mnemonic": "vmemu"}),
    ("vmemu(r2+#-8) = v5", {"memory": ("r2", -1024, True, False, 128), "mnemonic": "vmemu"}),
    ("v1.tmp = vmem(r2+#0)", {"memory": ("r2", 0, False, False, 128)}),
    ("v1.cur = vmem(r2+#7)", {"memory": ("r2", 896, False, False, 128)}),
    ("v1 = vmem(r2+#1):nt", {"memory": ("r2", 128, False, False, 128)}),
    ("vmem(r3+#2):nt = v4", {"memory": ("r3", 256, True, False, 128)}),
    ("v2 = vmem(r4++#1)", {"memory": ("r4", 0, False, True, 128), "increment": 128}),
    ("vmem(r4++#-1) = v2", {"memory": ("r4", 0, True, True, 128), "increment": -128}),
    ("v2 = vmem(r4++m1)", {"memory": ("r4", 0, False, True, 128), "increment": None}),
    ("if (p0) vmem(r29+#1) = v2", {"memory": ("r29", 128, True, False, 128), "conditional": True}),
    ("if (!q1) vmem(r29+#1) = v2", {"memory": ("r29", 128, True, False, 128), "conditional": True}),
    ("if (p1) v3 = vmem(r29+#-1)", {"memory": ("r29", -128, False, False, 128), "conditional": True}),
    ("v1.w = vadd(v2.w,v3.w)", {"is_hvx": True, "memory": None}),
    ("v1 = vsplat(r2)", {"is_hvx": True}),
    ("q0 = vcmp.eq(v1.w,v2.w)", {"is_hvx": True}),
    ("r1 = add(r2,r3)", {"is_hvx": False, "memory": None, "branch": None}),
]


def _assemble(asm: str) -> list[int]:
    result = subprocess.run(
        [LLVM_MC, "-triple=hexagon", "-mcpu=hexagonv73", "-mhvx", "-show-encoding"],
        input="{ " + asm + " }\n",
        capture_output=True,
        text=True,
        check=False,
    )
    encodings = re.findall(r"encoding: \[([^\]]*)\]", result.stdout)
    assert encodings and "error" not in result.stderr, f"llvm-mc cannot assemble {asm!r}: {result.stderr}"
    data = bytes(int(byte, 16) for byte in encodings[0].split(","))
    return list(struct.unpack(f"<{len(data) // 4}I", data))


@functools.cache
def _committed() -> dict[str, list[int]]:
    return json.loads(CASES_FILE.read_text()) if CASES_FILE.exists() else {}


def _instruction(asm: str, index: int) -> Instruction:
    words = _committed().get(asm)
    if words is None:
        if not shutil.which(LLVM_MC):
            pytest.skip(f"{asm!r} has no committed encoding and {LLVM_MC} is not installed")
        words = _assemble(asm)
    packets = decode_packets(struct.pack(f"<{len(words)}I", *words), 0)
    assert len(packets) == 1, [p.address for p in packets]
    return packets[0].instructions[index]


def _check(instruction: Instruction, expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        if key == "index":
            continue
        if key == "memory":
            memory = instruction.memory
            got = (
                None
                if memory is None
                else (memory.base, memory.offset, memory.is_store, memory.post_increment, memory.size)
            )
            assert got == value, (instruction.text, got)
            if memory is not None:
                assert memory.is_vector == (memory.size == 128), instruction.text
        elif key in ("register", "increment"):
            assert instruction.memory is not None
            assert getattr(instruction.memory, key) == value, instruction.text
        elif key == "loop":
            setup = instruction.loop_setup
            assert setup is not None, instruction.text
            got_loop = (setup.loop, setup.start, setup.count_imm, setup.count_reg, setup.pipelined_stages)
            assert got_loop == value, instruction.text
        elif key == "writes":
            writes = [(w.dest, w.op, w.source, w.immediate) for w in instruction.writes]
            for write in value:
                assert any(got[: len(write)] == tuple(write) for got in writes), (instruction.text, writes)
        else:
            assert getattr(instruction, key) == value, (key, instruction.text)


@pytest.mark.parametrize(("asm", "expected"), CASES, ids=[case[0] for case in CASES])
def test_single_instruction_from_llvm_mc(asm: str, expected: dict[str, Any]) -> None:
    _check(_instruction(asm, expected.get("index", 0)), expected)


def test_committed_encodings_are_what_llvm_mc_emits() -> None:
    if not shutil.which(LLVM_MC):
        pytest.skip(f"{LLVM_MC} not installed")
    committed = _committed()
    assert set(committed) == {asm for asm, _ in CASES}, "regenerate mc_cases.json: python tests/test_decode.py"
    for asm, words in committed.items():
        assert _assemble(asm) == words, asm


# ---------------------------------------------------------------------------------------------------------------------
# hand-built packets: parse bits 15:14 are 01/10 inside a packet, 11 at its end, 00 for a duplex (which ends it)

NOP = 0x7F000000
END, MORE, LOOP = 0xC000, 0x4000, 0x8000


def _words(*words: int) -> bytes:
    return struct.pack(f"<{len(words)}I", *words)


def test_packet_boundaries_and_sizes() -> None:
    code = _words(NOP | END, NOP | MORE, NOP | MORE, NOP | END, NOP | MORE, NOP | END)
    packets = decode_packets(code, 0x1000)
    assert [(p.address, p.size, len(p.instructions)) for p in packets] == [
        (0x1000, 4, 1),
        (0x1004, 12, 3),
        (0x1010, 8, 2),
    ]
    assert [i.address for i in packets[1].instructions] == [0x1004, 0x1008, 0x100C]


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [(LOOP, MORE, {0}), (MORE, LOOP, {1}), (LOOP, LOOP, {0, 1}), (MORE, MORE, set())],
)
def test_endloop_markers_come_from_the_first_two_words(first: int, second: int, expected: set[int]) -> None:
    packets = decode_packets(_words(NOP | first, NOP | second, NOP | END), 0)
    assert len(packets) == 1
    assert packets[0].endloop == frozenset(expected)


def test_endloop0_in_a_two_word_packet_and_no_marker_in_a_single_word() -> None:
    assert decode_packets(_words(NOP | LOOP, NOP | END), 0)[0].endloop == frozenset({0})
    assert decode_packets(_words(NOP | END), 0)[0].endloop == frozenset()


def test_duplex_ends_the_packet_and_yields_both_halves_in_llvm_order() -> None:
    # slot 1 (bits 28:16) SS2 memw(r29+#8) = r2; slot 0 (bits 12:0) SS2 allocframe(#16); duplex ICLASS 0xE
    high = 0b0100 << 9 | 2 << 4 | 2
    low = 0b1110 << 9 | 2 << 4
    duplex = 0b111 << 29 | high << 16 | low
    packets = decode_packets(_words(0x7060C002 & ~0xC000 | MORE, duplex), 0x2000)
    assert len(packets) == 1 and packets[0].size == 8
    first, store, frame = packets[0].instructions
    assert first.writes == (RegisterWrite("r2", "copy", "r0"),)
    assert store.is_duplex_half and frame.is_duplex_half and store.address == frame.address == 0x2004
    assert store.memory == MemoryAccess("r29", 8, True, False, 4, register="r2")
    assert frame.mnemonic == "allocframe" and frame.text == "allocframe(#16)"


def test_constant_extender_applies_to_the_next_instruction_only() -> None:
    # immext(#0x12345640); r1 = add(r29,##0x12345655); r2 = add(r29,#1)
    extender = 0x12345640 >> 6
    immext = (extender >> 14) << 16 | (extender & 0x3FFF) | MORE
    add_ext = 0xB01D4001 | (0x15 << 5)  # rD=r1, rS=r29, low 6 bits of the field = 0x15
    add_plain = 0xB01DC022  # r2 = add(r29,#1)
    packet = decode_packets(_words(immext, add_ext & ~0xC000 | MORE, add_plain), 0)[0]
    ext, extended, plain = packet.instructions
    assert ext.iclass == "EXT"
    assert extended.writes == (RegisterWrite("r1", "add_imm", "r29", 0x12345655),)
    assert plain.writes == (RegisterWrite("r2", "add_imm", "r29", 1),)


def test_branch_targets_are_relative_to_the_packet_not_the_word() -> None:
    jump = 0x5800C000 | (0x40 >> 2) << 1  # jump +0x40
    packet = decode_packets(_words(NOP | MORE, NOP | MORE, jump), 0x3000)[0]
    assert packet.instructions[2].target == 0x3040


def test_empty_truncated_and_unaligned_input() -> None:
    assert decode_packets(b"", 0) == []
    assert decode_packets(b"\x01\x02\x03", 0) == []
    # a packet cut short by the end of .text is returned as far as it goes
    packets = decode_packets(_words(NOP | MORE, NOP | MORE) + b"\x00", 0x10)
    assert [(p.address, p.size, len(p.instructions)) for p in packets] == [(0x10, 8, 2)]


def test_a_packet_never_exceeds_four_words() -> None:
    packets = decode_packets(_words(*([NOP | MORE] * 9)), 0)
    assert [p.size for p in packets] == [16, 16, 4]


def test_undecodable_words_keep_their_class_and_a_word_rendering() -> None:
    reserved_duplex = 0b111 << 29 | 1 << 13  # duplex ICLASS 0xF is reserved
    instruction = decode_packets(_words(reserved_duplex), 0)[0].instructions[0]
    assert instruction.iclass == "UNKNOWN" and instruction.text.startswith(".word 0x")


def test_fast_constructors_build_the_same_frozen_records() -> None:
    """The decoder builds its objects by installing __dict__; they must be indistinguishable from the records'."""
    memory = decode_module._memory("r29", 8, True, False, 4, register="r2")
    assert memory == MemoryAccess("r29", 8, True, False, 4, register="r2")
    instruction = decode_module._instruction(4, 0x1234, "ST", "memw", "memw(r29+#8) = r2", memory=memory)
    expected = Instruction(4, 0x1234, "ST", "memw", "memw(r29+#8) = r2", memory=memory)
    assert instruction == expected and hash(instruction) == hash(expected) and repr(instruction) == repr(expected)
    for field in dataclasses.fields(Instruction):
        assert getattr(instruction, field.name) == getattr(expected, field.name)
        if field.default is not dataclasses.MISSING:  # defaults must stay plain class attributes
            assert getattr(Instruction, field.name) == field.default
    with pytest.raises(dataclasses.FrozenInstanceError):
        instruction.text = "changed"  # type: ignore[misc]
    assert dataclasses.replace(instruction, address=8).address == 8
    write = decode_module._write("r2", "add_imm", "r29", 16)
    assert write == RegisterWrite("r2", "add_imm", "r29", 16)


def test_decoded_instructions_equal_their_copies_from_the_word_cache() -> None:
    # the same word twice: the second comes from the per-call template cache with its own address
    word = 0x919DC042  # r2 = memw(r29+#8)
    first, second = (p.instructions[0] for p in decode_packets(_words(word, word), 0x100))
    assert (first.address, second.address) == (0x100, 0x104)
    assert dataclasses.replace(first, address=0x104) == second


def _cold(code: bytes, address: int) -> list:
    """`code` decoded packet by packet, each in its own call: no template from an earlier packet can be involved."""
    packets = []
    for packet in decode_packets(code, address, cache=DecodeCache()):
        offset = packet.address - address
        alone = decode_packets(code[offset : offset + packet.size], packet.address, cache=DecodeCache())
        assert len(alone) == 1
        packets.append(alone[0])
    return packets


def _fields(packets: list) -> list:
    """Everything a packet says, instruction texts included (== on records already covers every field)."""
    return [(p, [(i.address, i.text, i.target, i.loop_setup) for i in p.instructions]) for p in packets]


# PC-relative, extended, new-value, duplex and loop packets, each repeated at other addresses so that the second and
# later copies are rebuilt from a packet template; targets and texts must follow the packet's address
TEMPLATED_PACKETS = (
    "jump 0x100",
    "call 0x1000",
    "if (!p1) call 0x80",
    "p1 = cmp.gt(r2,r3); if (!p1.new) jump:t 0x1fc",
    "r2 = r17 ; jump 0x30",
    "if (r3!=#0) jump:nt 0x44",
    "jump ##0x12345678",
    "loop0(0x40,#10)",
    "p3 = sp2loop0(0x10,r7)",
    "r2 = memw(r29+##100000)",
    "r3 = memw(r2++#4)",
)


def test_packets_rebuilt_from_templates_equal_a_cold_decode() -> None:
    packets = [_committed()[asm] for asm in TEMPLATED_PACKETS]
    words = [word for _ in range(3) for packet in packets for word in packet]  # every packet three times
    code = _words(*words)
    for base in (0, 0x1000, 0xFFFFFF00):  # the last one wraps targets around 2**32
        warm, cold = decode_packets(code, base, cache=DecodeCache()), _cold(code, base)
        assert len(warm) == 3 * len(packets)
        assert _fields(warm) == _fields(cold)
    jumps = [p for p in decode_packets(code, 0x1000) if p.instructions[0].text.startswith("jump 0x")]
    assert [p.instructions[0].target - p.address for p in jumps] == [0x100] * 3
    assert len({p.instructions[0].target for p in jumps}) == 3


def test_a_pc_relative_text_that_does_not_split_around_its_target_gets_no_template() -> None:
    jump = Instruction(0x100, 0x5800C000, "J", "jump", "jump 0x110 // 0x110", branch="jump", target=0x110)
    packet = decode_module.Packet(0x100, 4, (jump,), frozenset())
    assert decode_module._packet_template(packet) is None
    plain = dataclasses.replace(jump, text="jump 0x110")
    template = decode_module._packet_template(dataclasses.replace(packet, instructions=(plain,)))
    assert template is not None
    entries, relative, _ = template
    assert entries == ((0, plain.__dict__),)
    assert relative == ((0, 0, plain.__dict__, 0x10, "jump ", ""),)


def test_new_value_and_duplex_packets_rebuilt_from_templates() -> None:
    store_new = 0xA1A1D200 | 0xC000  # memw(r1+#...) = <new:1>.new, a new-value store naming the producer one back
    producer = 0x7060C002 & ~0xC000 | MORE  # r2 = r0
    high = 0b0100 << 9 | 2 << 4 | 2
    duplex = 0b111 << 29 | high << 16 | 0b1110 << 9 | 2 << 4
    code = _words(producer, store_new, producer, duplex, producer, store_new, producer, duplex)
    warm, cold = decode_packets(code, 0x40, cache=DecodeCache()), _cold(code, 0x40)
    assert _fields(warm) == _fields(cold)
    assert warm[0].instructions[1].text == warm[2].instructions[1].text
    assert warm[0].instructions[1].address + 16 == warm[2].instructions[1].address


def _core_text(cpu: str) -> Any:
    from hexlint.elf import load_elf

    library = Path(__file__).resolve().parent.parent / "fixtures" / "htp-core" / "lib" / f"libhtp-core-{cpu}.so"
    return next(section for section in load_elf(library).code_sections if section.name == ".text")


def test_a_cache_shared_between_libraries_changes_nothing_in_the_result() -> None:
    """Two builds for different CPUs through one cache: the second reuses the first's templates at other addresses."""
    cache = DecodeCache()
    first, second = _core_text("v73"), _core_text("v81")
    decode_packets(first.data, first.address, cache=cache)
    learned = len(cache)
    warm = decode_packets(second.data, second.address, cache=cache)
    assert len(cache) < 2 * learned  # the second build mostly reused what the first taught
    assert _fields(warm) == _fields(decode_packets(second.data, second.address, cache=DecodeCache()))
    assert _fields(decode_packets(second.data, second.address + 0x40, cache=cache)) == _fields(
        decode_packets(second.data, second.address + 0x40, cache=DecodeCache())
    )


def test_the_cache_starts_over_beyond_its_limit() -> None:
    cache = DecodeCache(limit=10)
    text = _core_text("v73")
    decode_packets(text.data[:4096], text.address, cache=cache)
    assert len(cache) > 10
    packets = decode_packets(text.data[:64], text.address, cache=cache)
    assert 0 < len(cache) <= 40
    assert packets == decode_packets(text.data[:64], text.address, cache=DecodeCache())


def test_a_whole_library_decodes_as_it_does_packet_by_packet() -> None:
    text = _core_text("v73")
    warm = decode_packets(text.data, text.address, cache=DecodeCache())
    assert _fields(warm) == _fields(_cold(text.data, text.address))
    shared = {}
    for instruction in (i for p in warm for i in p.instructions if not i.is_duplex_half):
        shared.setdefault((instruction.word, instruction.text), []).append(instruction)
    repeated = [group for group in shared.values() if len(group) > 2 and group[0].target is None]
    assert repeated, "the library repeats words"
    for group in repeated:
        assert len({i.address for i in group}) == len(group)
        assert all(dataclasses.replace(i, address=group[0].address) == group[0] for i in group)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=256), st.integers(min_value=0, max_value=0xFFFFFFFF))
def test_decode_never_raises_on_random_bytes(code: bytes, base: int) -> None:
    packets = decode_packets(code, base)
    covered = sum(packet.size for packet in packets)
    assert covered == len(code) // 4 * 4
    address = base
    for packet in packets:
        assert packet.address == address and 4 <= packet.size <= 16 and packet.instructions
        assert packet.endloop <= {0, 1}
        address += packet.size


_SHARED_BY_EXAMPLES = DecodeCache()  # filled by every example: what one input teaches must hold for the next


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=0xFFFFFFFF), min_size=1, max_size=24), st.integers(0, 0xFFFF))
def test_a_shared_cache_decodes_random_words_as_a_cold_decode_does(words: list[int], base: int) -> None:
    code = _words(*words) * 2  # twice: the second copy comes from packet templates
    warm = decode_packets(code, base * 4, cache=_SHARED_BY_EXAMPLES)
    assert _fields(warm) == _fields(decode_packets(code, base * 4, cache=DecodeCache()))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=0xFFFFFFFF), min_size=1, max_size=32))
def test_decode_never_raises_on_random_words(words: list[int]) -> None:
    packets = decode_packets(_words(*words), 0x10000)
    instructions = [i for p in packets for i in p.instructions]
    assert len({i.address for i in instructions}) == len(words)
    for instruction in instructions:
        assert instruction.iclass in {"ALU32", "CR", "J", "LD", "ST", "XTYPE", "SYSTEM", "HVX", "EXT", "UNKNOWN"}
        assert instruction.text


if __name__ == "__main__":
    CASES_FILE.write_text(json.dumps({asm: _assemble(asm) for asm, _ in CASES}, indent=0) + "\n")
    print(f"wrote {len(CASES)} encodings to {CASES_FILE}")
