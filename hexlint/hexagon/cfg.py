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
    # packet address -> header of its innermost loop (absent: not in a loop)
    innermost_loop_by_packet: dict[int, int]

    def loop(self, header: int) -> Loop:
        return next(loop for loop in self.loops if loop.header == header)

    def innermost_loop(self, packet_address: int) -> Loop | None:
        header = self.innermost_loop_by_packet.get(packet_address)
        return None if header is None else self.loop(header)

    def loop_at(self, address: int) -> Loop | None:
        """The innermost loop holding the instruction at `address` (any word of a packet)."""
        block = self.block_at(address)
        if block is None:
            return None
        index = bisect_right([packet.address for packet in self.packets], address) - 1
        return self.innermost_loop(self.packets[index].address) if index >= 0 else None

    def block_at(self, address: int) -> BasicBlock | None:
        index = bisect_right([block.start for block in self.blocks], address) - 1
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
    index_of = {packet.address: index for index, packet in enumerate(packets)}
    successors, endloop_edges = _packet_successors(packets, index_of)
    blocks = _blocks(packets, successors)
    block_of_packet = {}
    for block in blocks:
        for index in range(block.first_packet, block.last_packet + 1):
            block_of_packet[index] = block.start
    loops = _loops(packets, blocks, endloop_edges)
    innermost = {}
    for loop in sorted(loops, key=lambda loop: loop.depth):
        for block in blocks:
            if block.start in loop.blocks:
                for index in range(block.first_packet, block.last_packet + 1):
                    innermost[packets[index].address] = loop.header
    return FunctionCfg(start, end, packets, blocks, loops, innermost)


def _packet_successors(
    packets: tuple[Packet, ...], index_of: dict[int, int]
) -> tuple[list[list[int]], dict[tuple[int, int], int]]:
    """Successor packet indexes of every packet, and the `:endloop` edges (src, dst) -> pipelined stages."""
    count = len(packets)
    static = [_static_successors(packets, index, index_of) for index in range(count)]
    setups = [_loop_setups(packet) for packet in packets]
    fallback = _nearest_setups(packets, setups, index_of)
    # Reaching loop starts per loop register, propagated until nothing changes (sets only grow).
    reaching: list[tuple[frozenset[int], frozenset[int]]] = [(frozenset(), frozenset())] * count
    successors = [list(targets) for targets, _ in static]
    stages_by_start: dict[int, int] = {}
    endloop_edges: dict[tuple[int, int], int] = {}
    worklist = [0] + [index for index in range(count) if setups[index]]
    queued = set(worklist)
    while worklist:
        index = worklist.pop()
        queued.discard(index)
        state = list(reaching[index])
        for loop_number, (target, stages) in setups[index].items():
            if target in index_of:
                state[loop_number] = frozenset({index_of[target]})
                stages_by_start[index_of[target]] = max(stages, stages_by_start.get(index_of[target], 0))
        out_state = (state[0], state[1])
        targets = set(successors[index])
        for loop_number in packets[index].endloop:
            starts = out_state[loop_number] or fallback[index].get(loop_number, frozenset())
            for start in starts:
                if start not in targets:
                    targets.add(start)
                    successors[index].append(start)
                endloop_edges[(index, start)] = stages_by_start.get(start, 0)
        for successor in successors[index]:
            old = reaching[successor]
            new = (old[0] | out_state[0], old[1] | out_state[1])
            if new != old:
                reaching[successor] = new
                if successor not in queued:
                    queued.add(successor)
                    worklist.append(successor)
    return successors, endloop_edges


def _static_successors(packets: tuple[Packet, ...], index: int, index_of: dict[int, int]) -> tuple[list[int], bool]:
    packet = packets[index]
    targets: list[int] = []
    falls_through = True
    for instruction in packet.instructions:
        branch = instruction.branch
        if branch == "jump":
            if instruction.target is not None and instruction.target in index_of:
                targets.append(index_of[instruction.target])
            if not instruction.conditional:
                falls_through = False
        elif branch in ("jumpr", "return") and not instruction.conditional:
            falls_through = False
    if falls_through and index + 1 < len(packets):
        targets.append(index + 1)
    return list(dict.fromkeys(targets)), falls_through


def _loop_setups(packet: Packet) -> dict[int, tuple[int, int]]:
    setups = {}
    for instruction in packet.instructions:
        setup = instruction.loop_setup
        if setup is not None and setup.loop in (0, 1):
            setups[setup.loop] = (setup.start, setup.pipelined_stages)
    return setups


def _nearest_setups(
    packets: tuple[Packet, ...], setups: list[dict[int, tuple[int, int]]], index_of: dict[int, int]
) -> dict[int, dict[int, frozenset[int]]]:
    """For `:endloop` packets no set-up reaches (set up in a caller, or an unreachable path): the closest one above."""
    result: dict[int, dict[int, frozenset[int]]] = {}
    last: dict[int, int] = {}
    for index, packet in enumerate(packets):
        for loop_number, (target, _stages) in setups[index].items():
            if target in index_of:
                last[loop_number] = index_of[target]
        if packet.endloop:
            result[index] = {n: frozenset({last[n]}) for n in packet.endloop if n in last}
    return {index: result.get(index, {}) for index in range(len(packets))}


def _blocks(packets: tuple[Packet, ...], successors: list[list[int]]) -> tuple[BasicBlock, ...]:
    count = len(packets)
    leaders = {0}
    for index, targets in enumerate(successors):
        if targets != [index + 1]:
            leaders.update(targets)
            if index + 1 < count:
                leaders.add(index + 1)
    ordered = sorted(leader for leader in leaders if 0 <= leader < count)
    blocks = []
    for position, first in enumerate(ordered):
        last = (ordered[position + 1] if position + 1 < len(ordered) else count) - 1
        end_packet = packets[last]
        blocks.append(
            BasicBlock(
                start=packets[first].address,
                end=end_packet.address + end_packet.size,
                first_packet=first,
                last_packet=last,
                successors=tuple(dict.fromkeys(packets[target].address for target in successors[last])),
            )
        )
    return tuple(blocks)


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
