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
from pathlib import Path
from types import MappingProxyType

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
    name: str
    address: int
    data: bytes


@dataclass(frozen=True)
class FunctionSymbol:
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
        data = Path(path).read_bytes()
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
    try:
        if elf.elfclass != 32 or not elf.little_endian or not isinstance(symbols, SymbolTableSection):
            return None
        table, entries = symbols.header, relocations.header  # type: ignore[attr-defined]
        strings = elf.get_section(table["sh_link"]).header
        if entries["sh_type"] != "SHT_RELA" or entries["sh_entsize"] != _ELF32_RELA.size:
            return None
        if table["sh_entsize"] != _ELF32_SYMBOL.size:
            return None
        start, count = entries["sh_offset"], min(entries["sh_size"] // _ELF32_RELA.size, capacity)
        symbol_offset, symbol_count = table["sh_offset"], table["sh_size"] // _ELF32_SYMBOL.size
        text_start, text_end = strings["sh_offset"], strings["sh_offset"] + strings["sh_size"]
        if start + count * _ELF32_RELA.size > len(data) or symbol_offset + table["sh_size"] > len(data):
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
