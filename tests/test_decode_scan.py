"""The scan (split into packets, flag every word, decode only the packets asked for) against the full decoder.

The audit reads a library through hexlint.hexagon.decode.scan_code: it opens only the packets whose word flags say
they can matter. That is sound only if a flag a word lacks, its decoding lacks too, and if WORD_HVX and the :endloop
parse bits are exact; and if an opened packet is what decode_packets returns. These tests hold the scan to that.
"""

from __future__ import annotations

import dataclasses
import random
import struct
from bisect import bisect_left
from itertools import accumulate
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hexlint.binary.audit import AuditSettings, _audit_function, _unique_functions, audit_function
from hexlint.elf import load_elf
from hexlint.hexagon import decode as decode_module
from hexlint.hexagon.decode import (
    WORD_BRANCH,
    WORD_CALL,
    WORD_DOUBLE,
    WORD_ENDLOOP_BITS,
    WORD_HVX,
    WORD_LOOP_SETUP,
    WORD_MEMORY,
    WORD_STACK_COPY,
    WORD_STACK_MEMORY,
    WORD_WRITES,
    DecodeCache,
    Instruction,
    decode_packets,
    instruction_at,
    instruction_flags,
    scan_code,
)

ROOT = Path(__file__).resolve().parent.parent
EXACT = WORD_HVX | WORD_ENDLOOP_BITS
ALL_FLAGS = (
    WORD_BRANCH,
    WORD_CALL,
    WORD_LOOP_SETUP,
    WORD_HVX,
    WORD_DOUBLE,
    WORD_MEMORY,
    WORD_STACK_MEMORY,
    WORD_STACK_COPY,
    WORD_WRITES,
    WORD_ENDLOOP_BITS,
)


def _libraries() -> list[Path]:
    found = sorted((ROOT / "tests" / "data" / "decoder").glob("*.so"))
    found += sorted((ROOT / "fixtures" / "htp-core" / "lib").glob("*.so"))
    found += sorted((ROOT / "fixtures" / "binary").glob("**/*.so"))
    return found


def _words_of(path: Path) -> list[int]:
    words: list[int] = []
    for section in load_elf(path).code_sections:
        end = len(section.data) // 4 * 4
        words.extend(struct.unpack_from(f"<{end // 4}I", section.data))
    return words


def _flags_with(word: int, ext: int | None) -> int:
    """The exact flags of `word` decoded after extender value `ext` (None: no extender)."""
    if not word & 0xC000:
        flags = 0
        for half in decode_module._decode_duplex_cached(word, 0, ext, {}):
            flags |= instruction_flags(half)
        return flags
    try:
        instruction = decode_module._DECODERS[word >> 28](word, 0, 0, ext)
    except Exception:  # as the decoder does: the word becomes UNKNOWN
        return WORD_ENDLOOP_BITS if word & 0xC000 == 0x8000 else 0
    flags = instruction_flags(instruction)
    return flags | WORD_ENDLOOP_BITS if word & 0xC000 == 0x8000 else flags


def _check_word(word: int, ext: int | None = None) -> None:
    flags = decode_module._word_flags(word, DecodeCache())
    exact = _flags_with(word, ext)
    assert flags | exact == flags, f"0x{word:08x} (ext {ext}): flags {flags:#b} miss {exact & ~flags:#b}"
    assert flags & EXACT == exact & EXACT, f"0x{word:08x} (ext {ext}): HVX/endloop {flags:#b} vs {exact:#b}"


def test_every_word_of_the_committed_libraries_is_flagged_soundly() -> None:
    words = set()
    for library in _libraries():
        words.update(_words_of(library))
    for word in words:
        _check_word(word)


def test_quick_flags_hold_for_every_opcode_row_and_stack_register_field() -> None:
    """Every ICLASS x bits 27:21 x bits 13 and 7:5, with SP/FP or not in bits 20:16 and 12:8, the other bits random."""
    rng = random.Random(5)
    for iclass in range(16):
        for row in range(128):
            for variant in range(16):
                word = iclass << 28 | row << 21 | rng.getrandbits(21)
                word = word & ~0x20E0 | (variant & 1) << 13 | rng.getrandbits(3) << 5
                if variant & 2:
                    word = word & ~(31 << 16) | rng.choice((29, 30)) << 16
                if variant & 4:
                    word = word & ~(31 << 8) | rng.choice((29, 30)) << 8
                word = word & ~0xC000 | (1 + (variant >> 3) * 2 if variant & 8 else rng.getrandbits(2)) << 14
                _check_word(word)


def _check_light_decoding(word: int, ext: int | None, packet: int = 0x5000, offset: int = 4) -> bool:
    """A light decoding (no text, see decode._LIGHT_DECODERS) has every field of the full decoding, and renders its
    text as the full decoder does; False when the word has none."""
    fields = decode_module._LIGHT_DECODERS[word >> 28](word, packet, ext)
    if fields is None:
        return False
    full = decode_module._DECODERS[word >> 28](word, packet + offset, packet, ext)
    light = decode_module._at(dict(fields), packet + offset)
    for item in dataclasses.fields(Instruction):
        if item.name != "text":
            assert getattr(light, item.name) == getattr(full, item.name), f"0x{word:08x} (ext {ext}): {item.name}"
    # a new-value jump's text names a register of its packet (the scan renders it from the opened packet)
    assert ("_new_value" in fields) == (decode_module._NEW_VALUE in full.text), f"0x{word:08x}"
    if "_new_value" not in fields:
        assert light.text == full.text, f"0x{word:08x} (ext {ext})"
    return True


def test_light_decodings_equal_the_full_decoder_on_every_library_word() -> None:
    words = set()
    for library in _libraries():
        words.update(_words_of(library))
    light = sum(_check_light_decoding(word, None) for word in words if word & 0xC000)
    assert light > len(words) // 50  # jumps, compare jumps, loop set-ups
    for word in sorted(words)[::7]:
        if word & 0xC000:
            _check_light_decoding(word, 0x12345640, packet=0xFFFFFF00, offset=8)


def test_light_decodings_equal_the_full_decoder_on_every_opcode_row() -> None:
    rng = random.Random(9)
    for iclass in (1, 2, 5, 6, 7, 8, 9, 0xA, 0xB, 0xC, 0xD, 0xE, 0xF):
        for row in range(128):
            for _ in range(24):
                word = iclass << 28 | row << 21 | rng.getrandbits(21) | 0x4000
                _check_light_decoding(word, rng.choice((None, rng.getrandbits(26) << 6)), rng.getrandbits(32) & ~3)


@settings(max_examples=1500, deadline=None)
@given(st.integers(min_value=0, max_value=0xFFFFFFFF), st.one_of(st.none(), st.integers(0, (1 << 26) - 1)))
def test_light_decodings_of_random_words_equal_the_full_decoder(word: int, extender: int | None) -> None:
    if word & 0xC000:
        _check_light_decoding(word, None if extender is None else extender << 6)


def _lanes_agree_with_quick_flags(words: list[int]) -> None:
    code = struct.pack(f"<{len(words)}I", *words)
    flags, slow, _ = decode_module._scan_flags(code, len(code))
    for word, lane, needs_decoding in zip(words, flags, slow, strict=True):
        quick = decode_module._quick_flags(word)
        assert (quick < 0) == bool(needs_decoding), f"0x{word:08x}: slow lane {needs_decoding} vs {quick}"
        assert quick < 0 or lane == quick, f"0x{word:08x}: lane {lane:#b} vs quick flags {quick:#b}"


def test_the_whole_section_flag_lanes_equal_the_quick_flags_of_every_top_half() -> None:
    """scan_code flags a section lane by lane (_scan_flags): every value of bits 31:16, under every parse-bit value,
    with and without SP/FP in bits 12:8, the other bits random."""
    rng = random.Random(7)
    low_halves = [
        parse << 14 | rng.getrandbits(1) << 13 | register << 8 | rng.getrandbits(8)
        for parse in range(4)
        for register in (29, 30, rng.randrange(29))
    ]
    _lanes_agree_with_quick_flags([high << 16 | low for high in range(1 << 16) for low in rng.sample(low_halves, 4)])
    _lanes_agree_with_quick_flags([high << 16 | low for high in range(1 << 16) for low in low_halves[:3]])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0x0000, 0x4000, 0x8000, 0xC000]), min_size=1, max_size=40))
def test_endloop_packets_are_the_packets_whose_endloop_is_set(parse_bits: list[int]) -> None:
    """Any run of parse bits (packets cut short, four words without an end): endloop_packets, found from the words
    flagged, holds exactly the packets endloop() (and decode_packets) marks, with the same markers."""
    code = struct.pack(f"<{len(parse_bits)}I", *(0x78000000 | bits for bits in parse_bits))  # r0 = #0
    scan = scan_code(code, 0x1000, cache=DecodeCache())
    packets, markers = scan.endloop_packets()
    every = [scan.endloop(index) for index in range(len(scan))]
    assert dict(zip(packets, markers, strict=True)) == {index: marks for index, marks in enumerate(every) if marks}
    assert every == [packet.endloop for packet in decode_packets(code, 0x1000, cache=DecodeCache())]


def test_a_scan_splits_packets_as_the_packet_regex_does() -> None:
    """scan_code finds packet ends from the parse bits of all words at once; decode_packets' regex is the reference,
    on real code, on random bytes (runs of four words without an end), and on tails cut short."""
    sections = [section.data for library in _libraries() for section in load_elf(library).code_sections]
    rng = random.Random(17)
    sections += [bytes(rng.getrandbits(8) for _ in range(rng.randrange(64))) for _ in range(300)]
    more = struct.pack("<I", 0x4000)  # parse bits 01: the packet goes on
    sections += [more * count + struct.pack("<I", 0xC000) * ends + tail for count in range(9) for ends in range(3)
                 for tail in (b"", b"\x01", more, more * 3)]  # fmt: skip
    for code in sections:
        end = len(code) // 4 * 4
        chunks = decode_module._PACKET_BYTES.findall(code, 0, end)
        scan = scan_code(code, 0x2000, cache=DecodeCache())
        assert list(scan.chunks) == chunks
        assert scan.packet_addresses == list(accumulate(map(len, chunks), initial=0x2000))


def test_a_scan_of_a_packet_span_has_the_whole_scans_packets_there() -> None:
    """A part of a library audited alone scans only the packet_span of its functions: the same packets, words and
    flags as the whole section's scan has there, on real code and on random ranges; None where the section has four
    words without a packet end (they split from the section's start) or for a range outside it."""
    rng = random.Random(23)
    for library in _libraries():
        for section in load_elf(library).code_sections:
            code, base = section.data, section.address
            whole = scan_code(code, base, cache=DecodeCache())
            end = base + len(code) // 4 * 4
            for _ in range(20):
                low = rng.randrange(base, end + 1)
                high = rng.randrange(low, min(end, low + 4096) + 1)
                span = decode_module.packet_span(code, base, low, high)
                assert span is not None
                start, stop = span
                assert start <= low and (high <= stop or high == low)
                first, last = whole.packet_addresses.index(start), whole.packet_addresses.index(stop)
                if low < high:  # the fewest packets: the first and last hold bytes of the range
                    assert whole.packet_addresses[first + 1] > low and whole.packet_addresses[last - 1] < high
                part = scan_code(code[start - base : stop - base], start, cache=DecodeCache())
                assert part.packet_addresses == whole.packet_addresses[first : last + 1]
                words = slice((start - base) >> 2, (stop - base) >> 2)
                assert list(part.words) == list(whole.words[words])
                assert list(part.word_flags) == list(whole.word_flags[words])
            assert decode_module.packet_span(code, base, base - 4, base + 4) is None
            assert decode_module.packet_span(code, base, base, end + 4) is None
    no_end = struct.pack("<I", 0x4000) * 4 + struct.pack("<I", 0xC000)  # four words without a packet end
    assert decode_module.packet_span(no_end, 0x1000, 0x1010, 0x1014) is None


def test_a_scan_flags_every_word_as_word_flags_does() -> None:
    words = []
    for library in _libraries():
        words += _words_of(library)
    rng = random.Random(11)
    words += [rng.getrandbits(32) for _ in range(20000)]
    code = struct.pack(f"<{len(words)}I", *words) + b"\x01\x02"  # a cut-short tail word is not flagged
    cache = DecodeCache()
    scan = scan_code(code, 0x1000, cache=DecodeCache())
    assert list(scan.word_flags) == [decode_module._word_flags(word, cache) for word in words]
    assert not scan_code(b"", 0).word_flags
    # words_with reads the 16-bit flag lanes: every flag and a few unions, low and high lanes alike
    for mask in (*ALL_FLAGS, WORD_BRANCH | WORD_WRITES, WORD_HVX | WORD_ENDLOOP_BITS, (1 << 10) - 1):
        assert scan.words_with(mask) == [index for index, flags in enumerate(scan.word_flags) if flags & mask]


def test_duplex_flags_hold_for_every_group_pair_and_sub_opcode() -> None:
    """A duplex is flagged from its halves' bits 12:8 (no decoding): every duplex ICLASS x bit 13 (the group pair) x
    both halves' top five bits, the other bits random, with SP/FP-free and any register fields alike."""
    rng = random.Random(13)
    for group in range(16):
        for high in range(32):
            for low in range(32):
                for _ in range(3):
                    word = (group >> 1) << 29 | high << 24 | rng.getrandbits(8) << 16 | (group & 1) << 13
                    _check_word(word | low << 8 | rng.getrandbits(8), rng.choice((None, rng.getrandbits(26) << 6)))


@settings(max_examples=1500, deadline=None)
@given(st.integers(min_value=0, max_value=0xFFFFFFFF), st.one_of(st.none(), st.integers(0, (1 << 26) - 1)))
def test_flags_of_random_words_hold_with_or_without_an_extender(word: int, extender: int | None) -> None:
    _check_word(word, None if extender is None else extender << 6)


@pytest.mark.parametrize("library", _libraries(), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_scan_opens_the_packets_decode_packets_returns(library: Path) -> None:
    image = load_elf(library)
    for section in image.code_sections:
        packets = decode_packets(section.data, section.address, cache=DecodeCache())
        scan = scan_code(section.data, section.address, cache=DecodeCache())
        assert len(scan) == len(packets)
        assert scan.packet_addresses == [p.address for p in packets] + [packets[-1].address + packets[-1].size]
        # opened in a shuffled order: a packet's decoding never depends on which were opened before
        order = list(range(len(scan)))
        random.Random(7).shuffle(order)
        assert all(scan.packet(index) == packets[index] for index in order)
        whole = scan.range(0, len(scan))
        assert list(whole) == packets
        hvx = [i.address for p in packets for i in p.instructions if i.is_hvx]
        assert whole.words_with(WORD_HVX) == hvx
        assert whole.endloops() == {index: packet.endloop for index, packet in enumerate(packets) if packet.endloop}
        for index in order[:200]:  # a packet's flags: its words' (the :endloop bits aside)
            exact = _packet_flags(packets[index]) & ~WORD_ENDLOOP_BITS
            assert whole.flags(index) | exact == whole.flags(index)


@pytest.mark.parametrize("library", _libraries(), ids=lambda p: str(p.relative_to(ROOT)))
def test_instructions_read_word_by_word_are_those_of_the_decoded_packets(library: Path) -> None:
    image = load_elf(library)
    for section in image.code_sections:
        packets = decode_packets(section.data, section.address, cache=DecodeCache())
        scan = scan_code(section.data, section.address, cache=DecodeCache())  # nothing opened yet
        whole = scan.range(0, len(scan))
        assert [whole.endloop(index) for index in range(len(whole))] == [p.endloop for p in packets]
        for flag in ALL_FLAGS[:-1]:
            found = whole.instructions_with(flag)
            expected = [(i, x) for i, p in enumerate(packets) for x in p.instructions if instruction_flags(x) & flag]
            assert set(map(_key, expected)) <= set(map(_key, found)), f"{library.name}: flag {flag:#b}"
            by_address = {(i, x.address, x.text): x for i, p in enumerate(packets) for x in p.instructions}
            assert all(by_address[_key((i, x))] == x for i, x in found)
        assert len(scan._opened) < len(scan)  # most words decode alone


@pytest.mark.parametrize("library", _libraries(), ids=lambda p: str(p.relative_to(ROOT)))
def test_packets_read_one_by_one_hold_the_words_instructions_with_finds(library: Path) -> None:
    """packet_reader (the audit's data flow) packet by packet, as instructions, equals instructions_with of a fresh
    scan: the same words, field dicts and addresses."""
    image = load_elf(library)
    mask = WORD_WRITES | WORD_MEMORY | WORD_CALL
    for section in image.code_sections:
        scan = scan_code(section.data, section.address, cache=DecodeCache())
        whole = scan.range(0, len(scan))
        read_packet = whole.packet_reader(mask)
        read = [(i, instruction_at(fields, address)) for i in range(len(whole)) for address, fields in read_packet(i)]
        fresh = scan_code(section.data, section.address, cache=DecodeCache())
        assert read == fresh.range(0, len(fresh)).instructions_with(mask), library.name


def test_a_jump_word_seen_again_gets_its_own_target_and_text() -> None:
    """A light jump shares its dict with its relative template (decode._light_instruction, the inline rebuilds of
    instructions_with and packet_reader), so its text is rendered per read: the same word at offsets 0 and 4,
    twice each, read word by word both ways, equals the decoded packets, targets and texts included."""
    jump, more = 0x5800C016, 0x78004000  # jump #+44 ending its packet; r0 = #0 with parse bits 01
    code = struct.pack("<7I", jump, more, jump, jump, more, jump, 0x7800C000)
    packets = decode_packets(code, 0x2000, cache=DecodeCache())
    expected = [(index, x) for index, packet in enumerate(packets) for x in packet.instructions if x.branch]
    assert [(x.address, x.target) for _, x in expected] == [
        (0x2000, 0x202C), (0x2008, 0x2030), (0x200C, 0x2038), (0x2014, 0x203C)
    ]  # fmt: skip
    _assert_read_word_by_word_as_decoded(code, 0x2000, WORD_BRANCH, expected)


def test_new_value_operands_read_word_by_word_name_the_registers_of_the_decoded_packets() -> None:
    """A producer's register is learned once per word (CodeScan._new_value_register): the same producer read by a
    scalar and by a vector store, an extended producer, and each pair seen twice, read word by word both ways, equal
    the decoded packets, texts and stored registers included."""
    copy_r2 = 0x70604002  # r2 = r0 (parse bits: more)
    store_new = 0xA1A1D202  # memw(r1+#8) = <producer one back>.new
    extender, add_r3 = 0x0000448D, 0xB00040A3  # r3 = add(r0,##74565)
    load_v2, vstore_new = 0x28004002, 0x2821C022  # v2 = vmem(r0+#0); vmem(r1+#0) = <producer one back>.new
    groups = [(copy_r2, store_new), (extender, add_r3, store_new), (load_v2, vstore_new), (copy_r2, vstore_new)]
    groups = 2 * [*groups, (load_v2, store_new), (vstore_new,)]  # the last: no producer in its packet
    code = struct.pack(f"<{sum(map(len, groups))}I", *(word for group in groups for word in group))
    packets = decode_packets(code, 0x3000, cache=DecodeCache())
    expected = [(index, x) for index, packet in enumerate(packets) for x in packet.instructions if x.memory]
    assert [x.text for _, x in expected if x.memory.is_store][:6] == [
        "memw(r1+#8) = r2.new", "memw(r1+#8) = r3.new", "vmem(r1+#0) = v2.new", "vmem(r1+#0) = v?.new",
        "memw(r1+#8) = r?.new", "vmem(r1+#0) = v?.new",
    ]  # fmt: skip
    _assert_read_word_by_word_as_decoded(code, 0x3000, WORD_MEMORY, expected)


def test_a_duplex_after_an_extender_is_read_with_it() -> None:
    """A duplex seen before is rebuilt from its template only without an extender before it: the second copy of
    `r0 = memh(r0+#0)` twice (a duplex) follows an extender, which widens its first half's offset."""
    duplex, extender = 0x20000000, 0x0000448D
    code = struct.pack("<3I", duplex, extender, duplex)
    packets = decode_packets(code, 0x1000, cache=DecodeCache())
    expected = [(index, x) for index, packet in enumerate(packets) for x in packet.instructions if x.memory]
    assert [x.text for _, x in expected][2:] == ["r0 = memh(r0+#74560)", "r0 = memh(r0+#0)"]
    _assert_read_word_by_word_as_decoded(code, 0x1000, WORD_MEMORY, expected)


def _assert_read_word_by_word_as_decoded(
    code: bytes, address: int, mask: int, expected: list[tuple[int, Instruction]]
) -> None:
    """instructions_with of a cold scan, then packet_reader of a scan sharing its cache (every word from what the
    first learned), equal `expected` (the decoded packets' instructions), texts included, no packet opened."""
    scan = scan_code(code, address, cache=DecodeCache())
    found = scan.range(0, len(scan)).instructions_with(mask)
    assert found == expected and [x.text for _, x in found] == [x.text for _, x in expected]
    again = scan_code(code, address, cache=scan.cache).range(0, len(scan))
    read_packet = again.packet_reader(mask)
    read = [(index, instruction_at(x, a)) for index in range(len(again)) for a, x in read_packet(index)]
    assert read == expected and [x.text for _, x in read] == [x.text for _, x in expected]
    assert not scan._opened


def _key(item: tuple[int, Instruction]) -> tuple[int, int, str]:
    return item[0], item[1].address, item[1].text


def _packet_flags(packet: decode_module.Packet) -> int:
    flags = WORD_ENDLOOP_BITS if packet.endloop else 0
    for instruction in packet.instructions:
        flags |= instruction_flags(instruction)
    return flags


@pytest.mark.parametrize(
    "library",
    [p for p in _libraries() if "decoder" not in p.parts],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_the_audit_of_a_scan_equals_the_audit_of_every_decoded_packet(library: Path) -> None:
    image = load_elf(library)
    settings = AuditSettings()
    for section in image.code_sections:
        scan = scan_code(section.data, section.address, image.cpu, DecodeCache())
        addresses = scan.packet_addresses[:-1]
        for symbol in _unique_functions(image.functions):
            if image.section_at(symbol.address) is not section:
                continue
            low, high = bisect_left(addresses, symbol.address), bisect_left(addresses, symbol.end)
            lazy = _audit_function(symbol, scan.range(low, high), image, settings)
            full = audit_function(symbol, [scan.packet(index) for index in range(low, high)], image, settings)
            assert lazy == full, symbol.name
            assert list(lazy.cfg.packets) == list(full.cfg.packets)


def test_a_packet_range_is_a_sequence_of_packets() -> None:
    code = struct.pack("<4I", 0x7800C001 & ~0xC000 | 0x4000, 0x7800C002, 0x7800C003, 0x7800C004)
    scan = scan_code(code, 0x100, cache=DecodeCache())
    whole = scan.range(0, len(scan))
    packets = decode_packets(code, 0x100, cache=DecodeCache())
    assert len(whole) == len(packets) == 3
    assert whole[-1] == packets[-1] and whole[1:] == tuple(packets[1:])
    assert whole == packets and whole.addresses == [0x100, 0x108, 0x10C] and whole.ends == [0x108, 0x10C, 0x110]
    with pytest.raises(IndexError):
        whole[3]
    assert isinstance(whole[0].instructions[0], Instruction)
