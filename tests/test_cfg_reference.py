"""The fast paths of the CFG and the audit agree with plain reference computations.

- loops: textbook dominator sets (dom(n) = {n} + the intersection over the predecessors) and natural loops (a back edge
  u -> h where h dominates u; the body is h plus every block reaching u without passing h), against the CFG's
  dominance test without a dominator tree (the body walk meets no search root) and its no-cycle shortcut; nesting by
  set inclusion over every pair of loops, against the CFG's shortcut for loops whose headers dominate them;
- blocks: a CFG built from the caller's list of control packets equals the CFG that finds them itself; the
  predecessor lists the CFG keeps from building it are every edge's, as built from the successor lists;
- :endloop edges: the backward walks from each :endloop packet find the edges the forward data flow finds;
- stack accesses: the audit's shortcut (r29/r30-based accesses from the instruction pass, data flow only where a
  register other than SP/FP is derived) equals the reference walk over every instruction with the data flow; the
  instruction pass looks for those derivations only in words that access no memory, as no decoded access makes one.
On the committed libraries and on random control flow with random stack traffic.
"""

from __future__ import annotations

import struct
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_binary_support import call, insn, jump, load, loop_setup, packet, ret, store
from test_cfg import random_functions

from hexlint.binary.audit import (
    AuditSettings,
    _innermost_loop_of_packets,
    _stack_accesses,
    audit_function,
    audit_image,
)
from hexlint.elf import FunctionSymbol, load_elf
from hexlint.hexagon import cfg as cfg_module
from hexlint.hexagon.cfg import FunctionCfg, build_cfg
from hexlint.hexagon.decode import Instruction, RegisterWrite, decode_packets

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = sorted((ROOT / "fixtures" / "htp-core" / "lib").glob("libhtp-core-v*.so")) + sorted(
    (ROOT / "fixtures" / "binary").glob("*.so")
)
VIRTUAL_ROOT = -1


def reference_natural_loops(cfg: FunctionCfg) -> dict[int, set[int]]:
    """Header -> body of every natural loop, from dominator sets; the DFS roots hang from a virtual root; alignment
    padding (a nop-only block nothing reaches, falling into a block reached otherwise) is left out."""
    starts = [block.start for block in cfg.blocks]
    successors = {block.start: list(block.successors) for block in cfg.blocks}
    reached_by = {start: [s for s in starts if start in successors[s]] for start in starts}
    for block in cfg.blocks[1:]:  # alignment padding: never executed, out of the graph
        instructions = [
            i for packet in cfg.packets[block.first_packet : block.last_packet + 1] for i in packet.instructions
        ]
        into_reached = all(len(reached_by[target]) > 1 for target in block.successors)
        if not reached_by[block.start] and into_reached and all(i.mnemonic == "nop" for i in instructions):
            successors[block.start] = []
    predecessors: dict[int, list[int]] = {start: [] for start in starts}
    for start, targets in successors.items():
        for target in targets:
            predecessors[target].append(start)
    reached: set[int] = set()
    for start in starts:  # roots: the entry, then every block nothing before reaches, lowest address first
        if start in reached:
            continue
        predecessors[start].append(VIRTUAL_ROOT)
        stack = [start]
        reached.add(start)
        while stack:
            for target in successors[stack.pop()]:
                if target not in reached:
                    reached.add(target)
                    stack.append(target)
    everything = {VIRTUAL_ROOT, *starts}
    dominators = {start: set(everything) for start in starts}
    dominators[VIRTUAL_ROOT] = {VIRTUAL_ROOT}
    changed = True
    while changed:
        changed = False
        for start in starts:
            new = {start} | set.intersection(*(dominators[p] for p in predecessors[start]))
            if new != dominators[start]:
                dominators[start], changed = new, True
    loops: dict[int, set[int]] = {}
    for latch, targets in successors.items():
        for header in targets:
            if header not in dominators[latch]:
                continue
            body = {header, latch}
            stack = [latch] if latch != header else []
            while stack:
                for predecessor in predecessors[stack.pop()]:
                    if predecessor != VIRTUAL_ROOT and predecessor not in body:
                        body.add(predecessor)
                        stack.append(predecessor)
            loops.setdefault(header, set()).update(body)
    return loops


def assert_loops_match_reference(cfg: FunctionCfg) -> None:
    expected = reference_natural_loops(cfg)
    found = {loop.header: loop for loop in cfg.loops}
    for header, body in expected.items():
        assert header in found, f"natural loop at {header:#x} missing"
        if not found[header].irreducible:  # an irreducible header's body also holds its non-dominated cycle
            assert set(found[header].blocks) == body
    for header, loop in found.items():
        assert loop.irreducible or header in expected, f"loop at {header:#x} has no back edge"


def assert_nesting_matches_reference(cfg: FunctionCfg) -> None:
    """Parent = the smallest other loop holding every block of the loop (of two with the same blocks the lower header
    is the outer one); depth = 1 + the parent's; a block's innermost loop = the deepest loop holding it (ties: the
    highest header), compared by set inclusion over all pairs, not by the CFG's shortcuts."""
    loops = {loop.header: loop for loop in cfg.loops}
    for loop in cfg.loops:
        enclosing = [
            other
            for other in cfg.loops
            if other.header != loop.header
            and loop.blocks <= other.blocks
            and (-len(other.blocks), other.header) < (-len(loop.blocks), loop.header)
        ]
        parent = min(enclosing, key=lambda other: (len(other.blocks), other.header)) if enclosing else None
        assert loop.parent == (parent.header if parent else None), f"parent of the loop at {loop.header:#x}"
        assert loop.depth == (loops[loop.parent].depth + 1 if loop.parent is not None else 1)
    innermost = {}
    for block in cfg.blocks:
        holders = [loop for loop in cfg.loops if block.start in loop.blocks]
        if holders:
            innermost[block.start] = max(holders, key=lambda loop: (loop.depth, loop.header)).header
    assert cfg.innermost_loop_by_block == innermost


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda path: path.name)
def test_loops_of_the_committed_libraries_are_the_textbook_natural_loops(library):
    audit = audit_image(load_elf(library))
    if "htp-core" in library.name:
        assert sum(len(function.loops) for function in audit.functions) > 100
    for function in audit.functions:
        assert_loops_match_reference(function.cfg)
        assert_nesting_matches_reference(function.cfg)


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda path: path.name)
def test_cfg_from_the_audits_control_packets_equals_the_cfg_that_scans_itself(library):
    for function in audit_image(load_elf(library)).functions:
        cfg = function.cfg
        # the packets as the scan has them, and decoded (alignment padding found from the words, then by mnemonic)
        for packets in (cfg.packets, tuple(cfg.packets)):
            alone = build_cfg(
                packets, cfg.start, cfg.end, no_return=cfg.no_return, indirect_jumps=dict(cfg.indirect_jumps)
            )
            assert alone.blocks == cfg.blocks
            assert alone.loops == cfg.loops
            assert alone.innermost_loop_by_block == cfg.innermost_loop_by_block


def assert_predecessors_are_every_edges(cfg: FunctionCfg) -> None:
    expected: list[list[int]] = [[] for _ in cfg.block_successors]
    for number, targets in enumerate(cfg.block_successors):
        for target in targets:
            expected[target].append(number)
    assert [sorted(sources) for sources in cfg.block_predecessors] == expected  # in any order


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda path: path.name)
def test_predecessors_kept_from_building_the_cfg_are_every_edges(library):
    for function in audit_image(load_elf(library)).functions:
        assert_predecessors_are_every_edges(function.cfg)


@settings(max_examples=300, deadline=None)
@given(random_functions())
def test_predecessors_kept_from_building_random_control_flow_are_every_edges(packets):
    assert_predecessors_are_every_edges(build_cfg(packets))


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda path: path.name)
def test_innermost_loop_of_each_packet_is_its_blocks(library):
    for function in audit_image(load_elf(library)).functions:
        cfg = function.cfg
        expected = [cfg.innermost_loop_by_packet.get(address) for address in cfg.packet_addresses]
        assert list(_innermost_loop_of_packets(cfg)) == expected


def cfg_by_data_flow(packets, start=None, end=None, no_return=(), indirect_jumps=None) -> FunctionCfg:
    """build_cfg with every :endloop edge from the forward data flow (the walks' shortcut turned off)."""
    with mock.patch.object(cfg_module, "_single_endloop_starts", return_value=None):
        return build_cfg(packets, start, end, no_return=no_return, indirect_jumps=indirect_jumps)


def assert_same_cfg(cfg: FunctionCfg, reference: FunctionCfg) -> None:
    assert cfg.blocks == reference.blocks  # successors included, in order
    assert cfg.loops == reference.loops
    assert cfg.innermost_loop_by_block == reference.innermost_loop_by_block


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda path: path.name)
def test_endloop_edges_of_the_committed_libraries_equal_the_data_flows(library):
    functions = audit_image(load_elf(library)).functions
    functions = [function for function in functions if any(loop.kind != "branch" for loop in function.cfg.loops)]
    if "htp-core" in library.name:
        assert len(functions) > 10
    for function in functions:
        cfg = function.cfg
        reference = cfg_by_data_flow(cfg.packets, cfg.start, cfg.end, cfg.no_return, dict(cfg.indirect_jumps))
        assert_same_cfg(cfg, reference)


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda path: path.name)
def test_stack_accesses_of_the_committed_libraries_equal_the_reference_walk(library):
    audit = audit_image(load_elf(library))
    if "htp-core" in library.name:
        assert sum(len(function.stack_accesses) for function in audit.functions) > 100
    for function in audit.functions:
        assert function.stack_accesses == tuple(_stack_accesses(function.cfg))


def derives_from_sp_or_fp(instruction: Instruction) -> bool:
    """A register other than SP/FP written from SP/FP (what _seed_packets looks for)."""
    return any(write.source in ("r29", "r30") and write.dest not in ("r29", "r30") for write in instruction.writes)


@pytest.mark.parametrize("library", LIBRARIES, ids=lambda path: path.name)
def test_no_memory_access_of_the_committed_libraries_derives_a_register_from_sp_or_fp(library):
    image = load_elf(library)
    accesses = [
        instruction
        for section in image.code_sections
        for decoded in decode_packets(section.data, section.address, image.cpu or 0x73)
        for instruction in decoded.instructions
        if instruction.memory is not None
    ]
    assert accesses
    assert not [instruction.text for instruction in accesses if derives_from_sp_or_fp(instruction)]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=0xFFFFFFFF), min_size=1, max_size=4))
def test_no_memory_access_of_random_words_derives_a_register_from_sp_or_fp(words):
    for decoded in decode_packets(struct.pack(f"<{len(words)}I", *words), 0x1000):
        for instruction in decoded.instructions:
            assert instruction.memory is None or not derives_from_sp_or_fp(instruction), instruction.text


@settings(max_examples=300, deadline=None)
@given(random_functions())
def test_loops_of_random_control_flow_are_the_textbook_natural_loops(packets):
    cfg = build_cfg(packets)
    assert_loops_match_reference(cfg)
    assert_nesting_matches_reference(cfg)


@settings(max_examples=500, deadline=None)
@given(random_functions())
def test_endloop_edges_of_random_control_flow_equal_the_data_flows(packets):
    assert_same_cfg(build_cfg(packets), cfg_by_data_flow(packets))


REGISTERS = ["r2", "r3", "r4", "r16", "r17", "r28"]
BASES = ["r29", "r30", *REGISTERS]


@st.composite
def random_stack_traffic(draw):
    """Random control flow (jumps, hardware loops, calls) whose packets derive, move, kill and use SP/FP pointers."""
    count = draw(st.integers(min_value=2, max_value=30))
    addresses = [0x2000 + 8 * index for index in range(count)]
    packets = []
    for address in addresses:
        first = draw(st.sampled_from(["add_sp", "add", "copy", "other", "load_reg", "store", "load", "post"]))
        dest, source = draw(st.sampled_from(REGISTERS)), draw(st.sampled_from(["r29", "r30", *REGISTERS]))
        base, offset = draw(st.sampled_from(BASES)), draw(st.sampled_from([None, -8, 0, 128, 256]))
        vector = draw(st.booleans())
        if first == "add_sp":
            stack_base = draw(st.sampled_from(["r29", "r30"]))
            word = insn(address, "add", writes=(RegisterWrite(dest, "add_imm", stack_base, 64),))
        elif first == "add":
            word = insn(address, "add", writes=(RegisterWrite(dest, "add_imm", source, 32),))
        elif first == "copy":
            word = insn(address, "copy", writes=(RegisterWrite(dest, "copy", source),))
        elif first == "other":
            word = insn(address, "other", writes=(RegisterWrite(dest, "other", source),))
        elif first == "load_reg":
            word = load(address, base, offset, dest, vector=False)
        elif first == "store":
            word = store(address, base, offset, "v1" if vector else "r5", vector=vector)
        elif first == "load":
            word = load(address, base, offset, "v2" if vector else "r6", vector=vector)
        else:
            word = load(address, base, 0, "v3", post_increment=True, increment=128)
        if draw(st.booleans()):  # allocframe-like: SP/FP written from SP, which derives nothing
            writes = (*word.writes, RegisterWrite("r30", "copy", "r29"))
            word = insn(address, word.text, writes=writes, memory=word.memory)
        second_kind = draw(st.sampled_from(["none", "none", "jump", "cjump", "call", "ret", "setup", "endloop"]))
        target = draw(st.sampled_from(addresses))
        endloop = frozenset()
        if second_kind == "jump":
            packets.append(packet(address, word, jump(address + 4, target)))
        elif second_kind == "cjump":
            packets.append(packet(address, word, jump(address + 4, target, conditional=True)))
        elif second_kind == "call":
            packets.append(packet(address, word, call(address + 4, 0x9000)))
        elif second_kind == "ret":
            packets.append(packet(address, word, ret(address + 4)))
        elif second_kind == "setup":
            packets.append(packet(address, word, loop_setup(address + 4, target)))
        else:
            endloop = frozenset({0}) if second_kind == "endloop" else frozenset()
            packets.append(packet(address, word, insn(address + 4), endloop=endloop))
    return packets


@settings(max_examples=400, deadline=None)
@given(random_stack_traffic())
def test_stack_accesses_of_random_functions_equal_the_reference_walk(packets):
    end = packets[-1].address + packets[-1].size
    symbol = FunctionSymbol("kernel", packets[0].address, end - packets[0].address)
    function = audit_function(symbol, packets, None, AuditSettings())
    assert function.stack_accesses == tuple(_stack_accesses(function.cfg))
    assert function.cfg.blocks == build_cfg(packets, symbol.address, symbol.end).blocks
    assert_loops_match_reference(function.cfg)
