"""Basic blocks, control-flow graph, dominators and natural loops of one function's decoded packets.

Why a CFG and not an address-range scan (see /work/shared/reference/toolchain-notes.md, "How compilers see spills"):
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
"""

from __future__ import annotations

import functools
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hexlint.hexagon.decode import Packet

# Synthetic root of the dominator tree: it reaches the entry and every block nothing else reaches (jump tables).
_ROOT = -1


@dataclass(frozen=True)
class BasicBlock:
    start: int
    end: int  # exclusive
    first_packet: int  # index into FunctionCfg.packets
    last_packet: int  # inclusive
    successors: tuple[int, ...]  # start addresses of successor blocks


@dataclass(frozen=True)
class Loop:
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
    start: int
    end: int
    packets: tuple[Packet, ...]
    blocks: tuple[BasicBlock, ...]
    loops: tuple[Loop, ...]  # outer loops before inner ones, then by header
    # block start -> header of its innermost loop (absent: not in a loop)
    innermost_loop_by_block: dict[int, int]

    @functools.cached_property
    def innermost_loop_by_packet(self) -> dict[int, int]:
        """Packet address -> header of its innermost loop (absent: not in a loop)."""
        result = {}
        for block in self.blocks:
            header = self.innermost_loop_by_block.get(block.start)
            if header is not None:
                for index in range(block.first_packet, block.last_packet + 1):
                    result[self.packets[index].address] = header
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
        index = bisect_right(self._packet_addresses, address) - 1
        return self.innermost_loop(self.packets[index].address) if index >= 0 else None

    @functools.cached_property
    def _block_starts(self) -> list[int]:
        return [block.start for block in self.blocks]

    @functools.cached_property
    def _packet_addresses(self) -> list[int]:
        return [packet.address for packet in self.packets]

    def block_at(self, address: int) -> BasicBlock | None:
        index = bisect_right(self._block_starts, address) - 1
        if index >= 0 and self.blocks[index].start <= address < self.blocks[index].end:
            return self.blocks[index]
        return None


def build_cfg(packets: Sequence[Packet], start: int | None = None, end: int | None = None) -> FunctionCfg:
    """CFG and loops of the packets of one function (`packets` sorted by address, all inside [start, end))."""
    packets = tuple(packets)
    if start is None:
        start = packets[0].address if packets else 0
    if end is None:
        end = packets[-1].address + packets[-1].size if packets else start
    if not packets:
        return FunctionCfg(start, end, (), (), (), {})
    scan = _scan(packets)
    blocks, endloop_edges = _blocks(packets, scan)
    loops = _loops(packets, blocks, endloop_edges)
    innermost_by_block: dict[int, int] = {}
    for loop in loops:  # outer loops come first: an inner loop overwrites its blocks
        for block_start in loop.blocks:
            innermost_by_block[block_start] = loop.header
    return FunctionCfg(start, end, packets, blocks, loops, innermost_by_block)


@dataclass(frozen=True)
class _Scan:
    """One pass over the packets: static successors, loop set-ups, leaders, fallback loop starts."""

    successors: list[list[int]]  # static successor packet indexes (jumps, fallthrough)
    setups: dict[int, list[tuple[int, int, int]]]  # packet index -> [(loop number, start index, stages)]
    leaders: set[int]
    fallback: dict[int, dict[int, int]]  # endloop packet index -> loop number -> nearest set-up's start index


def _scan(packets: tuple[Packet, ...]) -> _Scan:
    index_of = {packet.address: index for index, packet in enumerate(packets)}
    count = len(packets)
    successors: list[list[int]] = []
    setups: dict[int, list[tuple[int, int, int]]] = {}
    leaders = {0}
    fallback: dict[int, dict[int, int]] = {}
    last_setup: dict[int, int] = {}
    for index, packet in enumerate(packets):
        targets: list[int] = []
        falls_through = True
        for instruction in packet.instructions:
            branch = instruction.branch
            if branch == "jump":
                target = index_of.get(instruction.target) if instruction.target is not None else None
                if target is not None:
                    targets.append(target)
                if not instruction.conditional:
                    falls_through = False
            elif (branch == "jumpr" or branch == "return") and not instruction.conditional:
                falls_through = False
            setup = instruction.loop_setup
            if setup is not None and setup.loop in (0, 1) and setup.start in index_of:
                start = index_of[setup.start]
                setups.setdefault(index, []).append((setup.loop, start, setup.pipelined_stages))
                last_setup[setup.loop] = start
                leaders.add(start)
        if packet.endloop:
            fallback[index] = {n: last_setup[n] for n in packet.endloop if n in last_setup}
        if targets or not falls_through or packet.endloop:
            leaders.update(targets)
            leaders.add(index + 1)
        if falls_through and index + 1 < count:
            targets.append(index + 1)
        successors.append(targets)
    leaders.discard(count)
    return _Scan(successors, setups, leaders, fallback)


def _blocks(packets: tuple[Packet, ...], scan: _Scan) -> tuple[tuple[BasicBlock, ...], dict[tuple[int, int], int]]:
    """Blocks, with `:endloop` edges to the loop starts whose set-ups reach them (data flow over blocks)."""
    ordered = sorted(scan.leaders)
    count = len(packets)
    spans = [(first, (ordered[i + 1] if i + 1 < len(ordered) else count) - 1) for i, first in enumerate(ordered)]
    block_successors = [list(dict.fromkeys(scan.successors[last])) for _first, last in spans]
    position = {first: i for i, (first, _last) in enumerate(spans)}
    # Loop set-ups inside each block, in order: the last one per loop register is what leaves the block.
    gen: list[dict[int, int]] = [{} for _ in spans]
    stages_by_start: dict[int, int] = {}
    for i, (first, last) in enumerate(spans):
        for index in range(first, last + 1):
            for loop_number, start, stages in scan.setups.get(index, ()):
                gen[i][loop_number] = start
                stages_by_start[start] = max(stages, stages_by_start.get(start, 0))
    endloop_edges: dict[tuple[int, int], int] = {}
    has_endloop = any(packets[last].endloop for _first, last in spans)
    if has_endloop:
        _add_endloop_edges(packets, scan, spans, gen, position, block_successors, stages_by_start, endloop_edges)
    blocks = tuple(
        BasicBlock(
            start=packets[first].address,
            end=packets[last].address + packets[last].size,
            first_packet=first,
            last_packet=last,
            successors=tuple(packets[target].address for target in block_successors[i]),
        )
        for i, (first, last) in enumerate(spans)
    )
    return blocks, endloop_edges


def _add_endloop_edges(
    packets: tuple[Packet, ...],
    scan: _Scan,
    spans: list[tuple[int, int]],
    gen: list[dict[int, int]],
    position: dict[int, int],
    block_successors: list[list[int]],
    stages_by_start: dict[int, int],
    endloop_edges: dict[tuple[int, int], int],
) -> None:
    """Forward data flow of the loop starts each `loopN` register may hold (sets as bit masks over loop starts)."""
    starts = sorted({start for block_gen in gen for start in block_gen.values()})
    bit = {start: 1 << number for number, start in enumerate(starts)}
    start_of_bit = {value: start for start, value in bit.items()}
    reaching = [[0, 0] for _ in spans]
    # Sweeps in address order until nothing changes: blocks are mostly laid out in flow order, so a few sweeps do.
    changed = True
    while changed:
        changed = False
        for i, (_first, last) in enumerate(spans):
            state = reaching[i]
            block_gen = gen[i]
            if block_gen:
                state = list(state)
                for loop_number, start in block_gen.items():
                    state[loop_number] = bit[start]
            mask0, mask1 = state
            if not (mask0 or mask1):
                continue  # nothing set up on the way here: nothing to propagate
            for loop_number in packets[last].endloop:
                mask = state[loop_number]
                while mask:
                    lowest = mask & -mask
                    mask ^= lowest
                    start = start_of_bit[lowest]
                    if (last, start) not in endloop_edges:
                        endloop_edges[(last, start)] = stages_by_start.get(start, 0)
                        if start not in block_successors[i]:
                            block_successors[i].append(start)
            for successor in block_successors[i]:
                target = reaching[position[successor]]
                if (target[0] | mask0) != target[0] or (target[1] | mask1) != target[1]:
                    target[0] |= mask0
                    target[1] |= mask1
                    changed = True
    # An :endloop no set-up reaches (set up by a caller, or only reached through a jump table): nearest set-up above.
    for i, (_first, last) in enumerate(spans):
        for loop_number in packets[last].endloop:
            start = scan.fallback.get(last, {}).get(loop_number)
            if start is None or any(edge_source == last for edge_source, _start in endloop_edges):
                continue
            endloop_edges[(last, start)] = stages_by_start.get(start, 0)
            if start not in block_successors[i]:
                block_successors[i].append(start)


def _loops(
    packets: tuple[Packet, ...], blocks: tuple[BasicBlock, ...], endloop_edges: dict[tuple[int, int], int]
) -> tuple[Loop, ...]:
    starts = [block.start for block in blocks]
    predecessors: dict[int, list[int]] = {start: [] for start in starts}
    for block in blocks:
        for successor in block.successors:
            predecessors[successor].append(block.start)
    order, roots = _reverse_postorder(blocks)
    dominators = _dominators(order, roots, predecessors)
    position = {start: rank for rank, start in enumerate(order)}
    hardware_edges = {
        (packets[src].address, packets[dst].address): stages for (src, dst), stages in endloop_edges.items()
    }
    latch_packet = {block.start: packets[block.last_packet].address for block in blocks}
    bodies: dict[int, set[int]] = {}
    latches: dict[int, list[int]] = {}
    kinds: dict[int, str] = {}
    irreducible: set[int] = set()
    for block in blocks:
        for header in block.successors:
            if position.get(header, 0) > position.get(block.start, 0):
                continue  # forward edge
            dominated = _dominates(dominators, header, block.start)
            body = _natural_body(header, block.start, predecessors, dominated, position)
            bodies.setdefault(header, {header}).update(body)
            latches.setdefault(header, []).append(block.start)
            if not dominated:
                irreducible.add(header)
            stages = hardware_edges.get((latch_packet[block.start], header))
            if stages is not None:
                kind = "pipelined" if stages > 0 else "hardware"
                if kinds.get(header) != "pipelined":
                    kinds[header] = kind
            else:
                kinds.setdefault(header, "branch")
    ends = {block.start: block.end for block in blocks}
    unnested = [
        Loop(
            header=header,
            blocks=frozenset(body),
            latches=tuple(latches[header]),
            kind=kinds[header],
            irreducible=header in irreducible,
            low=min(body),
            high=max(ends[start] for start in body),
        )
        for header, body in bodies.items()
    ]
    return _nest(unnested)


def _reverse_postorder(blocks: tuple[BasicBlock, ...]) -> tuple[list[int], set[int]]:
    """Depth-first from the entry, then from every block not yet seen (jump-table targets), lowest address first."""
    successors = {block.start: block.successors for block in blocks}
    seen: set[int] = set()
    postorder: list[int] = []
    roots: set[int] = set()
    for root in [block.start for block in blocks]:
        if root in seen:
            continue
        seen.add(root)
        roots.add(root)
        stack = [(root, iter(successors[root]))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                postorder.append(node)
                stack.pop()
            elif child not in seen and child in successors:
                seen.add(child)
                stack.append((child, iter(successors[child])))
    return postorder[::-1], roots


def _dominators(order: list[int], roots: set[int], predecessors: dict[int, list[int]]) -> dict[int, int]:
    """Immediate dominators (Cooper, Harvey, Kennedy), with every DFS root hanging from a synthetic root."""
    rank = {node: index for index, node in enumerate(order)}
    rank[_ROOT] = -1
    immediate: dict[int, int] = {root: _ROOT for root in roots}
    immediate[_ROOT] = _ROOT
    changed = True
    while changed:
        changed = False
        for node in order:
            if node in roots:
                continue
            candidates = [p for p in predecessors[node] if p in immediate]
            if not candidates:
                continue
            new = candidates[0]
            for other in candidates[1:]:
                new = _intersect(immediate, rank, new, other)
            if immediate.get(node) != new:
                immediate[node] = new
                changed = True
    return immediate


def _intersect(immediate: dict[int, int], rank: dict[int, int], first: int, second: int) -> int:
    while first != second:
        while rank[first] > rank[second]:
            first = immediate[first]
        while rank[second] > rank[first]:
            second = immediate[second]
    return first


def _dominates(immediate: dict[int, int], dominator: int, node: int) -> bool:
    while True:
        if node == dominator:
            return True
        parent = immediate.get(node, _ROOT)
        if parent == node or node == _ROOT:
            return False
        node = parent


def _natural_body(
    header: int, latch: int, predecessors: dict[int, list[int]], dominated: bool, position: dict[int, int]
) -> set[int]:
    """Blocks that reach the latch without passing the header (for an irreducible edge: only those after the header)."""
    body = {header, latch}
    stack = [latch] if latch != header else []
    while stack:
        node = stack.pop()
        for predecessor in predecessors[node]:
            if predecessor in body:
                continue
            if not dominated and position.get(predecessor, -1) < position[header]:
                continue
            body.add(predecessor)
            stack.append(predecessor)
    return body


def _nest(loops: list[Loop]) -> tuple[Loop, ...]:
    """Parent = the smallest other loop whose blocks include this loop's blocks."""
    by_size = sorted(loops, key=lambda loop: (-len(loop.blocks), loop.header))
    parents: dict[int, int | None] = {}
    depths: dict[int, int] = {}
    for position, loop in enumerate(by_size):
        enclosing = [
            outer
            for outer in by_size[:position]
            if outer.header != loop.header and loop.blocks <= outer.blocks and loop.header in outer.blocks
        ]
        parent = min(enclosing, key=lambda outer: len(outer.blocks)) if enclosing else None
        parents[loop.header] = parent.header if parent else None
        depths[loop.header] = depths[parent.header] + 1 if parent else 1
    nested = [
        Loop(
            header=loop.header,
            blocks=loop.blocks,
            latches=loop.latches,
            kind=loop.kind,
            depth=depths[loop.header],
            parent=parents[loop.header],
            irreducible=loop.irreducible,
            low=loop.low,
            high=loop.high,
        )
        for loop in loops
    ]
    return tuple(sorted(nested, key=lambda loop: (loop.depth, loop.header)))
