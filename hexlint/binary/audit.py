"""The binary audit: one decode of a library, then per function and per loop the facts the HX2xx rules judge.

Facts per function: stack accesses (spill stores, reloads, array accesses; vector or scalar; in which loop), float to
double promotions (native double instructions and soft-float/conversion helper calls), helper calls (division among
them), HVX instruction count, and the CFG with its loops.

Spill method. A memory access is a *stack access* when its base is r29 (SP) or r30 (FP), or a register derived from
them, followed forward along the CFG: `rD = rS` and `rD = add(rS,#imm)` keep a known frame offset; any other write of a
derived register (add of a register, post-increment, a join of different offsets at a loop header) keeps the register
stack-derived but with an *unknown* offset. Then:
- constant frame offset (`vmem(r29+#3)`, `memw(r30+#-8)`, or through `r2 = add(r29,#256)`) -> a **spill slot** access;
  a store is a spill, a load a reload; a slot stored and reloaded inside the same loop is a round trip;
- unknown offset or register index (`vmem(r2+#0)` where r2 moves with a loop index, `memw(r29+r3<<#2)`) -> an **array**
  access: the function's own stack array (`HVX_Vector acc[40]` indexed in a loop), not a spill.
Limits: a local array indexed only with constants after full unrolling looks like spill slots (the compiler did put
those values in memory, so they cost the same); a derived register whose redefinition the decoder cannot see (an
instruction it decodes only to class and length) keeps its old meaning; calls kill the caller-saved r0-r15 and r28.
Accesses outside every loop are frame set-up (callee-saved register saves in the prologue and their restores).
"""

from __future__ import annotations

import fnmatch
import gc
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hexlint.hexagon.cfg import FunctionCfg, build_cfg

if TYPE_CHECKING:  # hexlint.elf imports pyelftools: only a run that audits a binary pays for that import
    from hexlint.elf import ElfImage, FunctionSymbol, SourceLocation
    from hexlint.hexagon.decode import Instruction, Packet

STACK_BASES = ("r29", "r30")
CALLER_SAVED = frozenset([f"r{number}" for number in range(16)] + ["r28"])
# A register derived from SP/FP: (base, frame offset or None when it varies).
Derived = tuple[str, "int | None"]


@dataclass(frozen=True)
class AuditSettings:
    """Helper-name patterns (fnmatch) and the DMA worker regex; defaults come from the rules' [options]."""

    promotion_helpers: tuple[str, ...] = (
        "__extendsfdf2",
        "__extendhfdf2",
        "__truncdfsf2",
        "__truncdfhf2",
        "__hexagon_*df*",
        "__fix*df*",
        "__float*df",
    )
    division_helpers: tuple[str, ...] = (
        "__hexagon_*div*",
        "__hexagon_*mod*",
        "__*div[sd]i3",
        "__*mod[sd]i3",
        "__udivmod*",
        "__div[sdt]f3",
    )
    dma_pattern: str = r"^dma_queue_|^dma_worker|_dma_worker$"
    # Functions that ARE the runtime helpers are not audited for promotions/divisions (they implement them).
    skip_helper_functions: bool = True


@dataclass(frozen=True)
class StackAccess:
    address: int  # instruction word
    packet_address: int
    text: str
    is_store: bool
    is_vector: bool
    size: int
    slot: tuple[str, int] | None  # (r29|r30, frame offset); None = array access
    loop: int | None  # header of the innermost loop, None = frame set-up / straight-line code

    @property
    def is_spill(self) -> bool:
        return self.slot is not None


@dataclass(frozen=True)
class CallSite:
    address: int
    packet_address: int
    text: str
    helper: str | None  # resolved name (PLT helper, relocation symbol or function), None = unknown/indirect
    loop: int | None
    is_promotion: bool = False
    is_division: bool = False


@dataclass(frozen=True)
class DoubleOperation:
    """A native double-precision instruction: convert_sf2df (promotion) or df arithmetic."""

    address: int
    packet_address: int
    text: str
    loop: int | None
    is_conversion: bool


@dataclass(frozen=True)
class LoopAudit:
    header: int
    kind: str
    depth: int
    parent: int | None
    low: int
    high: int
    vector_spill_stores: int = 0
    vector_reloads: int = 0
    scalar_spill_stores: int = 0
    scalar_reloads: int = 0
    array_accesses: int = 0
    round_trips: int = 0  # slots stored and reloaded inside this loop (nested loops included)
    calls: int = 0
    divisions: int = 0
    promotions: int = 0

    @property
    def vector_spills(self) -> int:
        return self.vector_spill_stores + self.vector_reloads

    @property
    def scalar_spills(self) -> int:
        return self.scalar_spill_stores + self.scalar_reloads


@dataclass(frozen=True)
class FunctionAudit:
    name: str
    address: int
    size: int
    cfg: FunctionCfg = field(repr=False)
    stack_accesses: tuple[StackAccess, ...] = ()
    calls: tuple[CallSite, ...] = ()
    double_operations: tuple[DoubleOperation, ...] = ()
    hvx_instructions: int = 0
    first_hvx_address: int | None = None
    loops: tuple[LoopAudit, ...] = ()
    is_helper: bool = False
    is_dma_worker: bool = False

    def spills(self, *, vector: bool, in_loop: bool) -> tuple[StackAccess, ...]:
        return tuple(
            access
            for access in self.stack_accesses
            if access.is_spill and access.is_vector == vector and (access.loop is not None) == in_loop
        )

    @property
    def inloop_vector_spills(self) -> int:
        return len(self.spills(vector=True, in_loop=True))

    @property
    def inloop_scalar_spills(self) -> int:
        return len(self.spills(vector=False, in_loop=True))

    @property
    def frame_spills(self) -> int:
        return len(self.spills(vector=True, in_loop=False)) + len(self.spills(vector=False, in_loop=False))

    @property
    def array_accesses(self) -> int:
        return sum(1 for access in self.stack_accesses if not access.is_spill)

    @property
    def round_trips(self) -> int:
        return sum(loop.round_trips for loop in self.loops if loop.depth == 1)

    @property
    def promotions(self) -> int:
        helper_calls = sum(1 for call in self.calls if call.is_promotion)
        return helper_calls + len(self.double_operations)

    @property
    def inloop_promotions(self) -> int:
        calls = sum(1 for call in self.calls if call.is_promotion and call.loop is not None)
        return calls + sum(1 for operation in self.double_operations if operation.loop is not None)

    @property
    def inloop_divisions(self) -> int:
        return sum(1 for call in self.calls if call.is_division and call.loop is not None)

    @property
    def divisions(self) -> int:
        return sum(1 for call in self.calls if call.is_division)


@dataclass(frozen=True)
class LibraryAudit:
    path: str
    cpu: int
    image: ElfImage = field(repr=False)
    functions: tuple[FunctionAudit, ...]
    settings: AuditSettings = field(default_factory=AuditSettings)
    notes: tuple[str, ...] = ()
    # address -> DWARF line-table location; a lookup, not data, so checks need not touch the ELF
    locate: Callable[[int], SourceLocation | None] = field(default=lambda address: None, repr=False, compare=False)

    def function(self, name: str) -> FunctionAudit | None:
        return next((function for function in self.functions if function.name == name), None)


def settings_from_options(options_by_code: Mapping[str, Mapping[str, Any]]) -> AuditSettings:
    """Audit settings from the HX203/HX204/HX205 rule options (their TOML [options], possibly overridden)."""
    defaults = AuditSettings()
    promotion = options_by_code.get("HX203", {})
    division = options_by_code.get("HX204", {})
    dma = options_by_code.get("HX205", {})
    return AuditSettings(
        promotion_helpers=tuple(promotion.get("helpers", defaults.promotion_helpers)),
        division_helpers=tuple(division.get("helpers", defaults.division_helpers)),
        dma_pattern=str(dma.get("dma_pattern", defaults.dma_pattern)),
    )


def audit_image(
    image: ElfImage,
    settings: AuditSettings | None = None,
    function_filter: Callable[[str], bool] | None = None,
    decode: Callable[..., list[Packet]] | None = None,
) -> LibraryAudit:
    """Decode every code section once and audit each function (those `function_filter` accepts)."""
    # Hundreds of thousands of small immutable objects: the cyclic GC would rescan them again and again for nothing.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _audit_image(image, settings or AuditSettings(), function_filter, decode)
    finally:
        if was_enabled:
            gc.freeze()  # the audit's objects hold no cycles: keep later collections from rescanning all of them
            gc.enable()


def _audit_image(
    image: ElfImage,
    settings: AuditSettings,
    function_filter: Callable[[str], bool] | None,
    decode: Callable[..., list[Packet]] | None,
) -> LibraryAudit:
    if decode is None:
        from hexlint.hexagon.decode import decode_packets as decode
    cpu = image.cpu or 0x73
    symbols = [s for s in _unique_functions(image.functions) if function_filter is None or function_filter(s.name)]
    functions = []
    if function_filter is not None:
        # A few functions asked for (--func, --disasm): decode only their bytes; functions start on packet boundaries.
        for symbol in symbols:
            section = image.section_at(symbol.address)
            if section is None:
                continue
            offset = symbol.address - section.address
            code = section.data[offset : offset + symbol.size]
            functions.append(audit_function(symbol, decode(code, symbol.address, cpu), image, settings))
    else:
        packets: list[Packet] = []
        for section in image.code_sections:
            packets.extend(decode(section.data, section.address, cpu))
        packets.sort(key=lambda packet: packet.address)
        addresses = [packet.address for packet in packets]
        for symbol in symbols:
            low = _bisect_left(addresses, symbol.address)
            high = _bisect_left(addresses, symbol.end)
            functions.append(audit_function(symbol, packets[low:high], image, settings))
    from hexlint.elf import DebugInfo

    debug = DebugInfo(image)
    notes = []
    if not image.has_symbols:
        notes.append("no function symbols (stripped): each code section is audited as one function")
    if not image.has_debug_info:
        notes.append("no DWARF line information: findings carry addresses only")
    return LibraryAudit(
        path=image.path,
        cpu=image.cpu,
        image=image,
        functions=tuple(functions),
        settings=settings,
        notes=tuple(notes),
        locate=debug.location,
    )


def _bisect_left(values: Sequence[int], value: int) -> int:
    low, high = 0, len(values)
    while low < high:
        middle = (low + high) // 2
        if values[middle] < value:
            low = middle + 1
        else:
            high = middle
    return low


def _unique_functions(functions: Iterable[FunctionSymbol]) -> list[FunctionSymbol]:
    """Aliases (several names, one address) are audited once, under the global, shortest name."""
    by_address: dict[int, FunctionSymbol] = {}
    for function in functions:
        kept = by_address.get(function.address)
        if kept is None or (kept.is_local, len(kept.name), kept.name) > (
            function.is_local,
            len(function.name),
            function.name,
        ):
            by_address[function.address] = function
    return sorted(by_address.values(), key=lambda function: function.address)


def matches_any(name: str | None, patterns: Iterable[str]) -> bool:
    return name is not None and any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def audit_function(
    symbol: FunctionSymbol, packets: Sequence[Packet], image: ElfImage | None, settings: AuditSettings
) -> FunctionAudit:
    cfg = build_cfg(packets, symbol.address, symbol.end)
    is_helper = settings.skip_helper_functions and matches_any(
        symbol.name, settings.promotion_helpers + settings.division_helpers
    )
    calls: list[CallSite] = []
    doubles: list[DoubleOperation] = []
    hvx = 0
    first_hvx = None
    seeds: set[int] = set()
    packets = cfg.packets
    for block in cfg.blocks:
        loop = cfg.innermost_loop_by_block.get(block.start)
        for index in range(block.first_packet, block.last_packet + 1):
            packet = packets[index]
            for instruction in packet.instructions:
                if instruction.is_hvx:
                    hvx += 1
                    first_hvx = instruction.address if first_hvx is None else first_hvx
                for write in instruction.writes:
                    if write.source in STACK_BASES:
                        seeds.add(index)
                branch = instruction.branch
                if branch is None:
                    if (instruction.float_to_double or instruction.double_arith) and not is_helper:
                        doubles.append(
                            DoubleOperation(
                                instruction.address, packet.address, instruction.text, loop, instruction.float_to_double
                            )
                        )
                    continue
                if branch == "call" or branch == "callr" or _is_tail_call(instruction, cfg):
                    helper = image.name_of_target(instruction.target, instruction.address) if image else None
                    calls.append(
                        CallSite(
                            address=instruction.address,
                            packet_address=packet.address,
                            text=instruction.text,
                            helper=helper,
                            loop=loop,
                            is_promotion=not is_helper and matches_any(helper, settings.promotion_helpers),
                            is_division=not is_helper and matches_any(helper, settings.division_helpers),
                        )
                    )
    stack_accesses = _stack_accesses(cfg, seeds)
    loops = _loop_audits(cfg, stack_accesses, calls, doubles)
    return FunctionAudit(
        name=symbol.name,
        address=symbol.address,
        size=symbol.size,
        cfg=cfg,
        stack_accesses=tuple(stack_accesses),
        calls=tuple(calls),
        double_operations=tuple(doubles),
        hvx_instructions=hvx,
        first_hvx_address=first_hvx,
        loops=loops,
        is_helper=is_helper,
        is_dma_worker=bool(settings.dma_pattern) and re.search(settings.dma_pattern, symbol.name) is not None,
    )


def _is_tail_call(instruction: Instruction, cfg: FunctionCfg) -> bool:
    """A direct jump leaving the function is a call that does not come back (tail call)."""
    target = instruction.target
    return instruction.branch == "jump" and target is not None and not cfg.start <= target < cfg.end


def _stack_accesses(cfg: FunctionCfg, seeds: set[int] | None = None) -> list[StackAccess]:
    """Forward data flow of SP/FP-derived registers over the blocks, then classify each memory access.

    `seeds`: indexes of the packets that derive a register from SP/FP (computed here when not given)."""
    seeds = _seed_packets(cfg) if seeds is None else seeds
    # Nothing copies SP/FP into another register: only direct r29/r30 accesses exist, no data flow needed.
    entry_states = _derived_registers_at_blocks(cfg, seeds) if seeds else {}
    accesses = []
    for block in cfg.blocks:
        state = entry_states.get(block.start, {})
        loop = cfg.innermost_loop_by_block.get(block.start)
        for index in range(block.first_packet, block.last_packet + 1):
            packet = cfg.packets[index]
            for instruction in packet.instructions:
                memory = instruction.memory
                if memory is not None and (memory.base in STACK_BASES or memory.base in state):
                    accesses.append(_classify(instruction, state, packet.address, loop))
            if state or index in seeds:
                state = _transfer(packet, state)
    return sorted(accesses, key=lambda access: (access.address, access.text))


def _seed_packets(cfg: FunctionCfg) -> set[int]:
    """Indexes of packets that derive a register from SP/FP (`rD = r29`, `rD = add(r30,#-8)` ...)."""
    seeds = set()
    for index, packet in enumerate(cfg.packets):
        for instruction in packet.instructions:
            for write in instruction.writes:
                if write.source in STACK_BASES:
                    seeds.add(index)
    return seeds


def _classify(instruction: Instruction, state: dict[str, Derived], packet_address: int, loop: int | None):
    memory = instruction.memory
    if memory is None:
        return None
    if memory.base in STACK_BASES:
        origin: Derived = (memory.base, 0)
    elif memory.base in state:
        origin = state[memory.base]
    else:
        return None
    base, offset = origin
    slot = None
    if offset is not None and memory.offset is not None and not memory.post_increment:
        slot = (base, offset + memory.offset)
    return StackAccess(
        address=instruction.address,
        packet_address=packet_address,
        text=instruction.text,
        is_store=memory.is_store,
        is_vector=memory.is_vector,
        size=memory.size,
        slot=slot,
        loop=loop,
    )


def _derived_registers_at_blocks(cfg: FunctionCfg, seeds: set[int]) -> dict[int, dict[str, Derived]]:
    blocks = {block.start: block for block in cfg.blocks}
    predecessors: dict[int, list[int]] = {start: [] for start in blocks}
    for block in cfg.blocks:
        for successor in block.successors:
            predecessors[successor].append(block.start)
    entry_states: dict[int, dict[str, Derived]] = {}
    exit_states: dict[int, dict[str, Derived]] = {}
    worklist = [block.start for block in cfg.blocks][::-1]
    queued = set(worklist)
    rounds = 0
    while worklist and rounds < 50 * len(blocks) + 100:
        rounds += 1
        start = worklist.pop()
        queued.discard(start)
        block = blocks[start]
        incoming = [exit_states[p] for p in predecessors[start] if p in exit_states]
        state = _join(incoming)
        entry_states[start] = state
        for index in range(block.first_packet, block.last_packet + 1):
            if state or index in seeds:
                state = _transfer(cfg.packets[index], state)
        if exit_states.get(start) != state or start not in exit_states:
            exit_states[start] = state
            for successor in block.successors:
                if successor not in queued:
                    queued.add(successor)
                    worklist.append(successor)
    return entry_states


def _join(states: list[dict[str, Derived]]) -> dict[str, Derived]:
    """Registers derived on every incoming path; differing offsets become unknown (a loop-varying pointer)."""
    if not states or not all(states):
        return {}
    result = dict(states[0])
    for state in states[1:]:
        if state is states[0]:
            continue
        for register in list(result):
            other = state.get(register)
            if other is None or other[0] != result[register][0]:
                del result[register]
            elif other[1] != result[register][1]:
                result[register] = (other[0], None)
    return result


def _transfer(packet: Packet, state: dict[str, Derived]) -> dict[str, Derived]:
    """Packet semantics: every instruction reads the registers as they were before the packet."""
    updates: dict[str, Derived | None] = {}
    for instruction in packet.instructions:
        for write in instruction.writes:
            updates[write.dest] = _written_value(write, state)
        memory = instruction.memory
        if memory is not None:
            if memory.post_increment and memory.base in state:
                updates[memory.base] = (state[memory.base][0], None)
            if not memory.is_store and memory.register:
                for register in _registers(memory.register):
                    updates[register] = None
        if instruction.branch in ("call", "callr"):
            for register in CALLER_SAVED:
                updates.setdefault(register, None)
    if not updates:
        return state
    result = dict(state)
    for register, value in updates.items():
        for name in _registers(register):
            if name in STACK_BASES:
                continue
            if value is None:
                result.pop(name, None)
            else:
                result[name] = value
    return result


def _written_value(write: Any, state: dict[str, Derived]) -> Derived | None:
    source = write.source
    if source in STACK_BASES:
        origin: Derived | None = (source, 0)
    else:
        origin = state.get(source) if source else None
    if origin is None:
        return None
    if write.op == "copy":
        return origin
    if write.op == "add_imm" and write.immediate is not None:
        return (origin[0], None if origin[1] is None else origin[1] + write.immediate)
    return (origin[0], None)


def _registers(name: str) -> list[str]:
    """ "r5:4" -> ["r5", "r4"]; "r3" -> ["r3"]."""
    if ":" in name and name.startswith("r"):
        high, low = name[1:].split(":", 1)
        return [f"r{high}", f"r{low}"]
    return [name]


def _loop_audits(
    cfg: FunctionCfg, accesses: list[StackAccess], calls: list[CallSite], doubles: list[DoubleOperation]
) -> tuple[LoopAudit, ...]:
    """Counts per loop, each loop including its nested loops (the function total counts innermost loops only)."""
    chains = {loop.header: (loop.header, *_ancestors(cfg, loop.header)) for loop in cfg.loops}
    counts: dict[int, Counter] = {loop.header: Counter() for loop in cfg.loops}
    stored: dict[int, set] = {loop.header: set() for loop in cfg.loops}
    reloaded: dict[int, set] = {loop.header: set() for loop in cfg.loops}
    for access in accesses:
        if access.loop is None:
            continue
        key = ("spill", access.is_vector, access.is_store) if access.is_spill else ("array",)
        for header in chains[access.loop]:
            counts[header][key] += 1
            if access.is_spill:
                (stored if access.is_store else reloaded)[header].add(access.slot)
    for call in calls:
        if call.loop is None:
            continue
        for header in chains[call.loop]:
            counts[header]["call"] += 1
            counts[header]["division"] += call.is_division
            counts[header]["promotion"] += call.is_promotion
    for operation in doubles:
        if operation.loop is not None:
            for header in chains[operation.loop]:
                counts[header]["promotion"] += 1
    return tuple(
        LoopAudit(
            header=loop.header,
            kind=loop.kind,
            depth=loop.depth,
            parent=loop.parent,
            low=loop.low,
            high=loop.high,
            vector_spill_stores=counts[loop.header][("spill", True, True)],
            vector_reloads=counts[loop.header][("spill", True, False)],
            scalar_spill_stores=counts[loop.header][("spill", False, True)],
            scalar_reloads=counts[loop.header][("spill", False, False)],
            array_accesses=counts[loop.header][("array",)],
            round_trips=len(stored[loop.header] & reloaded[loop.header]),
            calls=counts[loop.header]["call"],
            divisions=counts[loop.header]["division"],
            promotions=counts[loop.header]["promotion"],
        )
        for loop in cfg.loops
    )


def _ancestors(cfg: FunctionCfg, header: int) -> tuple[int, ...]:
    chain = []
    parent = cfg.loop(header).parent
    while parent is not None:
        chain.append(parent)
        parent = cfg.loop(parent).parent
    return tuple(chain)
