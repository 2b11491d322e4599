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
  access: the function's own stack array (`HVX_Vector acc[40]` indexed in a loop), not a spill;
- a constant-offset slot written by a predicated or masked store, and every access overlapping it, is a stack buffer
  (`buffer_reason`): the register allocator never spills with a predicated store;
- SP-based slots only ever stored, each store in the basic block of a later call, are that call's stack arguments
  (varargs of a logging call): a spill store is always reloaded;
- with DWARF, a constant-offset access inside a variable the debug info places at one fixed frame location
  (`DW_OP_fbreg`/`DW_OP_breg29`, no location list) is that variable's (`AuditSettings.frame_variables_from_dwarf`).
Limits: a local array indexed only with constants after full unrolling looks like spill slots (the compiler did put
those values in memory, so they cost the same); a derived register whose redefinition the decoder cannot see (an
instruction it decodes only to class and length) keeps its old meaning; calls kill the caller-saved r0-r15 and r28.
Accesses outside every loop are frame set-up (callee-saved register saves in the prologue and their restores).
"""

from __future__ import annotations

import fnmatch
import functools
import gc
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import accumulate, compress, islice
from operator import add, attrgetter, eq, lt, ne

from hexlint.hexagon.cfg import FunctionCfg, build_cfg, frozen_instance
from hexlint.hexagon.decode import (
    WORD_BRANCH,
    WORD_CALL,
    WORD_DOUBLE,
    WORD_HVX,
    WORD_LOOP_SETUP,
    WORD_MEMORY,
    WORD_STACK_COPY,
    WORD_STACK_MEMORY,
    WORD_WRITES,
    CodeScan,
    DecodeCache,
    PacketRange,
    instruction_at,
    packet_span,
    scan_code,
)

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:  # hexlint.elf imports pyelftools: only a run that audits a binary pays for that import
    from typing import Any

    from hexlint.elf import ElfImage, FrameObject, FunctionSymbol, SourceLocation
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
    # libm's double-precision functions (the names without the `f` suffix): a call promotes its float argument
    double_math_functions: tuple[str, ...] = (
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "cbrt",
        "ceil",
        "cos",
        "cosh",
        "erf",
        "erfc",
        "exp",
        "exp2",
        "expm1",
        "fdim",
        "floor",
        "fma",
        "fmax",
        "fmin",
        "fmod",
        "frexp",
        "hypot",
        "ldexp",
        "lgamma",
        "log",
        "log10",
        "log1p",
        "log2",
        "logb",
        "modf",
        "nearbyint",
        "pow",
        "remainder",
        "rint",
        "round",
        "scalbn",
        "sin",
        "sinh",
        "sqrt",
        "tan",
        "tanh",
        "tgamma",
        "trunc",
    )
    dma_pattern: str = r"^dma_queue_|^dma_worker|_dma_worker$"
    # In-loop spill slots inside a variable that DWARF places in the frame are that variable's (HX201 option)
    frame_variables_from_dwarf: bool = True
    # Functions that ARE the runtime helpers are not audited for promotions/divisions (they implement them).
    skip_helper_functions: bool = True
    # Functions that never return (HX201 option): a call to one ends its block (a failed assert does not fall into the
    # loop laid out after it)
    no_return_functions: frozenset[str] = frozenset(
        {
            "__assert_fail",
            "__assert_func",
            "__assert",
            "abort",
            "exit",
            "_exit",
            "_Exit",
            "quick_exit",
            "__stack_chk_fail",
            "longjmp",
            "siglongjmp",
            "__cxa_throw",
            "__cxa_rethrow",
        }
    )


@dataclass(frozen=True)
class StackAccess:
    """A memory access based on SP/FP or a register derived from them: a spill slot or an array."""

    address: int  # instruction word
    packet_address: int
    text: str
    is_store: bool
    is_vector: bool
    size: int
    slot: tuple[str, int] | None  # (r29|r30, frame offset); None = array access (offset unknown)
    loop: int | None  # header of the innermost loop, None = frame set-up / straight-line code
    is_predicated: bool = False  # `if (p0) memw(...)`, `if (!q0) vmem(...)`: never how a register is spilled
    buffer_reason: str | None = None  # why a constant-offset access is a stack buffer, not a spill slot

    @property
    def is_spill(self) -> bool:
        return self.slot is not None and self.buffer_reason is None


class _InstructionText:
    """StackAccess.text and CallSite.text of a record built by the audit: its instruction's text, rendered on first
    read (a light instruction renders on demand, and only --disasm, the tables and a few findings read the text of an
    access or a call); kept in the record's field dict next to the hidden "_fields" entry, the instruction's field
    dict."""

    def __get__(self, instance: StackAccess | CallSite | None, owner: type | None = None) -> object:
        if instance is None:
            return self
        fields = instance.__dict__
        text = fields["text"] = instruction_at(fields["_fields"], fields["address"]).text
        return text


StackAccess.text = _InstructionText()  # type: ignore[assignment]
_SET_ACCESS_FIELDS = StackAccess.__dict__["__dict__"].__set__  # installs a field dict without the generic setattr


def _stack_access(fields: dict[str, Any]) -> StackAccess:
    """frozen_instance(StackAccess, fields) through the class's own __dict__ setter (~17k accesses a library)."""
    access = object.__new__(StackAccess)
    _SET_ACCESS_FIELDS(access, fields)
    return access


@dataclass(frozen=True)
class CallSite:
    """A call (or a tail call): the helper it names, the loop it sits in, what kind of helper it is."""

    address: int
    packet_address: int
    text: str
    helper: str | None  # resolved name (PLT helper, relocation symbol or function), None = unknown/indirect
    loop: int | None
    is_promotion: bool = False
    is_division: bool = False


CallSite.text = _InstructionText()  # type: ignore[assignment]


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
    """The counts of one loop (nested loops included for round trips)."""

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
    """The facts of one function that the HX2xx rules and the table read."""

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
        return self._spills_by_kind.get((vector, in_loop), ())

    @functools.cached_property
    def _spills_by_kind(self) -> dict[tuple[bool, bool], tuple[StackAccess, ...]]:
        """(vector, in loop) -> spill accesses, in order: the rules and the table ask several times per function."""
        return _spill_groups(self.stack_accesses)[0]

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
        # the accesses that are no spill: _spills_by_kind holds every spill (~17k accesses a library, each a property)
        return len(self.stack_accesses) - sum(map(len, self._spills_by_kind.values()))

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


def _spill_groups(
    accesses: Iterable[StackAccess],
) -> tuple[dict[tuple[bool, bool], tuple[StackAccess, ...]], list[StackAccess]]:
    """FunctionAudit._spills_by_kind: ~17k accesses in a large library, so one list per kind and no key tuples; and
    the in-loop accesses that are no spill (arrays, buffers): with the in-loop spills, all _loop_audits counts."""
    frame_scalar: list[StackAccess] = []
    loop_scalar: list[StackAccess] = []
    frame_vector: list[StackAccess] = []
    loop_vector: list[StackAccess] = []
    loop_arrays: list[StackAccess] = []
    for access in accesses:
        if access.slot is not None and access.buffer_reason is None:  # is_spill
            if access.is_vector:
                (frame_vector if access.loop is None else loop_vector).append(access)
            else:
                (frame_scalar if access.loop is None else loop_scalar).append(access)
        elif access.loop is not None:
            loop_arrays.append(access)
    groups = {(False, False): frame_scalar, (False, True): loop_scalar}
    groups.update({(True, False): frame_vector, (True, True): loop_vector})
    return {kind: tuple(group) for kind, group in groups.items() if group}, loop_arrays


@dataclass(frozen=True)
class LibraryAudit:
    """The audit of one library: its functions, settings, notes and DWARF lookup."""

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


NO_DWARF_NOTE = "no DWARF line information: findings carry addresses only"


def settings_from_options(options_by_code: Mapping[str, Mapping[str, Any]]) -> AuditSettings:
    """Audit settings from the HX201/HX203/HX204/HX205 rule options (their TOML [options], possibly overridden)."""
    defaults = AuditSettings()
    promotion = options_by_code.get("HX203", {})
    division = options_by_code.get("HX204", {})
    dma = options_by_code.get("HX205", {})
    vector_spills = options_by_code.get("HX201", {})
    return AuditSettings(
        frame_variables_from_dwarf=bool(
            vector_spills.get("frame_variables_from_dwarf", defaults.frame_variables_from_dwarf)
        ),
        promotion_helpers=tuple(promotion.get("helpers", defaults.promotion_helpers)),
        double_math_functions=tuple(promotion.get("double_math_functions", defaults.double_math_functions)),
        division_helpers=tuple(division.get("helpers", defaults.division_helpers)),
        dma_pattern=str(dma.get("dma_pattern", defaults.dma_pattern)),
        no_return_functions=frozenset(vector_spills.get("no_return_functions", defaults.no_return_functions)),
    )


def audit_image(
    image: ElfImage,
    settings: AuditSettings | None = None,
    function_filter: Callable[[str], bool] | None = None,
    cache: DecodeCache | None = None,
    debug_image: ElfImage | None = None,
    part: tuple[int, int] = (0, 1),
) -> LibraryAudit:
    """Scan every code section once and audit each function (those `function_filter` accepts). `cache`: the decoder's
    cache (hexlint.hexagon.decode.DecodeCache; None: the process-wide one, so the libraries of one run share it).
    `debug_image`: a -g build of the same code (binary.sources.debug_image_for) whose DWARF serves this one's.
    `part`: (number, parts): only the functions of that part (`function_part`), for parts audited side by side."""
    # Hundreds of thousands of small immutable objects: the cyclic GC would rescan them again and again for nothing.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _audit_image(image, settings or AuditSettings(), function_filter, cache, debug_image, part)
    finally:
        if was_enabled:
            gc.freeze()  # the audit's objects hold no cycles: keep later collections from rescanning all of them
            gc.enable()


def _audit_image(
    image: ElfImage,
    settings: AuditSettings,
    function_filter: Callable[[str], bool] | None,
    cache: DecodeCache | None,
    debug_image: ElfImage | None = None,
    part: tuple[int, int] = (0, 1),
) -> LibraryAudit:
    cpu = image.cpu or 0x73
    symbols = [s for s in _unique_functions(image.functions) if function_filter is None or function_filter(s.name)]
    symbols = function_part(symbols, *part)
    functions = []
    if function_filter is not None:
        # A few functions asked for (--func, --disasm): scan only their bytes; functions start on packet boundaries.
        for symbol in symbols:
            section = image.section_at(symbol.address)
            if section is None:
                continue
            offset = symbol.address - section.address
            scan = scan_code(section.data[offset : offset + symbol.size], symbol.address, cpu, cache)
            functions.append(_audit_function(symbol, scan.range(0, len(scan)), image, settings))
    else:
        section_scans = [_part_scan(image, symbols, cpu, cache)] if part[1] > 1 else []
        if not section_scans or section_scans[0] is None:
            section_scans = [scan_code(section.data, section.address, cpu, cache) for section in image.code_sections]
        scans = sorted(section_scans, key=_SCAN_ADDRESS)
        if len(scans) == 1:  # one section (most libraries): its packets ascend by construction, no overlap to check
            addresses = scans[0].packet_addresses[:-1]
        else:
            addresses = [address for scan in scans for address in scan.packet_addresses[:-1]]
        if len(scans) > 1 and not all(map(lt, addresses, islice(addresses, 1, None))):
            # overlapping sections: every address's packet once, from the first section holding it (as section_at)
            by_address: dict[int, Packet] = {}
            for scan in section_scans:
                for index, address in enumerate(scan.packet_addresses[:-1]):
                    if address not in by_address:
                        by_address[address] = scan.packet(index)
            addresses = sorted(by_address)
            all_packets = [by_address[address] for address in addresses]
            for symbol in symbols:
                low, high = bisect_left(addresses, symbol.address), bisect_left(addresses, symbol.end)
                functions.append(audit_function(symbol, all_packets[low:high], image, settings))
        else:
            # packet index where each scan starts in `addresses`
            offsets = list(accumulate((len(scan) for scan in scans), initial=0))
            for symbol in symbols:
                low, high = bisect_left(addresses, symbol.address), bisect_left(addresses, symbol.end)
                number = max(bisect_right(offsets, low) - 1, 0)
                if number < len(scans) and high <= offsets[number + 1]:
                    packets: Sequence[Packet] = scans[number].range(low - offsets[number], high - offsets[number])
                else:  # a function that runs past its section's end: its packets come from several scans
                    packets = [_packet_at(scans, offsets, index) for index in range(low, high)]
                functions.append(_audit_function(symbol, packets, image, settings))
    dwarf_image = debug_image if debug_image is not None and debug_image.has_debug_info else image
    locate: Callable[[int], SourceLocation | None] = _no_source_location
    if dwarf_image.has_debug_info:  # DebugInfo of a file without DWARF locates nothing: no pyelftools for it
        from hexlint.elf import DebugInfo

        debug = DebugInfo(dwarf_image)
        locate = debug.location
        if settings.frame_variables_from_dwarf:
            functions = [_with_frame_objects(function, debug.frame_objects) for function in functions]
    notes = []
    if not image.has_symbols:
        notes.append("no function symbols (stripped): each code section is audited as one function")
    if not dwarf_image.has_debug_info:
        notes.append(NO_DWARF_NOTE)
    elif dwarf_image is not image:
        notes.append(f"DWARF line information from {dwarf_image.path} (the same code, built with -g)")
    return LibraryAudit(
        path=image.path,
        cpu=image.cpu,
        image=image,
        functions=tuple(functions),
        settings=settings,
        notes=tuple(notes),
        locate=locate,
    )


def _part_scan(image: ElfImage, symbols: list[FunctionSymbol], cpu: int, cache: DecodeCache | None) -> CodeScan | None:
    """The scan of only the packets a part's functions need, when the library has one code section (most do), the
    functions lie inside it and it splits into packets word by word (decode.packet_span): the same packets, words
    and flags as the whole section's scan has there, for a part of the bytes. None otherwise (scan every section)."""
    if not symbols or len(image.code_sections) != 1:
        return None
    section = image.code_sections[0]
    section_end = section.address + len(section.data)
    if not all(section.address <= symbol.address <= symbol.end <= section_end for symbol in symbols):
        return None
    span = packet_span(section.data, section.address, symbols[0].address, max(symbol.end for symbol in symbols))
    if span is None:
        return None
    start, end = span
    return scan_code(section.data[start - section.address : end - section.address], start, cpu, cache)


def _no_source_location(address: int) -> None:
    return None


def function_part(symbols: list[FunctionSymbol], number: int, parts: int) -> list[FunctionSymbol]:
    """Part `number` of `parts` runs of consecutive functions (in address order), of about equal bytes: an audit's
    time goes with its functions' sizes. The parts in order are the functions in order."""
    if parts <= 1:
        return symbols
    total = sum(symbol.size for symbol in symbols) or 1
    low, high = total * number / parts, total * (number + 1) / parts
    starts = accumulate((symbol.size for symbol in symbols), initial=0)  # one more than the symbols: the total
    last = number == parts - 1  # zero-sized functions at the end start at the total
    in_part = [low <= start < high or (last and start >= high) for start in starts]
    return list(compress(symbols, in_part))


def _with_frame_objects(
    function: FunctionAudit, frame_objects: Callable[[int], tuple[FrameObject, ...]]
) -> FunctionAudit:
    """In-loop spill slots that DWARF places inside a variable kept in the frame (`HVX_Vector V[32]` indexed by
    constants after unrolling) are that variable's accesses, not spills. Only a function with in-loop spill slots
    asks: decoding a unit's debug information entries costs more than its line table."""
    if not any(access.is_spill and access.loop is not None for access in function.stack_accesses):
        return function
    objects = frame_objects(function.address)
    if not objects:
        return function
    accesses = [_in_frame_object(access, objects) for access in function.stack_accesses]
    if all(new is old for new, old in zip(accesses, function.stack_accesses, strict=True)):
        return function
    spills, arrays = _spill_groups(accesses)
    loops = _loop_audits(function.cfg, spills, arrays, list(function.calls), list(function.double_operations))
    return replace(function, stack_accesses=tuple(accesses), loops=loops)


def _in_frame_object(access: StackAccess, objects: tuple[FrameObject, ...]) -> StackAccess:
    if not access.is_spill:
        return access
    base, offset = access.slot  # type: ignore[misc]
    owner = next((item for item in objects if item.overlaps(base, offset, access.size)), None)
    return access if owner is None else replace(access, buffer_reason=f"stack variable `{owner.name}` (DWARF)")


_SCAN_ADDRESS = attrgetter("address")


def _packet_at(scans: list[CodeScan], offsets: list[int], index: int) -> Packet:
    number = bisect_right(offsets, index) - 1
    return scans[number].packet(index - offsets[number])


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
    """`name` matches one of the fnmatch `patterns` (case-sensitive), as fnmatch.fnmatchcase would say."""
    if name is None:
        return False
    exact, wildcards = _name_matcher(tuple(patterns))
    return name in exact or (wildcards is not None and wildcards.match(name) is not None)


@functools.lru_cache(maxsize=64)
def _name_matcher(patterns: tuple[str, ...]) -> tuple[frozenset[str], re.Pattern[str] | None]:
    """Several fnmatch patterns as (the plain names among them, one regex for the others, None if none): one match
    per name instead of one per pattern, and most default patterns are libm names, which the regex engine would
    compile in every run (~1 ms)."""
    exact = frozenset(pattern for pattern in patterns if not _WILDCARD.search(pattern))
    wildcards = [pattern for pattern in patterns if pattern not in exact]
    if not wildcards:
        return exact, None
    return exact, re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in wildcards))


_WILDCARD = re.compile(r"[*?\[]")  # what fnmatch gives a meaning; any other character matches itself


@functools.lru_cache(maxsize=4096)
def _helper_kinds(helper: str | None, promotion: tuple[str, ...], division: tuple[str, ...]) -> tuple[bool, bool]:
    """(is a promotion helper, is a division helper): a library calls the same few helpers again and again."""
    return matches_any(helper, promotion), matches_any(helper, division)


@dataclass(frozen=True)
class _InstructionFacts:
    """What one pass over a function's instructions finds (packet indexes, in address order)."""

    # packets holding a jump, a return, a loop set-up or an :endloop marker -> (those markers, the field dicts of its
    # jumps, returns and loop set-ups), what build_cfg reads of them
    control: dict[int, tuple[frozenset[int], list[dict[str, Any]]]]
    seeds: list[int]  # packets that derive a register other than SP/FP from SP/FP
    direct: list[tuple[int, int, dict[str, Any]]]  # (index, address, fields) of the accesses based on r29/r30
    calls: list[tuple[int, int, dict[str, Any]]]  # (index, address, fields) of the calls and tail calls
    doubles: list[tuple[int, Instruction]]  # float->double conversions and double arithmetic (not in helpers)
    hvx: int
    first_hvx: int | None


# The words the instruction pass reads of a PacketRange (and WORD_DOUBLE outside helpers): a branch, a loop set-up,
# an SP/FP-based access, an SP/FP copy (a seed); any other word only counts when it is an HVX one.
_FACT_WORDS = WORD_BRANCH | WORD_LOOP_SETUP | WORD_STACK_MEMORY | WORD_STACK_COPY
# An instruction without these neither changes the SP/FP-derived registers nor accesses memory through one.
_DATA_FLOW_WORDS = WORD_WRITES | WORD_MEMORY | WORD_CALL


def _instruction_facts(
    packets: Sequence[Packet], start: int, end: int, is_helper: bool, relocated: Mapping[int, str] | None = None
) -> _InstructionFacts:
    """One pass over the instructions. Of a PacketRange, only over the words whose flags say they may matter (a
    branch, a loop set-up, an SP/FP-based access or copy, outside helpers a double operation), built one by one
    without their packets; its HVX words are counted and its :endloop markers read from the parse bits.
    `relocated`: a relocatable object's relocated words (address -> symbol): a jump among them is a tail call whose
    encoded target (0 away: its own packet) means nothing."""
    if isinstance(packets, PacketRange):
        mask = _FACT_WORDS if is_helper else _FACT_WORDS | WORD_DOUBLE
        # field dicts, not instructions: most words read here are accesses, only a few fields of which are read
        entries: Iterable[tuple[int, int, dict[str, Any]]] = packets.fields_with(mask)
        endloops = packets.endloops()
        hvx, first_hvx = packets.count_words_with(WORD_HVX)
    else:
        instructions = [
            (index, instruction) for index, packet in enumerate(packets) for instruction in packet.instructions
        ]
        entries = [(index, instruction.address, instruction.__dict__) for index, instruction in instructions]
        endloops = {index: packet.endloop for index, packet in enumerate(packets) if packet.endloop}
        hvx_words = [instruction.address for _, instruction in instructions if instruction.is_hvx]
        hvx, first_hvx = len(hvx_words), hvx_words[0] if hvx_words else None
    # packet index -> (its :endloop markers, its branches and loop set-ups): what the CFG reads of a control packet
    control: dict[int, tuple[frozenset[int], list[dict[str, Any]]]] = {
        index: (endloop, []) for index, endloop in endloops.items()
    }
    seeds: list[int] = []
    direct: list[tuple[int, int, dict[str, Any]]] = []
    calls: list[tuple[int, int, dict[str, Any]]] = []
    doubles: list[tuple[int, Instruction]] = []
    no_endloop: frozenset[int] = frozenset()
    stack_bases, track_doubles, last_seed = STACK_BASES, not is_helper, -1  # locals: ~30k instructions a library
    for item in entries:
        index, address, fields = item  # a field left at its default is not in `fields`
        memory = fields.get("memory")
        branch = fields.get("branch")
        if memory is not None:
            if memory.base in stack_bases:
                direct.append(item)  # the entry itself: ~15k accesses a library
            # an access derives no register from SP/FP (it writes the register it loads and its own base), is neither
            # a double operation nor a loop set-up, and most words read here are accesses
            if branch is None:
                continue
        else:
            writes = fields.get("writes")
            if writes and last_seed != index:
                for write in writes:
                    # r29/r30 themselves are never tracked (`r30 = r29`, allocframe): only another register carries one
                    if write.source in stack_bases and write.dest not in stack_bases:
                        seeds.append(index)
                        last_seed = index
                        break
            if branch is None:
                if track_doubles and (fields.get("float_to_double") or fields.get("double_arith")):
                    doubles.append((index, instruction_at(fields, address)))
                if fields.get("loop_setup") is None:
                    continue
        if branch == "call" or branch == "callr":
            calls.append(item)
            continue  # a call returns (one that never does is handed to build_cfg as no_return): it ends no block
        if branch == "jump":
            # a direct jump leaving the function is a call that does not come back (tail call)
            target = fields.get("target")
            if relocated and address in relocated:
                calls.append(item)
                fields = {**fields, "target": None}  # for the CFG: leaves the function
            elif target is not None and not start <= target < end:
                calls.append(item)
        entry = control.get(index)
        if entry is None:
            control[index] = (endloops.get(index, no_endloop), [fields])
        else:
            entry[1].append(fields)
    return _InstructionFacts(control, seeds, direct, calls, doubles, hvx, first_hvx)


def audit_function(
    symbol: FunctionSymbol, packets: Sequence[Packet], image: ElfImage | None, settings: AuditSettings
) -> FunctionAudit:
    """The facts of one function: one pass over its instructions, its CFG, then only the instructions that matter."""
    return _audit_function(symbol, tuple(packets), image, settings)


def _audit_function(
    symbol: FunctionSymbol, packets: Sequence[Packet], image: ElfImage | None, settings: AuditSettings
) -> FunctionAudit:
    """audit_function of a tuple of packets or of a PacketRange (whose packets are decoded only where they matter)."""
    # exact libm names are fnmatch patterns too: one union pattern decides both kinds of promotion call
    promotion = settings.promotion_helpers + settings.double_math_functions
    division = settings.division_helpers
    # the two patterns the calls need anyway: a third, of both, would cost its compilation in every run (~1 ms)
    is_helper = settings.skip_helper_functions and (
        matches_any(symbol.name, promotion) or matches_any(symbol.name, division)
    )
    relocated = image.relocation_symbols if image is not None and image.is_relocatable else None
    facts = _instruction_facts(packets, symbol.address, symbol.end, is_helper, relocated)
    helpers = [
        image.name_of_target(fields.get("target"), address) if image else None for _, address, fields in facts.calls
    ]
    no_return = [
        index
        for (index, _, fields), helper in zip(facts.calls, helpers, strict=True)
        if helper in settings.no_return_functions and fields.get("branch") == "call" and not fields.get("conditional")
    ]
    indirect = _jump_tables(packets, facts.control, symbol, image) if image is not None else {}
    cfg = build_cfg(
        packets, symbol.address, symbol.end, control=facts.control, no_return=no_return, indirect_jumps=indirect
    )
    loop_of = _innermost_loop_of_packets(cfg)
    addresses = cfg.packet_addresses
    calls = []
    for (index, address, fields), helper in zip(facts.calls, helpers, strict=True):
        is_promotion, is_division = _helper_kinds(helper, promotion, division)
        calls.append(
            frozen_instance(
                CallSite,
                {
                    "address": address,
                    "packet_address": addresses[index],
                    "_fields": fields,  # the instruction's: its text when first read (_InstructionText)
                    "helper": helper,
                    "loop": loop_of[index],
                    "is_promotion": not is_helper and is_promotion,
                    "is_division": not is_helper and is_division,
                },
            )
        )
    doubles = [
        frozen_instance(
            DoubleOperation,
            {
                "address": instruction.address,
                "packet_address": addresses[index],
                "text": instruction.text,
                "loop": loop_of[index],
                "is_conversion": instruction.float_to_double,
            },
        )
        for index, instruction in facts.doubles
    ]
    call_packets = [index for index, _, fields in facts.calls if fields.get("branch") in ("call", "callr")]
    call_blocks = _call_blocks(cfg, call_packets)
    # the data flow visits a loop's packets more than once: the reader reads each once
    instructions_of = packets.packet_reader(_DATA_FLOW_WORDS) if isinstance(packets, PacketRange) else None
    stack_accesses = mark_stack_buffers(_stack_accesses_from_facts(cfg, facts, loop_of, instructions_of), call_blocks)
    spills, arrays = _spill_groups(stack_accesses)  # grouped while the accesses are still in the CPU's caches
    loops = _loop_audits(cfg, spills, arrays, calls, doubles)
    audit = FunctionAudit(
        name=symbol.name,
        address=symbol.address,
        size=symbol.size,
        cfg=cfg,
        stack_accesses=tuple(stack_accesses),
        calls=tuple(calls),
        double_operations=tuple(doubles),
        hvx_instructions=facts.hvx,
        first_hvx_address=facts.first_hvx,
        loops=loops,
        is_helper=is_helper,
        is_dma_worker=bool(settings.dma_pattern) and re.search(settings.dma_pattern, symbol.name) is not None,
    )
    audit.__dict__["_spills_by_kind"] = spills  # the cached property's value (every rule asks)
    return audit


_JUMPR = re.compile(r"\bjumpr\s+(r\d+)")
_MAX_TABLE_ENTRIES = 4096


def _jump_tables(
    packets: Sequence[Packet],
    control: Mapping[int, tuple[frozenset[int], list[dict[str, Any]]]],
    symbol: FunctionSymbol,
    image: ElfImage,
) -> dict[int, list[int]]:
    """Packet index of each `jumpr rJ` through a switch's jump table -> the addresses the table sends it to.

    clang's position-independent tables (measured on clang-22 -O2 LTO builds of upstream's kernels): `rB =
    add(pc,##off)` gives the table's address, `rE = memw(rB+rI<<#2)` an entry, `rJ = add(rB,rE)` the target, each
    entry a signed offset from the table. The table is the last one whose address the function computes into rB
    before the jump; it ends at the first entry that is not a packet of this function, or where the function's next
    table starts. Returns with `jumpr r31` are not jumps through a table."""
    jumps: dict[int, str] = {}
    for index, (_, instructions) in control.items():
        for fields in instructions:
            if fields.get("branch") == "jumpr" and not fields.get("conditional"):
                match = _JUMPR.search(fields.get("text") or "")
                if match and match.group(1) != "r31":
                    jumps[index] = match.group(1)
    if not jumps or not image.data_sections:
        return {}
    addresses = packets.addresses if isinstance(packets, PacketRange) else [packet.address for packet in packets]
    bases: list[tuple[int, str, int]] = []  # (packet address, register, table address) of each `add(pc,##off)`
    if isinstance(packets, PacketRange):  # only the words that can write from the PC, without their packets
        writers: Iterable[tuple[int, dict[str, Any]]] = (
            (addresses[index], fields) for index, fields in packets.pc_additions()
        )
    else:
        writers = ((packet.address, i.__dict__) for packet in packets for i in packet.instructions)
    for packet_address, fields in writers:
        for write in fields.get("writes") or ():
            if write.source == "pc" and write.immediate is not None:
                bases.append((packet_address, write.dest, (packet_address + write.immediate) & 0xFFFFFFFF))
    if not bases:
        return {}
    table_starts = sorted({table for _, _, table in bases})
    inside = set(addresses)
    result: dict[int, list[int]] = {}
    for index, register in jumps.items():
        base_register = _table_register(packets, index, register)
        jump_address = addresses[index]
        earlier = [table for address, dest, table in bases if dest == base_register and address <= jump_address]
        if not earlier:
            continue
        table = earlier[-1]
        following = bisect_right(table_starts, table)
        limit = table_starts[following] if following < len(table_starts) else table + 4 * _MAX_TABLE_ENTRIES
        targets = []
        for entry in range(table, min(limit, table + 4 * _MAX_TABLE_ENTRIES), 4):
            word = image.read_word(entry)
            target = None if word is None else (table + word) & 0xFFFFFFFF
            if target is None or target not in inside or not symbol.address <= target < symbol.end:
                break
            targets.append(target)
        if targets:
            result[index] = targets
    return result


def _table_register(packets: Sequence[Packet], index: int, register: str) -> str | None:
    """The table register rB of `rJ = add(rB,rE)` that computes the jump's target, looked for in the packets just
    before the jump (and in its own packet)."""
    for number in range(index, max(index - 8, -1), -1):
        for instruction in packets[number].instructions:
            for write in instruction.writes or ():
                if write.dest == register and write.op == "other" and write.source and write.index:
                    return write.source
    return None


def _innermost_loop_of_packets(cfg: FunctionCfg) -> Sequence[int | None]:
    """Packet index -> header of its innermost loop, None outside loops."""
    loop_of: list[int | None] = [None] * len(cfg.packets)
    if not cfg.loops:
        return loop_of
    firsts, lasts = cfg.block_first_packets, cfg.block_last_packets
    headers = list(map(cfg.innermost_loop_by_block.get, cfg.block_starts))  # each block's, None outside loops
    # runs of blocks with the same header, found at C speed (a loop's blocks mostly follow one another): the blocks
    # cover the packets in order, so a run's packets are one slice
    run_starts = [0, *compress(range(1, len(headers)), map(ne, headers, islice(headers, 1, None)))]
    run_ends = run_starts[1:]
    run_ends.append(len(headers))
    for low, high in zip(run_starts, run_ends, strict=True):
        header = headers[low]
        if header is not None:
            first, last = firsts[low], lasts[high - 1]
            loop_of[first : last + 1] = [header] * (last - first + 1)
    return loop_of


def _stack_accesses(cfg: FunctionCfg, seeds: set[int] | None = None) -> list[StackAccess]:
    """Forward data flow of SP/FP-derived registers over the blocks, then classify each memory access.

    The reference walk over every instruction; the audit takes the shortcut `_stack_accesses_from_facts` (a test
    checks both agree). `seeds`: indexes of the packets that derive a register from SP/FP (computed when not given)."""
    seeds = _seed_packets(cfg) if seeds is None else seeds
    # Nothing copies SP/FP into another register: only direct r29/r30 accesses exist, no data flow needed.
    entry_states = _derived_registers_at_blocks(cfg, seeds) if seeds else {}
    accesses = []
    for number, start in enumerate(cfg.block_starts):
        state = entry_states.get(start, {})
        loop = cfg.innermost_loop_by_block.get(start)
        accesses += _block_accesses(cfg, number, state, seeds, loop)
    call_packets = [
        index
        for index, packet in enumerate(cfg.packets)
        if any(instruction.branch in ("call", "callr") for instruction in packet.instructions)
    ]
    ordered = sorted(accesses, key=lambda access: (access.address, access.text))
    return mark_stack_buffers(ordered, _call_blocks(cfg, call_packets))


def _call_blocks(cfg: FunctionCfg, call_packets: Sequence[int]) -> list[tuple[int, int]]:
    """(start of its basic block, packet address) of each call packet, in address order."""
    if not call_packets or not cfg.block_starts:
        return []
    firsts, lasts, starts = cfg.block_first_packets, cfg.block_last_packets, cfg.block_starts
    result = []
    for index in sorted(set(call_packets)):
        number = bisect_right(firsts, index) - 1
        if number >= 0 and index <= lasts[number]:
            result.append((starts[number], cfg.packet_addresses[index]))
    return result


def _block_accesses(
    cfg: FunctionCfg,
    number: int,
    state: dict[str, Derived],
    seeds: set[int],
    loop: int | None,
) -> list[StackAccess]:
    """The stack accesses of block `number`, walking every instruction of its packets (the reference walk)."""
    accesses = []
    addresses = cfg.packet_addresses
    for index in range(cfg.block_first_packets[number], cfg.block_last_packets[number] + 1):
        instructions = _word_entries(cfg.packets[index].instructions)
        if not instructions:
            continue
        for address, fields in instructions:
            memory = fields.get("memory")
            if memory is not None and (memory.base in STACK_BASES or memory.base in state):
                accesses.append(_classify(address, fields, state, addresses[index], loop))
        if state or index in seeds:
            state = _transfer(instructions, state)
    return accesses


def _stack_accesses_from_facts(
    cfg: FunctionCfg,
    facts: _InstructionFacts,
    loop_of: Sequence[int | None],
    instructions_of: Callable[[int], Sequence[WordEntry]] | None = None,
) -> list[StackAccess]:
    """`_stack_accesses` without walking every instruction again: the r29/r30-based accesses are the ones the
    instruction pass already found; the data flow adds the accesses through a derived register, with the state it
    had before each packet (an access with the same address and text is always of the same kind: the order after
    sorting is the reference's). `instructions_of(index)`: (address, field dict) of the instructions of packet `index`
    that may write a register, access memory or call (the others change nothing here); None: every instruction of
    cfg.packets[index]."""
    addresses = cfg.packet_addresses
    accesses = _direct_accesses(facts.direct, addresses, loop_of)
    if facts.seeds:
        visits: dict[int, list[PacketVisit]] = {}
        _derived_registers_at_blocks(cfg, set(facts.seeds), instructions_of, visits)
        for number in sorted(visits):  # block order, then packet order: address order
            for index, state, instructions in visits[number]:
                for address, fields in instructions:
                    memory = fields.get("memory")
                    if memory is not None and memory.base in state:  # never r29/r30: they are never tracked
                        accesses.append(_classify(address, fields, state, addresses[index], loop_of[index]))
    # the direct accesses come in address order: alone, only the halves of a duplex may need ordering
    _sort_accesses(accesses, in_address_order=len(accesses) == len(facts.direct))
    return accesses


# An instruction as the data flow reads it: (its address, its field dict), see PacketRange.packet_reader.
WordEntry = tuple[int, "dict[str, Any]"]
# A packet the data flow reached with SP/FP-derived registers: (packet index, those registers, its instructions).
PacketVisit = tuple[int, dict[str, Derived], "Sequence[WordEntry]"]


def _word_entries(instructions: Iterable[Instruction]) -> list[WordEntry]:
    """Decoded instructions as the data flow reads them."""
    return [(instruction.address, instruction.__dict__) for instruction in instructions]


_ADDRESS = attrgetter("address")


def _sort_accesses(accesses: list[StackAccess], in_address_order: bool = False) -> None:
    """Sort by (address, text) in place, reading the text only where accesses share a word (a duplex's halves):
    most texts are then never rendered. `in_address_order`: the accesses are already sorted by address."""
    if not in_address_order:
        accesses.sort(key=_ADDRESS)
    addresses = [access.address for access in accesses]
    run_end = 0
    for position in compress(range(1, len(addresses)), map(eq, addresses, islice(addresses, 1, None))):
        if position < run_end:
            continue  # inside a run already sorted
        run_start, run_end = position - 1, position + 1
        while run_end < len(addresses) and addresses[run_end] == addresses[run_start]:
            run_end += 1
        accesses[run_start:run_end] = sorted(accesses[run_start:run_end], key=_TEXT)


_TEXT = attrgetter("text")


PREDICATED_STORE = "predicated store"


CALL_ARGUMENT = "call argument"


NEVER_STORED = "never stored at a constant offset"


def mark_stack_buffers(accesses: list[StackAccess], call_blocks: Sequence[tuple[int, int]] = ()) -> list[StackAccess]:
    """Constant-offset accesses that are a stack buffer's or a call's arguments, not a spill slot's.

    The register allocator never spills with a predicated or masked store (`if (!q0) vmem(r2+#0) = v0`): a group of
    overlapping slots (same base, byte ranges overlapping transitively) that such a store writes is a buffer, e.g. a
    reduction extracted through a temporary (`r0 = memw(r29+#640)` after the masked store), and every access to it
    is an array access. Width alone decides nothing: stack-slot colouring reuses one slot for a scalar spill in one
    part of a function and a vector spill in another (upstream's glu_swiglu does).
    `call_blocks`: (block start, call packet address) of every call. A store to SP-based slots that nothing in the
    function ever loads, made in the block of a later call, is that call's stack argument (varargs of a logging
    call): a spill store is always reloaded. Conversely a spill reload always reads what a spill store wrote: vector
    loads from slots that no access of the function stores to at a constant offset read an object written through a
    pointer (a local float array filled element by element through `rX = setbit(rY,#3)`, then read as one vector)."""
    bases = {access.slot[0] for access in accesses if access.is_predicated and access.is_store and access.slot}
    if call_blocks:
        bases.add("r29")
    bases.update(access.slot[0] for access in accesses if access.is_vector and not access.is_store and access.slot)
    if not bases:
        return accesses  # neither reason can hold for any cluster: no need to cluster
    slots = [access.slot for access in accesses]
    marked = None  # a copy of `accesses` once one is a buffer's
    for base in bases:
        positions = [position for position, slot in enumerate(slots) if slot is not None and slot[0] == base]
        for cluster, reason in _buffer_clusters(accesses, positions, slots, call_blocks if base == "r29" else ()):
            if marked is None:
                marked = list(accesses)
            for position in cluster:
                marked[position] = _stack_access({**accesses[position].__dict__, "buffer_reason": reason})
    return accesses if marked is None else marked


def _buffer_clusters(
    accesses: list[StackAccess],
    positions: list[int],
    slots: list[tuple[str, int] | None],
    call_blocks: Sequence[tuple[int, int]],
) -> Iterator[tuple[list[int], str]]:
    """The clusters of `positions` (constant-offset accesses of one base: byte ranges [offset, offset + size)
    overlapping transitively, in offset order, ties in position order) that are a buffer's, with the reason: a
    predicated store writes it, or (`call_blocks` given) it is only stored, each store before a call of its block."""
    offsets = [slots[position][1] for position in positions]  # type: ignore[index]
    call_addresses = [address for _, address in call_blocks]  # bisected without a key function
    cluster: list[int] = []
    cluster_end = 0
    only_stores = True
    only_loads = True
    vector = False
    predicated_store = False
    for number in sorted(range(len(positions)), key=offsets.__getitem__):
        position = positions[number]
        access = accesses[position]
        low = offsets[number]
        if cluster and low >= cluster_end:
            reason = _cluster_reason(
                accesses, cluster, only_stores, only_loads and vector, predicated_store, call_blocks, call_addresses
            )
            if reason is not None:
                yield cluster, reason
            cluster, only_stores, only_loads, vector, predicated_store = [], True, True, False, False
        high = low + access.size
        if not cluster or high > cluster_end:
            cluster_end = high
        cluster.append(position)
        vector = vector or access.is_vector
        if not access.is_store:
            only_stores = False
        else:
            only_loads = False
            if access.is_predicated:
                predicated_store = True
    if cluster:
        reason = _cluster_reason(
            accesses, cluster, only_stores, only_loads and vector, predicated_store, call_blocks, call_addresses
        )
        if reason is not None:
            yield cluster, reason


def _cluster_reason(
    accesses: list[StackAccess],
    cluster: list[int],
    only_stores: bool,
    only_vector_loads: bool,
    predicated_store: bool,
    call_blocks: Sequence[tuple[int, int]],
    call_addresses: Sequence[int],
) -> str | None:
    if predicated_store:
        return PREDICATED_STORE
    if only_vector_loads:
        return NEVER_STORED
    if (
        only_stores
        and call_blocks
        and all(_stored_before_a_call(accesses[p].packet_address, call_blocks, call_addresses) for p in cluster)
    ):
        return CALL_ARGUMENT
    return None


def _stored_before_a_call(
    packet_address: int, call_blocks: Sequence[tuple[int, int]], call_addresses: Sequence[int]
) -> bool:
    """A call at or after `packet_address` in the same basic block (call_blocks sorted by call address;
    call_addresses: their call packet addresses)."""
    position = bisect_left(call_addresses, packet_address)
    if position == len(call_blocks):
        return False
    block_start, _ = call_blocks[position]
    return block_start <= packet_address


def _direct_accesses(
    direct: list[tuple[int, int, dict[str, Any]]], packet_addresses: Sequence[int], loop_of: Sequence[int | None]
) -> list[StackAccess]:
    """`_classify` of r29/r30-based accesses with no derived register: the frame offset is the access's offset."""
    accesses = []
    new, set_fields, access_class = object.__new__, _SET_ACCESS_FIELDS, StackAccess
    for index, address, fields in direct:
        memory = fields["memory"]
        offset = memory.offset
        access = new(access_class)
        set_fields(
            access,
            {
                "address": address,
                "packet_address": packet_addresses[index],
                "_fields": fields,  # the instruction's: its text when first read (_InstructionText)
                "is_store": memory.is_store,
                "is_vector": memory.is_vector,
                "size": memory.size,
                "slot": None if offset is None or memory.post_increment else (memory.base, offset),
                "loop": loop_of[index],
                "is_predicated": fields.get("conditional", False),
            },
        )
        accesses.append(access)
    return accesses


def _seed_packets(cfg: FunctionCfg) -> set[int]:
    """Indexes of packets that derive a register from SP/FP (`rD = r29`, `rD = add(r30,#-8)` ...)."""
    seeds = set()
    for index, packet in enumerate(cfg.packets):
        for instruction in packet.instructions:
            for write in instruction.writes:
                if write.source in STACK_BASES:
                    seeds.add(index)
    return seeds


def _classify(address: int, fields: dict[str, Any], state: dict[str, Derived], packet_address: int, loop: int | None):
    memory = fields.get("memory")
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
    return _stack_access(
        {
            "address": address,
            "packet_address": packet_address,
            "_fields": fields,  # the instruction's: its text when first read (_InstructionText)
            "is_store": memory.is_store,
            "is_vector": memory.is_vector,
            "size": memory.size,
            "slot": slot,
            "loop": loop,
            "is_predicated": fields.get("conditional", False),
        }
    )


def _derived_registers_at_blocks(
    cfg: FunctionCfg,
    seeds: set[int],
    instructions_of: Callable[[int], Sequence[WordEntry]] | None = None,
    visits: dict[int, list[PacketVisit]] | None = None,
) -> dict[int, dict[str, Derived]]:
    """Block start -> SP/FP-derived registers on entry: a worklist over the blocks in address order, last in first
    out, an unvisited predecessor left out of the join. Outside the blocks a seed packet reaches every state is empty,
    so there a visit only keeps the worklist order (which decides the result where loops carry a derived register).
    `visits`, when given, receives block number -> (packet index, the registers derived before it, its instructions)
    of every packet where some are and that has instructions (see instructions_of): what a walk of each block from
    its entry state (from none if never visited) would see."""
    starts, firsts, lasts = cfg.block_starts, cfg.block_first_packets, cfg.block_last_packets
    count = len(starts)
    successors = cfg.block_successors
    predecessors = cfg.block_predecessors  # the join reads them in any order
    seed_list = sorted(seeds)
    in_region = _blocks_reached_from_seeds(cfg, seed_list, successors)
    seeded = [False] * count  # blocks holding a seed: from an empty entry state only they derive a register
    for index in seed_list:
        seeded[bisect_right(firsts, index) - 1] = True
    empty: dict[str, Derived] = {}  # shared: states are never changed in place
    entry_states: list[dict[str, Derived] | None] = [None] * count
    exit_states: list[dict[str, Derived] | None] = [None] * count
    worklist = list(range(count - 1, -1, -1))
    queued = [True] * count
    packets = cfg.packets

    def walk(number: int, state: dict[str, Derived]) -> dict[str, Derived]:
        visit: list[PacketVisit] | None = [] if visits is not None else None
        index, last = firsts[number], lasts[number]
        while index <= last:
            if not state:  # nothing derived: only a seed packet can change that
                position = bisect_left(seed_list, index)
                if position == len(seed_list) or seed_list[position] > last:
                    break
                index = seed_list[position]
            if instructions_of is None:
                instructions = _word_entries(packets[index].instructions)
            else:
                instructions = instructions_of(index)
            if instructions:  # a third of the packets walked have no word that writes, accesses memory or calls
                if visit is not None and state:
                    visit.append((index, state, instructions))
                state = _transfer(instructions, state)
            index += 1
        if visit:  # the last visit counts: a later visit starts from a newer state
            visits[number] = visit  # type: ignore[index]
        elif visits:
            visits.pop(number, None)
        return state

    rounds = 0
    while worklist and rounds < 50 * count + 100:
        rounds += 1
        number = worklist.pop()
        queued[number] = False
        if not in_region[number]:
            entry_states[number] = empty
            if exit_states[number] is not None:
                continue  # still empty: nothing changed
            state = empty
        else:
            sources = predecessors[number]
            if len(sources) == 1:  # most blocks: the one predecessor's state as it is (states are never changed)
                state = exit_states[sources[0]] or empty
            else:
                incoming = [exit_states[p] for p in sources if exit_states[p] is not None]
                # _join inlined where it is empty (no visited predecessor, or one brings nothing): most joins are
                state = _join(incoming) if incoming and all(incoming) else empty
            entry_states[number] = state
            if state or seeded[number]:
                state = walk(number, state)
            elif visits:
                visits.pop(number, None)  # what a walk from nothing would record: no state before any packet
            if exit_states[number] is not None and exit_states[number] == state:
                continue
        exit_states[number] = state
        for successor in successors[number]:
            if not queued[successor]:
                queued[successor] = True
                worklist.append(successor)
    if visits is not None:
        for number in range(count):
            if entry_states[number] is None and in_region[number]:
                walk(number, empty)  # never visited (the round limit): a seed in it still derives
    return {starts[number]: state for number, state in enumerate(entry_states) if state is not None}


def _blocks_reached_from_seeds(cfg: FunctionCfg, seed_list: list[int], successors: list[list[int]]) -> list[bool]:
    """Blocks holding a seed packet, and every block they reach: the only ones with a derived register."""
    firsts = cfg.block_first_packets
    reached = [False] * len(firsts)
    stack = sorted({bisect_right(firsts, index) - 1 for index in seed_list})
    for number in stack:
        reached[number] = True
    while stack:
        for successor in successors[stack.pop()]:
            if not reached[successor]:
                reached[successor] = True
                stack.append(successor)
    return reached


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


def _transfer(instructions: Sequence[WordEntry], state: dict[str, Derived]) -> dict[str, Derived]:
    """A packet's instructions (at least those that write, access memory or call). Packet semantics: every
    instruction reads the registers as they were before the packet."""
    if not instructions:
        return state
    # register -> its value after the packet (None: derives nothing). An untracked register made untracked is left
    # out, unless an earlier instruction of the packet gave it a value: that changes nothing, and most writes are such.
    updates: dict[str, Derived | None] = {}
    for _, fields in instructions:
        for write in fields.get("writes", ()):
            source, dest = write.source, write.dest
            if source is not None and (source in state or source in STACK_BASES):
                updates[dest] = _written_value(write, state)
            elif dest in state or dest in updates:
                # a write from no register (a constant, a load) or from an untracked one derives nothing
                updates[dest] = None
        memory = fields.get("memory")
        if memory is not None:
            if memory.post_increment and memory.base in state:
                updates[memory.base] = (state[memory.base][0], None)
            if not memory.is_store and memory.register:
                for register in _registers(memory.register):
                    if register in state or register in updates:
                        updates[register] = None
        branch = fields.get("branch")
        if branch is not None and (branch == "call" or branch == "callr"):
            for register in state:
                if register in CALLER_SAVED:
                    updates.setdefault(register, None)
    if not updates:
        return state
    result = None  # a copy of `state` once something changes: most packets change nothing that is tracked
    for register, value in updates.items():
        # keys are single registers (writes name each half of a pair, loads were split above); r29/r30 never count
        if value is None:
            if register in state:  # never r29/r30: they are never tracked
                if result is None:
                    result = dict(state)
                del result[register]
        elif register not in STACK_BASES:
            if result is None:
                result = dict(state)
            result[register] = value
    return state if result is None else result


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


@functools.lru_cache(maxsize=512)
def _registers(name: str) -> tuple[str, ...]:
    """ "r5:4" -> ("r5", "r4"); "r3" -> ("r3",)."""
    if ":" in name and name.startswith("r"):
        high, low = name[1:].split(":", 1)
        return (f"r{high}", f"r{low}")
    return (name,)


# Per-loop counter slots of _loop_audits.
_VECTOR_STORES, _VECTOR_RELOADS, _SCALAR_STORES, _SCALAR_RELOADS, _ARRAY, _CALLS, _DIVISIONS, _PROMOTIONS = range(8)


# The in-loop spill groups of _spill_groups, with their counter slots (stores, reloads).
_IN_LOOP_SPILLS = (((True, True), _VECTOR_STORES, _VECTOR_RELOADS), ((False, True), _SCALAR_STORES, _SCALAR_RELOADS))


def _loop_audits(
    cfg: FunctionCfg,
    spills: Mapping[tuple[bool, bool], Sequence[StackAccess]],
    arrays: Iterable[StackAccess],
    calls: list[CallSite],
    doubles: list[DoubleOperation],
) -> tuple[LoopAudit, ...]:
    """Counts per loop, each loop including its nested loops (the function total counts innermost loops only).
    `spills` and `arrays`: the function's spill accesses by kind and its in-loop accesses that are no spill
    (_spill_groups), so only the in-loop accesses are read here."""
    if not cfg.loops:
        return ()
    # each loop's own counts and slots first (its innermost accesses), then added to its enclosing loops
    counts = {loop.header: [0] * 8 for loop in cfg.loops}
    stored: dict[int, set] = {loop.header: set() for loop in cfg.loops}
    reloaded: dict[int, set] = {loop.header: set() for loop in cfg.loops}
    for access in arrays:
        counts[access.loop][_ARRAY] += 1
    for kind, stores, reloads in _IN_LOOP_SPILLS:
        for access in spills.get(kind, ()):
            loop = access.loop  # an in-loop group's: never None
            if access.is_store:
                counts[loop][stores] += 1
                stored[loop].add(access.slot)
            else:
                counts[loop][reloads] += 1
                reloaded[loop].add(access.slot)
    for call in calls:
        if call.loop is not None:
            count = counts[call.loop]
            count[_CALLS] += 1
            count[_DIVISIONS] += call.is_division
            count[_PROMOTIONS] += call.is_promotion
    for operation in doubles:
        if operation.loop is not None:
            counts[operation.loop][_PROMOTIONS] += 1
    for loop in reversed(cfg.loops):  # outer loops come first: a loop's nested loops are added into it before it
        if loop.parent is not None:
            counts[loop.parent] = list(map(add, counts[loop.parent], counts[loop.header]))
            stored[loop.parent] |= stored[loop.header]
            reloaded[loop.parent] |= reloaded[loop.header]
    return tuple(
        frozen_instance(
            LoopAudit,
            {
                "header": loop.header,
                "kind": loop.kind,
                "depth": loop.depth,
                "parent": loop.parent,
                "low": loop.low,
                "high": loop.high,
                "vector_spill_stores": counts[loop.header][_VECTOR_STORES],
                "vector_reloads": counts[loop.header][_VECTOR_RELOADS],
                "scalar_spill_stores": counts[loop.header][_SCALAR_STORES],
                "scalar_reloads": counts[loop.header][_SCALAR_RELOADS],
                "array_accesses": counts[loop.header][_ARRAY],
                "round_trips": len(stored[loop.header] & reloaded[loop.header]),
                "calls": counts[loop.header][_CALLS],
                "divisions": counts[loop.header][_DIVISIONS],
                "promotions": counts[loop.header][_PROMOTIONS],
            },
        )
        for loop in cfg.loops
    )
