"""Basic blocks, control-flow graph, dominators and natural loops of one function's decoded packets.

Why a CFG and not an address-range scan (measured on clang-22 builds of real kernel libraries):
LLVM forms hardware loops (`loop0`/`loop1` ... `:endloop0`) only for loops without calls, so every loop that calls a
helper is a plain backward branch; software-pipelined loops use `sp1loop0`..`sp3loop0`; and some hardware loops are
laid out with the `:endloop` packet *before* the body. Scanning from a `loopN` set-up to the next `:endloop` packet
sees a fraction of the loops. Here every loop is a natural loop of the CFG: a back edge `u -> h` where `h` dominates
`u`, whatever produced it (an `:endloop` edge to the loop start, a conditional or unconditional jump).

Blocks: a packet is a leader when it is the function entry, a branch or loop-start target, or follows a packet that
can transfer control elsewhere (jump, return, `:endloop`). Calls do not end blocks (they return). The start of the
hardware loop an `:endloop` packet returns to is found by data flow (the `loopN` set-ups that reach the packet), not
by address, so the odd layouts above are handled. Irreducible cycles (a retreating edge whose target does not
dominate its source) are reported as loops too, flagged `irreducible`.

Cost: one pass over the instructions finds the few control packets (branches, loop set-ups, `:endloop`), or the
caller hands them over (the binary audit reads them from a scan's flagged words, decoding no packet); everything
after works on block numbers. A function whose edges all go to higher addresses has no cycle, hence no loop. Otherwise
one depth-first search finds the back edges, its roots (the entry, then every block nothing before reaches, such as
jump-table targets) and the reverse postorder; no dominator tree is built: a header dominates its latches exactly when
the one backward walk from them that collects the body meets no root and no block before the header. Alignment
padding (nop-only blocks nothing reaches, in front of a block reached otherwise) is a search root the body walks never
step into: never executed, it is no entry into the loop it falls into.
"""

from __future__ import annotations

import functools
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, compress
from operator import itemgetter

from hexlint.hexagon.decode import PacketRange

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from hexlint.hexagon.decode import Packet

    _T = TypeVar("_T")

# What the CFG reads of a control packet: its :endloop markers and the field dicts of its instructions (at least of its
# jumps, returns and loop set-ups), as Instruction.__dict__ or PacketRange.fields_with have them (a field left at its
# default may be absent): the caller's instruction pass builds no Instruction for them
ControlPacket = tuple[frozenset[int], "Sequence[Mapping[str, Any]]"]

_new = object.__new__
_set = object.__setattr__


def frozen_instance(cls: type[_T], fields: dict[str, Any]) -> _T:
    """`cls(**fields)` for a frozen record given every field, without one object.__setattr__ per field.

    Thousands of blocks, loops and audit facts are built per library; equality, hashing and repr are unchanged
    because they read the fields as attributes."""
    instance = object.__new__(cls)
    object.__setattr__(instance, "__dict__", fields)
    return instance


@dataclass(frozen=True)
class BasicBlock:
    """A run of packets entered only at its first and left only after its last."""

    start: int
    end: int  # exclusive
    first_packet: int  # index into FunctionCfg.packets
    last_packet: int  # inclusive
    successors: tuple[int, ...]  # start addresses of successor blocks


@dataclass(frozen=True)
class Loop:
    """A loop: its header, its blocks and back edges, its kind, where it nests and the addresses it spans."""

    header: int  # start address of the header block
    blocks: frozenset[int]  # start addresses of every block in the loop, nested loops included
    latches: tuple[int, ...]  # blocks with a back edge to the header
    kind: str  # "hardware" | "pipelined" | "branch"
    depth: int = 1  # 1 = outermost
    parent: int | None = None  # header of the enclosing loop
    irreducible: bool = False
    low: int = 0  # lowest address in the loop
    high: int = 0  # end of the highest block (exclusive)


@dataclass(frozen=True)
class FunctionCfg:
    """The basic blocks of one function, their edges, and its loops."""

    start: int
    end: int
    packets: Sequence[Packet]  # a tuple, or a PacketRange of a CodeScan (decoded on access)
    # The blocks in address order as parallel lists, indexed by block number (thousands of blocks per library: the
    # BasicBlock records are built only when `blocks` is read)
    block_starts: list[int]
    block_ends: list[int]  # exclusive
    block_first_packets: list[int]  # indexes into packets
    block_last_packets: list[int]  # inclusive
    block_successors: list[list[int]]  # block numbers, in BasicBlock.successors order
    loops: tuple[Loop, ...]  # outer loops before inner ones, then by header
    # block start -> header of its innermost loop (absent: not in a loop)
    innermost_loop_by_block: dict[int, int]
    no_return: tuple[int, ...] = ()  # build_cfg's: the packets whose call never returns
    # build_cfg's: (packet index of a jump through a table, the addresses the table holds), in packet order
    indirect_jumps: tuple[tuple[int, tuple[int, ...]], ...] = ()

    @functools.cached_property
    def blocks(self) -> tuple[BasicBlock, ...]:
        starts = self.block_starts
        return tuple(
            BasicBlock(start, end, first, last, tuple([starts[number] for number in successors]))
            for start, end, first, last, successors in zip(
                starts,
                self.block_ends,
                self.block_first_packets,
                self.block_last_packets,
                self.block_successors,
                strict=True,
            )
        )

    @functools.cached_property
    def innermost_loop_by_packet(self) -> dict[int, int]:
        """Packet address -> header of its innermost loop (absent: not in a loop)."""
        result = {}
        for start, first, last in zip(
            self.block_starts, self.block_first_packets, self.block_last_packets, strict=True
        ):
            header = self.innermost_loop_by_block.get(start)
            if header is not None:
                for index in range(first, last + 1):
                    result[self.packet_addresses[index]] = header
        return result

    @functools.cached_property
    def _loop_by_header(self) -> dict[int, Loop]:
        return {loop.header: loop for loop in self.loops}

    def loop(self, header: int) -> Loop:
        return self._loop_by_header[header]

    def innermost_loop(self, packet_address: int) -> Loop | None:
        header = self.innermost_loop_by_packet.get(packet_address)
        return None if header is None else self.loop(header)

    def loop_at(self, address: int) -> Loop | None:
        """The innermost loop holding the instruction at `address` (any word of a packet)."""
        block = self.block_at(address)
        if block is None:
            return None
        index = bisect_right(self.packet_addresses, address) - 1
        return self.innermost_loop(self.packet_addresses[index]) if index >= 0 else None

    @functools.cached_property
    def block_predecessors(self) -> list[list[int]]:
        """Block number -> the numbers of the blocks with an edge to it (built once, shared: never change them)."""
        return _predecessors(self.block_successors)

    @functools.cached_property
    def packet_addresses(self) -> list[int]:
        """Each packet's address (without decoding a PacketRange)."""
        return [packet.address for packet in self.packets]

    def block_at(self, address: int) -> BasicBlock | None:
        index = bisect_right(self.block_starts, address) - 1
        if index >= 0 and address < self.block_ends[index]:
            return self.blocks[index]
        return None


def build_cfg(
    packets: Sequence[Packet],
    start: int | None = None,
    end: int | None = None,
    control: Mapping[int, ControlPacket] | None = None,
    no_return: Iterable[int] = (),
    indirect_jumps: Mapping[int, Sequence[int]] | None = None,
) -> FunctionCfg:
    """CFG and loops of the packets of one function (`packets` sorted by address, all inside [start, end)).

    `control`: when the caller already walked the instructions, the indexes of the packets that hold a branch (jump,
    call, return), a loop set-up or an `:endloop` marker (any other packet just falls through; a superset is fine, a
    packet left out is a wrong CFG, except a call: it returns, so it ends no block; but see `no_return`), each mapped
    to a ControlPacket: then no packet is read here. None: found here, with one pass over the instructions. A
    PacketRange is kept as it is, not decoded.
    `no_return`: indexes of the packets holding an unconditional call that never returns (`abort`, `__assert_fail`):
    their block ends there and does not fall through (the caller knows the callees' names, the CFG does not).
    `indirect_jumps`: packet index of a `jumpr` through a jump table (a switch) -> the addresses the table holds,
    its successors (the caller reads the table from the image; without it the cases hang from nothing, and a loop
    around a switch falls apart into pieces)."""
    ends: list[int] | None
    if isinstance(packets, PacketRange):
        addresses = packets.addresses
        ends = None  # a scan's packets are contiguous: each one ends where the next one starts
        last_end = packets.scan.packet_addresses[packets.high]
    else:
        packets = tuple(packets)
        addresses = [packet.address for packet in packets]
        ends = [packet.address + packet.size for packet in packets]
        last_end = ends[-1] if ends else 0
    if start is None:
        start = addresses[0] if packets else 0
    if end is None:
        end = last_end if packets else start
    if not packets:
        return FunctionCfg(start, end, (), [], [], [], [], [], (), {})
    scan = _scan(packets, addresses, control)
    no_return = tuple(no_return)
    for index in no_return:
        _end_block_without_fallthrough(scan, index)
    for index, targets in (indirect_jumps or {}).items():
        _add_indirect_successors(scan, addresses, index, targets)
    graph = _blocks(addresses, ends, last_end, scan)
    if graph.has_retreating_edge:
        loops, innermost_by_block, predecessors = _loops(graph, packets)
    else:
        loops, innermost_by_block, predecessors = (), {}, graph.predecessors
    cfg = FunctionCfg(
        start,
        end,
        packets,
        graph.starts,
        graph.ends,
        graph.first_packets,
        graph.last_packets,
        graph.successors,
        loops,
        innermost_by_block,
        no_return,
        tuple(sorted((index, tuple(targets)) for index, targets in (indirect_jumps or {}).items())),
    )
    object.__setattr__(cfg, "packet_addresses", addresses)  # seeds the cached property: computed here anyway
    if predecessors is not None:  # seeds the cached property (the data flow reads it) when built on the way
        object.__setattr__(cfg, "block_predecessors", predecessors)
    return cfg


@dataclass(frozen=True)
class _Scan:
    """One pass over the packets: successors of the control packets, loop set-ups, leaders, :endloop markers."""

    count: int
    # control packet index -> the target of its conditional jump, when that and the fallthrough are its successors
    conditional_jumps: dict[int, int]
    # any other control packet that ends a block -> static successor packet indexes (jumps, fallthrough); any other
    # packet falls through
    successors: dict[int, list[int]]
    setups: dict[int, list[tuple[int, int, int]]]  # packet index -> [(loop number, start index, stages)]
    leaders: set[int]
    endloops: dict[int, frozenset[int]]  # packet index -> its :endloop markers


def _scan(packets: Sequence[Packet], addresses: list[int], control: Mapping[int, ControlPacket] | None) -> _Scan:
    count = len(packets)
    if control is None:
        control = _control_packets(packets)
    indexes = sorted(control)
    conditional_jumps: dict[int, int] = {}
    successors: dict[int, list[int]] = {}
    setups: dict[int, list[tuple[int, int, int]]] = {}
    leaders = {0}  # the entry, the loop starts, then (below) the jump targets and the packets after block ends
    endloops: dict[int, frozenset[int]] = {}
    for index in indexes:  # any other packet falls through, leads nothing
        endloop, instructions = control[index]
        if len(instructions) == 1 and not endloop:  # most control packets: one jump
            fields = instructions[0]
            if fields.get("branch") == "jump":
                address = fields.get("target")
                target = count if address is None else bisect_left(addresses, address)
                inside = target < count and addresses[target] == address  # else outside the function
                if not fields.get("conditional"):
                    successors[index] = [target] if inside else []
                elif index + 1 < count:
                    if inside:  # else falls through, ends nothing
                        conditional_jumps[index] = target
                elif inside:  # in the last packet: nothing to fall through to
                    successors[index] = [target]
                continue
        targets: list[int] = []
        falls_through = True
        for fields in instructions:
            branch = fields.get("branch")
            if branch == "jump":
                address = fields.get("target")
                if address is not None:
                    target = bisect_left(addresses, address)
                    if target < count and addresses[target] == address:  # else outside the function
                        targets.append(target)
                if not fields.get("conditional"):
                    falls_through = False
            elif branch is None:  # only a loop set-up has neither a branch nor anything else the CFG reads
                setup = fields.get("loop_setup")
                if setup is not None and setup.loop in (0, 1):
                    start = _index_of(addresses, setup.start)
                    if start >= 0:
                        setups.setdefault(index, []).append((setup.loop, start, setup.pipelined_stages))
                        leaders.add(start)
            elif (branch == "jumpr" or branch == "return") and not fields.get("conditional"):
                falls_through = False
        if endloop:
            endloops[index] = endloop
        elif falls_through and not targets:
            continue  # a call or a loop set-up alone: falls through to the next packet, leads nothing
        if falls_through and index + 1 < count:
            if len(targets) == 1:  # most control packets
                conditional_jumps[index] = targets[0]
                continue
            targets.append(index + 1)
        successors[index] = targets
    # Leaders: the entry and the loop starts, every jump target, and the packet after each packet that ends a block
    leaders.update(conditional_jumps.values())
    leaders.update([index + 1 for index in conditional_jumps])
    leaders.update(chain.from_iterable(successors.values()))
    leaders.update([index + 1 for index in successors])
    leaders.discard(count)
    return _Scan(count, conditional_jumps, successors, setups, leaders, endloops)


def _end_block_without_fallthrough(scan: _Scan, index: int) -> None:
    """Packet `index` ends its block and does not fall through (it calls a function that never returns)."""
    target = scan.conditional_jumps.pop(index, None)
    if target is not None:
        scan.successors[index] = [target]
    else:
        scan.successors[index] = [other for other in scan.successors.get(index, ()) if other != index + 1]
    if index + 1 < scan.count:
        scan.leaders.add(index + 1)


def _add_indirect_successors(scan: _Scan, addresses: list[int], index: int, targets: Sequence[int]) -> None:
    """Packet `index` (an unconditional `jumpr` through a jump table) goes to the packets at `targets`."""
    found = [number for number in dict.fromkeys(_index_of(addresses, target) for target in targets) if number >= 0]
    if not found or index >= scan.count:
        return
    scan.conditional_jumps.pop(index, None)
    scan.successors[index] = found
    scan.leaders.update(found)
    if index + 1 < scan.count:
        scan.leaders.add(index + 1)


def _index_of(addresses: list[int], address: int) -> int:
    """Index of the packet at `address`, -1 when no packet of the function starts there."""
    position = bisect_left(addresses, address)
    return position if position < len(addresses) and addresses[position] == address else -1


def _control_packets(packets: Sequence[Packet]) -> dict[int, ControlPacket]:
    """The packets holding a branch, a loop set-up or an :endloop marker, by index."""
    control = {}
    for index, packet in enumerate(packets):
        instructions = packet.instructions
        if packet.endloop or any(
            instruction.branch is not None or instruction.loop_setup is not None for instruction in instructions
        ):
            control[index] = (packet.endloop, [instruction.__dict__ for instruction in instructions])
    return control


@dataclass(frozen=True)
class _Graph:
    """Blocks in address order; edges as block numbers; `:endloop` edges as (latch packet, start packet) -> stages."""

    starts: list[int]  # block start addresses
    ends: list[int]
    first_packets: list[int]
    last_packets: list[int]
    successors: list[list[int]]  # block numbers, in BasicBlock.successors order
    # built on the way when the function has :endloop packets (unless the data flow placed their edges), else None;
    # _loops completes it (FunctionCfg.block_predecessors keeps it whole) and walks loop bodies over a copy without
    # alignment padding
    predecessors: list[list[int]] | None
    endloop_edges: dict[tuple[int, int], int]
    has_retreating_edge: bool  # an edge to the same or a lower address: without one the graph has no cycle


def _blocks(addresses: list[int], packet_ends: list[int] | None, last_end: int, scan: _Scan) -> _Graph:
    """Blocks, with `:endloop` edges to the loop starts whose set-ups reach them (data flow over blocks).
    `packet_ends` None: the packets are contiguous, the last one ends at `last_end`."""
    firsts = sorted(scan.leaders)
    count = scan.count
    block_count = len(firsts)
    lasts = [following - 1 for following in firsts[1:]]  # each block ends before the next one starts
    lasts.append(count - 1)
    number_of_first = dict(zip(firsts, range(block_count), strict=True))
    number_of_first[count] = block_count  # after the last packet: the block after the last one
    # the packet after a block's last packet is the next block's first: a plain fallthrough goes to number + 1
    block_successors = [[number] for number in range(1, block_count)]
    block_successors.append([])
    retreating = False  # an edge to the same or a lower block: a fallthrough never is one
    for last, target in scan.conditional_jumps.items():  # most block ends: a conditional jump and the fallthrough
        following = number_of_first[last + 1]
        successor = number_of_first[target]
        block_successors[following - 1] = [successor, following] if successor != following else [successor]
        if successor < following:
            retreating = True
    for last, targets in scan.successors.items():  # a control packet with successors always ends its block
        number = number_of_first[last + 1] - 1
        if len(targets) == 1:  # an unconditional jump, or an :endloop packet's fallthrough
            successor = number_of_first[targets[0]]
            block_successors[number] = [successor]
        else:
            successors = block_successors[number] = [number_of_first[target] for target in dict.fromkeys(targets)]
            if not successors:
                continue
            successor = min(successors)
        if successor <= number:  # the fallthrough never is
            retreating = True
    endloop_edges: dict[tuple[int, int], int] = {}
    predecessors: list[list[int]] | None = None
    if scan.endloops:
        # Loop set-ups inside each block, in order: the last one per loop register is what leaves the block.
        gen: dict[int, dict[int, int]] = {}
        stages_by_start: dict[int, int] = {}
        for index in sorted(scan.setups):
            block_gen = gen.setdefault(bisect_right(firsts, index) - 1, {})
            for loop_number, start, stages in scan.setups[index]:
                block_gen[loop_number] = start
                stages_by_start[start] = max(stages, stages_by_start.get(start, 0))
        # block number -> its last packet, of the blocks an :endloop packet ends (the packet after it starts the next)
        endloop_blocks = {number_of_first[last + 1] - 1: last for last in scan.endloops}
        predecessors = _predecessors(block_successors)
        single = _single_endloop_starts(
            scan.endloops, endloop_blocks, gen, number_of_first, block_successors, predecessors
        )
        if single is None:  # two loop starts reach one :endloop packet: the data flow orders its edges
            predecessors = None
            _add_endloop_edges(
                scan, gen, endloop_blocks, number_of_first, block_successors, stages_by_start, endloop_edges
            )
        else:
            for number, start in single.items():
                endloop_edges[(endloop_blocks[number], start)] = stages_by_start.get(start, 0)
                target = number_of_first[start]
                if target not in block_successors[number]:
                    block_successors[number].append(target)  # already among the target's predecessors
        _add_fallback_endloop_edges(
            scan, endloop_blocks, number_of_first, block_successors, stages_by_start, endloop_edges, predecessors
        )
        if not retreating:  # else known already
            for last, start in endloop_edges:
                if firsts[bisect_right(firsts, last) - 1] >= start:
                    retreating = True
                    break
    starts = [addresses[first] for first in firsts]
    if packet_ends is None:  # each block ends where the next one starts
        ends = starts[1:]
        ends.append(last_end)
    else:
        ends = [packet_ends[last] for last in lasts]
    return _Graph(starts, ends, firsts, lasts, block_successors, predecessors, endloop_edges, retreating)


def _single_endloop_starts(
    endloops: dict[int, frozenset[int]],
    endloop_blocks: dict[int, int],
    gen: dict[int, dict[int, int]],
    number_of_first: dict[int, int],
    block_successors: list[list[int]],
    predecessors: list[list[int]],
) -> dict[int, int] | None:
    """Block number -> the loop start its :endloop packet returns to (absent: no set-up reaches it), as the data flow
    of `_add_endloop_edges` finds it; None when two loop starts reach one :endloop packet (then only the data flow
    knows in which order its edges come). Adds each :endloop edge found to `predecessors`.

    A set-up of loop N reaches an :endloop N packet when a path leads from the set-up's block to the packet through
    blocks that set up no other loop N (a set-up in the packet's own block is the one that counts): a walk back from
    each :endloop marker stops at the set-ups of its loop. An :endloop edge found is a new path, so the walks that
    passed its target go on along it until no new edge turns up. Most blocks are passed by one walk or none (a loop's
    body back to its set-up), where the data flow visits every block after the first set-up."""
    walks = []  # (loop number, blocks seen, blocks to see, the :endloop block's found starts)
    found_by_block: dict[int, set[int]] = {}
    for number, last in endloop_blocks.items():
        block_gen = gen.get(number, {})
        found = found_by_block[number] = set()
        for loop_number in endloops[last]:
            own = block_gen.get(loop_number)
            if own is not None:
                found.add(own)  # its own set-up replaces whatever reached the block
            else:
                walks.append((loop_number, {number}, list(predecessors[number]), found))
    known: set[tuple[int, int]] = set()
    while True:
        for loop_number, seen, stack, found in walks:
            while stack:
                number = stack.pop()
                if number in seen:
                    continue
                seen.add(number)
                block_gen = gen.get(number)
                if block_gen is not None and loop_number in block_gen:
                    found.add(block_gen[loop_number])  # the set-up replaces what its loop register held
                else:
                    stack += predecessors[number]
        new_edges: dict[int, list[int]] = {}  # target block -> the :endloop blocks of its new edges
        for number, found in found_by_block.items():
            for start in found:
                if (number, start) not in known:
                    known.add((number, start))
                    target = number_of_first[start]
                    if target not in block_successors[number] and number not in predecessors[target]:
                        predecessors[target].append(number)
                    if target != number:  # a one-block loop's edge leads no walk anywhere new: it leaves its target
                        new_edges.setdefault(target, []).append(number)
        if not new_edges:
            break
        for loop_number, seen, stack, _found in walks:
            for target in seen & new_edges.keys():
                block_gen = gen.get(target)
                if block_gen is None or loop_number not in block_gen:  # the walk went on through the target
                    stack += new_edges[target]
    single = {}
    for number, found in found_by_block.items():
        if len(found) > 1:
            return None
        if found:
            single[number] = found.pop()
    return single


def _add_endloop_edges(
    scan: _Scan,
    gen: dict[int, dict[int, int]],
    endloop_blocks: dict[int, int],
    number_of_first: dict[int, int],
    block_successors: list[list[int]],
    stages_by_start: dict[int, int],
    endloop_edges: dict[tuple[int, int], int],
) -> None:
    """Forward data flow of the loop starts each `loopN` register may hold: one int per block, loop0's starts in the
    low `width` bits, loop1's above them (a bit per loop start)."""
    starts = sorted({start for block_gen in gen.values() for start in block_gen.values()})
    width = len(starts)
    low_bits = (1 << width) - 1
    bit = {start: 1 << number for number, start in enumerate(starts)}
    start_of_bit = {value: start for start, value in bit.items()}
    # a set-up replaces what its loop register held: (bits kept, bits set)
    gen_masks = {}
    for number, block_gen in gen.items():
        keep, value = -1, 0
        for loop_number, start in block_gen.items():
            if loop_number:
                keep, value = keep & low_bits, (value & low_bits) | bit[start] << width
            else:
                keep, value = keep & ~low_bits, (value & ~low_bits) | bit[start]
        gen_masks[number] = (keep, value)
    endloops = scan.endloops
    special = endloop_blocks.keys() | gen_masks.keys()
    count = len(block_successors)
    reaching = [0] * count
    # Sweeps in address order until nothing changes (blocks are mostly laid out in flow order, so a few sweeps do).
    # A sweep acts only on the blocks whose masks grew since their last visit: any other visit would change nothing.
    dirty = bytearray(count)
    for number in gen_masks:
        dirty[number] = 1  # first sweep: nothing reaches anything yet, only the blocks with a set-up act
    lowest = min(gen_masks, default=count)
    while lowest < count:
        sweep_from, lowest = lowest, count
        for number in range(sweep_from, count):
            if not dirty[number]:
                continue
            dirty[number] = 0
            mask = reaching[number]
            successors = block_successors[number]
            if number in special:
                if number in gen_masks:
                    keep, value = gen_masks[number]
                    mask = mask & keep | value
                if not mask:
                    continue  # nothing set up on the way here: nothing to propagate
                last = endloop_blocks.get(number, -1)
                for loop_number in endloops.get(last, ()):
                    starts_bits = mask >> width if loop_number else mask & low_bits
                    while starts_bits:
                        lowest_bit = starts_bits & -starts_bits
                        starts_bits ^= lowest_bit
                        start = start_of_bit[lowest_bit]
                        if (last, start) not in endloop_edges:
                            endloop_edges[(last, start)] = stages_by_start.get(start, 0)
                            target = number_of_first[start]
                            if target not in successors:
                                successors.append(target)
            for successor in successors:  # a block marked dirty holds some start
                old = reaching[successor]
                if old | mask != old:
                    reaching[successor] = old | mask
                    dirty[successor] = 1
                    if successor <= number and successor < lowest:
                        lowest = successor  # already passed: the next sweep starts there


def _add_fallback_endloop_edges(
    scan: _Scan,
    endloop_blocks: dict[int, int],
    number_of_first: dict[int, int],
    block_successors: list[list[int]],
    stages_by_start: dict[int, int],
    endloop_edges: dict[tuple[int, int], int],
    predecessors: list[list[int]] | None,
) -> None:
    """An :endloop no set-up reaches (set up by a caller, or only reached through a jump table): an edge to the start
    of the nearest set-up above."""
    sources = {source for source, _start in endloop_edges}
    setup_indexes = list(scan.setups)  # ascending
    for number, last in endloop_blocks.items():
        if last in sources:
            continue
        for loop_number in scan.endloops[last]:
            start = _nearest_setup_start(scan.setups, setup_indexes, last, loop_number)
            if start is None or last in sources:
                continue
            endloop_edges[(last, start)] = stages_by_start.get(start, 0)
            sources.add(last)
            target = number_of_first[start]
            if target not in block_successors[number]:
                block_successors[number].append(target)
                if predecessors is not None:
                    predecessors[target].append(number)


def _nearest_setup_start(
    setups: dict[int, list[tuple[int, int, int]]], setup_indexes: list[int], last: int, loop_number: int
) -> int | None:
    """Start of the last set-up of loop `loop_number` in a packet at or before packet `last` (None: no such set-up)."""
    for position in range(bisect_right(setup_indexes, last) - 1, -1, -1):
        for setup_loop, start, _stages in reversed(setups[setup_indexes[position]]):
            if setup_loop == loop_number:
                return start
    return None


def _loops(graph: _Graph, packets: Sequence[Packet]) -> tuple[tuple[Loop, ...], dict[int, int], list[list[int]] | None]:
    """Natural loops of the back edges of a depth-first search, nested; block start -> header of its innermost loop;
    and the predecessor lists of every edge when built or given (None: not needed here)."""
    successors = graph.successors
    back_edges, is_root, finish = _depth_first_search(successors)
    # built with the :endloop edges, else on the first loop that is more than a self-loop
    predecessors: list[list[int]] = graph.predecessors or []
    whole = graph.predecessors  # every edge's: padding is taken out of a copy
    if is_root.count(True) > 1:  # blocks nothing before reaches: alignment padding among them is no loop entry
        whole = predecessors = predecessors or _predecessors(successors)
        # the search stands (what a padding block falls into has other predecessors): the body walks never step
        # into the padding
        padding = _padding_blocks(graph, predecessors, is_root, packets)
        if padding:
            predecessors = list(predecessors)
            for number in padding:
                for target in successors[number]:
                    predecessors[target] = [other for other in predecessors[target] if other != number]
    latches: dict[int, list[int]] = {}  # header -> its latches, in block order (then in successor order)
    for latch, header in back_edges:
        latches.setdefault(header, []).append(latch)
    self_loops: list[int] = []  # headers whose one latch is the header itself: most loops, one block each
    bodies: dict[int, set[int]] = {}  # the other loops' blocks
    irreducible: set[int] = set()
    for header, header_latches in latches.items():
        if len(header_latches) == 1 and header_latches[0] == header:
            self_loops.append(header)
            continue
        if not predecessors:
            whole = predecessors = _predecessors(successors)
        body, dominated = _loop_body(header, header_latches, predecessors, is_root, finish)
        bodies[header] = body
        if not dominated:
            irreducible.add(header)
    kinds = _loop_kinds(latches, graph)
    if irreducible:
        parents, depths = _nest({**bodies, **{header: {header} for header in self_loops}})
    else:
        parents, depths = _nest_reducible(bodies, self_loops)
    starts, ends = graph.starts, graph.ends
    loops = []
    for header in self_loops:
        start = starts[header]
        parent = parents[header]
        loops.append(
            _loop_record(
                start,
                frozenset((start,)),
                (start,),
                kinds[header],
                depths[header],
                None if parent is None else starts[parent],
                False,  # no body walk, no entry from outside
                start,
                ends[header],
            )
        )
    for header, body in bodies.items():
        ordered = sorted(body)  # faster than min() and max(): sorting ints compares them without rich compares
        header_latches = latches[header]
        parent = parents[header]
        loops.append(
            _loop_record(
                starts[header],
                frozenset(itemgetter(*ordered)(starts)),  # two blocks or more: a tuple
                (starts[header_latches[0]],)
                if len(header_latches) == 1
                else tuple(map(starts.__getitem__, header_latches)),
                kinds[header],
                depths[header],
                None if parent is None else starts[parent],
                header in irreducible,
                starts[ordered[0]],
                ends[ordered[-1]],
            )
        )
    loops.sort(key=lambda loop: (loop.depth, loop.header))
    innermost_by_block: dict[int, int] = {}
    for loop in loops:  # an inner loop overwrites its blocks (of two as deep, the higher header)
        if len(loop.blocks) > 1:
            innermost_by_block.update(dict.fromkeys(loop.blocks, loop.header))
    for header in self_loops:  # a loop of one block is the deepest loop holding it
        start = starts[header]
        innermost_by_block[start] = start
    return tuple(loops), innermost_by_block, whole


def _loop_record(
    header: int,
    blocks: frozenset[int],
    latches: tuple[int, ...],
    kind: str,
    depth: int,
    parent: int | None,
    irreducible: bool,
    low: int,
    high: int,
) -> Loop:
    """`Loop(...)` given every field, as frozen_instance builds it (~1.3k loops a library)."""
    loop = _new(Loop)
    _set(
        loop,
        "__dict__",
        {
            "header": header,
            "blocks": blocks,
            "latches": latches,
            "kind": kind,
            "depth": depth,
            "parent": parent,
            "irreducible": irreducible,
            "low": low,
            "high": high,
        },
    )
    return loop


def _padding_blocks(
    graph: _Graph, predecessors: list[list[int]], is_root: list[bool], packets: Sequence[Packet]
) -> set[int]:
    """Blocks nothing jumps or falls into, holding only `nop`s, that fall into a block something else reaches: the
    alignment padding a compiler puts after a jump, before an aligned loop body. Never executed, so the body walks
    never step into them: as search roots on the way they would make the loop they fall into look enterable from
    outside its header (irreducible). A nop block that alone leads to its successor stays a root (it may be a
    jump-table target)."""
    firsts, lasts, successors = graph.first_packets, graph.last_packets, graph.successors
    return {
        number
        for number in compress(range(1, len(is_root)), is_root[1:])  # the roots but the entry, picked at C speed
        if not predecessors[number]
        and all(len(predecessors[target]) > 1 for target in successors[number])
        and _only_nops(packets, firsts[number], lasts[number])
    }


def _only_nops(packets: Sequence[Packet], first: int, last: int) -> bool:
    """Whether packets first..last hold only `nop`s; of a PacketRange, read from the words without decoding them."""
    if isinstance(packets, PacketRange):
        scan = packets.scan
        low = (scan.packet_addresses[packets.low + first] - scan.address) >> 2
        high = (scan.packet_addresses[packets.low + last + 1] - scan.address) >> 2
        # a nop is ICLASS 7 with bits 27..24 set, in a word whose parse bits say it is no duplex
        return all(word >> 24 == 0x7F and word & 0xC000 for word in scan.words[low:high])
    return all(
        instruction.mnemonic == "nop" for index in range(first, last + 1) for instruction in packets[index].instructions
    )


_NOT_SEEN, _ON_STACK = -1, -2  # a block's state in the search before it finishes


def _depth_first_search(successors: list[list[int]]) -> tuple[list[tuple[int, int]], list[bool], list[int]]:
    """Depth-first from the entry, then from every block not yet seen (such as jump-table targets), lowest first:
    the back edges (latch, header) in latch order, then successor order (an edge to a block still on the search
    stack: exactly the edges that retreat in reverse postorder), which blocks started a search (they hang from the
    root), and each block's finishing number (a block comes after another in reverse postorder exactly when it
    finishes first)."""
    count = len(successors)
    not_seen, on_stack = _NOT_SEEN, _ON_STACK
    finish = [not_seen] * count  # or on_stack, or the finishing number: one list read per edge tells all three
    is_root = [False] * count
    finished = 0
    back_edges = []
    root = 0
    while True:
        finish[root] = on_stack
        is_root[root] = True
        node, children = root, iter(successors[root])
        stack = []  # the ancestors of `node` on the search path, each with its successors not searched yet
        while True:
            for child in children:
                child_finish = finish[child]
                if child_finish == not_seen:
                    finish[child] = on_stack
                    stack.append((node, children))
                    node, children = child, iter(successors[child])
                    break
                if child_finish == on_stack:
                    back_edges.append((node, child))
            else:
                finish[node] = finished
                finished += 1
                if not stack:
                    break
                node, children = stack.pop()
        if finished == count:
            break
        root = finish.index(not_seen, root)
    back_edges.sort(key=_latch)  # stable: a latch's edges stay in successor order
    return back_edges, is_root, finish


def _latch(edge: tuple[int, int]) -> int:
    return edge[0]


def _predecessors(successors: list[list[int]]) -> list[list[int]]:
    predecessors: list[list[int]] = [[] for _ in successors]
    for number, targets in enumerate(successors):
        for target in targets:
            predecessors[target].append(number)
    return predecessors


def _loop_body(
    header: int, latches: list[int], predecessors: list[list[int]], is_root: list[bool], finish: list[int]
) -> tuple[set[int], bool]:
    """The blocks that reach a latch without passing the header and come after it in reverse postorder (they finish
    first), and whether the header dominates every latch. Every block hangs from a root of the depth-first search, so
    it does exactly when this walk meets no root and no block before the header: then the body is the natural one
    (the blocks a header dominates are its descendants in the search, after it in reverse postorder)."""
    body = {header}
    dominated = True
    header_finish = finish[header]
    stack = []
    for latch in latches:
        if latch not in body:
            body.add(latch)
            stack.append(latch)
            if is_root[latch]:
                dominated = False
    while stack:
        for predecessor in predecessors[stack.pop()]:
            if predecessor not in body:
                if finish[predecessor] > header_finish:
                    dominated = False
                    continue
                if is_root[predecessor]:
                    dominated = False
                body.add(predecessor)
                stack.append(predecessor)
    return body, dominated


def _loop_kinds(latches: dict[int, list[int]], graph: _Graph) -> dict[int, str]:
    """Header -> "pipelined" when an `:endloop` edge of a pipelined loop closes it, else "hardware" when an `:endloop`
    edge does, else "branch"."""
    endloop_edges = graph.endloop_edges
    firsts, lasts = graph.first_packets, graph.last_packets
    kinds = {}
    for header, header_latches in latches.items():
        kind = "branch"
        if endloop_edges:
            first = firsts[header]
            for latch in header_latches:
                stages = endloop_edges.get((lasts[latch], first))
                if stages is not None:
                    kind = "pipelined" if stages > 0 else "hardware"
                    if stages > 0:
                        break
        kinds[header] = kind
    return kinds


def _nest(bodies: dict[int, set[int]]) -> tuple[dict[int, int | None], dict[int, int]]:
    """Parent = the smallest other loop whose blocks include this loop's blocks (ties: the lowest header)."""
    order = {header: (-len(body), header) for header, body in bodies.items()}  # larger loops first
    headers = set(bodies)
    parents: dict[int, int | None] = dict.fromkeys(bodies)
    # smaller loops first: the first loop found to hold another one is its parent
    for outer in sorted(bodies, key=lambda header: (len(bodies[header]), header)):
        outer_body, outer_rank = bodies[outer], order[outer]
        for header in outer_body & headers:  # the few loop headers in its body
            if parents[header] is None and outer_rank < order[header] and bodies[header] <= outer_body:
                parents[header] = outer
    depths: dict[int, int] = {}
    for header in sorted(bodies, key=order.__getitem__):  # a parent's depth is known before its children's
        parent = parents[header]
        depths[header] = depths[parent] + 1 if parent is not None else 1
    return parents, depths


def _nest_reducible(bodies: dict[int, set[int]], self_loops: list[int]) -> tuple[dict[int, int | None], dict[int, int]]:
    """`_nest` where every header dominates its loop: two loops are then disjoint or nested, so, largest first, a
    loop's parent is the innermost loop seen so far that holds its header. A self-loop (`self_loops`, not in `bodies`)
    comes after every larger loop and holds no other loop's header."""
    parents: dict[int, int | None] = {}
    depths: dict[int, int] = {}
    innermost: dict[int, int] = {}  # loop header -> the innermost loop seen so far holding it
    headers = bodies.keys() | self_loops
    larger_first = sorted(bodies, key=lambda header: (-len(bodies[header]), header))
    for header in chain(larger_first, self_loops):
        parent = innermost.get(header)
        parents[header] = parent
        depths[header] = depths[parent] + 1 if parent is not None else 1
        body = bodies.get(header)
        if body is not None:  # a self-loop holds no other loop
            innermost.update(dict.fromkeys(body & headers, header))
    return parents, depths
