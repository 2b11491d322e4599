"""Decode Hexagon packets from raw code bytes, in process, without an SDK.

What the binary audit needs is decoded precisely: parse bits and packet ends, :endloop0/1, duplex sub-instructions,
constant extenders, loop set-up, jumps and calls with targets, scalar and HVX memory accesses, the general registers
every instruction writes, float->double conversions and double arithmetic. Every other word keeps its class, its
register writes and a ".word 0x...." text. Bit layouts were probed with llvm-mc-22 (assembler and disassembler);
tests/test_decode_oracle.py holds the decoder to llvm-objdump-22 on whole libraries and to llvm-mc-22 on random words.
Dispatch is on the 4-bit ICLASS, then plain bit tests: no regexes.

Conventions the audit relies on:
- Branch targets are absolute (packet address + offset, extenders applied); "return" is jumpr r31 or dealloc_return.
- MemoryAccess.offset is where the access lands relative to `base` (0 for post-increment forms, whose step is
  `increment`); vector offsets are in bytes. Absolute and absolute-set forms use base "abs", gp-relative ones "gp".
  allocframe/deallocframe carry no MemoryAccess (they save/restore the frame), only their register writes.
- `writes` lists every general register written (pairs as two writes), "other" unless it is a copy or an add of an
  immediate; calls list none (the callee's clobbers are the audit's business). Duplex halves keep their own class
  (LD, ST, ALU32, J) with is_duplex_half=True.
- float_to_double is convert_sf2df; double_arith is every other double-precision operation.

Speed: a packet's decoding depends only on its bytes (and on its address only through PC-relative targets), so a packet
seen before is rebuilt from a template, a word seen before is copied from its field dict, and all copies of one word
share that dict (Instruction.address is a slot); MemoryAccess/RegisterWrite objects are shared. Templates live in a
DecodeCache that outlives the call: the builds of a multi-library run share most packets. bench/bench_decode.py
measures it; tests/test_decode.py holds every templated packet to a cold decode.

A caller that needs only some packets (the binary audit) calls scan_code instead: the packets are split and every
word gets summary flags (WORD_*: branch, loop set-up, HVX, memory, SP/FP-based access, ...) from its bit fields, a
whole section at a time (byte-column tables and big-integer AND/OR; a duplex from its halves' opcode bits; only a few
rare forms are decoded), and a packet is decoded, exactly as decode_packets would, only when asked for (CodeScan.packet,
PacketRange). The words the audit reads are built one by one (PacketRange.instructions_with/packet_reader),
the most common ones by light decoders that leave the text to be rendered when read (_LIGHT_DECODERS, _LazyText).
tests/test_decode_scan.py holds the flags, the light decodings and the opened packets to the full decoder.
"""

from __future__ import annotations

import gc
import re
import struct
import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, MutableSequence, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress

from hexlint.hexagon._tables import DEST_EXCEPTIONS, DEST_FIELDS


@dataclass(frozen=True)
class MemoryAccess:
    """A load or store: where it lands, what it moves."""

    base: str  # "r29" (sp), "r30" (fp), "r0".., or "gp"/"abs" for gp-relative/absolute
    offset: int | None  # byte offset of the access from base (already scaled), None when register-indexed
    is_store: bool
    is_vector: bool  # HVX vmem access (128 bytes)
    size: int  # bytes accessed: 1, 2, 4, 8, 128
    post_increment: bool = False
    register: str | None = None  # the data register stored/loaded: "r3", "r5:4", "v7"
    increment: int | None = None  # post-increment amount in bytes (None for modifier-register increments)


@dataclass(frozen=True)
class RegisterWrite:
    """What the audit needs to follow stack-derived addresses."""

    dest: str  # "r2"
    op: str  # "copy" (rD = rS), "add_imm" (rD = add(rS,#imm)), "other" (anything else, immediate set when a constant)
    source: str | None = None  # "r29"; for "other", the register the result is derived from when there is one:
    # add(rS,rT), sub(rT,rS), addasl(rT,rS,#u3) and and(rS,#imm) keep a pointer derived from it (offset unknown)
    immediate: int | None = None
    index: str | None = None  # the other register of add/sub/addasl: a pointer may come from either operand


@dataclass(frozen=True)
class LoopSetup:
    """A loop0/loop1/spNloop0 set-up: which hardware loop, where it starts, its trip count."""

    loop: int  # 0 or 1
    start: int  # address of the loop's first packet
    count_imm: int | None
    count_reg: str | None
    pipelined_stages: int = 0  # sp1loop0..sp3loop0 -> 1..3


@dataclass(frozen=True)
class Instruction:
    """One decoded instruction (a duplex half is one); fields at their defaults stay out of the field dict."""

    # `address` lives in a slot and every other field in __dict__, so all the occurrences of one decoded word share a
    # single (never mutated) field dict: a copy of an instruction at a new address costs no dict (see _at)
    __slots__ = ("__dict__", "address")

    address: int  # address of the 32-bit word (both halves of a duplex share it)
    word: int
    iclass: str  # "ALU32", "CR", "J", "LD", "ST", "XTYPE", "SYSTEM", "HVX", "EXT", "UNKNOWN" ("DUPLEX" is never
    # produced: a duplex half has its own class and is_duplex_half=True)
    mnemonic: str  # best effort short name: "memw", "vmem", "jump", "call", "loop0", "dfadd", "add", ...
    text: str  # hexlint's own rendering, close to LLVM's syntax where decoded, else ".word 0x...."
    is_duplex_half: bool = False
    branch: str | None = None  # "jump", "call", "jumpr", "callr", "return", None
    target: int | None = None  # resolved absolute target of direct jumps/calls (constant extenders applied)
    conditional: bool = False
    loop_setup: LoopSetup | None = None
    memory: MemoryAccess | None = None
    writes: tuple[RegisterWrite, ...] = ()
    float_to_double: bool = False  # convert_sf2df
    double_arith: bool = False  # every other double-precision op: dfadd/dfsub/dfmpy*/dfcmp/convert_df2*/convert_*2df
    is_hvx: bool = False  # any HVX (vector) instruction, memory or compute


@dataclass(frozen=True)
class Packet:
    """One packet: its instructions in word order and the :endloop markers of its parse bits."""

    address: int
    size: int  # bytes
    instructions: tuple[Instruction, ...]
    endloop: frozenset[int]  # {0}, {1}, {0, 1} from the parse bits of the first two words


class _LazyText:
    """Instruction.text of an instruction built by a light decoder (_LIGHT_DECODERS: every field but the text, which
    only --disasm, the tests and a few audit findings read): rendered by the full decoder on first read, then kept in
    the instruction's field dict (a PC-relative word's, whose dict may be a template, renders it at each read).
    Instructions built with a text keep it in that dict, which this never overrides."""

    def __get__(self, instance: Instruction | None, owner: type | None = None) -> object:
        if instance is None:
            return self
        fields = instance.__dict__
        text = _LIGHT_TEXTS.get(fields["iclass"], _render_text)(instance)  # type: ignore[call-overload]
        if "_packet" not in fields:  # a PC-relative word's dict may be its template too (_light_instruction)
            fields["text"] = text
        return text


Instruction.text = _LazyText()  # type: ignore[assignment]


# ---------------------------------------------------------------------------------------------------------------------
# fast construction: a frozen record's __init__ pays one object.__setattr__ per field, which made object creation
# most of the decoding time. These build the very same frozen objects by installing an instance __dict__ that holds
# the required fields and only the optional ones that differ from their defaults: a record keeps each plain
# default as a class attribute, so attribute access, ==, hash and repr see every field (tests/test_decode.py checks).
# An Instruction's __dict__ holds every field but `address` (a slot) and is shared by every copy of the same word.

_new = object.__new__
_set = object.__setattr__
_set_address = Instruction.__dict__["address"].__set__  # the slot's own setter: the frozen __setattr__ refuses


def _instruction(address: int, word: int, iclass: str, mnemonic: str, text: str, **optional: object) -> Instruction:
    """Instruction(...) with the same arguments (optional fields by keyword only)."""
    optional["word"] = word
    optional["iclass"] = iclass
    optional["mnemonic"] = mnemonic
    optional["text"] = text
    instance = _new(Instruction)
    _set(instance, "__dict__", optional)
    _set_address(instance, address)
    return instance


def _at(fields: dict[str, object], address: int) -> Instruction:
    """The instruction whose fields (all but the address) are `fields`, at `address`; `fields` is shared, not copied."""
    instance = _new(Instruction)
    _set(instance, "__dict__", fields)
    _set_address(instance, address)
    return instance


instruction_at = _at  # public: the instruction of a PacketRange.fields_with entry


# MemoryAccess and RegisterWrite are immutable and few distinct ones exist: each is built once and shared, since an
# allocation costs more than the dict lookup that finds it again (bounded, for a long-running process)
_INTERNED_LIMIT = 1 << 16
_MEMORY_ACCESSES: dict[tuple[object, ...], MemoryAccess] = {}
_REGISTER_WRITES: dict[tuple[object, ...], RegisterWrite] = {}


def _memory(
    base: str,
    offset: int | None,
    is_store: bool,
    is_vector: bool,
    size: int,
    post_increment: bool = False,
    register: str | None = None,
    increment: int | None = None,
) -> MemoryAccess:
    """MemoryAccess(...); an extended unsigned offset from a register wraps like the address: ##0xfffffff8 is -8."""
    if offset is not None and offset > 0x7FFFFFFF and base != "abs":
        offset -= 1 << 32
    key = (base, offset, is_store, is_vector, size, post_increment, register, increment)
    instance = _MEMORY_ACCESSES.get(key)
    if instance is None:
        instance = _new(MemoryAccess)
        _set(
            instance,
            "__dict__",
            {
                "base": base,
                "offset": offset,
                "is_store": is_store,
                "is_vector": is_vector,
                "size": size,
                "post_increment": post_increment,
                "register": register,
                "increment": increment,
            },
        )
        if len(_MEMORY_ACCESSES) < _INTERNED_LIMIT:
            _MEMORY_ACCESSES[key] = instance
    return instance


def _write(
    dest: str, op: str, source: str | None = None, immediate: int | None = None, index: str | None = None
) -> RegisterWrite:
    key = (dest, op, source, immediate, index)
    instance = _REGISTER_WRITES.get(key)
    if instance is None:
        instance = _new(RegisterWrite)
        fields = {"dest": dest, "op": op, "source": source, "immediate": immediate}
        if index is not None:
            fields["index"] = index
        _set(instance, "__dict__", fields)
        if len(_REGISTER_WRITES) < _INTERNED_LIMIT:
            _REGISTER_WRITES[key] = instance
    return instance


# ---------------------------------------------------------------------------------------------------------------------
# small helpers

_R = tuple(f"r{n}" for n in range(32))
_PAIR = tuple(f"r{n | 1}:{n & ~1}" for n in range(32))
_V = tuple(f"v{n}" for n in range(32))
# sub-instructions name 16 registers with 4 bits, and 8 pairs with 3 bits
_SUB_R = (0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23)
_SUB_PAIR = (0, 2, 4, 6, 16, 18, 20, 22)
# writes are immutable: one shared object per register instead of one per decoded instruction
_OTHER_WRITE = tuple((_write(_R[n], "other"),) for n in range(32))
_OTHER_PAIR_WRITE = tuple((_write(_R[n | 1], "other"), _write(_R[n & ~1], "other")) for n in range(32))
_OTHER_WRITES_BY_NAME = {**dict(zip(_R, _OTHER_WRITE, strict=True)), **dict(zip(_PAIR, _OTHER_PAIR_WRITE, strict=True))}
_NO_ENDLOOP: frozenset[int] = frozenset()
_ENDLOOPS = (frozenset({0}), frozenset({1}), frozenset({0, 1}))


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def _imm(raw: int, bits: int, scale: int, signed: bool, ext: int | None) -> int:
    """An encoded immediate; with a constant extender the field's low 6 bits complete the 32-bit value, unscaled."""
    if ext is not None:
        value = ext | (raw & 0x3F)
        return _signed(value, 32) if signed else value
    return (_signed(raw, bits) if signed else raw) * scale


def _hash(value: int, ext: int | None) -> str:
    return f"##{value}" if ext is not None else f"#{value}"


def _word_text(word: int) -> str:
    return f".word 0x{word:08x}"


def _undecoded(word: int, address: int, iclass: str) -> Instruction:
    """A CR/ALU32/XTYPE word decoded to its class and the registers it writes (the most common kind of word)."""
    writes = _generic_writes(word)
    if writes:
        fields = {"word": word, "iclass": iclass, "mnemonic": "", "text": f".word 0x{word:08x}", "writes": writes}
        return _at(fields, address)
    return _at({"word": word, "iclass": iclass, "mnemonic": "", "text": f".word 0x{word:08x}"}, address)


def _undecoded_hvx(word: int, address: int) -> Instruction:
    """An HVX compute word: its class is what the audit needs (vector registers are not tracked)."""
    return _at({"word": word, "iclass": "HVX", "mnemonic": "", "text": f".word 0x{word:08x}", "is_hvx": True}, address)


def _unknown(word: int, address: int, iclass: str) -> Instruction:
    return _instruction(address, word, iclass, "", _word_text(word))


def _cond_text(pred: int, sense_false: bool, new: bool) -> str:
    return f"if ({'!' if sense_false else ''}p{pred}{'.new' if new else ''}) "


# ---------------------------------------------------------------------------------------------------------------------
# ICLASS decoders: (word, address, packet address, extender or None) -> Instruction

# load element types by the 4-bit type field at bits 24:21 (L2 "io" and post-increment families); 3-bit type
# fields elsewhere index the same table from 8 (000 memb, 001 memub, 010 memh, 011 memuh, 100 memw, 110 memd)
_LOAD_TYPES: dict[int, tuple[str, int, bool]] = {  # mnemonic, bytes accessed, destination is a register pair
    8: ("memb", 1, False),
    9: ("memub", 1, False),
    10: ("memh", 2, False),
    11: ("memuh", 2, False),
    12: ("memw", 4, False),
    14: ("memd", 8, True),
    1: ("membh", 2, False),
    3: ("memubh", 2, False),
    5: ("memubh", 4, True),
    7: ("membh", 4, True),
    2: ("memh_fifo", 2, True),
    4: ("memb_fifo", 1, True),
}
# store element types by the 3-bit type field at bits 23:21 (3: the high half of rT, 5: new-value, sub-typed)
_STORE_TYPES: dict[int, tuple[str, int]] = {
    0: ("memb", 1),
    2: ("memh", 2),
    3: ("memh", 2),
    4: ("memw", 4),
    6: ("memd", 8),
}
_NEW_STORE_TYPES = (("memb", 1), ("memh", 2), ("memw", 4), None)
_MEMOP_TYPES = (("memb", 1), ("memh", 2), ("memw", 4), None)
_MEMOPS = ("+=", "-=", "&=", "|=")
_MEMOPS_IMM = ("+=", "-=", "= clrbit", "= setbit")


def _writes_other(dest: str) -> tuple[RegisterWrite, ...]:
    """("r5" or "r5:4") -> the shared, immutable "other" writes of those registers."""
    return _OTHER_WRITES_BY_NAME[dest]


def _post_write(base: str, inc: int | None) -> RegisterWrite:
    return _write(base, "add_imm", base, inc) if inc is not None else _write(base, "other")


def _addressing(base: str, offset: int | None, ext: int | None, post: bool, inc: int | None, index: str) -> str:
    if post:  # `index` is the modifier (m0, m1:brev, I:circ(m0)) or the :circ(mU) after an immediate step
        return f"{base}++#{inc}{index}" if inc is not None else f"{base}++{index}"
    if offset is None:
        return f"{base}+{index}"
    if base == "abs":
        return _hash(offset, ext)
    return f"{base}+{_hash(offset, ext)}"


def _load_access(
    word: int,
    address: int,
    kind: int,
    dest: int,
    base: str,
    offset: int | None,
    ext: int | None,
    cond: str = "",
    post: bool = False,
    inc: int | None = None,
    index: str = "",
    base_write: RegisterWrite | None = None,
    address_text: str | None = None,
) -> Instruction:
    spec = _LOAD_TYPES.get(kind)
    if spec is None:
        return _unknown(word, address, "LD")
    mnemonic, size, pair = spec
    reg = _PAIR[dest] if pair else _R[dest]
    writes = _writes_other(reg)
    if post:
        writes = (*writes, _post_write(base, inc))
    elif base_write is not None:
        writes = (*writes, base_write)
    operand = address_text or _addressing(base, offset, ext, post, inc, index)
    text = f"{cond}{reg} = {mnemonic}({operand})"
    access = _memory(base, offset, False, False, size, post, reg, inc)
    return _instruction(address, word, "LD", mnemonic, text, conditional=bool(cond), memory=access, writes=writes)


def _store_access(
    word: int,
    address: int,
    kind: int,
    data: int,
    new_low: bool,
    base: str,
    offset: int | None,
    ext: int | None,
    cond: str = "",
    post: bool = False,
    inc: int | None = None,
    index: str = "",
    base_write: RegisterWrite | None = None,
    address_text: str | None = None,
) -> Instruction:
    """A store of rT (or rTT, rT.h, rN.new); `new_low` says the new-value sub-type sits at bits 4:3 (not 12:11)."""
    reg: str | None
    if kind == 5:
        spec = _NEW_STORE_TYPES[(word >> 3) & 3 if new_low else (word >> 11) & 3]
        if spec is None:
            return _unknown(word, address, "ST")
        mnemonic, size = spec
        reg = None  # the packet loop names the producer's register (_named_new_value)
        shown = f"{_NEW_VALUE}{(data >> 1) & 3}>.new"
    else:
        spec = _STORE_TYPES.get(kind)
        if spec is None:
            return _unknown(word, address, "ST")
        mnemonic, size = spec
        reg = _PAIR[data] if size == 8 else _R[data]
        shown = f"{reg}.h" if kind == 3 else reg
    writes: tuple[RegisterWrite, ...] = ()
    if post:
        writes = (_post_write(base, inc),)
    elif base_write is not None:
        writes = (base_write,)
    operand = address_text or _addressing(base, offset, ext, post, inc, index)
    text = f"{cond}{mnemonic}({operand}) = {shown}"
    access = _memory(base, offset, True, False, size, post, reg, inc)
    return _instruction(address, word, "ST", mnemonic, text, conditional=bool(cond), memory=access, writes=writes)


def _frame_writes() -> tuple[RegisterWrite, ...]:
    return (_write("r29", "other"), _write("r30", "other"), _write("r31", "other"))


def _decode_ld(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    """ICLASS 1001: loads (base + immediate, post-increment, circular, bit-reversed, absolute-set), deallocframe."""
    kind = (word >> 21) & 15
    base = _R[(word >> 16) & 31]
    dest = word & 31
    mode = (word >> 25) & 3
    if not word & 0x08000000:
        if kind == 0 and mode == 0:  # [rDD = ]deallocframe(rS)[:raw]
            if dest == 30 and base == "r30":
                return _instruction(address, word, "LD", "deallocframe", "deallocframe", writes=_frame_writes())
            text = f"{_PAIR[dest]} = deallocframe({base}):raw"
            writes = (*_OTHER_PAIR_WRITE[dest], _write("r29", "other"))
            return _instruction(address, word, "LD", "deallocframe", text, writes=writes)
        if kind == 0 and mode == 3:
            return _dealloc_return(word, address)
        if word & 0x0FE020E0 == 0x02002000:  # rD = memw_phys(rS,rT): a physical address, not a data access
            text = f"{_R[dest]} = memw_phys({base},{_R[(word >> 8) & 31]})"
            return _instruction(address, word, "LD", "memw_phys", text, writes=_OTHER_WRITE[dest])
        if word & 0x0FE000E0 == 0x02000000:  # rD[D] = memw/memd_locked(rS), memw/memd_aq(rS)
            size = 8 if word & 0x1000 else 4
            mnemonic = ("memd" if size == 8 else "memw") + ("_aq" if word & 0x800 else "_locked")
            reg = _PAIR[dest] if size == 8 else _R[dest]
            access = _memory(base, 0, False, False, size, register=reg)
            writes = _OTHER_PAIR_WRITE[dest] if size == 8 else _OTHER_WRITE[dest]
            return _instruction(
                address, word, "LD", mnemonic, f"{reg} = {mnemonic}({base})", memory=access, writes=writes
            )
        if word & 0x0FE000E0 == 0x02000020:  # rD = vextract(vU,rS): reads an HVX register
            text = f"{_R[dest]} = vextract({_V[(word >> 8) & 31]},{base})"
            return _instruction(
                address, word, "HVX", "vextract", text, writes=(_write(_R[dest], "other"),), is_hvx=True
            )
        spec = _LOAD_TYPES.get(kind)
        if spec is None:
            return _unknown(word, address, "LD")
        mnemonic, size, pair = spec
        raw = mode << 9 | (word >> 5) & 0x1FF
        if ext is None:  # rD = memX(rS+#s11:n), the most common load: _load_access inlined
            offset = (raw - 2048 if raw & 0x400 else raw) * size
            reg = _PAIR[dest] if pair else _R[dest]
            access = _memory(base, offset, False, False, size, False, reg, None)
            text = f"{reg} = {mnemonic}({base}+#{offset})"
            writes = _OTHER_WRITES_BY_NAME[reg]
            fields = {
                "word": word,
                "iclass": "LD",
                "mnemonic": mnemonic,
                "text": text,
                "memory": access,
                "writes": writes,
            }
            return _at(fields, address)
        return _load_access(word, address, kind, dest, base, _imm(raw, 11, size, True, ext), ext)
    if kind not in _LOAD_TYPES:
        return _unknown(word, address, "LD")
    size = _LOAD_TYPES[kind][1]
    modifier = f"m{(word >> 13) & 1}"
    if mode == 0:  # circular: rD = memX(rX++#s4:n:circ(mU)) / memX(rX++I:circ(mU))
        inc = _signed((word >> 5) & 15, 4) * size if not word & 0x200 else None
        circular = f":circ({modifier})" if inc is not None else f"I:circ({modifier})"
        return _load_access(word, address, kind, dest, base, 0, ext, post=True, inc=inc, index=circular)
    if mode == 1:
        if word & 0x1000:  # rD = memX(rE=##U6): absolute-set
            value = _imm(((word >> 8) & 15) << 2 | (word >> 5) & 3, 6, 1, False, ext)
            write = _write(base, "other", immediate=value)
            shown = f"{base}={_hash(value, ext)}"
            return _load_access(word, address, kind, dest, "abs", value, ext, base_write=write, address_text=shown)
        cond = _cond_text((word >> 9) & 3, bool(word & 0x800), bool(word & 0x1000)) if word & 0x2000 else ""
        inc = _signed((word >> 5) & 15, 4) * size
        return _load_access(word, address, kind, dest, base, 0, ext, cond, post=True, inc=inc)
    if mode == 2:
        if word & 0x1000:  # rD = memX(rT<<#u2+##U6)
            shift = ((word >> 13) & 1) << 1 | (word >> 7) & 1
            value = _imm(((word >> 8) & 15) << 2 | (word >> 5) & 3, 6, 1, False, ext)
            shown = f"{base}<<#{shift}+{_hash(value, ext)}"
            return _load_access(word, address, kind, dest, base, None, ext, address_text=shown)
        return _load_access(word, address, kind, dest, base, 0, ext, post=True, index=modifier)
    if word & 0x80:  # if ([!]pT[.new]) rD = memX(##U6)
        value = _imm(((word >> 16) & 31) << 1 | (word >> 8) & 1, 6, 1, False, ext)
        cond = _cond_text((word >> 9) & 3, bool(word & 0x800), bool(word & 0x1000))
        return _load_access(word, address, kind, dest, "abs", value, ext, cond)
    return _load_access(word, address, kind, dest, base, 0, ext, post=True, index=f"{modifier}:brev")


def _dealloc_return(word: int, address: int) -> Instruction:
    """[if ([!]pV[.new])] dealloc_return, or its raw form rDD = dealloc_return(rS):raw with other registers."""
    cond_bits = (word >> 11) & 7  # 000 always, else sense at bit 13 and .new at bit 11
    prefix = _cond_text((word >> 8) & 3, bool(word & 0x2000), bool(word & 0x800)) if cond_bits else ""
    dest, source = word & 31, (word >> 16) & 31
    if dest == 30 and source == 30:
        text, writes = f"{prefix}dealloc_return", _frame_writes()
    else:
        text = f"{prefix}{_PAIR[dest]} = dealloc_return({_R[source]}):raw"
        writes = (*_OTHER_PAIR_WRITE[dest], _write("r29", "other"))
    return _instruction(
        address, word, "LD", "dealloc_return", text, branch="return", conditional=bool(cond_bits), writes=writes
    )


def _decode_st(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    """ICLASS 1010: stores (base + immediate, post-increment, circular, bit-reversed, absolute-set), allocframe."""
    base = _R[(word >> 16) & 31]
    kind = (word >> 21) & 7
    data = (word >> 8) & 31
    mode = (word >> 25) & 3
    if not word & 0x08000000:
        if word & 0x0FE03800 == 0x00800000:  # allocframe(#u11:3), or allocframe(rX,#u11:3):raw
            size = (word & 0x7FF) * 8
            frame = _R[(word >> 16) & 31]
            writes = (_write(frame, "add_imm", frame, -8 - size), _write("r30", "add_imm", frame, -8))
            text = f"allocframe(#{size})" if frame == "r29" else f"allocframe({frame},#{size}):raw"
            return _instruction(address, word, "ST", "allocframe", text, writes=writes)
        if word & 0x01A00000 == 0x00A00000 and (word >> 2) & 7 in (0, 2):
            # memw/memd_locked(rS,pD) = rT[T]; memw/memd_rl(rS):at/:st = rT[T] (release stores)
            size = 8 if word & 0x00400000 else 4
            reg = _PAIR[data] if size == 8 else _R[data]
            width = "memd" if size == 8 else "memw"
            if word & 0x1C:
                mnemonic, text = f"{width}_rl", f"{width}_rl({base}):{'st' if word & 0x20 else 'at'} = {reg}"
            else:
                mnemonic, text = f"{width}_locked", f"{width}_locked({base},p{word & 3}) = {reg}"
            access = _memory(base, 0, True, False, size, register=reg)
            return _instruction(address, word, "ST", mnemonic, text, memory=access)
        if not word & 0x01000000:
            return _unknown(word, address, "SYSTEM")  # cache and barrier operations (dczeroa, dcfetch, ...)
        raw = mode << 9 | ((word >> 13) & 1) << 8 | (word & 0xFF)
        spec = _STORE_TYPES.get(kind)
        if ext is None and spec is not None:  # memX(rS+#s11:n) = rT, the most common store: _store_access inlined
            mnemonic, size = spec
            offset = (raw - 2048 if raw & 0x400 else raw) * size
            reg = _PAIR[data] if size == 8 else _R[data]
            access = _memory(base, offset, True, False, size, False, reg, None)
            text = f"{mnemonic}({base}+#{offset}) = {reg}.h" if kind == 3 else f"{mnemonic}({base}+#{offset}) = {reg}"
            return _at({"word": word, "iclass": "ST", "mnemonic": mnemonic, "text": text, "memory": access}, address)
        size = _store_size(word, kind, False)
        return _store_access(word, address, kind, data, False, base, _imm(raw, 11, size, True, ext), ext)
    if not word & 0x01000000:
        return _decode_system_a(word, address)
    size = _store_size(word, kind, False)
    modifier = f"m{(word >> 13) & 1}"
    if mode == 0:  # circular
        inc = _signed((word >> 3) & 15, 4) * size if not word & 2 else None
        circular = f":circ({modifier})" if inc is not None else f"I:circ({modifier})"
        return _store_access(word, address, kind, data, False, base, 0, ext, post=True, inc=inc, index=circular)
    if mode == 1:
        if word & 0x80:  # memX(rE=##U6) = rT: absolute-set
            value = _imm(word & 63, 6, 1, False, ext)
            write = _write(base, "other", immediate=value)
            shown = f"{base}={_hash(value, ext)}"
            return _store_access(
                word, address, kind, data, False, "abs", value, ext, base_write=write, address_text=shown
            )
        cond = _cond_text(word & 3, bool(word & 4), bool(word & 0x80)) if word & 0x2000 else ""
        inc = _signed((word >> 3) & 15, 4) * size
        return _store_access(word, address, kind, data, False, base, 0, ext, cond, post=True, inc=inc)
    if mode == 2:
        if word & 0x80:  # memX(rU<<#u2+##U6) = rT
            shift = ((word >> 13) & 1) << 1 | (word >> 6) & 1
            shown = f"{base}<<#{shift}+{_hash(_imm(word & 63, 6, 1, False, ext), ext)}"
            return _store_access(word, address, kind, data, False, base, None, ext, address_text=shown)
        return _store_access(word, address, kind, data, False, base, 0, ext, post=True, index=modifier)
    if word & 0x80:  # if ([!]pV[.new]) memX(##U6) = rT
        value = _imm(((word >> 16) & 3) << 4 | (word >> 3) & 15, 6, 1, False, ext)
        cond = _cond_text(word & 3, bool(word & 4), bool(word & 0x2000))
        return _store_access(word, address, kind, data, False, "abs", value, ext, cond)
    return _store_access(word, address, kind, data, False, base, 0, ext, post=True, index=f"{modifier}:brev")


_DMA_RESULTS = {1: "dmwait", 2: "dmpoll", 3: "dmpause"}


def _decode_system_a(word: int, address: int) -> Instruction:
    """ICLASS 1010 with bits 27/24 = 1/0: barriers, DMA engine control; rD = dmwait/dmpoll/dmpause write a register."""
    mnemonic = _DMA_RESULTS.get((word >> 5) & 7) if word & 0x0FE00000 == 0x08000000 else None
    if mnemonic is None:
        return _unknown(word, address, "SYSTEM")
    dest = word & 31
    return _instruction(address, word, "SYSTEM", mnemonic, f"{_R[dest]} = {mnemonic}", writes=_OTHER_WRITE[dest])


def _store_size(word: int, kind: int, new_low: bool) -> int:
    if kind == 5:
        spec = _NEW_STORE_TYPES[(word >> 3) & 3 if new_low else (word >> 11) & 3]
        return spec[1] if spec else 1
    spec = _STORE_TYPES.get(kind)
    return spec[1] if spec else 1


def _decode_ldst3(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    """ICLASS 0011: register-indexed loads/stores (plain and predicated), store-immediate, memory operations."""
    group = (word >> 24) & 15
    base = _R[(word >> 16) & 31]
    index = f"{_R[(word >> 8) & 31]}<<#{((word >> 13) & 1) << 1 | (word >> 7) & 1}"
    kind = (word >> 21) & 7
    if group < 8:  # if ([!]pV[.new]) rD = memX(rS+rT<<#u2) / memX(rS+rU<<#u2) = rT
        cond = _cond_text((word >> 5) & 3, bool(word & 0x01000000), bool(word & 0x02000000))
        if group & 4:
            return _store_access(word, address, kind, word & 31, True, base, None, ext, cond, index=index)
        return _load_access(word, address, 8 | kind, word & 31, base, None, ext, cond, index=index)
    if group == 0b1010:
        return _load_access(word, address, 8 | kind, word & 31, base, None, ext, index=index)
    if group == 0b1011:
        return _store_access(word, address, kind, word & 31, True, base, None, ext, index=index)
    if group < 0b1110:  # [if ([!]pV[.new])] memX(rS+#u6:n) = #S8/#S6
        spec = _MEMOP_TYPES[kind & 3]
        if spec is None or (group >= 0b1100 and kind & 4):
            return _unknown(word, address, "ST")
        mnemonic, size = spec
        offset = _imm((word >> 7) & 63, 6, size, False, None)  # the stored value is the extendable operand
        if group >= 0b1100:
            value = _imm(((word >> 13) & 1) << 7 | word & 0x7F, 8, 1, True, ext)
            cond = ""
        else:
            value = _imm(((word >> 13) & 1) << 5 | word & 31, 6, 1, True, ext)
            cond = _cond_text((word >> 5) & 3, bool(word & 0x00800000), bool(word & 0x01000000))
        text = f"{cond}{mnemonic}({base}+#{offset}) = {_hash(value, ext)}"
        access = _memory(base, offset, True, False, size)
        return _instruction(address, word, "ST", mnemonic, text, conditional=bool(cond), memory=access)
    spec = _MEMOP_TYPES[kind & 3]
    if spec is None or kind & 4:
        return _unknown(word, address, "ST")
    mnemonic, size = spec
    offset = _imm((word >> 7) & 63, 6, size, False, ext)
    op = (_MEMOPS if group == 0b1110 else _MEMOPS_IMM)[(word >> 5) & 3]
    operand = _R[word & 31] if group == 0b1110 else f"#{word & 31}"
    location = f"{mnemonic}({base}+{_hash(offset, ext)})"
    text = f"{location} {op} {operand}" if "bit" not in op else f"{location} {op}(#{word & 31})"
    access = _memory(base, offset, True, False, size, register=operand if group == 0b1110 else None)
    return _instruction(address, word, "ST", mnemonic, text, memory=access)


def _decode_ldst4(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    """ICLASS 0100: predicated base + immediate loads/stores, gp-relative (absolute when extended) loads/stores."""
    load = bool(word & 0x01000000)
    kind = (word >> 21) & 7
    if not word & 0x08000000:
        base = _R[(word >> 16) & 31]
        cond_bits = (word >> 11) & 3 if load else word & 3
        cond = _cond_text(cond_bits, bool(word & 0x04000000), bool(word & 0x02000000))
        if load:
            size = _LOAD_TYPES.get(8 | kind, ("", 1, False))[1]
            offset = _imm((word >> 5) & 63, 6, size, False, ext)
            return _load_access(word, address, 8 | kind, word & 31, base, offset, ext, cond)
        size = _store_size(word, kind, False)
        offset = _imm(((word >> 13) & 1) << 5 | (word >> 3) & 31, 6, size, False, ext)
        return _store_access(word, address, kind, (word >> 8) & 31, False, base, offset, ext, cond)
    base = "abs" if ext is not None else "gp"
    if load:
        size = _LOAD_TYPES.get(8 | kind, ("", 1, False))[1]
        raw = ((word >> 25) & 3) << 14 | ((word >> 16) & 31) << 9 | (word >> 5) & 0x1FF
        return _load_access(word, address, 8 | kind, word & 31, base, _imm(raw, 16, size, False, ext), ext)
    size = _store_size(word, kind, False)
    raw = ((word >> 25) & 3) << 14 | ((word >> 16) & 31) << 9 | ((word >> 13) & 1) << 8 | word & 0xFF
    return _store_access(word, address, kind, (word >> 8) & 31, False, base, _imm(raw, 16, size, False, ext), ext)


def _decode_ext(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    value = (((word >> 16) & 0xFFF) << 14 | (word & 0x3FFF)) << 6
    return _instruction(address, word, "EXT", "immext", f"immext(#{value})")


def _decode_j1(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    if word & 0x08000000:
        return _decode_hvx(word, address, packet, ext)
    # compare-and-jump (J4): p0/p1 = cmp.X(rS,...); if (pN.new) jump #r9:2, and rD = #u6/rS; jump
    raw = ((word >> 20) & 3) << 7 | (word >> 1) & 0x7F
    target = (packet + _imm(raw, 9, 4, True, ext)) & 0xFFFFFFFF
    op = (word >> 24) & 15
    if op in (6, 7):  # rD = #u6 ; jump  /  rD = rS ; jump
        dest = _R[_SUB_R[(word >> 16) & 15]]
        if op == 6:
            value = (word >> 8) & 63
            text = f"{dest} = #{value} ; jump 0x{target:x}"
            writes: tuple[RegisterWrite, ...] = (_write(dest, "other", immediate=value),)
        else:
            dest = _R[_SUB_R[(word >> 8) & 15]]
            source = _R[_SUB_R[(word >> 16) & 15]]
            text = f"{dest} = {source} ; jump 0x{target:x}"
            writes = (_write(dest, "copy", source),)
        return _instruction(address, word, "J", "jump", text, branch="jump", target=target, writes=writes)
    hint = ":t" if word & 0x2000 else ":nt"
    negate = "!" if word & 0x00400000 else ""
    source = _R[_SUB_R[(word >> 16) & 15]]
    kind = (word >> 23) & 3
    if op >> 1 == 2:  # 010x: pN = cmp.X(rS,rT)
        pred = (word >> 12) & 1
        compare = f"{_COMPARES[kind]}({source},{_R[_SUB_R[(word >> 8) & 15]]})"
    else:  # 000x/001x: p0/p1 = cmp.X(rS,#U5), or the #-1 / tstbit forms
        pred = (word >> 25) & 1
        if kind == 3:
            compare = _J4_SPECIAL.get((word >> 8) & 3, "cmp.eq(?)").format(source)
        else:
            compare = f"{_COMPARES[kind]}({source},#{(word >> 8) & 31})"
    text = f"p{pred} = {compare}; if ({negate}p{pred}.new) jump{hint} 0x{target:x}"
    return _instruction(address, word, "J", "jump", text, branch="jump", target=target, conditional=True)


_COMPARES = ("cmp.eq", "cmp.gt", "cmp.gtu", "cmp.?")
_J4_SPECIAL = {0: "cmp.eq({},#-1)", 1: "cmp.gt({},#-1)", 3: "tstbit({},#0)"}
# new-value compare jumps by bits 26:22 >> 1 (bit 22 negates); "new" stands for the register produced in the packet
_NEW_VALUE = "<new:"  # "<new:D>": the register written D instructions earlier in the packet, named at packet level
_NV_COMPARES = {
    0: "cmp.eq(new,{t})",
    1: "cmp.gt(new,{t})",
    2: "cmp.gtu(new,{t})",
    3: "cmp.gt({t},new)",
    4: "cmp.gtu({t},new)",
    8: "cmp.eq(new,#{u})",
    9: "cmp.gt(new,#{u})",
    10: "cmp.gtu(new,#{u})",
    11: "tstbit(new,#0)",
    12: "cmp.eq(new,#-1)",
    13: "cmp.gt(new,#-1)",
}


def _decode_j2(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    if word & 0x08000000:
        return _decode_hvx(word, address, packet, ext)
    # new-value compare jumps: if ([!]cmp.X(rS.new,...)) jump #r9:2
    raw = ((word >> 20) & 3) << 7 | (word >> 1) & 0x7F
    target = (packet + _imm(raw, 9, 4, True, ext)) & 0xFFFFFFFF
    producer = f"{_NEW_VALUE}{(word >> 17) & 3}>.new"
    form = _NV_COMPARES.get((word >> 23) & 15, "cmp.?(new)")
    form = form.format(t=_R[(word >> 8) & 31], u=(word >> 8) & 31).replace("new", producer, 1)
    negate = "!" if word & 0x00400000 else ""
    text = f"if ({negate}{form}) jump{':t' if word & 0x2000 else ':nt'} 0x{target:x}"
    return _instruction(address, word, "J", "jump", text, branch="jump", target=target, conditional=True)


def _decode_j5(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    group = (word >> 25) & 7
    if group in (4, 5):  # jump/call #r22:2
        raw = ((word >> 16) & 0x1FF) << 13 | (word >> 1) & 0x1FFF
        target = (packet + _imm(raw, 22, 4, True, ext)) & 0xFFFFFFFF
        kind = "call" if group == 5 else "jump"
        return _instruction(address, word, "J", kind, f"{kind} 0x{target:x}", branch=kind, target=target)
    if group == 6:  # if ([!]pU[.new]) jump/call #r15:2
        raw = ((word >> 22) & 3) << 13 | ((word >> 16) & 0x1F) << 8 | ((word >> 13) & 1) << 7 | (word >> 1) & 0x7F
        target = (packet + _imm(raw, 15, 4, True, ext)) & 0xFFFFFFFF
        kind = "call" if word & 0x01000000 else "jump"
        pred = (word >> 8) & 3
        new = kind == "jump" and bool(word & 0x800)
        hint = (":t" if word & 0x1000 else ":nt") if kind == "jump" else ""
        text = f"{_cond_text(pred, bool(word & 0x00200000), new)}{kind}{hint} 0x{target:x}"
        return _instruction(address, word, "J", kind, text, branch=kind, target=target, conditional=True)
    if group == 0 and (word >> 21) & 15 == 5:  # callr rS
        return _instruction(address, word, "J", "callr", f"callr {_R[(word >> 16) & 31]}", branch="callr")
    if group == 0 and (word >> 21) & 15 in (8, 9):  # if ([!]pU) callr rS
        pred = (word >> 8) & 3
        text = f"{_cond_text(pred, bool(word & 0x00200000), False)}callr {_R[(word >> 16) & 31]}"
        return _instruction(address, word, "J", "callr", text, branch="callr", conditional=True)
    if group == 1 and (word >> 21) & 15 == 4:  # jumpr rS
        source = (word >> 16) & 31
        kind = "return" if source == 31 else "jumpr"
        return _instruction(address, word, "J", "jumpr", f"jumpr {_R[source]}", branch=kind)
    if group == 1 and (word >> 21) & 15 in (10, 11):  # if ([!]pU[.new]) jumpr rS
        source = (word >> 16) & 31
        pred = (word >> 8) & 3
        kind = "return" if source == 31 else "jumpr"
        text = f"{_cond_text(pred, bool(word & 0x00200000), bool(word & 0x800))}jumpr {_R[source]}"
        return _instruction(address, word, "J", "jumpr", text, branch=kind, conditional=True)
    return _unknown(word, address, "J")


_PC_ADD_TOP = 0x6A49  # bits 31:16 of `rD = add(pc,#u6)` (ICLASS CR)


def _decode_cr(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    top = (word >> 21) & 127
    if top in (0b0000000, 0b0000001, 0b0000101, 0b0000110, 0b0000111):  # loopN(#r7:2,rS), spNloop0(#r7:2,rS)
        return _loop(word, address, packet, ext, top, None, _R[(word >> 16) & 31])
    if top in (0b1001000, 0b1001001, 0b1001101, 0b1001110, 0b1001111):  # loopN(#r7:2,#U10), spNloop0(#r7:2,#U10)
        count = ((word >> 16) & 31) << 5 | ((word >> 5) & 7) << 2 | word & 3
        return _loop(word, address, packet, ext, top, count, None)
    if top >> 3 == 0b0001:  # if (rS op #0) jump #r13:2
        raw = ((word >> 21) & 1) << 12 | ((word >> 13) & 1) << 11 | (word >> 1) & 0x7FF
        target = (packet + _imm(raw, 13, 4, True, ext)) & 0xFFFFFFFF
        compare = ("!=", ">=", "==", "<=")[(word >> 22) & 3]
        hint = ":t" if word & 0x1000 else ":nt"
        text = f"if ({_R[(word >> 16) & 31]}{compare}#0) jump{hint} 0x{target:x}"
        return _instruction(address, word, "J", "jump", text, branch="jump", target=target, conditional=True)
    if word >> 16 == _PC_ADD_TOP:  # rD = add(pc,#u6): position-independent addresses
        value = _imm((word >> 7) & 63, 6, 1, False, ext)
        dest = _R[word & 31]
        text = f"{dest} = add(pc,{_hash(value, ext)})"
        return _instruction(address, word, "CR", "add", text, writes=(_write(dest, "other", "pc", value),))
    return _undecoded(word, address, "CR")


def _loop(
    word: int, address: int, packet: int, ext: int | None, top: int, count: int | None, reg: str | None
) -> Instruction:
    raw = ((word >> 8) & 31) << 2 | (word >> 3) & 3
    start = (packet + _imm(raw, 7, 4, True, ext)) & 0xFFFFFFFF
    variant = top & 7
    loop = 1 if variant == 1 else 0
    stages = variant - 4 if variant >= 5 else 0
    mnemonic = f"sp{stages}loop0" if stages else f"loop{loop}"
    operand = reg if reg is not None else f"#{count}"
    text = f"{'p3 = ' if stages else ''}{mnemonic}(0x{start:x},{operand})"
    setup = LoopSetup(loop, start, count, reg, stages)
    return _instruction(address, word, "CR", mnemonic, text, loop_setup=setup)


def _decode_alu32_b(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    # rD = add(rS,#s16)
    raw = ((word >> 21) & 0x7F) << 9 | (word >> 5) & 0x1FF
    value = _imm(raw, 16, 1, True, ext)
    dest, source = _R[word & 31], _R[(word >> 16) & 31]
    return _instruction(
        address,
        word,
        "ALU32",
        "add",
        f"{dest} = add({source},{_hash(value, ext)})",
        writes=(_write(dest, "add_imm", source, value),),
    )


def _decode_alu32_7(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    if word & 0x0F000000 == 0x0F000000:
        return _instruction(address, word, "ALU32", "nop", "nop")
    dest = _R[word & 31]
    if word & 0x0FE02000 == 0x00600000:  # rD = rS
        source = _R[(word >> 16) & 31]
        return _instruction(address, word, "ALU32", "tfr", f"{dest} = {source}", writes=(_write(dest, "copy", source),))
    if word & 0x0F200000 == 0x08000000:  # rD = #s16
        raw = ((word >> 22) & 3) << 14 | ((word >> 16) & 31) << 9 | (word >> 5) & 0x1FF
        value = _imm(raw, 16, 1, True, ext)
        return _instruction(
            address,
            word,
            "ALU32",
            "tfrsi",
            f"{dest} = {_hash(value, ext)}",
            writes=(_write(dest, "other", immediate=value),),
        )
    if word & 0x0FC00000 == 0x06000000:  # rD = and(rS,#s10): aligning a pointer keeps it derived from rS
        source = _R[(word >> 16) & 31]
        value = _imm(((word >> 21) & 1) << 9 | (word >> 5) & 0x1FF, 10, 1, True, ext)
        text = f"{dest} = and({source},{_hash(value, ext)})"
        return _instruction(address, word, "ALU32", "and", text, writes=(_write(dest, "other", source, value),))
    if word & 0x0F402000 == 0x03002000:  # rDD = combine(rS,#s8) / combine(#s8,rS): one half copies rS
        pair = word & 30
        source = _R[(word >> 16) & 31]
        value = _imm((word >> 5) & 0xFF, 8, 1, True, ext)
        if word & 0x00200000:
            text = f"{_PAIR[pair]} = combine({_hash(value, ext)},{source})"
            writes = (_write(_R[pair + 1], "other", immediate=value), _write(_R[pair], "copy", source))
        else:
            text = f"{_PAIR[pair]} = combine({source},{_hash(value, ext)})"
            writes = (_write(_R[pair + 1], "copy", source), _write(_R[pair], "other", immediate=value))
        return _instruction(address, word, "ALU32", "combine", text, writes=writes)
    if word & 0x0F000000 == 0x04000000:  # if ([!]pU[.new]) rD = add(rS,#s8)
        source = _R[(word >> 16) & 31]
        value = _imm((word >> 5) & 0xFF, 8, 1, True, ext)
        pred = (word >> 21) & 3
        prefix = _cond_text(pred, bool(word & 0x00800000), bool(word & 0x2000))
        write = _write(dest, "add_imm", source, value) if value else _write(dest, "copy", source)
        return _instruction(
            address,
            word,
            "ALU32",
            "add",
            f"{prefix}{dest} = add({source},{_hash(value, ext)})",
            conditional=True,
            writes=(write,),
        )
    return _undecoded(word, address, "ALU32")


def _decode_alu32_f(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    if word & 0x0FE00000 == 0x0D000000:  # if ([!]pU[.new]) rDD = combine(rS,rT)
        dest = word & 30
        high, low = _R[(word >> 16) & 31], _R[(word >> 8) & 31]
        cond = _cond_text((word >> 5) & 3, bool(word & 0x80), bool(word & 0x2000))
        writes = (_write(_R[dest | 1], "copy", high), _write(_R[dest], "copy", low))
        text = f"{cond}{_PAIR[dest]} = combine({high},{low})"
        return _instruction(address, word, "ALU32", "combine", text, conditional=True, writes=writes)
    if word & 0x0FE02000 == 0x05000000:  # rDD = combine(rS,rT)
        dest = word & 31
        high, low = _R[(word >> 16) & 31], _R[(word >> 8) & 31]
        pair = _PAIR[dest]
        writes = (_write(_R[dest | 1], "copy", high), _write(_R[dest & ~1], "copy", low))
        return _instruction(address, word, "ALU32", "combine", f"{pair} = combine({high},{low})", writes=writes)
    if word & 0x0FC00000 == 0x03000000:  # rD = add(rS,rT) / rD = sub(rT,rS): pointer plus or minus an index
        dest, first, second = _R[word & 31], _R[(word >> 16) & 31], _R[(word >> 8) & 31]
        if word & 0x00200000:
            first, second = second, first
        mnemonic = "sub" if word & 0x00200000 else "add"
        write = _write(dest, "other", first, index=second)
        text = f"{dest} = {mnemonic}({first},{second})"
        return _instruction(address, word, "ALU32", mnemonic, text, writes=(write,))
    return _undecoded(word, address, "ALU32")


_FIELD_SHIFT = {"a": 0, "b": 8, "c": 16}


def _generic_writes(word: int) -> tuple[RegisterWrite, ...]:
    """The scalar registers an undecoded CR/ALU32/XTYPE word writes, each as an "other" write."""
    row = DEST_FIELDS.get(word >> 28)
    if row is None:
        return ()
    code = row[(word >> 21) & 127]
    if code == "*":
        code = DEST_EXCEPTIONS[(word >> 28, (word >> 21) & 127)][((word >> 5) & 7) << 1 | (word >> 13) & 1]
    if code == "-":
        return ()
    field = (word >> _FIELD_SHIFT[code.lower()]) & 31
    return _OTHER_PAIR_WRITE[field] if code.isupper() else _OTHER_WRITE[field]


# double-precision ops: (class nibble, bits 27:21, bits 7:5) -> mnemonic
_DOUBLE_OPS: dict[tuple[int, int, int], str] = {
    (0x8, 0b0000111, 0b000): "convert_df2d",
    (0x8, 0b0000111, 0b001): "convert_df2ud",
    (0x8, 0b0000111, 0b010): "convert_ud2df",
    (0x8, 0b0000111, 0b011): "convert_d2df",
    (0x8, 0b0000111, 0b110): "convert_df2d",
    (0x8, 0b0000111, 0b111): "convert_df2ud",
    (0x8, 0b0100100, 0b000): "convert_sf2df",
    (0x8, 0b0100100, 0b001): "convert_uw2df",
    (0x8, 0b0100100, 0b010): "convert_w2df",
    (0x8, 0b1000000, 0b001): "convert_df2sf",
    (0x8, 0b1000011, 0b001): "convert_df2uw",
    (0x8, 0b1000100, 0b001): "convert_df2w",
    (0x8, 0b1000101, 0b001): "convert_df2uw",
    (0x8, 0b1000111, 0b001): "convert_df2w",
    (0xE, 0b1000000, 0b011): "dfadd",
    (0xE, 0b1000001, 0b011): "dfmax",
    (0xE, 0b1000010, 0b011): "dfmpyfix",
    (0xE, 0b1000100, 0b011): "dfsub",
    (0xE, 0b1000101, 0b011): "dfmpyll",
    (0xE, 0b1000110, 0b011): "dfmin",
    (0xE, 0b1010000, 0b011): "dfmpylh",
    (0xE, 0b1010100, 0b011): "dfmpyhh",
    (0xD, 0b0010111, 0b000): "dfcmp.eq",
    (0xD, 0b0010111, 0b001): "dfcmp.gt",
    (0xD, 0b0010111, 0b010): "dfcmp.ge",
    (0xD, 0b0010111, 0b011): "dfcmp.uo",
}


def _double_operation(word: int, address: int, mnemonic: str, ext: int | None) -> Instruction:
    """Double-precision arithmetic, compares, classification, constants and conversions, in LLVM's syntax."""
    dest, first, second = word & 31, (word >> 16) & 31, (word >> 8) & 31
    writes: tuple[RegisterWrite, ...] = ()
    if mnemonic.startswith("dfcmp"):
        text = f"p{dest & 3} = {mnemonic}({_PAIR[first]},{_PAIR[second]})"
    elif mnemonic == "dfclass":
        text = f"p{dest & 3} = dfclass({_PAIR[first]},#{(word >> 5) & 31})"
    elif mnemonic == "dfmake":
        value = _imm(((word >> 21) & 1) << 9 | (word >> 5) & 0x1FF, 10, 1, False, ext)
        text = f"{_PAIR[dest]} = dfmake({_hash(value, ext)}):{'neg' if word & 0x00400000 else 'pos'}"
        writes = _OTHER_PAIR_WRITE[dest]
    elif mnemonic.startswith("convert_"):
        source_pair = mnemonic.startswith(("convert_df2", "convert_d2", "convert_ud2"))
        result_pair = not mnemonic.endswith(("2sf", "2w", "2uw"))
        result = _PAIR[dest] if result_pair else _R[dest]
        chop = ":chop" if _DOUBLE_CHOP.get(((word >> 21) & 127, (word >> 5) & 7)) else ""
        text = f"{result} = {mnemonic}({_PAIR[first] if source_pair else _R[first]}){chop}"
        writes = _writes_other(result)
    else:
        operator = "+=" if mnemonic in ("dfmpylh", "dfmpyhh") else "="
        text = f"{_PAIR[dest]} {operator} {mnemonic}({_PAIR[first]},{_PAIR[second]})"
        writes = _OTHER_PAIR_WRITE[dest]
    sf2df = mnemonic == "convert_sf2df"
    return _instruction(
        address, word, "XTYPE", mnemonic, text, writes=writes, float_to_double=sf2df, double_arith=not sf2df
    )


# the truncating conversions, by (bits 27:21, bits 7:5)
_DOUBLE_CHOP = {(0b0000111, 0b110): True, (0b0000111, 0b111): True, (0b1000101, 0b001): True, (0b1000111, 0b001): True}


def _decode_xtype(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    nibble = word >> 28
    if nibble == 0xC and word & 0x0FE02000 == 0x04000000:  # rD = addasl(rT,rS,#u3): rT + (rS << u3)
        dest, base, index = _R[word & 31], _R[(word >> 8) & 31], _R[(word >> 16) & 31]
        text = f"{dest} = addasl({base},{index},#{(word >> 5) & 7})"
        return _instruction(address, word, "XTYPE", "addasl", text, writes=(_write(dest, "other", base, index=index),))
    mnemonic = _DOUBLE_OPS.get((nibble, (word >> 21) & 127, (word >> 5) & 7))
    if mnemonic is None:
        if nibble == 0xD and word & 0x0FE00000 == 0x0C800000:
            mnemonic = "dfclass"
        elif nibble == 0xD and word & 0x0F800000 == 0x09000000:
            mnemonic = "dfmake"
    if mnemonic is not None:
        return _double_operation(word, address, mnemonic, ext)
    return _undecoded(word, address, "XTYPE")


def _decode_hvx(word: int, address: int, packet: int, ext: int | None) -> Instruction:
    if word >> 28 == 0x2:
        return _decode_vmem(word, address, ext)
    return _undecoded_hvx(word, address)


# vmem forms by (bit 23 predicated, bit 21, bits 7:5): (is_store, mnemonic, suffix, predicate kind, negated)
_VMEM_FORMS: dict[tuple[int, int, int], tuple[bool, str, str, str, bool]] = {
    (0, 0, 0): (False, "vmem", "", "", False),
    (0, 0, 1): (False, "vmem", ".cur", "", False),
    (0, 0, 2): (False, "vmem", ".tmp", "", False),
    (0, 0, 7): (False, "vmemu", "", "", False),
    (0, 1, 0): (True, "vmem", "", "", False),
    (0, 1, 1): (True, "vmem", ".new", "", False),
    (0, 1, 7): (True, "vmemu", "", "", False),
    (1, 0, 0): (True, "vmem", "", "q", False),
    (1, 0, 1): (True, "vmem", "", "q", True),
    (1, 0, 2): (False, "vmem", "", "p", False),
    (1, 0, 3): (False, "vmem", "", "p", True),
    (1, 0, 4): (False, "vmem", ".cur", "p", False),
    (1, 0, 5): (False, "vmem", ".cur", "p", True),
    (1, 0, 6): (False, "vmem", ".tmp", "p", False),
    (1, 0, 7): (False, "vmem", ".tmp", "p", True),
    (1, 1, 0): (True, "vmem", "", "p", False),
    (1, 1, 1): (True, "vmem", "", "p", True),
    (1, 1, 2): (True, "vmem", ".new", "p", False),
    (1, 1, 3): (True, "vmem", ".new", "p", True),
    (1, 1, 6): (True, "vmemu", "", "p", False),
    (1, 1, 7): (True, "vmemu", "", "p", True),
}


def _decode_z_load(word: int, address: int) -> Instruction:
    """[if (pV)] z = vmem(rT+#s4) / vmem(rX++#s3): loads of the (v73+) Z register."""
    base = _R[(word >> 16) & 31]
    cond = f"if (p{(word >> 11) & 3}) " if word & 0x00800000 else ""
    if word & 0x01000000:
        inc = _signed((word >> 8) & 7, 3) * 128
        access = _memory(base, 0, False, True, 128, True, "z", inc)
        text, writes = f"{cond}z = vmem({base}++#{inc // 128})", (_post_write(base, inc),)
    else:
        offset = _signed(((word >> 13) & 1) << 3 | (word >> 8) & 7, 4) * 128
        access = _memory(base, offset, False, True, 128, register="z")
        text, writes = f"{cond}z = vmem({base}+#{offset // 128})", ()
    return _instruction(
        address, word, "HVX", "vmem", text, conditional=bool(cond), memory=access, writes=writes, is_hvx=True
    )


def _decode_vmem(word: int, address: int, ext: int | None) -> Instruction:
    """HVX vmem/vmemu loads and stores: base+#s4 vectors, post-increment by #s3 vectors or mU; .cur/.tmp/.new/:nt."""
    group = (word >> 24) & 7  # 000 base+imm, 001 post-increment by imm, 011 post-increment by mU, 10x z loads
    if group in (4, 5) and not word & 0x006000E0:
        return _decode_z_load(word, address)
    form = _VMEM_FORMS.get(((word >> 23) & 1, (word >> 21) & 1, (word >> 5) & 7))
    if form is None or group not in (0, 1, 3):
        return _undecoded_hvx(word, address)
    store, mnemonic, suffix, predicate, negated = form
    base = _R[(word >> 16) & 31]
    # new-value stores carry 0b00 (plain) or 0b01 (predicated) at bits 4:3; 0b01000 plain is :scatter_release
    if suffix == ".new" and (word >> 3) & 3 != (word >> 23) & 1:
        if word & 0x00800000 or word & 0x1F != 0x08:
            return _undecoded_hvx(word, address)
        text = f"vmem({base}+#0):scatter_release"
        access = _memory(base, 0, True, True, 128)
        return _instruction(address, word, "HVX", "vmem", text, memory=access, is_hvx=True)
    reg: str | None = _V[word & 31]
    shown = f"{reg}{suffix}"
    if suffix == ".new":  # the packet loop names the producer (_named_new_value)
        reg, shown = None, f"{_NEW_VALUE}{(word >> 1) & 3}>.new"
    offset: int | None
    if group == 0:
        offset = _signed(((word >> 13) & 1) << 3 | (word >> 8) & 7, 4) * 128
        post, inc, operand = False, None, f"{base}+#{(offset or 0) // 128}"
    elif group == 1:
        offset, post, inc = 0, True, _signed((word >> 8) & 7, 3) * 128
        operand = f"{base}++#{(inc or 0) // 128}"
    else:
        offset, post, inc, operand = 0, True, None, f"{base}++m{(word >> 13) & 1}"
    nt = ":nt" if word & 0x00400000 else ""
    cond = f"if ({'!' if negated else ''}{predicate}{(word >> 11) & 3}) " if predicate else ""
    operation = f"{mnemonic}({operand}){nt}"
    text = f"{cond}{operation} = {shown}" if store else f"{cond}{shown} = {operation}"
    writes = (_post_write(base, inc),) if post else ()
    access = _memory(base, offset, store, True, 128, post, reg, inc)
    return _instruction(
        address, word, "HVX", mnemonic, text, conditional=bool(cond), memory=access, writes=writes, is_hvx=True
    )


_DECODERS: tuple[Callable[[int, int, int, int | None], Instruction], ...] = (
    _decode_ext,  # 0000 constant extender
    _decode_j1,  # 0001 compare-and-jump / HVX compute
    _decode_j2,  # 0010 new-value jumps / HVX memory
    _decode_ldst3,  # 0011 register-indexed loads/stores, store-immediate, memops
    _decode_ldst4,  # 0100 predicated and gp-relative loads/stores
    _decode_j5,  # 0101 jumps, calls
    _decode_cr,  # 0110 loops, control registers
    _decode_alu32_7,  # 0111
    _decode_xtype,  # 1000
    _decode_ld,  # 1001
    _decode_st,  # 1010
    _decode_alu32_b,  # 1011 add(rS,#s16)
    _decode_xtype,  # 1100
    _decode_xtype,  # 1101
    _decode_xtype,  # 1110
    _decode_alu32_f,  # 1111
)


# ---------------------------------------------------------------------------------------------------------------------
# light decoders: (word, packet address, extender or None) -> the field dict the full decoder gives the word, without
# "text" (see _LazyText), or None where the full decoder must run (every other word). The hidden entries "_ext" (only
# when extended: a dict of at most five entries is the smallest, cheapest to make and free) and "_packet" (PC-relative
# words) say how the full decoder renders the text; loads, stores and calls render theirs from the fields
# (_LIGHT_TEXTS: the audit reads the text of most stack accesses and of every call); "_new_value" marks a new-value
# jump, whose text names a register of its packet. Only the words the audit reads most are here: jumps and calls, loop
# set-ups, compare jumps, scalar loads and stores, and the ALU32/XTYPE register writes the data flow follows (their
# text is rarely read). tests/test_decode_scan.py holds every field and the text to the full decoder. An unextended
# branch distance is sign-extended inline, (raw - 2 * (raw & sign bit)) * 4: _imm's call costs more than the decoding.


def _light_j1(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_j1: compare-and-jump (J4), or an HVX compute word."""
    if word & 0x08000000:
        return {"word": word, "iclass": "HVX", "mnemonic": "", "is_hvx": True, "_ext": ext}
    raw = ((word >> 20) & 3) << 7 | (word >> 1) & 0x7F
    target = (packet + ((raw - ((raw & 0x100) << 1)) << 2 if ext is None else _imm(raw, 9, 4, True, ext))) & _MASK32
    fields: dict[str, object] = {"word": word, "iclass": "J", "mnemonic": "jump", "branch": "jump", "target": target}
    op = (word >> 24) & 15
    if op == 6:  # rD = #u6 ; jump
        fields["writes"] = (_write(_R[_SUB_R[(word >> 16) & 15]], "other", immediate=(word >> 8) & 63),)
    elif op == 7:  # rD = rS ; jump
        fields["writes"] = (_write(_R[_SUB_R[(word >> 8) & 15]], "copy", _R[_SUB_R[(word >> 16) & 15]]),)
    else:
        fields["conditional"] = True
    fields["_ext"], fields["_packet"] = ext, packet
    return fields


def _light_j2(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_j2: a new-value compare jump (its text waits for the packet), or a vmem (_light_vmem)."""
    if word & 0x08000000:
        return _light_vmem(word, ext)
    raw = ((word >> 20) & 3) << 7 | (word >> 1) & 0x7F
    target = (packet + ((raw - ((raw & 0x100) << 1)) << 2 if ext is None else _imm(raw, 9, 4, True, ext))) & _MASK32
    return {
        "word": word,
        "iclass": "J",
        "mnemonic": "jump",
        "branch": "jump",
        "target": target,
        "conditional": True,
        "_ext": ext,
        "_packet": packet,
        "_new_value": True,
    }


def _light_vmem(word: int, ext: int | None) -> dict[str, object] | None:
    """_decode_vmem: vmem/vmemu loads and stores at base+#s4 or post-incremented (new-value stores, whose register
    its packet names, and the Z loads aside)."""
    group = (word >> 24) & 7
    if group != 0 and group != 1 and group != 3:
        return None
    form = _VMEM_FORMS.get(((word >> 23) & 1, (word >> 21) & 1, (word >> 5) & 7))
    if form is None or form[2] == ".new":
        return None
    store, mnemonic, _, predicate, _ = form
    base = _R[(word >> 16) & 31]
    if group == 0:
        offset = _signed(((word >> 13) & 1) << 3 | (word >> 8) & 7, 4) * 128
        access = _MEMORY_ACCESSES.get((base, offset, store, True, 128, False, _V[word & 31], None))  # _memory inlined
        if access is None:
            access = _memory(base, offset, store, True, 128, False, _V[word & 31], None)
        fields = {"word": word, "iclass": "HVX", "mnemonic": mnemonic, "memory": access, "is_hvx": True}
    else:
        increment = _signed((word >> 8) & 7, 3) * 128 if group == 1 else None
        access = _memory(base, 0, store, True, 128, True, _V[word & 31], increment)
        fields = {"word": word, "iclass": "HVX", "mnemonic": mnemonic, "memory": access, "is_hvx": True,
                  "writes": (_post_write(base, increment),)}  # fmt: skip
    if predicate:
        fields["conditional"] = True
    if ext is not None:
        fields["_ext"] = ext
    return fields


def _light_j5(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_j5: jump/call #r22:2 and if ([!]pU[.new]) jump/call #r15:2 (a call's text: _branch_text)."""
    group = (word >> 25) & 7
    if group == 4 or group == 5:
        raw = ((word >> 16) & 0x1FF) << 13 | (word >> 1) & 0x1FFF
        target = packet + ((raw - ((raw & 0x200000) << 1)) << 2 if ext is None else _imm(raw, 22, 4, True, ext))
        target &= _MASK32
        kind = "call" if group == 5 else "jump"
        return {"word": word, "iclass": "J", "mnemonic": kind, "branch": kind, "target": target, "_ext": ext,
                "_packet": packet}  # fmt: skip
    if group == 6:
        raw = ((word >> 22) & 3) << 13 | ((word >> 16) & 0x1F) << 8 | ((word >> 13) & 1) << 7 | (word >> 1) & 0x7F
        target = packet + ((raw - ((raw & 0x4000) << 1)) << 2 if ext is None else _imm(raw, 15, 4, True, ext))
        target &= _MASK32
        kind = "call" if word & 0x01000000 else "jump"
        return {"word": word, "iclass": "J", "mnemonic": kind, "branch": kind, "target": target,
                "conditional": True, "_ext": ext, "_packet": packet}  # fmt: skip
    return None


def _branch_text(instruction: Instruction) -> str:
    """The full decoder's text of a light call (the audit reads every call's), else _render_text's."""
    if instruction.branch != "call":
        return _render_text(instruction)
    word = instruction.word
    cond = _cond_text((word >> 8) & 3, bool(word & 0x00200000), False) if instruction.conditional else ""
    return f"{cond}call 0x{instruction.target:x}"


def _light_cr(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_cr: loop set-ups and compare-with-zero jumps."""
    top = (word >> 21) & 127
    if top >> 3 == 0b0001:  # if (rS op #0) jump #r13:2
        raw = ((word >> 21) & 1) << 12 | ((word >> 13) & 1) << 11 | (word >> 1) & 0x7FF
        target = packet + ((raw - ((raw & 0x1000) << 1)) << 2 if ext is None else _imm(raw, 13, 4, True, ext))
        target &= _MASK32
        return {"word": word, "iclass": "J", "mnemonic": "jump", "branch": "jump", "target": target,
                "conditional": True, "_ext": ext, "_packet": packet}  # fmt: skip
    if top in _CR_LOOPS:
        if top & 0b1000000:  # loopN(#r7:2,#U10)
            count: int | None = ((word >> 16) & 31) << 5 | ((word >> 5) & 7) << 2 | word & 3
            register = None
        else:  # loopN(#r7:2,rS)
            count, register = None, _R[(word >> 16) & 31]
        raw = ((word >> 8) & 31) << 2 | (word >> 3) & 3
        start = (packet + _imm(raw, 7, 4, True, ext)) & _MASK32
        variant = top & 7
        stages = variant - 4 if variant >= 5 else 0
        mnemonic = f"sp{stages}loop0" if stages else f"loop{1 if variant == 1 else 0}"
        setup = LoopSetup(1 if variant == 1 else 0, start, count, register, stages)
        return {"word": word, "iclass": "CR", "mnemonic": mnemonic, "loop_setup": setup, "_ext": ext,
                "_packet": packet}  # fmt: skip
    return None


def _light_ld(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_ld: rD = memX(rS+#s11:n) and rD = memX(rX++#s4:n) (predicated or not)."""
    kind = (word >> 21) & 15
    spec = _LOAD_TYPES.get(kind)
    if spec is None:
        return None
    mnemonic, size, pair = spec
    mode = (word >> 25) & 3
    base = _R[(word >> 16) & 31]
    register = _PAIR[word & 31] if pair else _R[word & 31]
    if not word & 0x08000000:
        if word & 0x0FE00000 == 0x02000000:  # memw_phys, locked/acquire loads, vextract
            return None
        raw = mode << 9 | (word >> 5) & 0x1FF
        offset = (raw - 2048 if raw & 0x400 else raw) * size if ext is None else _imm(raw, 11, size, True, ext)
        memory = _MEMORY_ACCESSES.get((base, offset, False, False, size, False, register, None))  # _memory inlined
        if memory is None:
            memory = _memory(base, offset, False, False, size, False, register, None)
        fields = {"word": word, "iclass": "LD", "mnemonic": mnemonic, "memory": memory,
                  "writes": _OTHER_WRITES_BY_NAME[register]}  # fmt: skip
    else:
        if mode != 1 or word & 0x1000:  # circular, absolute-set, register-modified, bit-reversed, indexed forms
            return None
        increment = _signed((word >> 5) & 15, 4) * size
        memory = _memory(base, 0, False, False, size, True, register, increment)
        writes = (*_OTHER_WRITES_BY_NAME[register], _write(base, "add_imm", base, increment))
        fields = {"word": word, "iclass": "LD", "mnemonic": mnemonic, "memory": memory, "writes": writes}
        if word & 0x2000:
            fields["conditional"] = True
    if ext is not None:
        fields["_ext"] = ext
    return fields


def _light_st(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_st: memX(rS+#s11:n) = rT and memX(rX++#s4:n) = rT (predicated or not); new-value stores aside."""
    if not word & 0x01000000:  # allocframe, locked/release stores, cache and DMA operations
        return None
    spec = _STORE_TYPES.get((word >> 21) & 7)
    if spec is None:
        return None
    mnemonic, size = spec
    base = _R[(word >> 16) & 31]
    data = (word >> 8) & 31
    register = _PAIR[data] if size == 8 else _R[data]
    mode = (word >> 25) & 3
    if not word & 0x08000000:
        raw = mode << 9 | ((word >> 13) & 1) << 8 | (word & 0xFF)
        offset = (raw - 2048 if raw & 0x400 else raw) * size if ext is None else _imm(raw, 11, size, True, ext)
        memory = _MEMORY_ACCESSES.get((base, offset, True, False, size, False, register, None))  # _memory inlined
        if memory is None:
            memory = _memory(base, offset, True, False, size, False, register, None)
        fields = {"word": word, "iclass": "ST", "mnemonic": mnemonic, "memory": memory}
    else:
        if mode != 1 or word & 0x80:  # circular, absolute-set, register-modified, bit-reversed, indexed forms
            return None
        increment = _signed((word >> 3) & 15, 4) * size
        memory = _memory(base, 0, True, False, size, True, register, increment)
        writes = (_write(base, "add_imm", base, increment),)
        fields = {"word": word, "iclass": "ST", "mnemonic": mnemonic, "memory": memory, "writes": writes}
        if word & 0x2000:
            fields["conditional"] = True
    if ext is not None:
        fields["_ext"] = ext
    return fields


def _load_text(instruction: Instruction) -> str:
    """The full decoder's text of a _light_ld load, from its fields."""
    memory, word = instruction.memory, instruction.word
    if memory.post_increment:  # type: ignore[union-attr]
        cond = _cond_text((word >> 9) & 3, bool(word & 0x800), bool(word & 0x1000)) if word & 0x2000 else ""
        return f"{cond}{memory.register} = {instruction.mnemonic}({memory.base}++#{memory.increment})"  # type: ignore[union-attr]
    hash_sign = "#" if instruction.__dict__.get("_ext") is None else "##"
    return f"{memory.register} = {instruction.mnemonic}({memory.base}+{hash_sign}{memory.offset})"  # type: ignore[union-attr]


def _store_text(instruction: Instruction) -> str:
    """The full decoder's text of a _light_st store, from its fields."""
    memory, word = instruction.memory, instruction.word
    shown = f"{memory.register}.h" if (word >> 21) & 7 == 3 else memory.register  # type: ignore[union-attr]
    if memory.post_increment:  # type: ignore[union-attr]
        cond = _cond_text(word & 3, bool(word & 4), bool(word & 0x80)) if word & 0x2000 else ""
        return f"{cond}{instruction.mnemonic}({memory.base}++#{memory.increment}) = {shown}"  # type: ignore[union-attr]
    hash_sign = "#" if instruction.__dict__.get("_ext") is None else "##"
    return f"{instruction.mnemonic}({memory.base}+{hash_sign}{memory.offset}) = {shown}"  # type: ignore[union-attr]


def _light_alu32_7(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_alu32_7: transfers, and(rS,#s10), combines with an immediate, conditional adds, other writes."""
    if word & 0x0F000000 == 0x0F000000:
        return {"word": word, "iclass": "ALU32", "mnemonic": "nop"}
    dest = _R[word & 31]
    conditional = False
    if word & 0x0FE02000 == 0x00600000:  # rD = rS
        mnemonic, writes = "tfr", (_write(dest, "copy", _R[(word >> 16) & 31]),)
    elif word & 0x0F200000 == 0x08000000:  # rD = #s16
        raw = ((word >> 22) & 3) << 14 | ((word >> 16) & 31) << 9 | (word >> 5) & 0x1FF
        mnemonic, writes = "tfrsi", (_write(dest, "other", immediate=_imm(raw, 16, 1, True, ext)),)
    elif word & 0x0FC00000 == 0x06000000:  # rD = and(rS,#s10)
        value = _imm(((word >> 21) & 1) << 9 | (word >> 5) & 0x1FF, 10, 1, True, ext)
        mnemonic, writes = "and", (_write(dest, "other", _R[(word >> 16) & 31], value),)
    elif word & 0x0F402000 == 0x03002000:  # rDD = combine(rS,#s8) / combine(#s8,rS)
        pair, source = word & 30, _R[(word >> 16) & 31]
        value = _imm((word >> 5) & 0xFF, 8, 1, True, ext)
        if word & 0x00200000:
            writes = (_write(_R[pair + 1], "other", immediate=value), _write(_R[pair], "copy", source))
        else:
            writes = (_write(_R[pair + 1], "copy", source), _write(_R[pair], "other", immediate=value))
        mnemonic = "combine"
    elif word & 0x0F000000 == 0x04000000:  # if ([!]pU[.new]) rD = add(rS,#s8)
        source = _R[(word >> 16) & 31]
        value = _imm((word >> 5) & 0xFF, 8, 1, True, ext)
        mnemonic, conditional = "add", True
        writes = (_write(dest, "add_imm", source, value) if value else _write(dest, "copy", source),)
    else:
        return _light_undecoded(word, "ALU32", ext)
    fields: dict[str, object] = {"word": word, "iclass": "ALU32", "mnemonic": mnemonic, "writes": writes}
    if conditional:
        fields["conditional"] = True
    if ext is not None:
        fields["_ext"] = ext
    return fields


def _light_alu32_b(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_alu32_b: rD = add(rS,#s16)."""
    value = _imm(((word >> 21) & 0x7F) << 9 | (word >> 5) & 0x1FF, 16, 1, True, ext)
    writes = (_write(_R[word & 31], "add_imm", _R[(word >> 16) & 31], value),)
    fields: dict[str, object] = {"word": word, "iclass": "ALU32", "mnemonic": "add", "writes": writes}
    if ext is not None:
        fields["_ext"] = ext
    return fields


def _light_alu32_f(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_alu32_f: combines of two registers, add(rS,rT) and sub(rT,rS), other writes."""
    if word & 0x0FE00000 == 0x0D000000:  # if ([!]pU[.new]) rDD = combine(rS,rT)
        dest = word & 30
        writes = (_write(_R[dest | 1], "copy", _R[(word >> 16) & 31]), _write(_R[dest], "copy", _R[(word >> 8) & 31]))
        fields: dict[str, object] = {"word": word, "iclass": "ALU32", "mnemonic": "combine", "writes": writes,
                                     "conditional": True}  # fmt: skip
    elif word & 0x0FE02000 == 0x05000000:  # rDD = combine(rS,rT)
        dest = word & 31
        writes = (
            _write(_R[dest | 1], "copy", _R[(word >> 16) & 31]),
            _write(_R[dest & ~1], "copy", _R[(word >> 8) & 31]),
        )
        fields = {"word": word, "iclass": "ALU32", "mnemonic": "combine", "writes": writes}
    elif word & 0x0FC00000 == 0x03000000:  # rD = add(rS,rT) / rD = sub(rT,rS)
        first, second = _R[(word >> 16) & 31], _R[(word >> 8) & 31]
        if word & 0x00200000:
            first, second = second, first
        mnemonic = "sub" if word & 0x00200000 else "add"
        writes = (_write(_R[word & 31], "other", first, index=second),)
        fields = {"word": word, "iclass": "ALU32", "mnemonic": mnemonic, "writes": writes}
    else:
        return _light_undecoded(word, "ALU32", ext)
    if ext is not None:
        fields["_ext"] = ext
    return fields


def _light_xtype(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    """_decode_xtype: addasl and the words decoded to their writes (double operations: the full decoder)."""
    nibble = word >> 28
    if nibble == 0xC and word & 0x0FE02000 == 0x04000000:  # rD = addasl(rT,rS,#u3)
        write = _write(_R[word & 31], "other", _R[(word >> 8) & 31], index=_R[(word >> 16) & 31])
        fields: dict[str, object] = {"word": word, "iclass": "XTYPE", "mnemonic": "addasl", "writes": (write,)}
        if ext is not None:
            fields["_ext"] = ext
        return fields
    if (nibble, (word >> 21) & 127) in _DOUBLE_ROWS:
        return None
    return _light_undecoded(word, "XTYPE", ext)


def _light_undecoded(word: int, iclass: str, ext: int | None) -> dict[str, object]:
    """_undecoded: a word decoded to its class and the registers it writes."""
    writes = _generic_writes(word)
    fields: dict[str, object] = {"word": word, "iclass": iclass, "mnemonic": ""}
    if writes:
        fields["writes"] = writes
    if ext is not None:
        fields["_ext"] = ext
    return fields


def _no_light(word: int, packet: int, ext: int | None) -> dict[str, object] | None:
    return None


# the renderers of light decodings by class (any other class: _render_text); a light LD or ST is a scalar load or
# store of _light_ld/_light_st, every other load or store keeps its text: their dicts need no entry naming it
_LIGHT_TEXTS: dict[str, Callable[[Instruction], str]] = {"LD": _load_text, "ST": _store_text, "J": _branch_text}


_LIGHT_DECODERS: tuple[Callable[[int, int, int | None], dict[str, object] | None], ...] = (
    _no_light,  # 0000 constant extender
    _light_j1,
    _light_j2,
    _no_light,  # 0011 register-indexed loads/stores, memops
    _no_light,  # 0100 predicated and gp-relative loads/stores
    _light_j5,
    _light_cr,
    _light_alu32_7,
    _light_xtype,  # 1000
    _light_ld,
    _light_st,
    _light_alu32_b,  # 1011 add(rS,#s16)
    _light_xtype,  # 1100
    _light_xtype,  # 1101
    _light_xtype,  # 1110
    _light_alu32_f,
)


def _render_text(instruction: Instruction) -> str:
    """The text the full decoder gives a light-decoded instruction (see _LazyText)."""
    fields = instruction.__dict__
    word, address = instruction.word, instruction.address
    in_packet = fields.get("_in_packet")
    if in_packet is not None:  # a new-value operand: its packet names the register
        scan, index = in_packet
        for other in scan.packet(index).instructions:
            if other.address == address:
                return other.text  # type: ignore[no-any-return]
    return _DECODERS[word >> 28](word, address, fields.get("_packet", 0), fields.get("_ext")).text


# ---------------------------------------------------------------------------------------------------------------------
# duplex sub-instructions (13 bits each; slot 1 = bits 28:16, slot 0 = bits 12:0)

# duplex ICLASS -> (slot 1 group, slot 0 group)
_DUPLEX_GROUPS = (
    ("L1", "L1"),
    ("L1", "L2"),
    ("L2", "L2"),
    ("A", "A"),
    ("A", "L1"),
    ("A", "L2"),
    ("A", "S1"),
    ("A", "S2"),
    ("L1", "S1"),
    ("L2", "S1"),
    ("S1", "S1"),
    ("S1", "S2"),
    ("L1", "S2"),
    ("L2", "S2"),
    ("S2", "S2"),
    (None, None),
)


def _sub(address: int, word: int, mnemonic: str, text: str, iclass: str, **fields: object) -> Instruction:
    """A duplex half: _instruction(..., is_duplex_half=True, **fields) without a second keyword dict."""
    fields["word"] = word
    fields["iclass"] = iclass
    fields["mnemonic"] = mnemonic
    fields["text"] = text
    fields["is_duplex_half"] = True
    return _at(fields, address)


def _sub_load(address: int, word: int, mnemonic: str, size: int, dest: str, base: str, offset: int) -> Instruction:
    memory = _MEMORY_ACCESSES.get((base, offset, False, False, size, False, dest, None))  # _memory inlined
    if memory is None:
        memory = _memory(base, offset, False, False, size, register=dest)
    text = f"{dest} = {mnemonic}({base}+#{offset})"
    return _sub(address, word, mnemonic, text, "LD", memory=memory, writes=_OTHER_WRITES_BY_NAME[dest])


def _sub_store(address: int, word: int, mnemonic: str, size: int, data: str, base: str, offset: int) -> Instruction:
    return _sub(
        address,
        word,
        mnemonic,
        f"{mnemonic}({base}+#{offset}) = {data}",
        "ST",
        memory=_memory(base, offset, True, False, size, register=None if data.startswith("#") else data),
    )


def _decode_sub(group: str, bits: int, address: int, word: int, ext: int | None) -> Instruction:
    reg_a = _R[_SUB_R[(bits >> 4) & 15]]
    reg_b = _R[_SUB_R[bits & 15]]
    if group == "L1":
        if bits & 0x1000:
            return _sub_load(address, word, "memub", 1, reg_b, reg_a, _imm((bits >> 8) & 15, 4, 1, False, ext))
        return _sub_load(address, word, "memw", 4, reg_b, reg_a, _imm((bits >> 8) & 15, 4, 4, False, ext))
    if group == "S1":
        if bits & 0x1000:
            return _sub_store(address, word, "memb", 1, reg_b, reg_a, _imm((bits >> 8) & 15, 4, 1, False, ext))
        return _sub_store(address, word, "memw", 4, reg_b, reg_a, _imm((bits >> 8) & 15, 4, 4, False, ext))
    if group == "L2":
        return _decode_sub_l2(bits, address, word, reg_a, reg_b, ext)
    if group == "S2":
        return _decode_sub_s2(bits, address, word, reg_a, reg_b, ext)
    return _decode_sub_a(bits, address, word, reg_a, reg_b, ext)


def _decode_sub_l2(bits: int, address: int, word: int, reg_a: str, reg_b: str, ext: int | None) -> Instruction:
    top = bits >> 11
    if top < 3:
        mnemonic, size = (("memh", 2), ("memuh", 2), ("memb", 1))[top]
        return _sub_load(address, word, mnemonic, size, reg_b, reg_a, _imm((bits >> 8) & 7, 3, size, False, ext))
    if bits >> 9 == 0b1110:
        return _sub_load(address, word, "memw", 4, reg_b, "r29", _imm((bits >> 4) & 31, 5, 4, False, ext))
    if bits >> 8 == 0b11110:
        pair = _PAIR[_SUB_PAIR[bits & 7]]
        return _sub_load(address, word, "memd", 8, pair, "r29", _imm((bits >> 3) & 31, 5, 8, False, ext))
    kind = (bits >> 6) & 3
    cond = bits & 7
    if kind == 0 and not bits & 4:
        return _sub(
            address,
            word,
            "deallocframe",
            "deallocframe",
            "LD",
            writes=(_write("r29", "other"), _write("r30", "other"), _write("r31", "other")),
        )
    if kind in (1, 3) and cond in (0, 4, 5, 6, 7):
        prefix = _cond_text(0, bool(cond & 1), bool(cond & 2)) if cond else ""
        if kind == 1:
            return _sub(
                address,
                word,
                "dealloc_return",
                f"{prefix}dealloc_return",
                "LD",
                branch="return",
                conditional=bool(cond),
                writes=(_write("r29", "other"), _write("r30", "other"), _write("r31", "other")),
            )
        return _sub(address, word, "jumpr", f"{prefix}jumpr r31", "J", branch="return", conditional=bool(cond))
    return _sub(address, word, "", f".sub 0x{bits:04x}", "UNKNOWN")


def _decode_sub_s2(bits: int, address: int, word: int, reg_a: str, reg_b: str, ext: int | None) -> Instruction:
    if bits >> 11 == 0:
        return _sub_store(address, word, "memh", 2, reg_b, reg_a, _imm((bits >> 8) & 7, 3, 2, False, ext))
    top = bits >> 9
    if top == 0b0100:
        return _sub_store(address, word, "memw", 4, reg_b, "r29", _imm((bits >> 4) & 31, 5, 4, False, ext))
    if top == 0b0101:
        pair = _PAIR[_SUB_PAIR[bits & 7]]
        return _sub_store(address, word, "memd", 8, pair, "r29", _imm((bits >> 3) & 63, 6, 8, True, ext))
    if top in (0b1000, 0b1001):
        mnemonic, size = ("memw", 4) if top == 0b1000 else ("memb", 1)
        offset = _imm(bits & 15, 4, size, False, ext)
        return _sub_store(address, word, mnemonic, size, f"#{(bits >> 8) & 1}", reg_a, offset)
    if top == 0b1110:
        size = ((bits >> 4) & 31) * 8
        return _sub(
            address,
            word,
            "allocframe",
            f"allocframe(#{size})",
            "ST",
            writes=(_write("r29", "add_imm", "r29", -8 - size), _write("r30", "add_imm", "r29", -8)),
        )
    return _sub(address, word, "", f".sub 0x{bits:04x}", "UNKNOWN")


_SUB_A_UNARY = {
    0b10010: ("and", "and({s},#1)"),
    0b10100: ("sxth", "sxth({s})"),
    0b10101: ("sxtb", "sxtb({s})"),
    0b10110: ("zxth", "zxth({s})"),
    0b10111: ("and", "and({s},#255)"),
}


def _decode_sub_a(bits: int, address: int, word: int, reg_a: str, reg_b: str, ext: int | None) -> Instruction:
    if bits >> 11 == 0:  # rX = add(rX,#s7)
        value = _imm((bits >> 4) & 127, 7, 1, True, ext)
        return _sub(
            address,
            word,
            "add",
            f"{reg_b} = add({reg_b},{_hash(value, ext)})",
            "ALU32",
            writes=(_write(reg_b, "add_imm", reg_b, value),),
        )
    top3 = bits >> 10
    if top3 == 0b010:  # rD = #u6
        value = _imm((bits >> 4) & 63, 6, 1, False, ext)
        return _sub(
            address,
            word,
            "tfrsi",
            f"{reg_b} = {_hash(value, ext)}",
            "ALU32",
            writes=(_write(reg_b, "other", immediate=value),),
        )
    if top3 == 0b011:  # rD = add(r29,#u6:2)
        value = _imm((bits >> 4) & 63, 6, 4, False, ext)
        return _sub(
            address,
            word,
            "add",
            f"{reg_b} = add(r29,{_hash(value, ext)})",
            "ALU32",
            writes=(_write(reg_b, "add_imm", "r29", value),),
        )
    top5 = bits >> 8
    if top5 == 0b10000:
        return _sub(address, word, "tfr", f"{reg_b} = {reg_a}", "ALU32", writes=(_write(reg_b, "copy", reg_a),))
    if top5 in (0b10001, 0b10011):
        value = 1 if top5 == 0b10001 else -1
        return _sub(
            address,
            word,
            "add",
            f"{reg_b} = add({reg_a},#{value})",
            "ALU32",
            writes=(_write(reg_b, "add_imm", reg_a, value),),
        )
    if top5 in _SUB_A_UNARY:
        mnemonic, form = _SUB_A_UNARY[top5]
        return _sub(
            address,
            word,
            mnemonic,
            f"{reg_b} = {form.format(s=reg_a)}",
            "ALU32",
            writes=(_write(reg_b, "other"),),
        )
    if top5 == 0b11000:
        return _sub(address, word, "add", f"{reg_b} = add({reg_b},{reg_a})", "ALU32", writes=(_write(reg_b, "other"),))
    if top5 == 0b11001 and not bits & 0xC:
        return _sub(address, word, "cmp.eq", f"p0 = cmp.eq({reg_a},#{bits & 3})", "ALU32")
    if top5 == 0b11010:
        if not bits & 0x40:
            return _sub(
                address, word, "tfrsi", f"{reg_b} = #-1", "ALU32", writes=(_write(reg_b, "other", immediate=-1),)
            )
        if bits & 0x30 in (0x20, 0x30, 0x00, 0x10):
            prefix = _cond_text(0, bool(bits & 0x10), not bits & 0x20)
            return _sub(
                address,
                word,
                "tfrsi",
                f"{prefix}{reg_b} = #0",
                "ALU32",
                conditional=True,
                writes=(_write(reg_b, "other", immediate=0),),
            )
    if top5 == 0b11100 and not bits & 0x80:
        pair = _SUB_PAIR[bits & 7]
        high, low = (bits >> 3) & 3, (bits >> 5) & 3
        return _sub(
            address,
            word,
            "combine",
            f"{_PAIR[pair]} = combine(#{high},#{low})",
            "ALU32",
            writes=(
                _write(_R[pair + 1], "other", immediate=high),
                _write(_R[pair], "other", immediate=low),
            ),
        )
    if top5 == 0b11101:
        pair = _SUB_PAIR[bits & 7]
        if bits & 8:
            text = f"{_PAIR[pair]} = combine({reg_a},#0)"
            writes = (_write(_R[pair + 1], "copy", reg_a), _write(_R[pair], "other", immediate=0))
        else:
            text = f"{_PAIR[pair]} = combine(#0,{reg_a})"
            writes = (_write(_R[pair + 1], "other", immediate=0), _write(_R[pair], "copy", reg_a))
        return _sub(address, word, "combine", text, "ALU32", writes=writes)
    return _sub(address, word, "", f".sub 0x{bits:04x}", "UNKNOWN")


def _decode_duplex(word: int, address: int, ext: int | None) -> tuple[Instruction, ...]:
    groups = _DUPLEX_GROUPS[(word >> 29) << 1 | (word >> 13) & 1]
    if groups[0] is None:
        return (_instruction(address, word, "UNKNOWN", "", _word_text(word), is_duplex_half=True),)
    high = _decode_sub(groups[0], (word >> 16) & 0x1FFF, address, word, ext)
    low = _decode_sub(groups[1], word & 0x1FFF, address, word, None)
    return (high, low)


# ---------------------------------------------------------------------------------------------------------------------
# packets


# a new-value word decoded once: its instruction with the operand unnamed, the packet distance to its producer, and
# its field dicts by the producer's register
_PendingNewValue = tuple[Instruction, int, dict[str, dict[str, object]]]
# How a packet template rebuilds one instruction: its offset from the packet's address and its fields; PC-relative
# ones also keep their index, their target (or loop start) relative to the packet, and their text around it.
_Entry = tuple[int, dict[str, object]]
_RelativeEntry = tuple[int, int, dict[str, object], int, str, str]
_PacketTemplate = tuple[tuple[_Entry, ...], tuple[_RelativeEntry, ...] | None, frozenset[int]]


@dataclass(frozen=True)
class DecodeCache:
    """What decoding learns about words and packets, independent of their addresses, so it holds for any library: the
    builds of one backend for several CPUs, or the old and new library of a regression gate, share most of their
    packets. decode_packets uses one shared cache unless given another (a fresh DecodeCache() decodes cold)."""

    packets: dict[bytes, Packet | _PacketTemplate | None] = field(default_factory=dict)  # first decode, then template
    words: dict[int | tuple[int, int], dict[str, object]] = field(default_factory=dict)  # by word or (word, extender)
    duplexes: dict[int | tuple[int, int], tuple[dict[str, object], ...]] = field(default_factory=dict)
    new_values: dict[int | tuple[int, int], _PendingNewValue] = field(default_factory=dict)
    # an unextended producer's word (bit 32: read by a vector operand) -> the register a new-value operand names
    producer_registers: dict[int, str] = field(default_factory=dict)
    flags: dict[int, int] = field(default_factory=dict)  # word -> WORD_* flags, of the words only decoding flags
    # PC-relative word (decoded alone) -> its fields and _split_relative (CodeScan.word_instructions)
    # (light decodings: no text parts, see _LIGHT_DECODERS)
    relative_words: dict[int | tuple[int, int], tuple[dict[str, object], int, str | None, str | None]] = field(
        default_factory=dict
    )
    limit: int = 1 << 18  # entries before the cache starts over: bounds the memory a long-running process keeps

    def clear(self) -> None:
        for table in self._tables():
            table.clear()

    def __len__(self) -> int:
        return sum(map(len, self._tables()))

    def _tables(self) -> tuple[dict, ...]:
        return (
            self.packets,
            self.words,
            self.duplexes,
            self.new_values,
            self.producer_registers,
            self.flags,
            self.relative_words,
        )


_SHARED_CACHE = DecodeCache()


def decode_packets(code: bytes, base_address: int, cpu: int = 0x73, cache: DecodeCache | None = None) -> list[Packet]:
    """Decode every packet of a .text byte string. Never raises: undecodable words become iclass "UNKNOWN"; a truncated
    final packet is returned as far as it goes (trailing bytes that do not fill a word are ignored). `cpu` (e_flags &
    0xff) is accepted for forward compatibility: every encoding decoded here is the same from v68 to v81. `cache`
    changes nothing in the result, only what is decoded again (see DecodeCache)."""
    end = len(code) // 4 * 4
    if not end:
        return []
    if cache is None:
        cache = _SHARED_CACHE
    if len(cache) > cache.limit:
        cache.clear()
    # tens of thousands of small immutable objects: the cyclic GC would rescan them again and again for nothing
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _decode_code(code, end, base_address, cache)
    finally:
        if collecting:
            gc.enable()


# ---------------------------------------------------------------------------------------------------------------------
# summary flags and scans: what a caller that needs only some packets (the audit) reads instead of decoding them all

# What one instruction word may hold (a duplex word: either half). A flag a word lacks, its full decoding lacks too; a
# flag it has, the decoding may lack (open the packet to know), except WORD_HVX and WORD_ENDLOOP_BITS, which are exact.
# Most words are flagged from a few bit fields (_quick_flags); the others from their full decoding without extender
# (an extender changes immediates only). tests/test_decode_scan.py holds both to the full decoding.
WORD_BRANCH = 1  # jump, call, jumpr, callr, return
WORD_CALL = 2  # call or callr
WORD_LOOP_SETUP = 4  # loop0, loop1, spNloop0
WORD_HVX = 8  # an HVX instruction (a word holds at most one)
WORD_DOUBLE = 16  # float_to_double or double_arith
WORD_MEMORY = 32  # a memory access
WORD_STACK_MEMORY = 64  # a memory access based on r29 (SP) or r30 (FP)
WORD_STACK_COPY = 128  # writes a register other than r29/r30 from r29/r30 (`r2 = add(r29,#8)`, `r3 = r30`)
WORD_WRITES = 256  # writes a general register
WORD_ENDLOOP_BITS = 512  # parse bits 10: an :endloop marker in a packet's first two words (endloop_packets says where)
_STACK_REGISTERS = ("r29", "r30")
_STACK_FIELDS = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0)
# CR bits 27:21 of loopN/spNloop0 with a register count, then with an immediate one (as _decode_cr)
_CR_LOOPS = frozenset([0b0000000, 0b0000001, 0b0000101, 0b0000110, 0b0000111])
_CR_LOOPS |= {0b1001000, 0b1001001, 0b1001101, 0b1001110, 0b1001111}
# XTYPE (class nibble, bits 27:21) where a double operation may sit: _DOUBLE_OPS, dfclass, dfmake (as _decode_xtype)
_DOUBLE_ROWS = frozenset((nibble, row) for nibble, row, _ in _DOUBLE_OPS)
_DOUBLE_ROWS |= {(0xD, 0b1100100), *((0xD, row) for row in range(0b1001000, 0b1001100))}


def _quick_flags(word: int) -> int:
    """The flags of a word from its bit fields, or -1 where only a full decoding tells (see WORD_*)."""
    iclass = word >> 28
    if not word & 0xC000:
        return -1  # a duplex: two sub-instructions
    flags = WORD_ENDLOOP_BITS if word & 0xC000 == 0x8000 else 0
    base = _STACK_FIELDS[(word >> 16) & 31]  # SP/FP in bits 20:16, where most instructions name their source or base
    if iclass == 1:  # HVX compute, or compare-and-jump (some write a register)
        return flags | WORD_HVX if word & 0x08000000 else flags | WORD_BRANCH | WORD_WRITES
    if iclass == 2:  # HVX vmem (base in bits 20:16, post-increment writes it), or new-value jump
        if word & 0x08000000:
            return flags | (WORD_HVX | WORD_MEMORY | WORD_WRITES | (WORD_STACK_MEMORY if base else 0))
        return flags | WORD_BRANCH
    if iclass == 7 or iclass == 0xB:  # ALU32: writes; copies, adds and combines take their source from bits 20:16
        return flags | (WORD_WRITES | WORD_STACK_COPY if base else WORD_WRITES)
    if iclass == 0xF:  # ALU32: add/sub/combine of two registers: bits 20:16 or 12:8
        return flags | (WORD_WRITES | WORD_STACK_COPY if base or _STACK_FIELDS[(word >> 8) & 31] else WORD_WRITES)
    if iclass == 9 or iclass == 0xA:  # loads and stores (base in bits 20:16), allocframe
        if iclass == 9 and not word & 0x09E00000:  # type 0: deallocframe, dealloc_return, vextract (HVX), ...
            return -1
        return flags | (WORD_MEMORY | WORD_WRITES | WORD_STACK_MEMORY if base else WORD_MEMORY | WORD_WRITES)
    if iclass >= 8:  # XTYPE (8, C, D, E): writes; addasl takes bits 12:8; double operations by row
        flags |= WORD_WRITES
        if base or _STACK_FIELDS[(word >> 8) & 31]:
            flags |= WORD_STACK_COPY
        if (iclass, (word >> 21) & 127) in _DOUBLE_ROWS:
            flags |= WORD_DOUBLE
        return flags
    if iclass == 5:  # jumps, calls, jumpr, callr
        return flags | WORD_BRANCH | WORD_CALL
    if iclass == 0:  # constant extender
        return flags
    if iclass == 6:  # CR: loop set-ups, compare-with-zero jumps, transfers
        top = (word >> 21) & 127
        if top in _CR_LOOPS:
            return flags | WORD_LOOP_SETUP
        return flags | WORD_BRANCH if top >> 3 == 1 else flags | WORD_WRITES
    group = (word >> 24) & 15
    if iclass == 3:  # register-indexed loads (groups 0-3, 1010) and stores, store-immediate, memory operations
        flags |= WORD_MEMORY | WORD_WRITES if group < 4 or group == 0b1010 else WORD_MEMORY
        return flags | WORD_STACK_MEMORY if base else flags
    # 4: predicated loads (odd groups) and stores at base+#u6 (groups 0-7, base in bits 20:16), gp-relative ones
    flags |= WORD_MEMORY | WORD_WRITES if group & 1 else WORD_MEMORY
    return flags | WORD_STACK_MEMORY if base and group < 8 else flags


# _quick_flags for every word of a section at once, lane by lane in C: a word's flags depend on its top byte (ICLASS,
# bits 27:24), bits 23:21 (the rest of the opcode row), the register fields at bits 20:16 and 12:8 and the parse
# bits, so 256-entry tables translate each byte column and big-integer AND/OR combine the columns, 8 bits a lane.
# Low lanes carry flags 1..128, high lanes WORD_WRITES (1) and WORD_ENDLOOP_BITS (2); a "slow" lane is a word whose
# flags only its decoding tells (_quick_flags -1). tests/test_decode_scan.py holds the lanes to _quick_flags.
@dataclass(frozen=True, eq=False)
class _FlagTables:
    """The byte-column tables _scan_flags classifies words with, built once."""

    low: bytes  # top byte -> flags that depend on it alone
    high: bytes  # top byte -> WORD_WRITES (1) when it alone says so
    if_base: bytes  # top byte -> flags to add when bits 20:16 name r29/r30
    if_low_field: bytes  # top byte -> flags to add when bits 12:8 name r29/r30
    row_flags: bytes  # top byte -> the bits 23:21 values (one-hot) that add row_flag
    row_flag: bytes  # top byte -> WORD_DOUBLE (XTYPE) or WORD_LOOP_SETUP (CR)
    row_writes: bytes  # top byte -> the bits 23:21 values (one-hot) that write a register (CR)
    row_slow: bytes  # top byte -> the bits 23:21 values (one-hot) that need a decoding
    one_hot: bytes  # byte of bits 23:16 -> 1 << bits 23:21
    stack_field: bytes  # byte whose low 5 bits are a register field -> 0xFF for r29/r30
    duplex: bytes  # byte of bits 15:8 -> 0xFF for parse bits 00
    endloop: bytes  # byte of bits 15:8 -> 2 for parse bits 10
    nonzero: bytes  # 0 -> 0, else 0xFF
    nonzero_one: bytes  # 0 -> 0, else 1


def _flag_tables() -> _FlagTables:
    """The tables of _scan_flags, derived from _quick_flags' logic (built once, on the first scan)."""
    columns: dict[str, list[int]] = {
        name: [0] * 256 for name in ("low", "high", "if_base", "if_low_field", "row_flags", "row_flag")
    }
    columns.update({name: [0] * 256 for name in ("row_writes", "row_slow")})
    for top in range(256):
        iclass, nibble, wide = top >> 4, top & 15, top & 8
        rows = [nibble << 3 | row for row in range(8)]
        if iclass == 1:
            columns["low"][top] = WORD_HVX if wide else WORD_BRANCH
            columns["high"][top] = 0 if wide else 1
        elif iclass == 2:
            columns["low"][top] = WORD_HVX | WORD_MEMORY if wide else WORD_BRANCH
            columns["high"][top] = 1 if wide else 0
            columns["if_base"][top] = WORD_STACK_MEMORY if wide else 0
        elif iclass in (7, 0xB, 0xF):
            columns["high"][top] = 1
            columns["if_base"][top] = WORD_STACK_COPY
            columns["if_low_field"][top] = WORD_STACK_COPY if iclass == 0xF else 0
        elif iclass in (9, 0xA):
            columns["low"][top] = WORD_MEMORY
            columns["high"][top] = 1
            columns["if_base"][top] = WORD_STACK_MEMORY
            columns["row_slow"][top] = 1 if iclass == 9 and not top & 9 else 0  # type 0: bits 27, 24 and 23:21 clear
        elif iclass >= 8:
            columns["high"][top] = 1
            columns["if_base"][top] = columns["if_low_field"][top] = WORD_STACK_COPY
            columns["row_flags"][top] = sum(1 << n for n, row in enumerate(rows) if (iclass, row) in _DOUBLE_ROWS)
            columns["row_flag"][top] = WORD_DOUBLE
        elif iclass == 5:
            columns["low"][top] = WORD_BRANCH | WORD_CALL
        elif iclass == 6:
            loops = sum(1 << n for n, row in enumerate(rows) if row in _CR_LOOPS)
            columns["row_flags"][top] = loops
            columns["row_flag"][top] = WORD_LOOP_SETUP
            columns["low"][top] = WORD_BRANCH if nibble == 1 else 0
            columns["row_writes"][top] = 0 if nibble == 1 else 0xFF & ~loops
        elif iclass == 3:
            columns["low"][top] = WORD_MEMORY
            columns["high"][top] = 1 if nibble < 4 or nibble == 0b1010 else 0
            columns["if_base"][top] = WORD_STACK_MEMORY
        elif iclass == 4:
            columns["low"][top] = WORD_MEMORY
            columns["high"][top] = nibble & 1
            columns["if_base"][top] = WORD_STACK_MEMORY if nibble < 8 else 0
    byte_values = range(256)
    return _FlagTables(
        **{name: bytes(values) for name, values in columns.items()},
        one_hot=bytes(1 << (value >> 5) for value in byte_values),
        stack_field=bytes(0xFF if value & 31 in (29, 30) else 0 for value in byte_values),
        duplex=bytes(0xFF if not value & 0xC0 else 0 for value in byte_values),
        endloop=bytes(2 if value & 0xC0 == 0x80 else 0 for value in byte_values),
        nonzero=bytes(0xFF if value else 0 for value in byte_values),
        nonzero_one=bytes(1 if value else 0 for value in byte_values),
    )


_FLAG_TABLES: list[_FlagTables] = []  # built on the first scan: a lint run without binaries never pays for it


def _scan_flags(code: bytes, end: int) -> tuple[array[int], bytes, bytearray]:
    """_quick_flags of every word of code[:end] (0 where it says -1); one byte per word, nonzero where the word's
    flags need its decoding instead; the same flags as little-endian 16-bit lanes (see CodeScan.flag_lanes)."""
    if not _FLAG_TABLES:
        _FLAG_TABLES.append(_flag_tables())
    tables = _FLAG_TABLES[0]
    count = end >> 2
    top, opcode, low_fields = code[3:end:4], code[2:end:4], code[1:end:4]  # bits 31:24, 23:16, 15:8 of each word

    def lanes(column: bytes) -> int:
        return int.from_bytes(column, "little")

    def by_top(table: bytes) -> int:
        return int.from_bytes(top.translate(table), "little")

    def nonzero(value: int, table: bytes) -> int:
        return int.from_bytes(value.to_bytes(count, "little").translate(table), "little")

    row = lanes(opcode.translate(tables.one_hot))
    low = by_top(tables.low)
    low |= by_top(tables.if_base) & lanes(opcode.translate(tables.stack_field))
    low |= by_top(tables.if_low_field) & lanes(low_fields.translate(tables.stack_field))
    low |= nonzero(by_top(tables.row_flags) & row, tables.nonzero) & by_top(tables.row_flag)
    high = by_top(tables.high) | lanes(low_fields.translate(tables.endloop))
    high |= nonzero(by_top(tables.row_writes) & row, tables.nonzero_one)
    slow = (by_top(tables.row_slow) & row) | lanes(low_fields.translate(tables.duplex))
    lanes = bytearray(2 * count)
    lanes[0::2] = low.to_bytes(count, "little")
    lanes[1::2] = high.to_bytes(count, "little")
    flags = array("H", lanes)
    if sys.byteorder == "big":
        flags.byteswap()
    return flags, slow.to_bytes(count, "little"), lanes


def instruction_flags(instruction: Instruction) -> int:
    """The WORD_* flags of one decoded instruction (parse bits aside)."""
    flags = 0
    branch = instruction.branch
    if branch is not None:
        flags = WORD_BRANCH | WORD_CALL if branch == "call" or branch == "callr" else WORD_BRANCH
    if instruction.loop_setup is not None:
        flags |= WORD_LOOP_SETUP
    if instruction.is_hvx:
        flags |= WORD_HVX
    if instruction.float_to_double or instruction.double_arith:
        flags |= WORD_DOUBLE
    memory = instruction.memory
    if memory is not None:
        flags |= WORD_STACK_MEMORY | WORD_MEMORY if memory.base in _STACK_REGISTERS else WORD_MEMORY
    writes = instruction.writes
    if writes:
        flags |= WORD_WRITES
        for write in writes:
            if write.source in _STACK_REGISTERS and write.dest not in _STACK_REGISTERS:
                flags |= WORD_STACK_COPY
    return flags


def _word_flags(word: int, cache: DecodeCache) -> int:
    """A word's flags from its bit fields, else from its decoding without extender (see WORD_*)."""
    flags = _quick_flags(word)
    return flags if flags >= 0 else _slow_word_flags(word, cache)


def _slow_word_flags(word: int, cache: DecodeCache) -> int:
    """The flags of a word _quick_flags leaves open: a duplex's from its halves' opcode bits, others decoded."""
    if not word & 0xC000:
        groups = _DUPLEX_GROUPS[(word >> 29) << 1 | (word >> 13) & 1]
        if groups[0] is None:
            return 0
        return _SUB_FLAGS[groups[0]][(word >> 24) & 31] | _SUB_FLAGS[groups[1]][(word >> 8) & 31]
    return _decoded_word_flags(word, cache)


def _sub_flags(group: str, top: int) -> int:
    """The flags a duplex sub-instruction of `group` whose bits 12:8 are `top` may have (as _decode_sub decodes
    it): only SP-based loads/stores (L2/S2) and add(r29,#u6:2) (A) touch the stack; an L2 return branches."""
    if group == "L1":
        return WORD_MEMORY | WORD_WRITES
    if group == "S1":
        return WORD_MEMORY
    if group == "L2":
        if top >> 1 == 0b1110 or top == 0b11110:  # rD = memw(r29+#u5:2), rDD = memd(r29+#u5:3)
            return WORD_MEMORY | WORD_WRITES | WORD_STACK_MEMORY
        if top >> 3 == 0b11:  # deallocframe, dealloc_return, jumpr r31
            return WORD_BRANCH | WORD_WRITES
        return WORD_MEMORY | WORD_WRITES
    if group == "S2":
        if top >> 3 == 0b00 or top >> 2 == 0b100:  # memh(rS+#u3:1) = rT, memX(rS+#u4) = #0/1
            return WORD_MEMORY
        if top >> 2 == 0b010:  # memw(r29+#u5:2) = rT, memd(r29+#s6:3) = rTT
            return WORD_MEMORY | WORD_STACK_MEMORY
        return WORD_WRITES if top >> 1 == 0b1110 else 0  # allocframe
    if top >> 2 == 0b011:  # rD = add(r29,#u6:2)
        return WORD_WRITES | WORD_STACK_COPY
    return 0 if top in (0b11001, 0b11011, 0b11110, 0b11111) else WORD_WRITES  # p0 = cmp.eq(), unused encodings


_SUB_FLAGS = {group: tuple(_sub_flags(group, top) for top in range(32)) for group in ("L1", "L2", "S1", "S2", "A")}


def _decoded_word_flags(word: int, cache: DecodeCache) -> int:
    """A (non-duplex) word's exact flags, from its full decoding without extender (which fills the word templates
    too)."""
    instruction = _decode_single(word, 0, 0, None, cache.words, [], cache.new_values)
    flags = instruction_flags(instruction)
    return flags | WORD_ENDLOOP_BITS if word & 0xC000 == 0x8000 else flags


_SHARING_BITS: dict[int, bytes] = {}
# 0, 1, 2, ... shared by every scan's word lists (CodeScan.words_with): compress() then selects existing ints instead
# of making one per word of the section (grown to the largest section seen, like the flag tables built once)
_WORD_INDEXES: list[int] = []
_ONE = re.compile(b"\x01")


def _word_indexes(count: int) -> list[int]:
    """A list starting 0, 1, ..., count - 1 (possibly longer: compress stops at the shorter input)."""
    if len(_WORD_INDEXES) < count:
        _WORD_INDEXES.extend(range(len(_WORD_INDEXES), count))
    return _WORD_INDEXES


def _sharing_bits(mask: int) -> bytes:
    """A translate table: byte -> 1 when it shares a bit with `mask` (0..255), else 0."""
    table = _SHARING_BITS.get(mask)
    if table is None:
        table = _SHARING_BITS[mask] = bytes(1 if value & mask else 0 for value in range(256))
    return table


@dataclass(frozen=True, eq=False)
class CodeScan:
    """A code section split into packets, with every word's WORD_* flags, decoded in full only packet by packet as
    asked (`packet`): what decode_packets would return for that packet, built once. scan_code makes one."""

    code: bytes
    address: int
    cache: DecodeCache
    chunks: Sequence[bytes]  # each packet's bytes
    packet_addresses: list[int]  # each packet's address, then the end of the last packet
    words: Sequence[int]  # scan_code: an array("I"), four bytes a word instead of a Python int each
    word_flags: MutableSequence[int]  # scan_code: an array("H")
    # word_flags as little-endian 16-bit lanes (scan_code): words_with tests a mask on them a whole column at a time
    flag_lanes: bytearray = field(default_factory=bytearray)
    _opened: dict[int, Packet] = field(default_factory=dict)
    _words_with: dict[int, list[int]] = field(default_factory=dict)
    _hits: dict[int, bytes] = field(default_factory=dict)
    _endloop_packets: list[tuple[list[int], list[frozenset[int]]]] = field(default_factory=list)  # one entry once known

    def __len__(self) -> int:
        return len(self.chunks)

    def packet(self, index: int) -> Packet:
        packet = self._opened.get(index)
        if packet is None:
            address = self.packet_addresses[index]
            packet = _decode_packet(self.chunks[index], address, self.words, (address - self.address) >> 2, self.cache)
            self._opened[index] = packet
        return packet

    def word_instructions(self, word_index: int, packet_index: int) -> tuple[Instruction, ...]:
        """The instruction of one word (a duplex: both halves) of packet `packet_index`, as packet(packet_index) has
        it; built alone (with the extender before it) unless a new-value operand names an earlier instruction's
        register or the decoder fails."""
        opened = self._opened.get(packet_index)
        address = self.address + (word_index << 2)
        if opened is None:
            words, cache = self.words, self.cache
            word = words[word_index]
            packet_address = self.packet_addresses[packet_index]
            ext = None
            if word_index != (packet_address - self.address) >> 2 and words[word_index - 1] < 0x10000000:
                before = words[word_index - 1]
                ext = ((before >> 16 & 0xFFF) << 14 | (before & 0x3FFF)) << 6
            if not word & 0xC000:
                return _decode_duplex_cached(word, address, ext, cache.duplexes)
            key = word if ext is None else (word, ext)
            fields = cache.words.get(key)
            if fields is not None:
                return (_at(fields, address),)
            relative = cache.relative_words.get(key)
            if relative is not None:
                return (_relative_at(*relative, packet_address, address),)
            instruction = self._first_decoding(word, key, ext, packet_index, packet_address, address)
            if instruction is not None:
                return (instruction,)
            opened = self.packet(packet_index)
        return tuple([instruction for instruction in opened.instructions if instruction.address == address])

    def _first_decoding(
        self,
        word: int,
        key: int | tuple[int, int],
        ext: int | None,
        packet_index: int,
        packet_address: int,
        address: int,
        try_light: bool = True,
    ) -> Instruction | None:
        """A (non-duplex) word no template knows, decoded alone (light where it can, see _LIGHT_DECODERS, unless
        the caller found it is not light) and remembered as a template; a new-value operand is named from the
        instructions of the words before it in its packet; None where the packet must be decoded (a decoder
        failure)."""
        cache = self.cache
        pending = cache.new_values.get(key)
        if pending is None:
            light = _LIGHT_DECODERS[word >> 28](word, packet_address, ext) if try_light else None
            if light is not None:
                return self._light_instruction(light, key, packet_index, packet_address, address)
            try:
                instruction = _DECODERS[word >> 28](word, address, packet_address, ext)
            except Exception:  # as _decode_single: the packet makes it UNKNOWN
                return None
            if _NEW_VALUE not in instruction.text:
                if instruction.target is None and instruction.loop_setup is None:
                    cache.words[key] = instruction.__dict__
                else:
                    split = _split_relative(instruction, packet_address)
                    if split is not None:
                        cache.relative_words[key] = (instruction.__dict__, *split)
                return instruction
            pending = _pending_new_value(instruction)
            if instruction.target is None and instruction.loop_setup is None:
                cache.new_values[key] = pending
        return _named_by_register(pending, self._operand_register(pending, packet_index, address), address)

    def _operand_register(self, pending: _PendingNewValue, packet_index: int, address: int) -> str:
        """The register the new-value operand of `pending` (at `address`) names: the one written by the instruction
        its distance places before it in its packet, constant extenders not counted (see _named_new_value). The
        words before a new-value operand are never duplexes (a duplex ends its packet), so each is one instruction;
        an extender widens an immediate, never the register a word writes: learned once per producer word."""
        words, base = self.words, self.address
        first = (self.packet_addresses[packet_index] - base) >> 2
        distance, is_hvx = pending[1], pending[0].is_hvx
        for index in range(((address - base) >> 2) - 1, first - 1, -1):
            if words[index] >= 0x10000000:  # not an extender
                distance -= 1
                if distance == 0:
                    key = words[index] | is_hvx << 32  # a vector and a scalar operand read different facts
                    registers = self.cache.producer_registers
                    register = registers.get(key)
                    if register is None:
                        producer = self.word_instructions(index, packet_index)[0]
                        register = registers[key] = _register_written_by(producer, is_hvx)
                    return register
                if distance < 0:
                    break
        return "v?" if is_hvx else "r?"

    def _light_instruction(
        self,
        fields: dict[str, object],
        key: int | tuple[int, int],
        packet_index: int,
        packet_address: int,
        address: int,
    ) -> Instruction:
        """The instruction of a light decoding (see _LIGHT_DECODERS), remembered like word_instructions' decodings."""
        if "_new_value" in fields:  # its text names a register of this very packet
            fields["_in_packet"] = (self, packet_index)
            return _at(fields, address)
        setup = fields.get("loop_setup")
        target = fields.get("target") if setup is None else setup.start  # type: ignore[attr-defined]
        if target is None:
            self.cache.words[key] = fields
        else:  # the template is this instruction's own dict, which keeps no text (_LazyText): copies change it
            self.cache.relative_words[key] = (fields, (target - packet_address) & _MASK32, None, None)
        return _at(fields, address)

    def endloop(self, index: int) -> frozenset[int]:
        """packet(index).endloop, from the parse bits alone."""
        first = (self.packet_addresses[index] - self.address) >> 2
        size = (self.packet_addresses[index + 1] - self.address >> 2) - first
        markers = 0
        if size >= 2 and self.words[first] & 0xC000 == 0x8000:
            markers = 1
        if size >= 3 and self.words[first + 1] & 0xC000 == 0x8000:
            markers |= 2
        return _ENDLOOPS[markers - 1] if markers else _NO_ENDLOOP

    def endloop_packets(self) -> tuple[list[int], list[frozenset[int]]]:
        """The ascending indexes of the packets with :endloop markers, and their markers (computed once)."""
        found = self._endloop_packets
        if not found:
            # as endloop(): parse bits 10 in a packet's first word (of two or more) or second word (of three or more)
            addresses, base = self.packet_addresses, self.address
            by_packet: dict[int, int] = {}
            packet, packet_start, packet_end = -1, 0, 0
            for word in self.words_with(WORD_ENDLOOP_BITS):
                if word >= packet_end:
                    packet = bisect_right(addresses, base + (word << 2), packet + 1) - 1
                    packet_start, packet_end = (addresses[packet] - base) >> 2, (addresses[packet + 1] - base) >> 2
                position = word - packet_start
                if position < 2 and packet_end - packet_start >= position + 2:
                    by_packet[packet] = by_packet.get(packet, 0) | position + 1
            packets = sorted(by_packet)
            found.append((packets, [_ENDLOOPS[by_packet[packet] - 1] for packet in packets]))
        return found[0]

    def packet_flags(self, index: int) -> int:
        """The union of the flags of the packet's words (WORD_ENDLOOP_BITS left out)."""
        flags = 0
        for value in self.word_flags[
            (self.packet_addresses[index] - self.address) >> 2 : (self.packet_addresses[index + 1] - self.address) >> 2
        ]:
            flags |= value
        return flags & ~WORD_ENDLOOP_BITS

    def words_with(self, mask: int) -> list[int]:
        """Ascending indexes of the words whose flags share a bit with `mask` (computed once per mask)."""
        found = self._words_with.get(mask)
        if found is None:
            hits = self.hits(mask)
            if hits.count(1) < len(hits) >> 6:  # few (:endloop bits): found by the regex engine, not a whole pass
                found = [match.start() for match in _ONE.finditer(hits)]
            else:
                found = list(compress(_word_indexes(len(hits)), hits))
            self._words_with[mask] = found
        return found

    def hits(self, mask: int) -> bytes:
        """One byte a word: 1 where its flags share a bit with `mask`, else 0 (computed once per mask)."""
        found = self._hits.get(mask)
        if found is None:
            count = len(self.word_flags)
            lanes = self.flag_lanes
            if len(lanes) != 2 * count:  # a scan made by hand
                found = bytes(1 if flags & mask else 0 for flags in self.word_flags)
            else:
                found = lanes[0::2].translate(_sharing_bits(mask & 0xFF))
                if mask >> 8:
                    high = lanes[1::2].translate(_sharing_bits(mask >> 8 & 0xFF))
                    found = (int.from_bytes(found, "little") | int.from_bytes(high, "little")).to_bytes(count, "little")
            self._hits[mask] = found = bytes(found)
        return found

    def range(self, low: int, high: int) -> PacketRange:
        return PacketRange(self, low, high)


class PacketRange(Sequence[Packet]):
    """Packets low..high-1 of a CodeScan as a sequence (each decoded on first access), with the scan's summaries of
    the range: where the packets are, and which hold words with given flags, without decoding the others."""

    __slots__ = ("high", "low", "scan")

    def __init__(self, scan: CodeScan, low: int, high: int) -> None:
        self.scan, self.low, self.high = scan, low, high

    def __len__(self) -> int:
        return self.high - self.low

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return tuple(self[position] for position in range(*index.indices(self.high - self.low)))
        if index < 0:
            index += self.high - self.low
        if not 0 <= index < self.high - self.low:
            raise IndexError(index)
        return self.scan.packet(self.low + index)

    def __iter__(self):  # type: ignore[no-untyped-def]
        packet = self.scan.packet
        return (packet(index) for index in range(self.low, self.high))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(mine == theirs for mine, theirs in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PacketRange(0x{self.scan.packet_addresses[self.low]:x}, {self.high - self.low} packets)"

    @property
    def addresses(self) -> list[int]:
        """Each packet's address."""
        return self.scan.packet_addresses[self.low : self.high]

    @property
    def ends(self) -> list[int]:
        """Each packet's end address."""
        return self.scan.packet_addresses[self.low + 1 : self.high + 1]

    def flags(self, index: int) -> int:
        """The union of the WORD_* flags of the words of packet `index` (WORD_ENDLOOP_BITS left out)."""
        return self.scan.packet_flags(self.low + index)

    def word_range(self) -> tuple[int, int]:
        addresses, base = self.scan.packet_addresses, self.scan.address
        return (addresses[self.low] - base) >> 2, (addresses[self.high] - base) >> 2

    def words_with(self, mask: int) -> list[int]:
        """Addresses of the words of the range whose flags share a bit with `mask`."""
        found = self.scan.words_with(mask)
        first, last = self.word_range()
        base = self.scan.address
        return [base + (word << 2) for word in found[bisect_left(found, first) : bisect_left(found, last)]]

    def packet_reader(self, mask: int) -> Callable[[int], list[tuple[int, dict[str, object]]]]:
        """A function: packet index (in the range) -> (address, field dict) of the instructions of that packet whose
        words' flags share a bit with `mask`, in packet order, as fields_with has them (instruction_at(fields,
        address) is the instruction). Each packet is read once (a data flow visits a loop's packets more than once):
        a later call returns the same list, which callers never change."""
        scan, low = self.scan, self.low
        base, addresses, flags, words, opened = (
            scan.address,
            scan.packet_addresses,
            scan.word_flags,
            scan.words,
            scan._opened,
        )
        templates, relative_templates = scan.cache.words, scan.cache.relative_words
        get_template, get_relative, get_duplex = templates.get, relative_templates.get, scan.cache.duplexes.get
        light_decoders, light_instruction, first_decoding = (
            _LIGHT_DECODERS,
            scan._light_instruction,
            scan._first_decoding,
        )
        read: dict[int, list[tuple[int, dict[str, object]]]] = {}

        def instructions_of(index: int) -> list[tuple[int, dict[str, object]]]:
            result = read.get(index)
            if result is not None:
                return result
            result = read[index] = []
            packet = low + index
            packet_address = addresses[packet]
            first = (packet_address - base) >> 2
            closed = packet not in opened
            for word_index in range(first, (addresses[packet + 1] - base) >> 2):
                if not flags[word_index] & mask:
                    continue
                word = words[word_index]
                address = base + (word_index << 2)
                # as fields_with: built alone when no extender is before it and its packet is not decoded
                alone = closed and (word_index == first or words[word_index - 1] >= 0x10000000)
                if not word & 0xC000:  # a duplex
                    halves = get_duplex(word) if alone else None
                    if halves is not None:
                        result.extend([(address, fields) for fields in halves])
                        continue
                elif alone:
                    fields = get_template(word)
                    relative = None if fields is not None else get_relative(word)
                    if relative is not None and relative[2] is None and "loop_setup" not in relative[0]:
                        fields = relative[0].copy()  # a light jump or call seen before: _relative_at inlined
                        fields["_packet"] = packet_address
                        fields["target"] = (packet_address + relative[1]) & _MASK32
                    elif fields is None and relative is None:
                        fields = light_decoders[word >> 28](word, packet_address, None)
                        if fields is None:
                            instruction = first_decoding(word, word, None, packet, packet_address, address, False)
                            if instruction is not None:
                                result.append((address, instruction.__dict__))
                                continue
                            closed = scan.packet(packet) is None  # the word needs its packet (see instructions_with)
                        elif "_packet" in fields:  # PC-relative, a loop set-up or a new-value jump
                            instruction = light_instruction(fields, word, packet, packet_address, address)
                            result.append((address, instruction.__dict__))
                            continue
                        else:
                            templates[word] = fields
                    if fields is not None:
                        result.append((address, fields))
                        continue
                result.extend([(address, x.__dict__) for x in scan.word_instructions(word_index, packet)])
            return result

        return instructions_of

    def pc_additions(self) -> list[tuple[int, dict[str, object]]]:
        """(packet index in the range, field dict) of the `rD = add(pc,#u6)` words of the range, in address order: the
        only instructions whose register write reads the PC (position-independent addresses), without decoding the
        packets of the others."""
        scan, low = self.scan, self.low
        words, addresses, base = scan.words, scan.packet_addresses, scan.address
        first, last = self.word_range()
        result = []
        for index in [index for index in range(first, last) if words[index] >> 16 == _PC_ADD_TOP]:
            packet = bisect_right(addresses, base + (index << 2), low, self.high) - 1
            result += [(packet - low, instruction.__dict__) for instruction in scan.word_instructions(index, packet)]
        return result

    def count_words_with(self, mask: int) -> tuple[int, int | None]:
        """How many words of the range have flags sharing a bit with `mask`, and the address of the first."""
        hits = self.scan.hits(mask)  # counted in C: no list of the (many) HVX words
        first, last = self.word_range()
        count = hits.count(1, first, last)
        return count, self.scan.address + (hits.index(1, first, last) << 2) if count else None

    def endloop(self, index: int) -> frozenset[int]:
        """self[index].endloop, without decoding the packet."""
        return self.scan.endloop(self.low + index)

    def endloops(self) -> dict[int, frozenset[int]]:
        """Index -> :endloop markers of every packet that has some, without decoding the packets."""
        packets, markers = self.scan.endloop_packets()
        low, high = bisect_left(packets, self.low), bisect_left(packets, self.high)
        return {packets[position] - self.low: markers[position] for position in range(low, high)}

    def instructions_with(self, mask: int) -> list[tuple[int, Instruction]]:
        """(index in the range, instruction) of every word whose flags share a bit with `mask` (WORD_ENDLOOP_BITS
        aside), in address order, as the decoded packets have them; a packet is decoded only where one of its words
        cannot be decoded alone (see CodeScan.word_instructions)."""
        return [(position, _at(fields, address)) for position, address, fields in self.fields_with(mask)]

    def fields_with(self, mask: int) -> list[tuple[int, int, dict[str, object]]]:
        """instructions_with as (index in the range, address, the instruction's field dict): instruction_at(fields,
        address) is the instruction. A caller that reads a few fields of most words builds no object for them."""
        scan = self.scan
        found = scan.words_with(mask & ~WORD_ENDLOOP_BITS)
        first, last = self.word_range()
        addresses, base, low, words, opened = scan.packet_addresses, scan.address, self.low, scan.words, scan._opened
        templates = scan.cache.words
        relative_templates = scan.cache.relative_words
        get_template, get_relative, get_duplex = templates.get, relative_templates.get, scan.cache.duplexes.get
        instructions_of, first_decoding = scan.word_instructions, scan._first_decoding
        light_decoders, light_instruction = _LIGHT_DECODERS, scan._light_instruction
        result: list[tuple[int, int, dict[str, object]]] = []
        append = result.append
        packet, high = low - 1, self.high
        packet_start = packet_end = -1  # the current packet's first word, and the first word after it
        position = packet_address = 0  # the current packet's index in the range, and its address
        closed = True  # the current packet is not decoded: its words are built one by one
        for index in found[bisect_left(found, first) : bisect_left(found, last)]:
            address = base + (index << 2)
            if index >= packet_end:
                # every packet holds a word: the word's packet is at most (index - packet_end) packets further
                limit = packet + 2 + index - packet_end
                packet = bisect_right(addresses, address, packet + 1, limit if limit < high else high) - 1
                packet_address = addresses[packet]
                packet_start, packet_end = (packet_address - base) >> 2, (addresses[packet + 1] - base) >> 2
                position = packet - low
                closed = packet not in opened
            word = words[index]
            # the common cases inline (as word_instructions): no extender before it, its packet not decoded
            alone = closed and (index == packet_start or words[index - 1] >= 0x10000000)
            if not word & 0xC000:  # a duplex: both halves, as word_instructions builds them
                halves = get_duplex(word) if alone else None
                if halves is not None:
                    for fields in halves:
                        append((position, address, fields))
                    continue
            elif alone:
                fields = get_template(word)
                if fields is not None:  # most words are seen before
                    append((position, address, fields))
                    continue
                relative = get_relative(word)
                if relative is not None:
                    fields = relative[0]
                    if relative[2] is None and "loop_setup" not in fields:  # a light jump or call: _relative_at inlined
                        fields = fields.copy()
                        fields["_packet"] = packet_address
                        fields["target"] = (packet_address + relative[1]) & _MASK32
                        append((position, address, fields))
                    else:
                        append((position, address, _relative_at(*relative, packet_address, address).__dict__))
                    continue
                fields = light_decoders[word >> 28](word, packet_address, None)
                if fields is not None:  # first_decoding inlined for a light word: most first decodings are
                    if "_packet" in fields:  # PC-relative, a loop set-up or a new-value jump: their packet counts
                        target = fields.get("target")
                        if target is None or "_new_value" in fields:
                            instruction = light_instruction(fields, word, packet, packet_address, address)
                            append((position, address, instruction.__dict__))
                            continue
                        # a jump or call: _light_instruction inlined (~7k new ones an audit of upstream v79)
                        relative_templates[word] = (fields, (target - packet_address) & _MASK32, None, None)
                    else:
                        templates[word] = fields
                    append((position, address, fields))
                    continue
                instruction = first_decoding(word, word, None, packet, packet_address, address, False)
                if instruction is not None:
                    append((position, address, instruction.__dict__))
                    continue
                scan.packet(packet)  # the word needs its packet: word_instructions reads it from the decoded packet
                closed = False
            for instruction in instructions_of(index, packet):
                append((position, address, instruction.__dict__))
        return result


def scan_code(code: bytes, base_address: int, cpu: int = 0x73, cache: DecodeCache | None = None) -> CodeScan:
    """Split a code section into packets and flag every word (one full decoding per distinct word, shared through
    `cache` like decode_packets'), decoding no packet yet: a caller that needs few packets opens only those."""
    end = len(code) // 4 * 4
    if cache is None:
        cache = _SHARED_CACHE
    if len(cache) > cache.limit:
        cache.clear()
    addresses = _packet_addresses(code, end, base_address)
    words = array("I", code[:end])
    if sys.byteorder == "big":
        words.byteswap()
    flags, slow, lanes = _scan_flags(code, end)
    table = cache.flags
    collecting = gc.isenabled()
    gc.disable()
    try:
        for index in compress(_word_indexes(len(slow)), slow):  # shared ints: no int made per word
            word = words[index]
            value = table.get(word)
            if value is None:
                value = table[word] = _slow_word_flags(word, cache)
            flags[index] = value
            lanes[2 * index] = value & 0xFF
            lanes[2 * index + 1] = value >> 8
    finally:
        if collecting:
            gc.enable()
    chunks = _PacketBytes(code, addresses, base_address)
    return CodeScan(code, base_address, cache, chunks, addresses, words, flags, flag_lanes=lanes)


# One packet's bytes: up to three words whose parse bits (bits 15:14, the top of the second byte) say "more" (01, 10),
# then one that ends it (11, or 00 for a duplex); else four words (a packet never exceeds four); else a cut-short tail.
# No possessive `{0,3}+` (Python 3.11+): a "more" word never matches the end word, so backtracking finds nothing else.
_PACKET_BYTES = re.compile(rb"(?:.[\x40-\xbf]..){0,3}.[^\x40-\xbf]..|.{16}|(?:....){1,3}", re.DOTALL)
# bits 15:8 of a word -> 1 where its parse bits end a packet (11, or 00 for a duplex)
_PACKET_END = bytes(1 if value & 0xC0 in (0x00, 0xC0) else 0 for value in range(256))


def _packet_addresses(code: bytes, end: int, base_address: int) -> list[int]:
    """Each packet's address, then the end of the last one: the packets _PACKET_BYTES finds, from the parse bits
    of all the words at once (a packet ends after each word whose parse bits end one)."""
    count = end >> 2
    ends = code[1:end:4].translate(_PACKET_END)
    if b"\0\0\0\0" in ends:  # four words without an end: not code, _PACKET_BYTES's 16-byte rule splits them
        return list(accumulate(map(len, _PACKET_BYTES.findall(code, 0, end)), initial=base_address))
    addresses = [base_address]
    addresses += compress(range(base_address + 4, base_address + 4 * count + 4, 4), ends)
    if addresses[-1] != base_address + 4 * count:  # a last packet cut short
        addresses.append(base_address + 4 * count)
    return addresses


def packet_span(code: bytes, base_address: int, low: int, high: int) -> tuple[int, int] | None:
    """(start, end) addresses of the fewest whole packets of `code` (as scan_code splits it) that hold the bytes at
    low..high-1, so that scan_code of those bytes alone has exactly those packets, words and flags; None when the
    section does not split into packets word by word (four words without a packet end: a 16-byte rule splits them
    from the start) or when low..high is not inside it."""
    end = len(code) // 4 * 4
    if not base_address <= low <= high <= base_address + end:
        return None
    ends = code[1:end:4].translate(_PACKET_END)  # 1 at each word that ends a packet
    if b"\0\0\0\0" in ends:
        return None
    first, last = (low - base_address) >> 2, (high - base_address + 3) >> 2  # words low..high-1 are first..last-1
    start = ends.rfind(1, 0, first) + 1  # after the last packet end before the first word (-1 + 1: the section's)
    stop = ends.find(1, last - 1) + 1 if last > first else start  # through the end of the last word's packet
    if stop == 0:  # the last packet is cut short by the section's end
        stop = end >> 2
    return base_address + 4 * start, base_address + 4 * stop


class _PacketBytes(Sequence[bytes]):
    """CodeScan.chunks: each packet's bytes, sliced from the section when asked (most packets never are)."""

    __slots__ = ("addresses", "base", "code")

    def __init__(self, code: bytes, addresses: list[int], base: int) -> None:
        self.code, self.addresses, self.base = code, addresses, base

    def __len__(self) -> int:
        return len(self.addresses) - 1

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return [self[position] for position in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.code[self.addresses[index] - self.base : self.addresses[index + 1] - self.base]


_MASK32 = 0xFFFFFFFF


def _decode_code(code: bytes, end: int, base_address: int, cache: DecodeCache) -> list[Packet]:
    """One pass over the packets (see _decode_packet)."""
    words = struct.unpack_from(f"<{end // 4}I", code)
    packets: list[Packet] = []
    append_packet = packets.append
    address = base_address
    index = 0  # of the packet's first word
    for chunk in _PACKET_BYTES.findall(code, 0, end):
        append_packet(_decode_packet(chunk, address, words, index, cache))
        address += len(chunk)
        index += len(chunk) >> 2
    return packets


def _decode_packet(chunk: bytes, address: int, words: Sequence[int], index: int, cache: DecodeCache) -> Packet:
    """The packet whose bytes are `chunk` at `address`; its words are words[index:]. Code repeats itself, whole
    packets included: a packet's instructions depend only on its bytes and its address, and on the address only
    through PC-relative targets, so a packet seen twice is rebuilt from a template (fields copied, address and relative
    targets re-applied) instead of decoded again. A packet seen once is decoded word by word; a word decoded once (with
    the same extender) is copied from a word template with its new address, unless it is PC-relative. The parse bits
    10 of a packet's first and second words mark :endloop0/1."""
    packet_templates = cache.packets
    size = len(chunk)
    template = packet_templates.get(chunk)
    if template is not None and template.__class__ is Packet:  # second sight: worth a template
        template = packet_templates[chunk] = _packet_template(template)  # type: ignore[arg-type]
    instructions: list[Instruction] = []
    append = instructions.append
    new, set_attributes, set_address, instruction_class = _new, _set, _set_address, Instruction
    if template is None:  # first sight (most packets are never seen again), or a text that will not split
        get_template = cache.words.get
        word_address = address
        markers = 0  # bit 0: first word's parse bits are 10, bit 1: second word's
        ext: int | None = None
        for word in words[index : index + (size >> 2)]:
            parse = word & 0xC000
            if parse:
                word_template = get_template(word if ext is None else (word, ext))
                if word_template is None:
                    append(
                        _decode_single(word, word_address, address, ext, cache.words, instructions, cache.new_values)
                    )
                else:
                    instruction = new(instruction_class)
                    set_attributes(instruction, "__dict__", word_template)
                    set_address(instruction, word_address)
                    append(instruction)
                if parse == 0x8000 and word_address - address < 8:
                    markers |= 1 if word_address == address else 2
            else:
                instructions.extend(_decode_duplex_cached(word, word_address, ext, cache.duplexes))
            ext = ((word >> 16 & 0xFFF) << 14 | (word & 0x3FFF)) << 6 if word < 0x10000000 else None
            word_address += 4
        # :endloop0 needs a second word and :endloop1 a third: a shorter packet was cut short, its marker is void
        markers &= (0, 0, 1, 3, 3)[size >> 2]
        endloop = _ENDLOOPS[markers - 1] if markers else _NO_ENDLOOP
    else:
        entries, relative, endloop = template  # type: ignore[misc]
        for offset, fields in entries:
            instruction = new(instruction_class)
            set_attributes(instruction, "__dict__", fields)
            set_address(instruction, address + offset)
            append(instruction)
        if relative is not None:
            _apply_relative(instructions, relative, address)
    packet = new(Packet)
    set_attributes(
        packet, "__dict__", {"address": address, "size": size, "instructions": tuple(instructions), "endloop": endloop}
    )
    if template is None:
        packet_templates.setdefault(chunk, packet)
    return packet


def _apply_relative(instructions: list[Instruction], relative: tuple[_RelativeEntry, ...], address: int) -> None:
    """Rebuild the packet's PC-relative instructions for a packet at `address`."""
    for index, offset, fields, distance, before, after in relative:
        instructions[index] = _relative_at(fields, distance, before, after, address, address + offset)


def _relative_at(
    fields: dict[str, object], distance: int, before: str | None, after: str | None, packet_address: int, address: int
) -> Instruction:
    """A PC-relative instruction (see _split_relative) rebuilt at `address` in a packet at `packet_address`."""
    target = (packet_address + distance) & _MASK32
    attributes = fields.copy()
    if before is None:  # a light decoding: its text is rendered for this packet when read
        attributes["_packet"] = packet_address
    else:
        attributes["text"] = f"{before}0x{target:x}{after}"
    if "loop_setup" in attributes:
        setup = attributes["loop_setup"]
        attributes["loop_setup"] = LoopSetup(
            setup.loop, target, setup.count_imm, setup.count_reg, setup.pipelined_stages
        )  # type: ignore[attr-defined]
    else:
        attributes["target"] = target
    instance = _new(Instruction)  # _at inlined: ~10k PC-relative words a library
    _set(instance, "__dict__", attributes)
    _set_address(instance, address)
    return instance


def _split_relative(instruction: Instruction, packet_address: int) -> tuple[int, str, str] | None:
    """(target - packet address, text before the target, text after it) of a PC-relative instruction; None when
    the text does not split around its target."""
    target = instruction.target if instruction.loop_setup is None else instruction.loop_setup.start
    rendered = f"0x{target:x}"
    text = instruction.text
    if text.count(rendered) != 1:
        return None
    before, _, after = text.partition(rendered)
    return (target - packet_address) & _MASK32, before, after  # type: ignore[operator]


def _packet_template(packet: Packet) -> _PacketTemplate | None:
    """What rebuilds `packet` at another address, or None when a PC-relative text cannot be split around its target."""
    entries: list[_Entry] = []
    relative: list[_RelativeEntry] = []
    for index, instruction in enumerate(packet.instructions):
        offset = instruction.address - packet.address
        fields = instruction.__dict__
        entries.append((offset, fields))
        if instruction.target is None and instruction.loop_setup is None:
            continue
        split = _split_relative(instruction, packet.address)
        if split is None:
            return None
        relative.append((index, offset, fields, *split))
    return tuple(entries), tuple(relative) if relative else None, packet.endloop


def _decode_single(
    word: int,
    address: int,
    packet_address: int,
    ext: int | None,
    templates: dict[int | tuple[int, int], dict[str, object]],
    earlier: list[Instruction],
    new_values: dict[int | tuple[int, int], _PendingNewValue],
) -> Instruction:
    """A word the templates do not know; `earlier` holds the packet's instructions before it (for new-values)."""
    key = word if ext is None else (word, ext)
    pending = new_values.get(key)
    if pending is not None:
        return _named_new_value(pending, earlier, address)
    try:
        instruction = _DECODERS[word >> 28](word, address, packet_address, ext)
        if _NEW_VALUE in instruction.text:  # depends on the packet: a template per producer register
            pending = _pending_new_value(instruction)
            if instruction.target is None and instruction.loop_setup is None:
                new_values[key] = pending
            return _named_new_value(pending, earlier, address)
    except Exception:  # a decoder bug must never take the audit down: the word becomes UNKNOWN
        instruction = _unknown(word, address, "UNKNOWN")
    if instruction.target is None and instruction.loop_setup is None:
        templates[key] = instruction.__dict__
    return instruction


def _pending_new_value(instruction: Instruction) -> _PendingNewValue:
    """A new-value instruction with its operand unnamed, the packet distance to its producer, no field dicts yet."""
    text = instruction.text
    start = text.index(_NEW_VALUE) + len(_NEW_VALUE)
    return instruction, int(text[start : text.index(">", start)]), {}


def _named_new_value(pending: _PendingNewValue, earlier: list[Instruction], address: int) -> Instruction:
    """Name the register of a new-value operand: the one written by the instruction D places back in the packet
    (constant extenders do not count), as LLVM prints it ("r2.new")."""
    distance = pending[1]
    producers = [i for i in earlier if i.iclass != "EXT"]
    producer = producers[-distance] if 0 < distance <= len(producers) else None
    return _named_by_register(pending, _register_written_by(producer, pending[0].is_hvx), address)


def _register_written_by(producer: Instruction | None, is_hvx: bool) -> str:
    """The register a new-value operand names: the one `producer` writes (r?/v? where none is known)."""
    if is_hvx:  # vector writes are not tracked: name it only when the producer's text does
        written = producer.text.split(" = ")[0].split(".")[0] if producer is not None else ""
        return written if written[:1] == "v" and written[1:].isdigit() else "v?"
    return producer.writes[0].dest if producer is not None and producer.writes else "r?"


def _named_by_register(pending: _PendingNewValue, register: str, address: int) -> Instruction:
    """The new-value instruction of `pending` at `address`, its operand named `register`."""
    instruction, _, by_register = pending
    fields = by_register.get(register)
    if fields is None:
        fields = by_register[register] = _with_new_value(instruction, register)
    if fields.get("target") is not None:  # a new-value jump is PC-relative: its text and target are this word's own
        return _at(_with_new_value(instruction, register), address)
    return _at(fields, address)


def _with_new_value(instruction: Instruction, register: str) -> dict[str, object]:
    """The fields of `instruction` with its new-value operand named `register`."""
    text = instruction.text
    start = text.index(_NEW_VALUE)
    attributes = dict(instruction.__dict__)
    attributes["text"] = text[:start] + register + text[text.index(">", start) + 1 :]
    memory = instruction.memory
    if memory is not None:
        attributes["memory"] = _memory(
            memory.base,
            memory.offset,
            memory.is_store,
            memory.is_vector,
            memory.size,
            memory.post_increment,
            None if register in ("r?", "v?") else register,
            memory.increment,
        )
    return attributes


def _decode_duplex_cached(
    word: int, address: int, ext: int | None, templates: dict[int | tuple[int, int], tuple[dict[str, object], ...]]
) -> tuple[Instruction, ...]:
    key = word if ext is None else (word, ext)
    cached = templates.get(key)
    if cached is not None:  # two halves, or one UNKNOWN word: no list comprehension frame for one or two
        return (_at(cached[0], address), _at(cached[1], address)) if len(cached) == 2 else (_at(cached[0], address),)
    try:
        decoded = _decode_duplex(word, address, ext)
    except Exception:  # as above
        decoded = (_unknown(word, address, "UNKNOWN"),)
    templates[key] = (decoded[0].__dict__, decoded[1].__dict__) if len(decoded) == 2 else (decoded[0].__dict__,)
    return decoded
