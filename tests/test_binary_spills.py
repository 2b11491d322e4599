"""Spill slots vs stack arrays, in loop vs frame set-up, round trips: the audit on hand-built packets."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_binary_support import (
    add_imm,
    call,
    insn,
    jump,
    load,
    loop_setup,
    nop,
    noreturn_before_a_loop,
    other_write,
    packet,
    ret,
    store,
)

from hexlint.binary.audit import AuditSettings, audit_function, audit_image, settings_from_options
from hexlint.elf import ElfImage, FunctionSymbol, load_elf
from hexlint.hexagon.decode import RegisterWrite

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def audit(packets, name="kernel"):
    end = packets[-1].address + packets[-1].size
    symbol = FunctionSymbol(name, packets[0].address, end - packets[0].address)
    return audit_function(symbol, packets, None, AuditSettings())


def hardware_loop(body_packets, start=0x200):
    """loop0 set-up at 0x100, body from `start`, last body packet carries :endloop0, then return."""
    first = body_packets[0].address
    assert first == start
    *head, last = body_packets
    tail = packet(last.address, *last.instructions, endloop=frozenset({0}))
    after = last.address + last.size
    return [packet(0x100, loop_setup(0x100, start)), *head, tail, packet(after, ret(after))]


def test_vector_store_and_reload_of_a_constant_slot_in_a_loop_is_a_round_trip():
    function = audit(hardware_loop([packet(0x200, store(0x200, "r29", 256)), packet(0x204, load(0x204, "r29", 256))]))
    assert function.inloop_vector_spills == 2
    assert function.inloop_scalar_spills == 0
    (loop,) = function.loops
    assert (loop.vector_spill_stores, loop.vector_reloads, loop.round_trips) == (1, 1, 1)
    assert function.round_trips == 1


def test_frame_setup_outside_loops_is_not_an_in_loop_spill():
    packets = [
        packet(0x100, store(0x100, "r29", 0, "r17:16", vector=False)),
        packet(0x104, loop_setup(0x104, 0x108)),
        packet(0x108, insn(0x108), endloop=frozenset({0})),
        packet(0x10C, load(0x10C, "r29", 0, "r17:16", vector=False)),
        packet(0x110, ret(0x110)),
    ]
    function = audit(packets)
    assert function.inloop_scalar_spills == 0
    assert function.frame_spills == 2


def test_slot_through_a_register_derived_from_sp_is_a_spill():
    packets = [
        packet(0x100, add_imm(0x100, "r2", "r29", 128)),
        packet(0x104, loop_setup(0x104, 0x108)),
        packet(0x108, store(0x108, "r2", 0)),
        packet(0x10C, load(0x10C, "r2", 0), endloop=frozenset({0})),
        packet(0x110, ret(0x110)),
    ]
    function = audit(packets)
    slots = {access.slot for access in function.stack_accesses}
    assert slots == {("r29", 128)}
    assert function.inloop_vector_spills == 2


def test_pointer_moving_with_the_loop_index_is_a_stack_array_not_a_spill():
    # r2 = sp + 128 before the loop, r2 += 128 in the loop: the header sees two offsets -> unknown -> array.
    packets = [
        packet(0x100, add_imm(0x100, "r2", "r29", 128), loop_setup(0x104, 0x108)),
        packet(0x108, store(0x108, "r2", 0)),
        packet(0x10C, add_imm(0x10C, "r2", "r2", 128), endloop=frozenset({0})),
        packet(0x110, ret(0x110)),
    ]
    function = audit(packets)
    assert function.inloop_vector_spills == 0
    assert function.array_accesses == 1


def test_register_indexed_and_post_increment_stack_accesses_are_array_accesses():
    packets = hardware_loop(
        [
            packet(0x200, store(0x200, "r29", None, "r3", vector=False)),
            packet(0x204, add_imm(0x204, "r4", "r29", 64)),
            packet(0x208, load(0x208, "r4", 0, post_increment=True, increment=128)),
            packet(0x20C, load(0x20C, "r4", 0)),
        ]
    )
    function = audit(packets)
    assert function.inloop_vector_spills == 0 and function.inloop_scalar_spills == 0
    assert function.array_accesses == 3


def test_non_constant_add_keeps_the_register_stack_derived_but_unknown():
    packets = hardware_loop(
        [
            packet(0x200, add_imm(0x200, "r4", "r29", 64)),
            packet(0x204, other_write(0x204, "r4", "r4")),
            packet(0x208, store(0x208, "r4", 0)),
        ]
    )
    function = audit(packets)
    assert function.array_accesses == 1 and function.inloop_vector_spills == 0


def test_instructions_of_one_packet_read_registers_from_before_the_packet():
    # { r2 = add(r29,#8); memw(r2+#0) = r3 }: the store uses the OLD r2, which is not stack-derived.
    packets = [
        packet(0x100, add_imm(0x100, "r2", "r29", 8), store(0x104, "r2", 0, "r3", vector=False)),
        packet(0x108, store(0x108, "r2", 0, "r3", vector=False)),
        packet(0x10C, ret(0x10C)),
    ]
    function = audit(packets)
    assert [access.address for access in function.stack_accesses] == [0x108]


def test_calls_and_loads_kill_derived_registers():
    packets = [
        packet(0x100, add_imm(0x100, "r2", "r29", 8), add_imm(0x104, "r17", "r29", 16)),
        packet(0x108, call(0x108, 0x900)),
        packet(0x10C, store(0x10C, "r2", 0, "r3", vector=False)),  # r2 is caller-saved: clobbered by the call
        packet(0x110, store(0x110, "r17", 0, "r3", vector=False)),  # r17 is callee-saved: still sp+16
        packet(0x114, load(0x114, "r8", 0, "r17", vector=False)),  # r17 = memw(...): no longer derived
        packet(0x118, store(0x118, "r17", 0, "r3", vector=False)),
        packet(0x11C, ret(0x11C)),
    ]
    function = audit(packets)
    assert [(access.address, access.slot) for access in function.stack_accesses] == [(0x110, ("r29", 16))]


def test_copy_of_sp_and_chained_adds_keep_the_offset():
    copy = insn(0x100, "r5 = r29", writes=(RegisterWrite("r5", "copy", "r29"),))
    packets = [
        packet(0x100, copy),
        packet(0x104, add_imm(0x104, "r6", "r5", 32)),
        packet(0x108, store(0x108, "r6", -8, "r1", vector=False)),
        packet(0x10C, ret(0x10C)),
    ]
    (access,) = audit(packets).stack_accesses
    assert access.slot == ("r29", 24)


def test_branch_loop_spills_are_counted_per_loop_and_nested_loops_roll_up():
    packets = [
        nop(0x100),
        packet(0x104, store(0x104, "r29", 0, "r3", vector=False), loop_setup(0x108, 0x10C)),  # outer body
        packet(0x10C, store(0x10C, "r29", 128)),  # inner hardware loop
        packet(0x110, load(0x110, "r29", 128), endloop=frozenset({0})),
        packet(0x114, load(0x114, "r29", 0, "r3", vector=False), jump(0x118, 0x104, conditional=True)),
        packet(0x11C, ret(0x11C)),
    ]
    function = audit(packets)
    outer, inner = function.loops
    assert (inner.vector_spills, inner.scalar_spills) == (2, 0)
    assert (outer.vector_spills, outer.scalar_spills, outer.round_trips) == (2, 2, 2)
    assert function.inloop_vector_spills == 2 and function.inloop_scalar_spills == 2


def test_scalar_and_vector_spills_are_told_apart():
    function = audit(
        hardware_loop([packet(0x200, store(0x200, "r30", -8, "r1", vector=False), store(0x204, "r29", 384))])
    )
    assert function.inloop_scalar_spills == 1 and function.inloop_vector_spills == 1


def test_hx202_counts_innermost_loops_by_default_and_every_loop_with_scope_all():
    from hexlint.binary.audit import LibraryAudit
    from hexlint.checks import hx202_scalar_spill_in_loop

    packets = [
        nop(0x100),
        packet(0x104, store(0x104, "r29", 0, "r3", vector=False), loop_setup(0x108, 0x10C)),  # outer loop only
        packet(0x10C, insn(0x10C), endloop=frozenset({0})),  # inner hardware loop: no spill
        packet(0x110, load(0x110, "r29", 0, "r3", vector=False), jump(0x114, 0x104, conditional=True)),
        packet(0x118, ret(0x118)),
    ]
    function = audit(packets)
    library = LibraryAudit(path="lib.so", cpu=0x73, image=None, functions=(function,))
    assert list(hx202_scalar_spill_in_loop.check(library, {"max_inloop_scalar_spills": 0})) == []
    (finding,) = hx202_scalar_spill_in_loop.check(library, {"max_inloop_scalar_spills": 0, "scope": "all"})
    assert finding.code == "HX202" and finding.span.address == 0x104
    assert list(hx202_scalar_spill_in_loop.check(library, {"max_inloop_scalar_spills": -1, "scope": "all"})) == []


def test_hx201_advice_depends_on_calls_in_the_spilling_loop():
    from hexlint.binary.audit import LibraryAudit
    from hexlint.checks import hx201_vector_spill_in_loop

    with_call = [
        packet(0x100, store(0x100, "r29", 128)),  # spilled before the loop, reloaded in it after each call
        packet(0x104, call(0x104, 0x900)),
        packet(0x108, load(0x108, "r29", 128), jump(0x10C, 0x104, conditional=True)),
        packet(0x110, ret(0x110)),
    ]
    without_call = hardware_loop([packet(0x200, store(0x200, "r29", 256)), packet(0x204, load(0x204, "r29", 256))])
    messages = []
    for packets in (with_call, without_call):
        library = LibraryAudit(path="lib.so", cpu=0x73, image=None, functions=(audit(packets),))
        (finding,) = hx201_vector_spill_in_loop.check(library, {})
        messages.append(finding.message)
    assert "preserved across a call" in messages[0] and "0 stores, 1 reload" in messages[0]
    assert "fewer vectors live" in messages[1] and "1 round trip" in messages[1]


def test_a_masked_store_and_its_scalar_reads_in_a_loop_are_a_stack_buffer_not_spills():
    # softmax's reduction: r2 = sp + 640; in the loop `if (!q0) vmem(r2+#0) = v0` then `r0 = memw(r29+#640)`
    masked = store(0x200, "r2", 0)
    masked = insn(0x200, "if (!q0) vmem(r2+#0) = v0", memory=masked.memory, is_hvx=True, conditional=True)
    packets = [
        packet(0x100, add_imm(0x100, "r2", "r29", 640), loop_setup(0x104, 0x200)),
        packet(0x200, masked),
        packet(0x204, load(0x204, "r29", 640, "r0", vector=False)),
        packet(0x208, load(0x208, "r29", 644, "r1", vector=False)),
        packet(0x20C, store(0x20C, "r29", 256), endloop=frozenset({0})),  # a real spill next to the buffer
        packet(0x210, ret(0x210)),
    ]
    function = audit(packets)
    reasons = {access.address: access.buffer_reason for access in function.stack_accesses}
    assert reasons == {0x200: "predicated store", 0x204: "predicated store", 0x208: "predicated store", 0x20C: None}
    assert function.inloop_vector_spills == 1
    assert function.inloop_scalar_spills == 0
    assert function.array_accesses == 3
    (loop,) = function.loops
    assert (loop.vector_spill_stores, loop.scalar_reloads, loop.array_accesses) == (1, 0, 3)


def test_the_same_slot_used_for_a_scalar_and_a_vector_spill_stays_a_spill_slot():
    # stack-slot colouring: r29+#512 holds a word in one loop and a vector in another; nothing is predicated
    packets = [
        packet(0x100, loop_setup(0x100, 0x200)),
        packet(0x200, store(0x200, "r29", 512, "r3", vector=False)),
        packet(0x204, load(0x204, "r29", 512, "r3", vector=False), endloop=frozenset({0})),
        packet(0x208, loop_setup(0x208, 0x300)),
        packet(0x300, store(0x300, "r29", 512)),
        packet(0x304, load(0x304, "r29", 512), endloop=frozenset({0})),
        packet(0x308, ret(0x308)),
    ]
    function = audit(packets)
    assert (function.inloop_scalar_spills, function.inloop_vector_spills, function.array_accesses) == (2, 2, 0)


def test_stores_to_the_frame_bottom_before_a_call_in_a_loop_are_call_arguments():
    # hmx_queue_free: `memw(r29+#0) = r20; memw(r29+#8) = r0` then a varargs logging call, in a loop, never reloaded
    packets = [
        packet(0x100, loop_setup(0x100, 0x200)),
        packet(0x200, store(0x200, "r29", 0, "r20", vector=False), store(0x204, "r29", 8, "r0", vector=False)),
        packet(0x208, call(0x208, 0x1000)),
        packet(0x20C, store(0x20C, "r29", 64, "r3", vector=False)),  # a real spill: reloaded after the call
        packet(0x210, call(0x210, 0x1000)),
        packet(0x214, load(0x214, "r29", 64, "r3", vector=False), endloop=frozenset({0})),
        packet(0x218, ret(0x218)),
    ]
    function = audit(packets)
    reasons = {access.address: access.buffer_reason for access in function.stack_accesses}
    assert reasons == {0x200: "call argument", 0x204: "call argument", 0x20C: None, 0x214: None}
    assert function.inloop_scalar_spills == 2


def test_a_never_reloaded_store_after_the_last_call_of_its_block_stays_a_spill():
    # the store follows the call in its block: no call consumes it, so it is not an argument
    packets = [
        packet(0x100, loop_setup(0x100, 0x200)),
        packet(0x200, call(0x200, 0x1000)),
        packet(0x204, store(0x204, "r29", 0, "r20", vector=False), endloop=frozenset({0})),
        packet(0x208, ret(0x208)),
    ]
    function = audit(packets)
    assert [access.buffer_reason for access in function.stack_accesses] == [None]
    assert function.inloop_scalar_spills == 1


def test_a_frame_pointer_slot_before_a_call_is_not_an_argument():
    # outgoing arguments live at the bottom of the frame, addressed from SP; an FP-based slot is the caller's own
    packets = [
        packet(0x100, loop_setup(0x100, 0x200)),
        packet(0x200, store(0x200, "r30", -8, "r2", vector=False)),
        packet(0x204, call(0x204, 0x1000), endloop=frozenset({0})),
        packet(0x208, ret(0x208)),
    ]
    function = audit(packets)
    assert function.inloop_scalar_spills == 1


def test_a_call_to_a_function_that_never_returns_does_not_fall_through():
    packets = noreturn_before_a_loop()
    symbol = FunctionSymbol("kernel", 0x100, 0x14)
    image = ElfImage("lib.so", "EM_QDSP6", 0x73, False, (), (symbol, FunctionSymbol("__assert_fail", 0x900, 4)))
    (loop,) = audit_function(symbol, packets, image, AuditSettings()).cfg.loops
    assert (loop.header, loop.irreducible) == (0x10C, False)
    # the HX201 option names them: without __assert_fail its call falls into the body, a second entry
    returning = settings_from_options({"HX201": {"no_return_functions": ["abort"]}})
    (loop,) = audit_function(symbol, packets, image, returning).cfg.loops
    assert loop.irreducible


def test_a_relocated_jump_of_an_object_file_is_a_tail_call_not_a_self_loop():
    # In a .o the linker has not resolved the tail call yet: the jump's distance is 0 (its own packet) and a
    # relocation names the callee.
    packets = [
        packet(0x100, jump(0x100, 0x108, conditional=True)),
        packet(0x104, jump(0x104, 0x104)),
        packet(0x108, ret(0x108)),
    ]
    symbol = FunctionSymbol("kernel", 0x100, 0xC)
    image = ElfImage("k.o", "EM_QDSP6", 0x73, True, (), (symbol,), relocation_symbols={0x104: "__hexagon_divsi3"})
    function = audit_function(symbol, packets, image, AuditSettings())
    assert function.cfg.loops == ()
    assert [(call.address, call.helper) for call in function.calls] == [(0x104, "__hexagon_divsi3")]
    assert function.cfg.block_at(0x104).successors == ()


def _recounted_loops(function):
    """LoopAudit's counters recounted from the function's accesses, calls and double operations: each loop counts
    what is in it or in a loop nested in it."""
    parent = {loop.header: loop.parent for loop in function.cfg.loops}

    def enclosing(header):
        while header is not None:
            yield header
            header = parent[header]

    counts = {header: dict.fromkeys(_LOOP_COUNTERS, 0) for header in parent}
    stored = {header: set() for header in parent}
    reloaded = {header: set() for header in parent}
    for access in function.stack_accesses:
        for header in enclosing(access.loop):
            if not access.is_spill:
                counts[header]["array_accesses"] += 1
                continue
            kind = "vector" if access.is_vector else "scalar"
            counts[header][f"{kind}_spill_stores" if access.is_store else f"{kind}_reloads"] += 1
            (stored if access.is_store else reloaded)[header].add(access.slot)
    for site in function.calls:
        for header in enclosing(site.loop):
            counts[header]["calls"] += 1
            counts[header]["divisions"] += site.is_division
            counts[header]["promotions"] += site.is_promotion
    for operation in function.double_operations:
        for header in enclosing(operation.loop):
            counts[header]["promotions"] += 1
    for header in parent:
        counts[header]["round_trips"] = len(stored[header] & reloaded[header])
    return counts


_LOOP_COUNTERS = (
    "vector_spill_stores",
    "vector_reloads",
    "scalar_spill_stores",
    "scalar_reloads",
    "array_accesses",
    "calls",
    "divisions",
    "promotions",
)


TWINS = ("vector_spill", "scalar_spill", "stack_buffers", "division", "float_promotion")
COUNTED_LIBRARIES = ["htp-core/lib/libhtp-core-v73.so", *(f"binary/{twin}.so" for twin in TWINS)]


@pytest.mark.parametrize("name", COUNTED_LIBRARIES)
def test_every_loop_counts_what_its_accesses_calls_and_doubles_say(name):
    """The per-loop counters (built per innermost loop, then added outward) equal a plain recount of the function's
    records, loop by loop, in the committed libraries."""
    audit = audit_image(load_elf(FIXTURES / name))
    checked = 0
    for function in audit.functions:
        expected = _recounted_loops(function)
        for loop in function.loops:
            got = {counter: getattr(loop, counter) for counter in (*_LOOP_COUNTERS, "round_trips")}
            assert got == expected[loop.header], f"{function.name} loop 0x{loop.header:x}"
            checked += 1
    assert checked
