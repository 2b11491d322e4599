"""CFG, dominators and natural loops on hand-built packets (no decoder or toolchain needed)."""

from __future__ import annotations

from test_binary_support import call, insn, jump, loop_setup, nop, packet, ret

from hexlint.hexagon.cfg import build_cfg


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
