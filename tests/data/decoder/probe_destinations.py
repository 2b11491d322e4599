#!/usr/bin/env python3
"""Regenerate hexlint/hexagon/_tables.py: where each CR/ALU32/XTYPE opcode writes its general register.

For every opcode key (ICLASS, bits 27:21, bits 7:5, bit 13) it disassembles sample words with llvm-mc-22: random
words, then words with small register fields (many encodings require zero bits), and records where the destination
register LLVM prints sits in the word (bits 4:0, 12:8 or 20:16; single or pair). A majority vote per key, then per
bits 27:21, gives one character per opcode group; the few groups that depend on bits 7:5/13 become exceptions.

Usage: PYTHONPATH=. python tests/data/decoder/probe_destinations.py   (writes hexlint/hexagon/_tables.py)
"""

from __future__ import annotations

import collections
import random
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TABLES = ROOT / "hexlint" / "hexagon" / "_tables.py"
CLASSES = (0x6, 0x7, 0x8, 0xB, 0xC, 0xD, 0xE, 0xF)
# the written operand at the start of LLVM's text: "r5 = ", "r5:4 += ", "if (p0) r5 = ", "p1 = ", "v3.w = " ...
DEST = re.compile(
    r"^(?:if \([^)]*\) )?"
    r"(r(\d+)(?::(\d+))?|p\d|v\d+(?::\d+)?|q\d|[cgsm]\d+(?::\d+)?|\w+)(?:\.\w+)? *(?:[-+&|^]|<<|>>)?= "
)
CODES = {"-": "-", "r0": "a", "r8": "b", "r16": "c", "P0": "A", "P8": "B", "P16": "C"}
HEADER = '''"""Tables probed from LLVM's Hexagon disassembler (llvm-mc-22), kept apart from the decoding logic.

Regenerate with tests/data/decoder/probe_destinations.py (needs llvm-mc-22); tests/test_decode_oracle.py checks the
result against llvm-objdump-22 and llvm-mc-22 on every instruction it sees.
"""

# Where the scalar destination of an otherwise undecoded CR/ALU32/XTYPE word sits, by ICLASS and bits 27:21: "a" at
# bits 4:0, "b" at 12:8, "c" at 20:16, upper case for a register pair, "-" none (predicate, vector, control, store),
# "*" see DEST_EXCEPTIONS (by bits 7:5 and 13). Found by disassembling random words of every opcode with llvm-mc-22
# (majority vote); opcodes no sample decoded say "A", so an unknown instruction over-reports a write rather than hide
# one. The oracle test checks every instruction's writes against llvm-objdump.
'''


def disassemble(words: list[int]) -> list[str | None]:
    """LLVM's text of each word (its own one-word packet), None where it rejects the encoding."""
    lines = "\n".join(" ".join(f"0x{byte:02x}" for byte in word.to_bytes(4, "little")) for word in words) + "\n"
    command = ["llvm-mc-22", "-disassemble", "-triple=hexagon", "-mcpu=hexagonv73", "-mhvx"]
    result = subprocess.run(command, input=lines, capture_output=True, text=True, check=True)
    rejected = {int(number) for number in re.findall(r"<stdin>:(\d+):\d+: warning", result.stderr)}
    bodies = iter(re.findall(r"\{\n(.*?)\n\s*\}", result.stdout, re.S))
    return [None if line in rejected else next(bodies).split("\n")[0].strip() for line in range(1, len(words) + 1)]


def destination(text: str, word: int) -> str:
    match = DEST.match(text.split(";")[0])
    if not match or match[2] is None:
        return "-"
    pair = match[3] is not None
    number = int(match[3]) if pair else int(match[2])
    for shift in (0, 8, 16):
        field = (word >> shift) & 31
        if (field & 30 if pair else field) == number:
            return ("P" if pair else "r") + str(shift)
    return "?"


def samples(iclass: int, key: int, generator: random.Random) -> list[int]:
    high, low, bit13 = key >> 4, (key >> 1) & 7, key & 1
    fixed = iclass << 28 | high << 21 | low << 5 | bit13 << 13 | 0xC000
    free = ~(0xF0000000 | 0x0FE00000 | 0xE0 | 0xE000) & 0xFFFFFFFF
    words = [fixed | (generator.getrandbits(32) & free) for _ in range(16)]
    for first in range(4):
        for second in range(4):
            dest = generator.choice((0, 1, 2, 3, 4, 6, 10, 12, 18, 20))
            words.append(fixed | first << 16 | second << 8 | dest)
    return words


def probe() -> dict[int, str]:
    """One code per (bits 27:21, bits 7:5, bit 13) key, '.' where no sample decoded."""
    generator = random.Random(5)
    table = {}
    for iclass in CLASSES:
        keys_and_words = [(key, word) for key in range(2048) for word in samples(iclass, key, generator)]
        texts = disassemble([word for _, word in keys_and_words])
        votes: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for (key, word), text in zip(keys_and_words, texts, strict=True):
            if text is not None:
                votes[key][destination(text, word)] += 1
        codes = []
        for key in range(2048):
            counted = votes.get(key)
            if not counted:
                codes.append(".")
                continue
            best = max((kind for kind in counted if kind != "?"), key=lambda kind: counted[kind], default="-")
            codes.append(CODES[best])
        table[iclass] = "".join(codes)
    return table


def render(table: dict[int, str]) -> str:
    rows, exceptions = {}, {}
    for iclass, codes in table.items():
        row = []
        for high in range(128):
            group = codes[high * 16 : (high + 1) * 16]
            seen = set(group) - {"."}
            if len(seen) > 1:
                exceptions[(iclass, high)] = group.replace(".", "A")
                row.append("*")
            else:
                row.append(seen.pop() if seen else "A")
        rows[iclass] = "".join(row)
    lines = [HEADER + "DEST_FIELDS: dict[int, str] = {"]
    for iclass, row in rows.items():
        if set(row) == {"a"}:
            lines.append(f'    0x{iclass:X}: "a" * 128,')
        else:
            lines.append(f'    0x{iclass:X}: "{row[:64]}"\n    "{row[64:]}",')
    lines.append("}")
    lines.append("DEST_EXCEPTIONS: dict[tuple[int, int], str] = {")
    lines.extend(f'    (0x{iclass:X}, {high}): "{group}",' for (iclass, high), group in exceptions.items())
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    TABLES.write_text(render(probe()))
    print(f"wrote {TABLES}")
