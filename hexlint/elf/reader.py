"""Read a Hexagon ELF (shared object, executable or relocatable object) into plain frozen data.

What the audit needs and nothing more: executable sections with their bytes, function symbols (local duplicates such
as `hvx_exp_f32.124` included), PLT stubs resolved to the helper they jump to (`.rela.plt`), call relocations of
relocatable objects, the CPU version (`e_flags & 0xff`) and whether DWARF is present. pyelftools is imported here
and in dwarf.py only; every error it raises becomes one `ElfError` whose text is `path: reason`.
"""

from __future__ import annotations

import functools
import io
import struct
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:  # pyelftools is imported where a file is not of the plain layout _read_plain reads
    from pathlib import Path

    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import Section, SymbolTableSection

HEXAGON_MACHINE = "EM_QDSP6"
SHF_EXECINSTR = 0x4
SHF_ALLOC = 0x2
# lld and GNU ld both lay out the Hexagon PLT as a 32-byte header then one 16-byte stub per .rela.plt entry.
PLT_HEADER_SIZE = 32
PLT_ENTRY_SIZE = 16
# Sections of a relocatable object all start at 0: give each a distinct synthetic base, as a linker would.
RELOCATABLE_SECTION_ALIGN = 0x100


class ElfError(ValueError):
    """A file that cannot be audited; str() is the one-line `path: reason` the CLI prints."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class CodeSection:
    """An executable section: its name, load address and bytes."""

    name: str
    address: int
    data: bytes


@dataclass(frozen=True)
class FunctionSymbol:
    """A function symbol: name, address, size, whether it is local."""

    name: str
    address: int
    size: int
    is_local: bool = False
    # True when the symbol table had no size and the extent was inferred from the next symbol.
    size_inferred: bool = False

    @property
    def end(self) -> int:
        return self.address + self.size


@dataclass(frozen=True)
class ElfImage:
    """What the audit reads of an ELF file: code and data sections, functions, PLT stubs, relocations, DWARF or not."""

    path: str
    machine: str
    cpu: int
    is_relocatable: bool
    code_sections: tuple[CodeSection, ...]
    functions: tuple[FunctionSymbol, ...]
    plt_stubs: Mapping[int, str] = field(default_factory=dict)
    # Relocatable objects only: address of a relocated instruction word -> symbol it refers to.
    relocation_symbols: Mapping[int, str] = field(default_factory=dict)
    has_debug_info: bool = False
    has_symbols: bool = True
    raw: bytes = field(default=b"", repr=False, compare=False)
    # Linked images only: the other loaded sections with contents (.rodata ...), where jump tables live.
    data_sections: tuple[CodeSection, ...] = ()

    @property
    def cpu_name(self) -> str:
        return f"hexagonv{self.cpu:x}" if self.cpu else "hexagon"

    @functools.cached_property
    def _function_starts(self) -> list[int]:
        return [function.address for function in self.functions]

    def function_at(self, address: int) -> FunctionSymbol | None:
        """The function whose extent holds `address` (innermost start wins)."""
        index = bisect_right(self._function_starts, address) - 1
        while index >= 0:
            candidate = self.functions[index]
            if candidate.address <= address < candidate.end:
                return candidate
            if address - candidate.address > 1 << 20:
                break
            index -= 1
        return None

    def section_at(self, address: int) -> CodeSection | None:
        for section in self.code_sections:
            if section.address <= address < section.address + len(section.data):
                return section
        return None

    def read_word(self, address: int) -> int | None:
        """The signed 32-bit little-endian word at `address` of a loaded section, None outside them."""
        for section in (*self.data_sections, *self.code_sections):
            offset = address - section.address
            if 0 <= offset <= len(section.data) - 4:
                return int.from_bytes(section.data[offset : offset + 4], "little", signed=True)
        return None

    def name_of_target(self, target: int | None, instruction_address: int | None = None) -> str | None:
        """The helper or function a call/jump reaches: relocation symbol, PLT helper, or function symbol."""
        if instruction_address is not None and instruction_address in self.relocation_symbols:
            return self.relocation_symbols[instruction_address]
        if target is None:
            return None
        if target in self.plt_stubs:
            return self.plt_stubs[target]
        function = self.function_at(target)
        if function is not None and function.address == target:
            return function.name
        return None


def load_elf(path: str | Path) -> ElfImage:
    """Read `path`; raise ElfError (one line, naming the file) for anything that is not an auditable Hexagon ELF."""
    name = str(path)
    try:
        with open(path, "rb") as stream:  # as Path.read_bytes, without importing pathlib for it
            data = stream.read()
    except OSError as error:
        raise ElfError(name, error.strerror or str(error)) from None
    return read_elf_bytes(name, data)


def read_elf_bytes(name: str, data: bytes) -> ElfImage:
    if not data.startswith(b"\x7fELF"):
        raise ElfError(name, "not an ELF file")
    try:
        return _read(name, data)
    except ElfError:
        raise
    # pyelftools raises many types on corrupt input (its own ELFError, struct.error, ValueError, IndexError, ...).
    except Exception as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ElfError(name, f"corrupt or truncated ELF ({reason})") from None


def _read(name: str, data: bytes) -> ElfImage:
    return _read_plain(name, data) or _read_with_pyelftools(name, data)


_ELF32_HEADER = struct.Struct("<16sHHIIIIIHHHHHH")  # e_ident, e_type, e_machine, ..., e_shnum, e_shstrndx
_ELF32_SECTION = struct.Struct("<IIIIIIIIII")  # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, ...
_EM_QDSP6 = 164
_ET_EXEC, _ET_DYN = 2, 3
_SHT_PROGBITS, _SHT_SYMTAB, _SHT_RELA, _SHT_REL, _SHT_NOBITS, _SHT_DYNSYM = 1, 2, 4, 9, 8, 11
_SHF_COMPRESSED = 0x800


@dataclass(frozen=True, slots=True)
class _PlainSection:
    """A section header of a plain linked ELF32, as read with struct alone."""

    name: str
    type: int
    flags: int
    address: int
    offset: int
    size: int
    link: int
    entry_size: int


def _read_plain(name: str, data: bytes) -> ElfImage | None:
    """The ElfImage of a linked little-endian ELF32 Hexagon file of the plain layout (every section header and name
    in bounds, ASCII names, no compressed section, symbols and .rela.plt as _function_symbols and _plt_stub_names
    read them), read with struct alone: pyelftools' import is a tenth of an audit's start-up. None for anything
    else (a relocatable object, another machine, any doubt), which pyelftools then reads, and judges, as before."""
    try:
        if len(data) < _ELF32_HEADER.size or data[4] != 1 or data[5] != 1:  # ELFCLASS32, ELFDATA2LSB
            return None
        header = _ELF32_HEADER.unpack_from(data, 0)
        e_type, machine, flags, shoff, shentsize, shnum, shstrndx = (
            header[1],
            header[2],
            header[7],
            header[6],
            header[11],
            header[12],
            header[13],
        )
        if machine != _EM_QDSP6 or e_type not in (_ET_EXEC, _ET_DYN) or shentsize != _ELF32_SECTION.size:
            return None
        if not 0 < shnum < 0xFF00 or shstrndx >= shnum or shoff + shnum * shentsize > len(data):
            return None
        raw = [_ELF32_SECTION.unpack_from(data, shoff + index * shentsize) for index in range(shnum)]
        names_offset, names_size = raw[shstrndx][4], raw[shstrndx][5]
        if names_offset + names_size > len(data):
            return None
        sections = []
        for sh_name, sh_type, sh_flags, address, offset, size, link, _info, _align, entry_size in raw:
            start = names_offset + sh_name
            end = data.find(b"\0", start, names_offset + names_size)
            if end < 0 or sh_flags & _SHF_COMPRESSED or (sh_type != _SHT_NOBITS and offset + size > len(data)):
                return None
            section_name = data[start:end].decode("ascii")  # pyelftools reads latin-1: any other byte, it decides
            sections.append(_PlainSection(section_name, sh_type, sh_flags, address, offset, size, link, entry_size))
        if not all(_constructible(data, sections, section) for section in sections):
            return None
        by_name = {section.name: section for section in sections}
        code = [
            section.type == _SHT_PROGBITS and bool(section.flags & SHF_EXECINSTR) and section.size > 0
            for section in sections
        ]
        code_sections = tuple(
            CodeSection(section.name, section.address, data[section.offset : section.offset + section.size])
            for section, is_code in zip(sections, code, strict=True)
            if is_code and section.name != ".plt"
        )
        if not code_sections:
            return None
        functions = _plain_functions(data, sections, by_name, code, code_sections)
        stubs = _plain_plt_stubs(data, sections, by_name)
        if functions is None or stubs is None:
            return None
        return ElfImage(
            path=name,
            machine=HEXAGON_MACHINE,
            cpu=flags & 0xFF,
            is_relocatable=False,
            code_sections=code_sections,
            functions=functions[0],
            plt_stubs=MappingProxyType(stubs),
            relocation_symbols=MappingProxyType({}),
            has_debug_info=".debug_info" in by_name,
            has_symbols=functions[1],
            raw=data,
            data_sections=tuple(
                CodeSection(section.name, section.address, data[section.offset : section.offset + section.size])
                for section in sections
                if section.type == _SHT_PROGBITS and section.flags & SHF_ALLOC and not section.flags & SHF_EXECINSTR
            ),
        )
    except (struct.error, IndexError, UnicodeDecodeError):
        return None


# Section types whose pyelftools section objects _constructible vouches for (ELFFile.iter_sections makes them all,
# and some check their contents as they are made); any other type: pyelftools reads the file.
_SHT_HASH, _SHT_DYNAMIC, _SHT_GNU_HASH = 5, 6, 0x6FFFFFF6
_PLAIN_TYPES = frozenset({0, 1, 2, 3, 4, 5, 6, 8, 9, 11, _SHT_GNU_HASH, 0x70000003})  # 0x70000003: .hexagon.attributes


def _constructible(data: bytes, sections: list[_PlainSection], section: _PlainSection) -> bool:
    """pyelftools makes this section's object without an error: the checks its constructors make (linked sections
    of the right type, entry sizes, hash tables within the file)."""
    kind = section.type
    if kind not in _PLAIN_TYPES or (kind == _SHT_PROGBITS and section.name == ".stab"):
        return False
    if kind in (_SHT_SYMTAB, _SHT_DYNSYM):
        return _symbol_table_constructible(sections, section)
    if kind in (_SHT_RELA, _SHT_REL):
        return section.entry_size == (_ELF32_RELA.size if kind == _SHT_RELA else 8)
    if kind == _SHT_DYNAMIC:
        return section.link < len(sections) and sections[section.link].type in (0, 3, _SHT_NOBITS)
    if kind in (_SHT_HASH, _SHT_GNU_HASH):
        if section.link >= len(sections) or sections[section.link].type not in (_SHT_SYMTAB, _SHT_DYNSYM):
            return False
        if not _symbol_table_constructible(sections, sections[section.link]):
            return False
        if kind == _SHT_HASH:
            if section.size == 0:
                return True
            buckets, chains = struct.unpack_from("<II", data, section.offset)
            return section.offset + 8 + 4 * (buckets + chains) <= len(data)
        buckets, _, bloom, _ = struct.unpack_from("<IIII", data, section.offset)
        return section.offset + 16 + 4 * (bloom + buckets) <= len(data)
    return True


def _symbol_table_constructible(sections: list[_PlainSection], table: _PlainSection) -> bool:
    if table.link >= len(sections) or sections[table.link].type != 3:  # SHT_STRTAB
        return False
    return table.entry_size > 0 and table.size % table.entry_size == 0


def _plain_symbols(
    data: bytes, table: _PlainSection, sections: list[_PlainSection]
) -> list[tuple[str, int, int, bool, int]] | None:
    """_function_symbols of a _PlainSection symbol table."""
    if table.link >= len(sections):
        return None
    strings = sections[table.link]
    return _symbols_in(data, table.offset, table.size, table.entry_size, strings.offset, strings.offset + strings.size)


def _plain_functions(
    data: bytes,
    sections: list[_PlainSection],
    by_name: Mapping[str, _PlainSection],
    code: list[bool],
    code_sections: tuple[CodeSection, ...],
) -> tuple[tuple[FunctionSymbol, ...], bool] | None:
    """_functions of a linked plain file, None where it would ask pyelftools."""
    table = by_name.get(".symtab") or by_name.get(".dynsym")
    found: dict[tuple[str, int], FunctionSymbol] = {}
    if table is not None:
        if table.type not in (_SHT_SYMTAB, _SHT_DYNSYM):
            return None
        symbols = _plain_symbols(data, table, sections)
        if symbols is None:
            return None
        for name, value, size, is_local, index in symbols:
            if index >= len(sections) or not code[index]:
                continue
            found[(name, value)] = FunctionSymbol(name=name, address=value, size=size, is_local=is_local)
    return _function_list(found, code_sections)


def _plain_plt_stubs(
    data: bytes, sections: list[_PlainSection], by_name: Mapping[str, _PlainSection]
) -> dict[int, str] | None:
    """_plt_stubs of a linked plain file, None where it would ask pyelftools."""
    plt, relocations = by_name.get(".plt"), by_name.get(".rela.plt")
    if plt is None or relocations is None or relocations.type not in (_SHT_RELA, _SHT_REL):
        return {}
    if relocations.type != _SHT_RELA or relocations.entry_size != _ELF32_RELA.size or relocations.link >= len(sections):
        return None
    table = sections[relocations.link]
    if table.type not in (_SHT_SYMTAB, _SHT_DYNSYM) or table.entry_size != _ELF32_SYMBOL.size:
        return None
    if table.link >= len(sections):
        return None
    strings = sections[table.link]
    capacity = max(0, (plt.size - PLT_HEADER_SIZE) // PLT_ENTRY_SIZE)
    names = _plt_names_in(
        data, relocations.offset, relocations.size, capacity, table.offset, table.size, strings.offset, strings.size
    )
    if names is None:
        return None
    return {plt.address + PLT_HEADER_SIZE + index * PLT_ENTRY_SIZE: name for index, name in names.items()}


def _read_with_pyelftools(name: str, data: bytes) -> ElfImage:

    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(data))
    machine = elf.header["e_machine"]
    if machine != HEXAGON_MACHINE:
        raise ElfError(name, f"not a Hexagon ELF (machine {machine})")
    is_relocatable = elf.header["e_type"] == "ET_REL"
    sections = list(elf.iter_sections())
    # get_section_by_name's map (the last of a name wins), without pyelftools parsing every section header again
    by_name = {section.name: section for section in sections}
    bases = _section_bases(sections, is_relocatable)
    code_sections = tuple(
        CodeSection(section.name, bases[index], section.data())
        for index, section in enumerate(sections)
        if _is_code(section) and section.name != ".plt"
    )
    if not code_sections:
        raise ElfError(name, "no executable code (.text is missing or empty)")
    for section in code_sections:
        if section.address < 0:
            raise ElfError(name, f"bad address for section {section.name}")
    functions, has_symbols = _functions(elf, sections, by_name, bases, code_sections, data)
    return ElfImage(
        path=name,
        machine=machine,
        cpu=elf.header["e_flags"] & 0xFF,
        is_relocatable=is_relocatable,
        code_sections=code_sections,
        functions=functions,
        plt_stubs=MappingProxyType(_plt_stubs(elf, by_name, data)),
        relocation_symbols=MappingProxyType(_relocation_symbols(elf, sections, bases) if is_relocatable else {}),
        has_debug_info=".debug_info" in by_name,
        has_symbols=has_symbols,
        raw=data,
        data_sections=()
        if is_relocatable
        else tuple(
            CodeSection(section.name, section["sh_addr"], section.data())
            for section in sections
            if _is_loaded_data(section)
        ),
    )


def _is_code(section: object) -> bool:
    header = section.header  # type: ignore[attr-defined]
    return bool(header["sh_flags"] & SHF_EXECINSTR) and header["sh_type"] == "SHT_PROGBITS" and header["sh_size"] > 0


def _is_loaded_data(section: object) -> bool:
    header = section.header  # type: ignore[attr-defined]
    flags = header["sh_flags"]
    return bool(flags & SHF_ALLOC) and not flags & SHF_EXECINSTR and header["sh_type"] == "SHT_PROGBITS"


def _section_bases(sections: list, is_relocatable: bool) -> list[int]:
    if not is_relocatable:
        return [section["sh_addr"] for section in sections]
    bases, cursor = [], 0
    for section in sections:
        if _is_code(section):
            bases.append(cursor)
            cursor = _align_up(cursor + section["sh_size"], RELOCATABLE_SECTION_ALIGN)
        else:
            bases.append(0)
    return bases


def _align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def _functions(
    elf: ELFFile,
    sections: list,
    by_name: Mapping[str, Section],
    bases: list[int],
    code_sections: tuple[CodeSection, ...],
    data: bytes,
) -> tuple[tuple[FunctionSymbol, ...], bool]:
    from elftools.elf.sections import SymbolTableSection

    table = by_name.get(".symtab") or by_name.get(".dynsym")
    found: dict[tuple[str, int], FunctionSymbol] = {}
    if isinstance(table, SymbolTableSection):
        is_code = [_is_code(section) for section in sections]
        relocatable = elf.header["e_type"] == "ET_REL"
        symbols = _function_symbols(elf, table, sections, data)
        if symbols is None:  # not the plain layout the fast reader knows: pyelftools, and its errors
            symbols = [
                (symbol.name, symbol["st_value"], symbol["st_size"], symbol["st_info"]["bind"] == "STB_LOCAL", index)
                for symbol in table.iter_symbols()
                if symbol["st_info"]["type"] == "STT_FUNC" and symbol.name
                for index in [symbol["st_shndx"]]
                if isinstance(index, int)
            ]
        for name, value, size, is_local, index in symbols:
            if index >= len(sections) or not is_code[index]:
                continue
            address = (bases[index] if relocatable else 0) + value
            found[(name, address)] = FunctionSymbol(name=name, address=address, size=size, is_local=is_local)
    return _function_list(found, code_sections)


def _function_list(
    found: Mapping[tuple[str, int], FunctionSymbol], code_sections: tuple[CodeSection, ...]
) -> tuple[tuple[FunctionSymbol, ...], bool]:
    functions = sorted(found.values(), key=lambda function: (function.address, function.name))
    functions = _infer_missing_sizes(functions, code_sections)
    if functions:
        return tuple(functions), True
    # Stripped: audit each code section as one pseudo-function so the user still gets a (coarse) answer.
    return tuple(
        FunctionSymbol(f"<{section.name}>", section.address, len(section.data), True, True) for section in code_sections
    ), False


_ELF32_SYMBOL = struct.Struct("<IIIBBH")  # st_name, st_value, st_size, st_info, st_other, st_shndx
_STT_FUNC = 2


def _function_symbols(
    elf: ELFFile, table: SymbolTableSection, sections: list, data: bytes
) -> list[tuple[str, int, int, bool, int]] | None:
    """(name, value, size, is local, section index) of the named STT_FUNC symbols of a little-endian ELF32 symbol
    table, read with struct (pyelftools parses each symbol through construct, a hundred times slower); None for any
    other layout or anything out of bounds, where the caller asks pyelftools as before."""
    try:
        if elf.elfclass != 32 or not elf.little_endian or len(sections) >= 0xFF00:
            return None
        header = table.header
        strings = sections[header["sh_link"]].header
        offset, size, entry = header["sh_offset"], header["sh_size"], header["sh_entsize"]
        text_start, text_end = strings["sh_offset"], strings["sh_offset"] + strings["sh_size"]
        return _symbols_in(data, offset, size, entry, text_start, text_end)
    except Exception:  # anything unexpected: pyelftools decides, with its own errors
        return None


def _symbols_in(
    data: bytes, offset: int, size: int, entry: int, text_start: int, text_end: int
) -> list[tuple[str, int, int, bool, int]] | None:
    """The named STT_FUNC symbols of the ELF32 symbol table at data[offset:offset+size] (names in
    data[text_start:text_end]); None when anything is out of bounds."""
    try:
        if entry != _ELF32_SYMBOL.size or offset + size > len(data) or text_end > len(data):
            return None
        found = []
        end = offset + size // entry * entry
        for name_offset, value, symbol_size, info, _other, index in _ELF32_SYMBOL.iter_unpack(data[offset:end]):
            if info & 0xF != _STT_FUNC:
                continue
            start = text_start + name_offset
            stop = data.find(b"\0", start, text_end)
            if start >= text_end or stop < 0:
                return None
            if stop == start:
                continue  # no name
            # SHN_UNDEF (0) and the reserved indexes (0xff00 and up, more than there are sections) name no section
            found.append(
                (data[start:stop].decode("utf-8", errors="replace"), value, symbol_size, info >> 4 == 0, index)
            )
        return found
    except Exception:  # anything unexpected: pyelftools decides, with its own errors
        return None


def _infer_missing_sizes(
    functions: list[FunctionSymbol], code_sections: tuple[CodeSection, ...]
) -> list[FunctionSymbol]:
    result = []
    for index, function in enumerate(functions):
        if function.size > 0:
            result.append(function)
            continue
        section_end = next(
            (s.address + len(s.data) for s in code_sections if s.address <= function.address < s.address + len(s.data)),
            function.address,
        )
        # The list is sorted by address: the next symbol that starts further on ends this one.
        following = section_end
        for later in range(index + 1, len(functions)):
            if functions[later].address > function.address:
                following = functions[later].address
                break
        end = min(section_end, following)
        if end > function.address:
            result.append(
                FunctionSymbol(function.name, function.address, end - function.address, function.is_local, True)
            )
    return result


def _plt_stubs(elf: ELFFile, by_name: Mapping[str, Section], data: bytes) -> dict[int, str]:
    from elftools.elf.sections import SymbolTableSection

    plt = by_name.get(".plt")
    relocations = by_name.get(".rela.plt")
    if plt is None or relocations is None or not hasattr(relocations, "iter_relocations"):
        return {}
    symbols = elf.get_section(relocations["sh_link"])
    capacity = max(0, (plt["sh_size"] - PLT_HEADER_SIZE) // PLT_ENTRY_SIZE)
    fast = _plt_stub_names(elf, relocations, symbols, capacity, data)
    if fast is not None:
        return {plt["sh_addr"] + PLT_HEADER_SIZE + index * PLT_ENTRY_SIZE: name for index, name in fast.items()}
    stubs: dict[int, str] = {}
    for index, relocation in enumerate(relocations.iter_relocations()):
        if index >= capacity:
            break
        symbol_index = relocation["r_info_sym"]
        if not isinstance(symbols, SymbolTableSection) or symbol_index >= symbols.num_symbols():
            continue
        helper = symbols.get_symbol(symbol_index).name
        if helper:
            stubs[plt["sh_addr"] + PLT_HEADER_SIZE + index * PLT_ENTRY_SIZE] = helper
    return stubs


_ELF32_RELA = struct.Struct("<IIi")  # r_offset, r_info, r_addend


def _plt_stub_names(
    elf: ELFFile, relocations: object, symbols: object, capacity: int, data: bytes
) -> dict[int, str] | None:
    """PLT entry number -> helper name, from the first `capacity` entries of a little-endian ELF32 .rela.plt and its
    symbol table, read with struct (pyelftools parses each relocation and symbol through construct); None for any
    other layout or anything out of bounds, where the caller asks pyelftools as before."""
    from elftools.elf.sections import SymbolTableSection

    try:
        if elf.elfclass != 32 or not elf.little_endian or not isinstance(symbols, SymbolTableSection):
            return None
        table, entries = symbols.header, relocations.header  # type: ignore[attr-defined]
        strings = elf.get_section(table["sh_link"]).header
        if entries["sh_type"] != "SHT_RELA" or entries["sh_entsize"] != _ELF32_RELA.size:
            return None
        if table["sh_entsize"] != _ELF32_SYMBOL.size:
            return None
        return _plt_names_in(
            data,
            entries["sh_offset"],
            entries["sh_size"],
            capacity,
            table["sh_offset"],
            table["sh_size"],
            strings["sh_offset"],
            strings["sh_size"],
        )
    except Exception:  # anything unexpected: pyelftools decides, with its own errors
        return None


def _plt_names_in(
    data: bytes,
    start: int,
    entries_size: int,
    capacity: int,
    symbol_offset: int,
    table_size: int,
    text_start: int,
    text_size: int,
) -> dict[int, str] | None:
    """PLT entry number -> helper name of the first `capacity` ELF32 RELA entries at data[start:] whose symbols
    are the table at data[symbol_offset:] (names at data[text_start:]); None when anything is out of bounds."""
    try:
        count = min(entries_size // _ELF32_RELA.size, capacity)
        symbol_count = table_size // _ELF32_SYMBOL.size
        text_end = text_start + text_size
        if start + count * _ELF32_RELA.size > len(data) or symbol_offset + table_size > len(data):
            return None
        if text_end > len(data):
            return None
        names: dict[int, str] = {}
        for index, (_, info, _) in enumerate(_ELF32_RELA.iter_unpack(data[start : start + count * _ELF32_RELA.size])):
            symbol = info >> 8
            if symbol >= symbol_count:
                continue
            (name_offset,) = struct.unpack_from("<I", data, symbol_offset + symbol * _ELF32_SYMBOL.size)
            name_start = text_start + name_offset
            name_end = data.find(b"\0", name_start, text_end)
            if name_start >= text_end or name_end < 0:
                return None
            if name_end > name_start:
                names[index] = data[name_start:name_end].decode("utf-8", errors="replace")
        return names
    except Exception:  # anything unexpected: pyelftools decides, with its own errors
        return None


def _relocation_symbols(elf: ELFFile, sections: list, bases: list[int]) -> dict[int, str]:
    """In a .o, calls to helpers are unresolved (target 0): the relocation names the helper instead."""
    from elftools.elf.sections import SymbolTableSection

    result: dict[int, str] = {}
    for section in sections:
        if section["sh_type"] != "SHT_RELA" or not hasattr(section, "iter_relocations"):
            continue
        target_index = section["sh_info"]
        if target_index >= len(sections) or not _is_code(sections[target_index]):
            continue
        symbols = elf.get_section(section["sh_link"])
        if not isinstance(symbols, SymbolTableSection):
            continue
        for relocation in section.iter_relocations():
            symbol_index = relocation["r_info_sym"]
            if symbol_index >= symbols.num_symbols():
                continue
            symbol = symbols.get_symbol(symbol_index)
            name = symbol.name
            if symbol["st_info"]["type"] == "STT_SECTION" and isinstance(symbol["st_shndx"], int):
                name = sections[symbol["st_shndx"]].name if symbol["st_shndx"] < len(sections) else ""
            if name:
                result[bases[target_index] + relocation["r_offset"]] = name
    return result
