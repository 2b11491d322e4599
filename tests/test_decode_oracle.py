"""hexlint's decoder against LLVM's disassembler, on every instruction of binaries built from our own C and assembly.

Each library is compared with `llvm-objdump-22 -d --mcpu=hexagonvNN` when it is installed, else with the gzip'd dump
committed next to it (tests/data/decoder/, made by build.sh). What must agree, instruction by instruction: packet
boundaries, `:endloop` markers, jump/call targets and kinds, loop set-ups, memory base/offset/direction/size, HVX-ness,
double-precision flags, and the register writes of adds and copies.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from hexlint.elf.reader import CodeSection, load_elf
from hexlint.hexagon.decode import Instruction, Packet, decode_packets

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "decoder"
OBJDUMP = "llvm-objdump-22"

# with or without --no-show-raw-insn: "   10584:\te4 40 03 76\t760340e4 { \tr4 = ..." or "   10584: { \tr4 = ..."
_LINE = re.compile(r"^\s*([0-9a-f]+):(?:\t(?:[0-9a-f]{2} ){3}[0-9a-f]{2}\t([0-9a-f]{8}))? ([{ ]) \t(.*)$")
_BRANCH = re.compile(r"\b(call|jump)(?::n?t)? (0x[0-9a-f]+)")
_LOOP = re.compile(r"\b(?:sp([123]))?loop([01])\((0x[0-9a-f]+),(?:#(0x[0-9a-f]+)|(r\d+))\)")
_MEM = re.compile(r"\b(v?mem[a-z_]*)\(((?:[^()]|\([^()]*\))*)\)")
_HVX = re.compile(r"\b(?:v\d+|q[0-3]|vmem\w*|vtmp|vgather|vscatter|vhist|vwhist\w*)\b")
_DOUBLE = re.compile(r"\b(?:df[\w.]+|convert_\w*df\w*)\(")
_ADD_IMM = re.compile(r"^(?:if \([^)]*\) )?(r\d+) = add\((r\d+),#(-?0x[0-9a-f]+)\)$")
_COPY = re.compile(r"^(?:if \([^)]*\) )?(r\d+) = (r\d+)$")
_COMBINE = re.compile(r"^(?:if \([^)]*\) )?r(\d+):(\d+) = combine\((r\d+|#+-?0x[0-9a-f]+),(r\d+|#+-?0x[0-9a-f]+)\)$")
_DEST = re.compile(r"^(?:if \([^)]*\) )?r(\d+)(?::(\d+))?(?:\.[hl])? *(?:[-+&|^]|<<|>>)?= ")


def expected_scalar_writes(text: str) -> set[str] | None:
    """The general registers LLVM's text says an instruction writes; None for calls (they clobber implicitly)."""
    if re.search(r"callr?", text):
        return None
    written: set[str] = set()
    for part in text.split(";"):
        match = _DEST.match(part.strip())
        if match:
            written.add(f"r{match[1]}")
            if match[2]:
                written.add(f"r{match[2]}")
    written.update(re.findall(r"\((r\d+)\+\+", text))  # post-increment
    written.update(re.findall(r"\((r\d+)=#", text))  # absolute-set
    raw_frame = re.search(r"allocframe\((r\d+),", text)
    if "allocframe" in text and "deallocframe" not in text:
        written.update((raw_frame[1] if raw_frame else "r29", "r30"))
    if "deallocframe" in text or "dealloc_return" in text:
        written.update(("r29",) if ":raw" in text else ("r29", "r30", "r31"))
    return written


@dataclass(frozen=True)
class OracleInstruction:
    address: int
    word: int | None  # None in a listing made with --no-show-raw-insn
    text: str


@dataclass(frozen=True)
class OraclePacket:
    address: int
    size: int
    instructions: tuple[OracleInstruction, ...]
    endloop: frozenset[int]


def parse_objdump(text: str) -> list[OraclePacket]:
    """Packets of an `llvm-objdump -d` listing of .text (duplex halves become two instructions of one word)."""
    packets: list[OraclePacket] = []
    current: list[OracleInstruction] = []
    start = 0
    words = 0
    for line in text.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        address, opener, body = int(match[1], 16), match[3], match[4]
        word = int(match[2], 16) if match[2] else None
        if opener == "{" or (not current and not words):
            current, start, words = [], address, 0
        words += 1
        body = re.sub(r" <[^>]*>", "", body)
        endloop: frozenset[int] = frozenset()
        closing = re.search(r" \}(?:\s+:endloop(0?1?))?$", body)
        if closing:
            marker = closing[1] or ""
            endloop = frozenset(int(c) for c in marker)
            body = body[: closing.start()]
        for part in body.split("; \t"):
            current.append(OracleInstruction(address, word, part.strip()))
        if closing:
            packets.append(OraclePacket(start, 4 * words, tuple(current), endloop))
            current, words = [], 0
    return packets


def _number(text: str) -> int:
    return int(text, 16) if not text.startswith("-") else -int(text[1:], 16)


def _expected_memory(text: str) -> tuple[str, int | None, bool, bool] | None:
    """(base, offset, is_store, post_increment) from LLVM's text of a memory instruction, else None."""
    match = _MEM.search(text)
    if not match:
        return None
    name, operand = match[1], match[2]
    if name.endswith("_phys") or name == "memcpy":  # physical-address loads and DMA copies are not data accesses
        return None
    scale = 128 if name.startswith("vmem") else 1
    unconditional = re.sub(r"^if \([^)]*\) ", "", text)
    is_store = unconditional.startswith(("mem", "vmem"))
    if "++" in operand:
        return (operand.split("++")[0], 0, is_store, True)
    if "=" in operand:  # absolute-set: the access is at the absolute address, rE receives it
        return ("abs", _number(operand.split("=")[1].lstrip("#")), is_store, False)
    if "<<" in operand:
        return (re.split(r"[+<]", operand)[0], None, is_store, False)
    if operand.startswith("gp+"):
        return ("gp", _number(operand[4:]), is_store, False)
    if operand.startswith("#"):
        return ("abs", _number(operand.lstrip("#")), is_store, False)
    base, _, offset = operand.split(",")[0].partition("+")  # memw_locked(r1,p0): the base is r1
    if offset.startswith("r"):
        return (base, None, is_store, False)
    value = _number(offset.lstrip("#")) * scale if offset else 0
    return (base, value - (1 << 32) if value > 0x7FFFFFFF else value, is_store, False)  # address arithmetic wraps


def _data_register(text: str) -> str | None:
    """The general register a scalar load writes or a store stores ("r5", "r5:4", new-values by the register)."""
    store = re.search(r"\) = (r\d+(?::\d+)?)(?:\.new|\.h)?$", text)
    if store:
        return store[1]
    load = re.match(r"^(?:if \([^)]*\) )?(r\d+(?::\d+)?) = mem", text)
    return load[1] if load else None


def compare_instruction(oracle: OracleInstruction, ours: Instruction) -> list[str]:
    """Every disagreement between LLVM's text and hexlint's decoded fields, as readable lines."""
    text = oracle.text
    where = f"0x{oracle.address:x} {text!r} vs {ours.text!r}"
    problems: list[str] = []
    branch = _BRANCH.search(text)
    if branch:
        if ours.branch != branch[1] or ours.target != int(branch[2], 16):
            problems.append(f"{where}: branch {ours.branch} 0x{ours.target or 0:x}")
    elif re.search(r"\bcallr\b", text):
        if ours.branch != "callr":
            problems.append(f"{where}: callr expected, got {ours.branch}")
    elif re.search(r"\bjumpr(?::n?t)? r31\b|\bdealloc_return\b", text):
        if ours.branch != "return":
            problems.append(f"{where}: return expected, got {ours.branch}")
    elif re.search(r"\bjumpr\b", text):
        if ours.branch != "jumpr":
            problems.append(f"{where}: jumpr expected, got {ours.branch}")
    elif ours.branch is not None:
        problems.append(f"{where}: unexpected branch {ours.branch}")
    if branch or re.search(r"\b(?:callr|jumpr|dealloc_return)\b", text):
        conditional = text.startswith("if") or "; if" in text
        if ours.conditional != conditional:
            problems.append(f"{where}: conditional {ours.conditional}")
    loop = _LOOP.search(text)
    setup = ours.loop_setup
    if loop:
        expected = (
            int(loop[2]),
            int(loop[3], 16),
            int(loop[4], 16) if loop[4] else None,
            loop[5],
            int(loop[1] or 0),
        )
        got = (setup.loop, setup.start, setup.count_imm, setup.count_reg, setup.pipelined_stages) if setup else None
        if got != expected:
            problems.append(f"{where}: loop {got} != {expected}")
    elif setup is not None:
        problems.append(f"{where}: unexpected loop set-up")
    memory = _expected_memory(text)
    got_memory = (
        (ours.memory.base, ours.memory.offset, ours.memory.is_store, ours.memory.post_increment)
        if ours.memory
        else None
    )
    if memory != got_memory:
        problems.append(f"{where}: memory {got_memory} != {memory}")
    register = _data_register(text) if memory is not None else None
    if register is not None and ours.memory is not None and ours.memory.register != register:
        problems.append(f"{where}: data register {ours.memory.register} != {register}")
    for operand in re.findall(r"\br\d+\.new\b", text):  # new-value operands name their producer's register
        if operand not in ours.text:
            problems.append(f"{where}: new-value operand {operand} not in our text")
    if bool(_HVX.search(text)) != ours.is_hvx:
        problems.append(f"{where}: is_hvx {ours.is_hvx}")
    double = _DOUBLE.search(text)
    if bool(double and "convert_sf2df" in text) != ours.float_to_double:
        problems.append(f"{where}: float_to_double {ours.float_to_double}")
    if bool(double and "convert_sf2df" not in text) != ours.double_arith:
        problems.append(f"{where}: double_arith {ours.double_arith}")
    written = expected_scalar_writes(text)
    if written is not None and written != {write.dest for write in ours.writes}:
        problems.append(f"{where}: writes {sorted(w.dest for w in ours.writes)} != {sorted(written)}")
    add_imm = _ADD_IMM.match(text)
    if add_imm:
        expected_write = (add_imm[1], "add_imm", add_imm[2], _number(add_imm[3]))
        if _number(add_imm[3]) == 0:
            expected_write = (add_imm[1], "copy", add_imm[2], None)
        writes = [(w.dest, w.op, w.source, w.immediate) for w in ours.writes]
        if expected_write not in writes and (add_imm[1], "add_imm", add_imm[2], 0) not in writes:
            problems.append(f"{where}: writes {writes} lack {expected_write}")
    combine = _COMBINE.match(text)
    if combine:
        writes = [(w.dest, w.op, w.source) for w in ours.writes]
        high, low = f"r{combine[1]}", f"r{combine[2]}"
        for dest, source in ((high, combine[3]), (low, combine[4])):
            if source.startswith("r") and (dest, "copy", source) not in writes:
                problems.append(f"{where}: writes {writes} lack copy {dest} = {source}")
    copy = _COPY.match(text)
    if copy:
        writes = [(w.dest, w.op, w.source) for w in ours.writes]
        if (copy[1], "copy", copy[2]) not in writes:
            problems.append(f"{where}: writes {writes} lack copy {copy[1]} = {copy[2]}")
    return problems


def _is_padding(packet: Packet) -> bool:
    return all(instruction.word == 0 for instruction in packet.instructions)


def compare(oracle: list[OraclePacket], ours: list[Packet]) -> list[str]:
    problems: list[str] = []
    ours_by_address = {packet.address: packet for packet in ours}
    oracle_addresses = [packet.address for packet in oracle]
    # llvm-objdump prints runs of zero words (padding between functions) as "...": those packets are not compared
    ours_addresses = [
        packet.address for packet in ours if packet.address in ours_by_address and not _is_padding(packet)
    ]
    if oracle_addresses != ours_addresses:
        missing = sorted(set(oracle_addresses) - set(ours_addresses))[:5]
        extra = sorted(set(ours_addresses) - set(oracle_addresses))[:5]
        problems.append(
            f"packet boundaries differ: missing {[hex(a) for a in missing]} extra {[hex(a) for a in extra]}"
        )
    for packet in oracle:
        mine = ours_by_address.get(packet.address)
        if mine is None:
            continue
        if mine.size != packet.size or mine.endloop != packet.endloop:
            problems.append(
                f"packet 0x{packet.address:x}: size {mine.size}/{packet.size} "
                f"endloop {set(mine.endloop)}/{set(packet.endloop)}"
            )
        if len(mine.instructions) != len(packet.instructions):
            problems.append(
                f"packet 0x{packet.address:x}: {len(mine.instructions)} vs {len(packet.instructions)} insns"
            )
            continue
        for oracle_instruction, instruction in zip(packet.instructions, mine.instructions, strict=True):
            problems.extend(compare_instruction(oracle_instruction, instruction))
    return problems


def code_sections(path: Path) -> tuple[list[CodeSection], int]:
    """Every executable section (.text, .plt, ...) and the CPU version, read through hexlint.elf."""
    image = load_elf(path)
    return list(image.code_sections), image.cpu


def oracle_listing(path: Path, cpu: int) -> str:
    """The live llvm-objdump listing when the tool is installed, else the dump committed next to the library."""
    if shutil.which(OBJDUMP):
        command = [OBJDUMP, "-d", f"--mcpu=hexagonv{cpu:x}", str(path)]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout
    for dump in committed_dumps(path):
        return read_dump(dump)
    pytest.skip(f"{OBJDUMP} not installed and no committed dump next to {path.name}")


def committed_dumps(path: Path) -> list[Path]:
    """Ours are NAME.so.objdump.gz; the C core's NAME.objdump.txt.gz; the binary twins' NAME.objdump.txt."""
    names = (path.name + ".objdump.gz", path.stem + ".objdump.txt.gz", path.stem + ".objdump.txt")
    return [path.with_name(name) for name in names if path.with_name(name).exists()]


def read_dump(dump: Path) -> str:
    data = dump.read_bytes()
    return (gzip.decompress(data) if dump.suffix == ".gz" else data).decode()


def _libraries() -> list[Path]:
    found = sorted(DATA.glob("*.so"))
    found += sorted((ROOT / "fixtures" / "htp-core" / "lib").glob("*.so"))
    found += sorted((ROOT / "fixtures" / "binary").glob("**/*.so"))
    return found


@pytest.mark.parametrize("library", _libraries(), ids=lambda p: str(p.relative_to(ROOT)))
def test_decoder_agrees_with_llvm_objdump(library: Path) -> None:
    sections, cpu = code_sections(library)
    listing = parse_objdump(oracle_listing(library, cpu))
    compared = 0
    for section in sections:
        end = section.address + len(section.data)
        oracle = [packet for packet in listing if section.address <= packet.address < end]
        problems = compare(oracle, decode_packets(section.data, section.address, cpu))
        assert not problems, f"{section.name}: {len(problems)} disagreements, first ones:\n" + "\n".join(problems[:40])
        compared += len(oracle)
    assert compared, "the oracle listing has no packets in the code sections"


def test_committed_dumps_match_live_objdump() -> None:
    """The committed dumps are what llvm-objdump-22 prints today, so the fallback compares against the same truth."""
    if not shutil.which(OBJDUMP):
        pytest.skip(f"{OBJDUMP} not installed")
    libraries = sorted(DATA.glob("*.so"))
    assert libraries, "no committed decoder test libraries"
    for library in _libraries():
        for dump in committed_dumps(library):
            _, cpu = code_sections(library)
            committed = read_dump(dump)
            live = oracle_listing(library, cpu)
            assert _without_words(parse_objdump(committed)) == _without_words(parse_objdump(live)), dump.name


def _without_words(packets: list[OraclePacket]) -> list[tuple[int, int, tuple[str, ...], frozenset[int]]]:
    return [(p.address, p.size, tuple(i.text for i in p.instructions), p.endloop) for p in packets]


LLVM_MC = "llvm-mc-22"
# (name, mask, value, with a constant extender before the word): every non-duplex ICLASS, every duplex ICLASS,
# extended words; random bits everywhere else. Parse bits are forced: 11 (end of packet) or 00 (duplex).
RANDOM_WORD_CLASSES = (
    [(f"iclass-{c:x}", 0xF0000000, c << 28, False) for c in range(1, 16)]
    + [(f"duplex-{d:x}", 0xE0002000, (d >> 1) << 29 | (d & 1) << 13, False) for d in range(15)]
    + [(f"extended-{c:x}", 0xF0000000, c << 28, True) for c in (1, 3, 4, 5, 6, 7, 9, 10, 11, 13)]
)


def _llvm_mc_packets(packets: list[list[int]]) -> list[list[str] | None]:
    """LLVM's instruction texts for each packet (one packet per input line), None where it rejects the encoding."""
    lines = "\n".join(
        " ".join(f"0x{byte:02x}" for word in packet for byte in word.to_bytes(4, "little")) for packet in packets
    )
    command = [LLVM_MC, "-disassemble", "-triple=hexagon", "-mcpu=hexagonv73", "-mhvx"]
    result = subprocess.run(command, input=lines + "\n", capture_output=True, text=True, check=True)
    rejected = {int(line) for line in re.findall(r"<stdin>:(\d+):\d+: warning", result.stderr)}
    bodies = iter(re.findall(r"\{\n(.*?)\n\s*\}", result.stdout, re.S))
    return [
        None if number in rejected else [t.strip() for t in next(bodies).split("\n")]
        for number in range(1, len(packets) + 1)
    ]


def _as_objdump_text(text: str) -> str:
    """llvm-mc prints immediates in decimal, llvm-objdump in hex: compare in objdump's spelling."""
    return re.sub(r"#(-?)(\d+)(?![x\d])", lambda m: f"#{m[1]}0x{int(m[2]):x}", text)


RANDOM_SAMPLE = (
    DATA / "random_words.json.gz"
)  # the first packets of each class with LLVM's texts, for machines without LLVM


def _random_packets(mask: int, value: int, extended: bool, count: int = 400) -> list[list[int]]:
    generator = random.Random(value ^ extended)
    duplex = mask == 0xE0002000
    packets = []
    for _ in range(count):
        word = (generator.getrandbits(32) & ~mask & ~0xC000) | value | (0 if duplex else 0xC000)
        prefix = [(generator.getrandbits(32) & 0x0FFF3FFF) | 0x4000] if extended else []
        packets.append([*prefix, word])
    return packets


def _disagreements(packets: list[list[int]], llvm_texts: list[list[str] | None]) -> tuple[int, list[str]]:
    """(packets LLVM accepted, disagreements); packet k sits at 4 * len(packet) * k, as llvm-mc lays them out."""
    problems: list[str] = []
    accepted = 0
    for index, (packet, texts) in enumerate(zip(packets, llvm_texts, strict=True)):
        if texts is None:
            continue
        accepted += 1
        address = 4 * len(packet) * index
        code = struct.pack(f"<{len(packet)}I", *packet)
        ours = [i for i in decode_packets(code, address)[0].instructions if i.iclass != "EXT"]
        if len(ours) != len(texts):
            problems.append(f"{packet[-1]:08x}: {texts} vs {[i.text for i in ours]}")
            continue
        for text, instruction in zip(texts, ours, strict=True):
            oracle = OracleInstruction(address, packet[-1], _as_objdump_text(text))
            problems.extend(f"{packet[-1]:08x} {problem}" for problem in compare_instruction(oracle, instruction))
            # what hexlint decodes it also prints as LLVM does (the --disasm fallback shows this text)
            if not instruction.text.startswith(".word") and instruction.text != text:
                problems.append(f"{packet[-1]:08x} text {instruction.text!r} != {text!r}")
    return accepted, problems


@pytest.mark.parametrize(
    ("mask", "value", "extended"), [c[1:] for c in RANDOM_WORD_CLASSES], ids=[c[0] for c in RANDOM_WORD_CLASSES]
)
def test_random_words_agree_with_llvm_mc(mask: int, value: int, extended: bool) -> None:
    """400 random encodings of one class, each in its own packet: every one LLVM accepts must agree with hexlint."""
    if not shutil.which(LLVM_MC):
        pytest.skip(f"{LLVM_MC} not installed (the committed sample still runs)")
    packets = _random_packets(mask, value, extended)
    accepted, problems = _disagreements(packets, _llvm_mc_packets(packets))
    assert accepted > 0
    assert not problems, f"{len(problems)} of {accepted} disagree:\n" + "\n".join(problems[:20])


def test_random_words_agree_with_the_committed_llvm_mc_sample() -> None:
    """The same check on the committed sample (the first 60 packets of every class), so it runs without LLVM."""
    sample = json.loads(gzip.decompress(RANDOM_SAMPLE.read_bytes()))
    assert set(sample) == {name for name, *_ in RANDOM_WORD_CLASSES}
    total = 0
    for name, mask, value, extended in RANDOM_WORD_CLASSES:
        packets = _random_packets(mask, value, extended, len(sample[name]))
        accepted, problems = _disagreements(packets, sample[name])
        assert not problems, f"{name}: {len(problems)} of {accepted} disagree:\n" + "\n".join(problems[:20])
        total += accepted
    assert total > 800  # 1027 when generated


def write_random_word_sample(count: int = 60) -> None:
    sample = {}
    for name, mask, value, extended in RANDOM_WORD_CLASSES:
        sample[name] = _llvm_mc_packets(_random_packets(mask, value, extended, count))
    RANDOM_SAMPLE.write_bytes(gzip.compress(json.dumps(sample).encode(), mtime=0))


def test_parse_objdump_reads_packets_duplexes_and_endloops() -> None:
    listing = (
        "   10584:\te4 40 03 76\t760340e4 { \tr4 = and(r3,#0x7)\n"
        "   1058c:\tb0 e7 43 11\t1143e7b0   \tp0 = cmp.gtu(r3,#0x7); if (!p0.new) jump:t 0x106e4 <f+0x164> }\n"
        "   11e78:\t50 38 56 38\t38563850 { \tr6 = add(r6,r5); \tr0 = add(r0,r5) }  :endloop01\n"
    )
    packets = parse_objdump(listing)
    assert [(p.address, p.size, len(p.instructions), set(p.endloop)) for p in packets] == [
        (0x10584, 8, 2, set()),
        (0x11E78, 4, 2, {0, 1}),
    ]
    assert packets[0].instructions[1].text == "p0 = cmp.gtu(r3,#0x7); if (!p0.new) jump:t 0x106e4"
    without_raw = "   10584: { \tr4 = and(r3,#0x7)\n   10588:   \tr5 = #0x0 }  :endloop0\n"
    assert _without_words(parse_objdump(without_raw)) == [
        (0x10584, 8, ("r4 = and(r3,#0x7)", "r5 = #0x0"), frozenset({0}))
    ]


if __name__ == "__main__":
    write_random_word_sample()
    print(f"wrote {RANDOM_SAMPLE}")
