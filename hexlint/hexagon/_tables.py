"""Tables probed from LLVM's Hexagon disassembler (llvm-mc-22), kept apart from the decoding logic.

Regenerate with tests/data/decoder/probe_destinations.py (needs llvm-mc-22); tests/test_decode_oracle.py checks the
result against llvm-objdump-22 and llvm-mc-22 on every instruction it sees.
"""

# Where the scalar destination of an otherwise undecoded CR/ALU32/XTYPE word sits, by ICLASS and bits 27:21: "a" at
# bits 4:0, "b" at 12:8, "c" at 20:16, upper case for a register pair, "-" none (predicate, vector, control, store),
# "*" see DEST_EXCEPTIONS (by bits 7:5 and 13). Found by disassembling random words of every opcode with llvm-mc-22
# (majority vote); opcodes no sample decoded say "A", so an unknown instruction over-reports a write rather than hide
# one. The oracle test checks every instruction's writes against llvm-objdump.
DEST_FIELDS: dict[int, str] = {
    0x6: "--AAA--------------AAAAA--AAAAAA-A---AAAA-AAAAAAaAAaAAAA-AAAAAAA"
    "AAAAAAAA--AAA---aaAAAAAA----------AAaAaa-AAAAAAAAAAAaaaAAAAAAAAA",
    0x7: "aaAaaaaaAcAcAcAcAcAcAcAc**aaaaaaaaaaaaaa-----AAAaaaaaaAAAAAAAAAA"
    "aAaAaAaAAAAAAAAAaaaaaaaaaaaaaaaaAAAAAAAAAAAAAAAAaaaaaaaaAAAAAAAA",
    0x8: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA---A--A-AAAAAAAAaaaaaaaa"
    "aaaaaa*aaAaAAAAAAAAAAAAAAaaaaaA-aaaAaAaaaaaaaaaaaAaAaAAAaaaaAAAA",
    0xB: "a" * 128,
    0xC: "AAAAAAAAAA*AAAAAAAAAAAAAAAAAAAAAaAAAAAAAaAAAAAAAaAaAaAaA--------"
    "aAAAAAAAaAAAAAAAAAAAAAAAA*AAAAAAaAaAaAaAAAAAAAAAAAAAAAAAAAAAAAAA",
    0xD: "aAAAAAAAAAAAAAAA-AAA-AA-AAAAAAA*AAAAAAAAaaaaaaaaaaaaAAAAaaaaAAAA"
    "bbbbbbbbAAAAAAAAaaccaaAAbbbbbbbb---A-AAA---AAAAAccccccccbbbbbbbb",
    0xE: "aAAAaAAAaAAAaAAAaAAAaAAAbAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    "AAAAAAAAaaAAaaAAAAAAA*A*aAaAaAa-aaaAaaaAaaaaAaAaaaaaaaaaaaaaaAaA",
    0xF: "AAAAAAAAaaAaaaAA-A--AAAAaaaaaaaaaAAAAAAAAAAAAAAAaaaaaaaaaaAaAAAA"
    "AAAAAAAAaaAaAAAAAAAAAAAAaaAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
}
DEST_EXCEPTIONS: dict[tuple[int, int], str] = {
    (0x7, 24): "aAaAaAaAaAaAaAaA",
    (0x7, 25): "aAaAaAaAaAaAaAaA",
    (0x8, 70): "aAaAaAAAAAAAAAAA",
    (0xC, 10): "AAaAAAAAAAAAAAAA",
    (0xC, 89): "AABBBBAAAABBBBAA",
    (0xD, 31): "AAAAAAAAAAAAAAaA",
    (0xE, 85): "-A-A-A-AAAAAAAAA",
    (0xE, 87): "-A-A-A-AAAAAAAAA",
}
