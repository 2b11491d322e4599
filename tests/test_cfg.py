"""CFG, dominators and natural loops: on hand-built packets, and on the committed libraries against LLVM's listing."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_binary_support import call, insn, jump, loop_setup, nop, noreturn_before_a_loop, packet, ret

from hexlint.binary.audit import audit_image
from hexlint.elf import load_elf
from hexlint.hexagon.cfg import build_cfg
from hexlint.hexagon.decode import Packet

ROOT = Path(__file__).resolve().parent.parent
CORE_LIB = ROOT / "fixtures" / "htp-core" / "lib"
TWINS = ROOT / "fixtures" / "binary"


def test_straight_line_code_is_one_block_without_loops():
    cfg = build_cfg([nop(0x100), nop(0x104), packet(0x108, ret(0x108))])
    assert [block.start for block in cfg.blocks] == [0x100]
    assert cfg.loops == ()


def test_calls_do_not_end_blocks():
    cfg = build_cfg([nop(0x100), packet(0x104, call(0x104, 0x900)), nop(0x108), packet(0x10C, ret(0x10C))])
    assert len(cfg.blocks) == 1


def test_hardware_loop_from_endloop_edge_to_loop_start():
    packets = [
        packet(0x100, loop_setup(0x100, 0x108)),
        nop(0x104),
        nop(0x108),
        packet(0x10C, insn(0x10C), endloop=frozenset({0})),
        packet(0x110, ret(0x110)),
    ]
    cfg = build_cfg(packets)
    (loop,) = cfg.loops
    assert loop.header == 0x108
    assert loop.kind == "hardware"
    assert loop.blocks == {0x108}
    assert cfg.innermost_loop(0x10C).header == 0x108
    assert cfg.innermost_loop(0x104) is None
    assert cfg.innermost_loop(0x110) is None


def test_pipelined_loop_kind():
    packets = [
        packet(0x100, loop_setup(0x100, 0x104, stages=2)),
        packet(0x104, insn(0x104), endloop=frozenset({0})),
        packet(0x108, ret(0x108)),
    ]
    (loop,) = build_cfg(packets).loops
    assert loop.kind == "pipelined"
    assert loop.header == 0x104


def test_hardware_loop_with_endloop_packet_laid_out_before_the_body():
    # loop0 starts at 0x110 but its :endloop0 packet sits at 0x104, before the body: an address scan misses it.
    packets = [
        packet(0x100, loop_setup(0x100, 0x110), jump(0x100 + 4, 0x110)),
        packet(0x108, insn(0x108), endloop=frozenset({0})),
        packet(0x10C, jump(0x10C, 0x118)),
        nop(0x110),
        packet(0x114, jump(0x114, 0x108)),
        packet(0x118, ret(0x118)),
    ]
    cfg = build_cfg(packets)
    (loop,) = cfg.loops
    assert loop.header == 0x110
    assert loop.kind == "hardware"
    assert loop.blocks == {0x108, 0x110}
    assert cfg.innermost_loop(0x10C) is None


def test_branch_loop_with_call_is_a_loop():
    packets = [
        nop(0x100),
        packet(0x104, call(0x104, 0x900)),
        packet(0x108, jump(0x108, 0x104, conditional=True)),
        packet(0x10C, ret(0x10C)),
    ]
    cfg = build_cfg(packets)
    (loop,) = cfg.loops
    assert (loop.header, loop.kind, loop.depth) == (0x104, "branch", 1)
    assert loop.blocks == {0x104}


def test_nested_loops_have_depth_and_parent():
    packets = [
        nop(0x100),
        packet(0x104, loop_setup(0x104, 0x108)),  # outer header
        nop(0x108),  # inner hardware loop
        packet(0x10C, insn(0x10C), endloop=frozenset({0})),
        packet(0x110, jump(0x110, 0x104, conditional=True)),
        packet(0x114, ret(0x114)),
    ]
    cfg = build_cfg(packets)
    outer, inner = cfg.loops
    assert (outer.header, outer.depth, outer.parent, outer.kind) == (0x104, 1, None, "branch")
    assert (inner.header, inner.depth, inner.parent, inner.kind) == (0x108, 2, 0x104, "hardware")
    assert inner.blocks < outer.blocks
    assert cfg.innermost_loop(0x10C).header == 0x108
    assert cfg.innermost_loop(0x110).header == 0x104


def test_two_back_edges_to_one_header_are_one_loop():
    packets = [
        nop(0x100),
        packet(0x104, jump(0x104, 0x10C, conditional=True)),
        packet(0x108, jump(0x108, 0x104)),
        packet(0x10C, jump(0x10C, 0x104, conditional=True)),
        packet(0x110, ret(0x110)),
    ]
    (loop,) = build_cfg(packets).loops
    assert loop.header == 0x104
    assert set(loop.latches) == {0x108, 0x10C}


def test_irreducible_cycle_is_reported_as_a_loop():
    # Two entries (0x108 and 0x10C) into one cycle: neither dominates the other.
    packets = [
        packet(0x100, jump(0x100, 0x10C, conditional=True)),
        nop(0x104),
        nop(0x108),
        packet(0x10C, jump(0x10C, 0x108, conditional=True)),
        packet(0x110, ret(0x110)),
    ]
    loops = build_cfg(packets).loops
    assert len(loops) == 1
    assert loops[0].irreducible


def test_alignment_padding_before_a_loop_body_does_not_make_the_loop_irreducible():
    # The entry jumps to the loop's test at 0x10C; the body at 0x108 is aligned by a nop nothing executes (0x104).
    packets = [
        packet(0x100, jump(0x100, 0x10C)),
        nop(0x104),
        packet(0x108, insn(0x108, "r0 = add(r0,#1)")),
        packet(0x10C, jump(0x10C, 0x108, conditional=True)),
        packet(0x110, ret(0x110)),
    ]
    (loop,) = build_cfg(packets).loops
    assert (loop.header, loop.blocks, loop.irreducible) == (0x10C, {0x108, 0x10C}, False)
    # The same block holding real work is an entry nothing visible reaches (a jump-table target): two entries.
    packets[1] = packet(0x104, insn(0x104, "r1 = #0"))
    (loop,) = build_cfg(packets).loops
    assert loop.irreducible


def test_a_call_that_never_returns_ends_its_block_without_fallthrough():
    cfg = build_cfg(noreturn_before_a_loop(), no_return=[1])
    assert cfg.block_at(0x104).successors == ()
    (loop,) = cfg.loops
    assert (loop.header, loop.blocks, loop.irreducible) == (0x10C, {0x108, 0x10C}, False)
    # as a returning call, it falls into the body: a second entry
    (loop,) = build_cfg(noreturn_before_a_loop()).loops
    assert loop.irreducible


@pytest.mark.parametrize("library", sorted(CORE_LIB.glob("libhtp-core-v*.so")), ids=lambda p: p.name)
def test_the_structured_core_has_no_irreducible_loop(library):
    # Our kernels are structured C (no goto): every loop has one entry, whatever padding clang puts before it.
    audit = audit_image(load_elf(library))
    loops = [loop for function in audit.functions for loop in function.cfg.loops]
    assert len(loops) > 100
    assert [loop.header for loop in loops if loop.irreducible] == []


def test_loop_only_reached_through_a_jump_table_is_found():
    packets = [
        packet(0x100, insn(0x100, "jumpr r2", branch="jumpr")),
        nop(0x104),
        packet(0x108, jump(0x108, 0x104, conditional=True)),
        packet(0x10C, ret(0x10C)),
    ]
    (loop,) = build_cfg(packets).loops
    assert loop.header == 0x104


def test_unconditional_jump_has_no_fallthrough_and_tail_calls_leave():
    packets = [nop(0x100), packet(0x104, jump(0x104, 0x5000)), nop(0x108)]
    cfg = build_cfg(packets)
    assert cfg.block_at(0x104).successors == ()
    assert cfg.loops == ()


def test_empty_function():
    cfg = build_cfg([], 0x100, 0x100)
    assert cfg.blocks == () and cfg.loops == ()


def _oracle_endloop_words(listing: str) -> set[int]:
    """Addresses of the last word of every packet llvm-objdump marks `:endloopN`."""
    return {int(match, 16) for match in re.findall(r"^\s*([0-9a-f]+):.*\}\s*:endloop[01]", listing, re.MULTILINE)}


ORACLES = sorted(
    [(lib, lib.with_name(lib.name.replace(".so", ".objdump.txt.gz"))) for lib in CORE_LIB.glob("libhtp-core-v*.so")]
    + [(lib, lib.with_suffix(".objdump.txt")) for lib in TWINS.glob("*.so")]
)


@pytest.mark.parametrize(("library", "oracle"), [pair for pair in ORACLES if pair[1].exists()], ids=lambda p: p.name)
def test_every_llvm_endloop_packet_closes_a_hardware_loop_of_the_cfg(library, oracle):
    text = gzip.decompress(oracle.read_bytes()).decode() if oracle.suffix == ".gz" else oracle.read_text()
    expected = _oracle_endloop_words(text)
    audit = audit_image(load_elf(library))
    closing = set()
    for function in audit.functions:
        cfg = function.cfg
        latch_blocks = {latch for loop in cfg.loops if loop.kind in ("hardware", "pipelined") for latch in loop.latches}
        for block in cfg.blocks:
            if block.start in latch_blocks:
                last = cfg.packets[block.last_packet]
                if last.endloop:
                    closing.add(last.address + last.size - 4)
    assert closing == expected
    if "htp-core" in str(library):
        assert len(expected) > 20


@st.composite
def random_functions(draw):
    """Random packet sequences with jumps (conditional or not, two in a packet), returns, jump tables, loop set-ups and
    endloops."""
    count = draw(st.integers(min_value=1, max_value=40))
    addresses = [0x1000 + 4 * index for index in range(count)]
    packets = []
    for address in addresses:
        kind = draw(
            st.sampled_from(["nop", "nop", "jump", "cjump", "ret", "jumpr", "call", "setup", "endloop", "two jumps"])
        )
        target = draw(st.sampled_from([*addresses, 0x9000]))
        if kind == "jump":
            packets.append(packet(address, jump(address, target)))
        elif kind == "two jumps":  # a conditional and an unconditional jump in one packet: no fallthrough
            other = jump(address, draw(st.sampled_from([*addresses, 0x9000])))
            packets.append(Packet(address, 4, (jump(address, target, conditional=True), other), frozenset()))
        elif kind == "cjump":
            packets.append(packet(address, jump(address, target, conditional=True)))
        elif kind == "ret":
            packets.append(packet(address, ret(address)))
        elif kind == "jumpr":
            packets.append(packet(address, insn(address, "jumpr r3", branch="jumpr")))
        elif kind == "call":
            packets.append(packet(address, call(address, target)))
        elif kind == "setup":
            packets.append(packet(address, loop_setup(address, target, loop=draw(st.sampled_from([0, 1])))))
        else:
            packets.append(packet(address, insn(address), endloop=frozenset(draw(st.sampled_from([{0}, {1}, {0, 1}])))))
    return packets


@settings(max_examples=300, deadline=None)
@given(random_functions())
def test_cfg_invariants_on_random_control_flow(packets):
    cfg = build_cfg(packets)
    starts = [block.start for block in cfg.blocks]
    assert starts == sorted(starts) and starts[0] == packets[0].address
    assert sum(block.last_packet - block.first_packet + 1 for block in cfg.blocks) == len(packets)
    for block in cfg.blocks:
        assert set(block.successors) <= set(starts)
    by_header = {loop.header: loop for loop in cfg.loops}
    assert len(by_header) == len(cfg.loops)
    for loop in cfg.loops:
        assert loop.header in loop.blocks and set(loop.latches) <= loop.blocks
        assert loop.kind in ("hardware", "pipelined", "branch")
        for latch in loop.latches:
            assert loop.header in cfg.block_at(latch).successors  # a latch really jumps back to the header
        if loop.parent is not None:
            parent = by_header[loop.parent]
            assert loop.blocks <= parent.blocks and loop.depth == parent.depth + 1
        else:
            assert loop.depth == 1
    for address, header in cfg.innermost_loop_by_packet.items():
        innermost = by_header[header]
        block = cfg.block_at(address)
        assert block.start in innermost.blocks
        assert not any(
            block.start in other.blocks and other.depth > innermost.depth
            for other in cfg.loops
            if other is not innermost
        )


def switch_in_a_loop() -> list[Packet]:
    """0x100 loop header; 0x104 `jumpr r0` through a jump table to the cases 0x108 and 0x10C; 0x110 the latch."""
    return [
        packet(0x100, insn(0x100, "r0 = add(r0,r1)")),
        packet(0x104, insn(0x104, "jumpr r0", branch="jumpr")),
        packet(0x108, jump(0x108, 0x110)),
        packet(0x10C, insn(0x10C, "r1 = add(r1,#1)")),
        packet(0x110, jump(0x110, 0x100, conditional=True)),
        packet(0x114, ret(0x114)),
    ]


def test_jump_table_targets_are_the_successors_of_the_indirect_jump() -> None:
    cfg = build_cfg(switch_in_a_loop(), indirect_jumps={1: [0x108, 0x10C]})
    successors = dict(zip(cfg.block_starts, cfg.block_successors, strict=True))
    assert [cfg.block_starts[number] for number in successors[0x100]] == [0x108, 0x10C]
    (loop,) = cfg.loops
    assert loop.header == 0x100
    assert set(loop.blocks) == {0x100, 0x108, 0x10C, 0x110}
    assert not loop.irreducible


def test_without_its_table_an_indirect_jump_leaves_the_cases_outside_every_loop() -> None:
    cfg = build_cfg(switch_in_a_loop())
    assert not any(0x10C in loop.blocks for loop in cfg.loops)
