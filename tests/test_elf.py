"""The ELF reader: symbols, PLT, e_flags, relocatable objects, and bad input (one-line ElfError, never a traceback)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_binary_support import CLANG, HEXAGON_FLAGS, build_library, require_toolchain

from hexlint.binary.audit import audit_image
from hexlint.binary.findings import fingerprint
from hexlint.elf import DebugInfo, ElfError, load_elf, read_elf_bytes

ROOT = Path(__file__).resolve().parent.parent
CORE_V73 = ROOT / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73.so"
CORE_V81 = ROOT / "fixtures" / "htp-core" / "lib" / "libhtp-core-v81.so"
DIVISION_TWIN = ROOT / "fixtures" / "binary" / "division.so"
GCC = shutil.which("gcc")
STRIP = shutil.which("llvm-strip-22") or shutil.which("llvm-strip")

LOCAL_DUPLICATES = r"""
static float exp_a(float x) __asm__("hvx_exp_f32.124");
static __attribute__((noinline)) float exp_a(float x) { return x * x + 1.0f; }
static float exp_b(float x) __asm__("hvx_exp_f32.98");
static __attribute__((noinline)) float exp_b(float x) { return x * 3.0f + 2.0f; }
float use_both(float x) { return exp_a(x) + exp_b(x); }
int quotient_sum(const int *v, int n, int d) { int s = 0; for (int i = 0; i < n; i++) s += v[i] / d; return s; }
"""


def test_core_library_symbols_cpu_and_sections():
    image = load_elf(CORE_V73)
    assert image.cpu == 0x73 and image.cpu_name == "hexagonv73"
    assert load_elf(CORE_V81).cpu == 0x81
    assert not image.is_relocatable
    assert ".text" in [section.name for section in image.code_sections]
    names = {function.name for function in image.functions}
    assert {"binary_task", "matmul_task", "work_queue_run"} <= names
    for function in image.functions:
        assert function.size > 0
        assert image.function_at(function.address) == function
        assert image.function_at(function.end - 4) == function
        section = image.section_at(function.address)
        assert section is not None and function.end <= section.address + len(section.data)


def test_plt_stubs_resolve_to_the_helpers_of_rela_plt():
    image = load_elf(DIVISION_TWIN)
    assert "__hexagon_udivsi3" in image.plt_stubs.values()
    for stub, helper in image.plt_stubs.items():
        assert image.name_of_target(stub) == helper
    # llvm-objdump names the same stubs: `call 0x... <__hexagon_udivsi3@plt>`
    listing = (ROOT / "fixtures" / "binary" / "division.objdump.txt").read_text()
    for stub, helper in image.plt_stubs.items():
        if f"<{helper}@plt>" in listing:
            assert f"{stub:x} <{helper}@plt>" in listing


def test_local_duplicates_are_functions_and_fingerprints_drop_the_suffix(tmp_path):
    library = build_library(tmp_path, LOCAL_DUPLICATES)
    image = load_elf(library)
    local = [function for function in image.functions if function.name.startswith("hvx_exp_f32.")]
    assert {function.name for function in local} == {"hvx_exp_f32.124", "hvx_exp_f32.98"}
    assert all(function.is_local for function in local)
    audit = audit_image(image)
    prints = {fingerprint(audit.function(function.name), "x") for function in local}
    assert prints == {"hvx_exp_f32 x"}


def test_relocatable_object_calls_are_named_by_relocations_and_dwarf_falls_back(tmp_path):
    require_toolchain()
    source = tmp_path / "obj.c"
    source.write_text(LOCAL_DUPLICATES)
    object_file = tmp_path / "obj.o"
    subprocess.run(
        [
            CLANG,
            *HEXAGON_FLAGS,
            "-mcpu=hexagonv73",
            "-O3",
            "-g",
            "-ffunction-sections",
            "-c",
            str(source),
            "-o",
            str(object_file),
        ],
        check=True,
    )
    image = load_elf(object_file)
    assert image.is_relocatable
    assert len(image.code_sections) > 1  # -ffunction-sections: each function its own section at address 0
    starts = sorted(section.address for section in image.code_sections)
    assert len(set(starts)) == len(starts)  # laid out at distinct synthetic bases
    assert "__hexagon_divsi3" in image.relocation_symbols.values()
    audit = audit_image(image)
    function = audit.function("quotient_sum")
    assert function is not None and function.inloop_divisions > 0
    debug = DebugInfo(image)
    assert not debug.available  # R_HEX_32 in .o DWARF, or overlapping sections: no line info, no exception
    assert debug.location(function.address) is None


def test_stripped_library_is_audited_as_one_pseudo_function_per_section(tmp_path):
    if not STRIP:
        pytest.skip("llvm-strip is needed to strip a library")
    stripped = tmp_path / "stripped.so"
    subprocess.run([STRIP, "--strip-all", str(DIVISION_TWIN), "-o", str(stripped)], check=True)
    image = load_elf(stripped)
    # .dynsym survives strip-all in a shared object: exported functions are still known
    assert {function.name for function in image.functions} >= {"udiv_in_loop"}
    assert not image.has_debug_info
    audit = audit_image(image)
    assert audit.function("udiv_in_loop").inloop_divisions > 0


def test_library_without_any_function_symbol_becomes_section_pseudo_functions():
    data = bytearray(DIVISION_TWIN.read_bytes())
    image = load_elf(DIVISION_TWIN)
    # Rename .symtab/.dynsym types so no symbol is a function: the reader must still give a coarse answer.
    import io

    from elftools.elf.elffile import ELFFile  # the test may use pyelftools to build its input

    elf = ELFFile(io.BytesIO(bytes(data)))
    for name in (".symtab", ".dynsym"):
        table = elf.get_section_by_name(name)
        for index in range(table.num_symbols()):
            offset = table["sh_offset"] + index * table["sh_entsize"] + 12  # st_info in Elf32_Sym
            data[offset] = data[offset] & 0xF0  # STT_NOTYPE
    bare = read_elf_bytes("bare.so", bytes(data))
    assert not bare.has_symbols
    assert [function.name for function in bare.functions] == [f"<{s.name}>" for s in image.code_sections]
    audit = audit_image(bare)
    assert any("stripped" in note for note in audit.notes)
    assert sum(function.inloop_divisions for function in audit.functions) > 0


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "not an ELF file"),
        (b"int main(void) { return 0; }\n", "not an ELF file"),
        (b"\x7fELF", "corrupt or truncated"),
        (b"\x7fELF" + b"\x01\x01\x01" + b"\x00" * 9, "corrupt or truncated"),
    ],
)
def test_non_elf_and_truncated_headers(tmp_path, content, reason):
    path = tmp_path / "bad.so"
    path.write_bytes(content)
    with pytest.raises(ElfError) as error:
        load_elf(path)
    assert str(error.value).startswith(f"{path}: ")
    assert reason in str(error.value)
    assert "\n" not in str(error.value)


def test_truncated_library_is_a_one_line_error_or_a_partial_result(tmp_path):
    data = CORE_V73.read_bytes()
    for cut in (64, 1000, len(data) // 2, len(data) - 100):
        path = tmp_path / f"cut{cut}.so"
        path.write_bytes(data[:cut])
        try:
            image = load_elf(path)
        except ElfError as error:
            assert str(error).startswith(f"{path}: ") and "\n" not in str(error)
        else:
            audit_image(image)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ElfError, match="No such file"):
        load_elf(tmp_path / "absent.so")
    with pytest.raises(ElfError, match=str(tmp_path)):
        load_elf(tmp_path)


def test_host_elf_built_with_gcc_is_not_hexagon(tmp_path):
    if not GCC:
        pytest.skip("gcc is needed to build a host ELF")
    source = tmp_path / "host.c"
    source.write_text("int twice(int x) { return 2 * x; }\n")
    host = tmp_path / "libhost.so"
    subprocess.run([GCC, "-shared", "-fPIC", str(source), "-o", str(host)], check=True)
    with pytest.raises(ElfError, match="not a Hexagon ELF"):
        load_elf(host)
    # the same file claiming to be AArch64 (e_machine 183)
    data = bytearray(host.read_bytes())
    data[18:20] = (183).to_bytes(2, "little")
    with pytest.raises(ElfError, match=r"not a Hexagon ELF .*AARCH64"):
        read_elf_bytes("aarch64.so", bytes(data))


def test_library_with_no_code_is_an_error(tmp_path):
    library = build_library(tmp_path, "int table[4] = {1, 2, 3, 4};\n", name="nocode")
    with pytest.raises(ElfError, match="no executable code"):
        load_elf(library)


def _mutations(data: bytes, seed: int) -> bytes:
    generator = random.Random(seed)
    mutated = bytearray(data)
    for _ in range(generator.randint(1, 40)):
        kind = generator.random()
        position = generator.randrange(len(mutated))
        if kind < 0.6:
            mutated[position] = generator.randrange(256)
        elif kind < 0.8:
            # favour the headers: that is where pyelftools trusts sizes and offsets
            mutated[generator.randrange(min(len(mutated), 0x400))] = generator.randrange(256)
        else:
            del mutated[position:]
            if len(mutated) < 8:
                break
    return bytes(mutated)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_fuzzed_core_library_never_raises_anything_but_elf_error(seed):
    data = _mutations(CORE_V73.read_bytes(), seed)
    try:
        image = read_elf_bytes("fuzzed.so", data)
    except ElfError as error:
        assert str(error).startswith("fuzzed.so: ") and "\n" not in str(error)
        return
    audit = audit_image(image)  # decoding and the audit must survive whatever code bytes are left
    for function in audit.functions[:3]:
        audit.locate(function.address)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_fuzzed_debug_info_never_stops_line_lookups(seed):
    debug_build = ROOT / "fixtures" / "htp-core" / "lib" / "libhtp-core-v73-g.so"
    data = bytearray(debug_build.read_bytes())
    generator = random.Random(seed)
    image = load_elf(debug_build)
    # mutate only inside the DWARF sections (they follow the code): the reader must degrade, not crash
    start = max(section.address + len(section.data) for section in image.code_sections) - image.code_sections[0].address
    for _ in range(generator.randint(1, 30)):
        data[generator.randrange(min(start, len(data) - 1), len(data))] = generator.randrange(256)
    try:
        mutated = read_elf_bytes("fuzzed-g.so", bytes(data))
    except ElfError:
        return
    debug = DebugInfo(mutated)
    for function in mutated.functions[:5]:
        debug.location(function.address)
        debug.frames(function.address)


def _committed_libraries() -> list[Path]:
    found = sorted((ROOT / "tests" / "data" / "decoder").glob("*.so"))
    found += sorted((ROOT / "fixtures" / "htp-core" / "lib").glob("*.so"))
    return found + sorted((ROOT / "fixtures" / "binary").glob("*.so"))


# What the struct readers produce, and the reader to switch off so that pyelftools produces it instead.
STRUCT_READERS = {"functions": "_function_symbols", "plt_stubs": "_plt_stub_names"}


@pytest.mark.parametrize("attribute", STRUCT_READERS)
@pytest.mark.parametrize("library", _committed_libraries(), ids=lambda p: p.name)
def test_struct_readers_equal_pyelftools(library, attribute, monkeypatch):
    fast = getattr(load_elf(library), attribute)
    monkeypatch.setattr(f"hexlint.elf.reader.{STRUCT_READERS[attribute]}", lambda *arguments: None)
    monkeypatch.setattr("hexlint.elf.reader._read_plain", lambda *arguments: None)
    assert getattr(load_elf(library), attribute) == fast


def _with_and_without_struct(data: bytearray, attribute: str) -> tuple[object, object]:
    """What a (corrupted) library reads as, by the struct reader and by pyelftools: the value or the error."""

    def read() -> object:
        try:
            value = getattr(read_elf_bytes("lib.so", bytes(data)), attribute)
            return dict(value) if attribute == "plt_stubs" else value  # the stubs are a mapping view
        except ElfError as error:
            return str(error)

    fast = read()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(f"hexlint.elf.reader.{STRUCT_READERS[attribute]}", lambda *arguments: None)
        patch.setattr("hexlint.elf.reader._read_plain", lambda *arguments: None)
        return fast, read()


@settings(max_examples=60, deadline=None)
@given(offset=st.integers(min_value=0, max_value=4096), junk=st.binary(min_size=1, max_size=8))
def test_symbols_of_a_corrupted_symbol_table_read_as_pyelftools_reads_them(offset, junk):
    """The struct reader takes only the plain layout; anything else goes to pyelftools, errors included."""
    data = bytearray(DIVISION_TWIN.read_bytes())
    table = next(section for section in _sections(data) if section[0] == 2)  # SHT_SYMTAB
    start = table[1] + offset % max(table[2], 1)
    data[start : start + len(junk)] = junk
    fast, slow = _with_and_without_struct(data, "functions")
    assert fast == slow


def _sections(data: bytearray) -> list[tuple[int, int, int]]:
    """(sh_type, sh_offset, sh_size) of every section header of a little-endian ELF32."""
    import struct

    (shoff,) = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x2E)
    headers = []
    for number in range(shnum):
        _, kind, _, _, offset, size = struct.unpack_from("<IIIIII", data, shoff + number * shentsize)
        headers.append((kind, offset, size))
    return headers


@settings(max_examples=60, deadline=None)
@given(
    which=st.sampled_from([4, 11]),  # SHT_RELA (.rela.plt), SHT_DYNSYM
    offset=st.integers(min_value=0, max_value=4096),
    junk=st.binary(min_size=1, max_size=8),
)
def test_plt_stubs_of_a_corrupted_relocation_or_symbol_table_read_as_pyelftools_reads_them(which, offset, junk):
    """The struct reader takes only the plain layout; anything else goes to pyelftools, errors included."""
    data = bytearray(DIVISION_TWIN.read_bytes())
    tables = [section for section in _sections(data) if section[0] == which]
    assert tables, "the division twin calls its helpers through the PLT"
    table = tables[offset % len(tables)]
    start = table[1] + offset % max(table[2], 1)
    data[start : start + len(junk)] = junk
    fast, slow = _with_and_without_struct(data, "plt_stubs")
    assert fast == slow


@pytest.mark.parametrize("library", _committed_libraries(), ids=lambda p: p.name)
def test_a_plain_library_is_read_without_pyelftools_as_pyelftools_reads_it(library):
    from hexlint.elf.reader import _read_plain, _read_with_pyelftools

    data = library.read_bytes()
    plain = _read_plain(str(library), data)
    assert plain is not None  # every committed library has the plain layout
    assert plain == _read_with_pyelftools(str(library), data)


def _read_both(data: bytes) -> tuple[object, object]:
    """read_elf_bytes of `data` (the image or the error), then the same with pyelftools alone."""

    def read() -> object:
        try:
            return read_elf_bytes("lib.so", data)
        except ElfError as error:
            return str(error)

    fast = read()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("hexlint.elf.reader._read_plain", lambda *arguments: None)
        return fast, read()


@settings(max_examples=80, deadline=None)
@given(
    where=st.sampled_from(["header", "sections", "names"]),
    offset=st.integers(0, 4096),
    junk=st.binary(min_size=1, max_size=6),
)
def test_a_corrupted_header_or_section_table_reads_as_pyelftools_reads_it(where, offset, junk):
    """The plain reader takes only what it can vouch for; anything else is pyelftools' to read or to refuse."""
    import struct

    data = bytearray(DIVISION_TWIN.read_bytes())
    (shoff,) = struct.unpack_from("<I", data, 0x20)
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x30)
    names = _sections(data)[shstrndx]
    start, size = {"header": (0, 52), "sections": (shoff, shnum * 40), "names": (names[1], names[2])}[where]
    position = start + offset % size
    data[position : position + len(junk)] = junk
    fast, slow = _read_both(bytes(data))
    assert fast == slow
