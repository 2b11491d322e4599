"""DWARF line tables and inlined frames (DWARF 4 and 5), built lazily from an ElfImage.

`DebugInfo(image).location(address)` is the line-table answer (what `llvm-addr2line` prints without -i);
`DebugInfo(image).frames(address)` adds the inlined call chain, innermost first, like `llvm-addr2line -f -i`.
A relocatable object whose DWARF needs R_HEX relocations pyelftools cannot apply (it raises on R_HEX_32) falls
back to no line information, as does any file whose DWARF is corrupt: the audit never fails because of debug info.
"""

from __future__ import annotations

import io
import os.path
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from elftools.elf.elffile import ELFFile

from hexlint.elf.reader import ElfImage


@dataclass(frozen=True)
class SourceLocation:
    file: str
    line: int
    column: int = 0


@dataclass(frozen=True)
class SourceFrame:
    """One frame of an address: the function (inlined or not) and where in the source it is."""

    function: str | None
    location: SourceLocation | None


@dataclass(frozen=True)
class FrameObject:
    """A variable the compiler keeps in the stack frame at one fixed place (a DWARF location `DW_OP_fbreg N` or
    `DW_OP_bregN`, not a location list): `base` is "r29" (SP) or "r30" (FP), `offset` its first byte from it."""

    name: str
    base: str
    offset: int
    size: int

    def overlaps(self, base: str, offset: int, size: int) -> bool:
        return base == self.base and offset < self.offset + self.size and self.offset < offset + size


@dataclass(frozen=True)
class _Row:
    address: int
    end_sequence: bool
    location: SourceLocation | None


@dataclass(frozen=True)
class _Scope:
    """A subprogram or inlined subroutine: its address ranges, name, call site, and nested inlined scopes."""

    name: str | None
    ranges: tuple[tuple[int, int], ...]
    call_site: SourceLocation | None
    children: tuple[_Scope, ...]

    def contains(self, address: int) -> bool:
        return any(low <= address < high for low, high in self.ranges)


class DebugInfo:
    """Lazy DWARF reader; `available` is False when the file has no usable line information.

    Line tables are decoded per compilation unit, on the first question about an address the unit covers (its
    `.debug_aranges` entries, else its top DIE's low/high_pc or ranges): an audit that locates a few findings decodes
    a few units, not all of them (decoding every unit's line program was most of an audit of a -g build)."""

    def __init__(self, image: ElfImage) -> None:
        self._image = image
        self._dwarf: Any = None
        self._units: list[_Unit] | None = None
        # unit offset -> its rows sorted by address, and their addresses (bisected)
        self._unit_tables: dict[int, tuple[list[_Row], list[int]]] = {}
        self._scopes: list[_Scope] | None = None
        self._frame_objects: dict[int, dict[int, tuple[FrameObject, ...]]] = {}  # unit offset -> low_pc -> objects
        self.error: str | None = None

    @property
    def available(self) -> bool:
        return any(unit.has_lines for unit in self._line_units())

    @property
    def decoded_units(self) -> int:
        """How many units' line tables were decoded so far (what the laziness saves is measurable)."""
        return len(self._unit_tables)

    def location(self, address: int) -> SourceLocation | None:
        """The row at or before `address` of the units that may cover it (the last one, as in one merged table)."""
        best: _Row | None = None
        for unit in self._line_units():
            if unit.ranges and not unit.contains(address):
                continue
            rows, addresses = self._unit_table(unit)
            index = bisect_right(addresses, address) - 1
            if index >= 0:
                row = rows[index]
                if best is None or (row.address, row.end_sequence) > (best.address, best.end_sequence):
                    best = row
        return None if best is None or best.end_sequence else best.location

    def frames(self, address: int) -> tuple[SourceFrame, ...]:
        """Innermost frame first; the outer frames carry their call-site locations."""
        chain = self._scope_chain(address)
        if not chain:
            function = self._image.function_at(address)
            return (SourceFrame(function.name if function else None, self.location(address)),)
        frames = []
        location = self.location(address)
        for scope in reversed(chain):
            frames.append(SourceFrame(scope.name, location))
            location = scope.call_site
        return tuple(frames)

    def frame_objects(self, function_address: int) -> tuple[FrameObject, ...]:
        """The variables (inlined callees' included) that the function starting at `function_address` keeps at a
        fixed place in its frame; decodes the debug information entries of the unit that covers it, once."""
        for unit in self._line_units():
            if unit.ranges and not unit.contains(function_address):
                continue
            objects = self._unit_frame_objects(unit).get(function_address)
            if objects is not None:
                return objects
        return ()

    def _unit_frame_objects(self, unit: _Unit) -> dict[int, tuple[FrameObject, ...]]:
        cached = self._frame_objects.get(unit.offset)
        if cached is None:
            try:
                cached = _frame_objects_of_unit(self._dwarf_info(), unit.unit)
            except Exception as error:  # corrupt DIEs: no frame objects, the audit goes on
                self.error = f"unreadable DWARF debug info ({error})"
                cached = {}
            self._frame_objects[unit.offset] = cached
        return cached

    def _dwarf_info(self) -> Any:
        if self._dwarf is None and self.error is None:
            if not self._image.has_debug_info:
                self.error = "no DWARF debug information"
                return None
            try:
                elf = ELFFile(io.BytesIO(self._image.raw))
                self._dwarf = elf.get_dwarf_info()
            except Exception as error:  # R_HEX_32 in a .o's DWARF, or corrupt DWARF: audit without lines
                self.error = f"unreadable DWARF ({error})"
        return self._dwarf

    def _line_units(self) -> list[_Unit]:
        """The compilation units with their address ranges (no line program decoded yet)."""
        if self._units is not None:
            return self._units
        units: list[_Unit] = []
        dwarf = self._dwarf_info()
        # Relocatable objects with several code sections have overlapping section-relative line addresses.
        ambiguous = self._image.is_relocatable and len(self._image.code_sections) > 1
        if dwarf is not None and not ambiguous:
            try:
                units = _units_with_ranges(dwarf)
            except Exception as error:
                self.error = f"unreadable DWARF compilation units ({error})"
                units = []
        self._units = units
        return units

    def _unit_table(self, unit: _Unit) -> tuple[list[_Row], list[int]]:
        table = self._unit_tables.get(unit.offset)
        if table is None:
            try:
                rows = sorted(_unit_rows(self._dwarf_info(), unit.unit), key=_row_order)
            except Exception as error:
                self.error = f"unreadable DWARF line table ({error})"
                rows = []
            table = self._unit_tables[unit.offset] = (rows, [row.address for row in rows])
        return table

    def _scope_chain(self, address: int) -> list[_Scope]:
        if self._scopes is None:
            self._scopes = []
            dwarf = self._dwarf_info()
            if dwarf is not None and self.available:
                try:
                    for unit in dwarf.iter_CUs():
                        self._scopes.extend(_unit_scopes(dwarf, unit))
                except Exception as error:
                    self.error = f"unreadable DWARF debug info ({error})"
        chain: list[_Scope] = []
        scopes: tuple[_Scope, ...] | list[_Scope] = self._scopes
        while True:
            inner = next((scope for scope in scopes if scope.contains(address)), None)
            if inner is None:
                return chain
            chain.append(inner)
            scopes = inner.children


@dataclass(frozen=True)
class _Unit:
    """A compilation unit and the addresses it covers (empty: unknown, so it is decoded for any address)."""

    offset: int
    unit: Any = field(compare=False)
    ranges: tuple[tuple[int, int], ...]
    has_lines: bool

    def contains(self, address: int) -> bool:
        return any(low <= address < high for low, high in self.ranges)


def _row_order(row: _Row) -> tuple[int, bool]:
    return (row.address, not row.end_sequence)


def _units_with_ranges(dwarf: Any) -> list[_Unit]:
    aranges = _aranges_by_unit(dwarf)
    units = []
    for unit in dwarf.iter_CUs():
        top = unit.get_top_DIE()
        ranges = aranges.get(unit.cu_offset) or _ranges(dwarf, unit, top)
        has_lines = "DW_AT_stmt_list" in top.attributes
        units.append(_Unit(unit.cu_offset, unit, ranges, has_lines))
    return units


def _aranges_by_unit(dwarf: Any) -> dict[int, tuple[tuple[int, int], ...]]:
    """CU offset -> its .debug_aranges address ranges (clang emits the section only with -gdwarf-aranges)."""
    aranges = dwarf.get_aranges()
    if aranges is None:
        return {}
    by_unit: dict[int, list[tuple[int, int]]] = {}
    for entry in aranges.entries:
        if entry.length > 0:
            by_unit.setdefault(entry.info_offset, []).append((entry.begin_addr, entry.begin_addr + entry.length))
    return {offset: tuple(ranges) for offset, ranges in by_unit.items()}


def _unit_rows(dwarf: Any, unit: Any) -> list[_Row]:
    program = dwarf.line_program_for_CU(unit)
    if program is None:
        return []
    version = program.header["version"]
    top = unit.get_top_DIE()
    compilation_dir = _text(top.attributes.get("DW_AT_comp_dir"))
    files = _file_names(program, version, compilation_dir)
    data = _section_bytes(program.stream)
    rows = []
    locations: dict[tuple[int, int, int], SourceLocation] = {}
    for address, file, line, column, end_sequence in line_program_rows(
        data, program.program_start_offset, program.program_end_offset, program.header, unit["address_size"]
    ):
        key = (file, line, column)
        location = locations.get(key)
        if location is None:
            location = locations[key] = SourceLocation(files.get(file, "??"), line, column)
        rows.append(_Row(address, end_sequence, location))
    return rows


def _section_bytes(stream: Any) -> bytes:
    getvalue = getattr(stream, "getvalue", None)
    if getvalue is not None:
        return getvalue()
    stream.seek(0)
    return stream.read()


def line_program_rows(
    data: bytes, start: int, end: int, header: Any, address_size: int
) -> list[tuple[int, int, int, int, bool]]:
    """The rows (address, file, line, column, end_sequence) of a line program's opcodes in data[start:end].

    The DWARF 2-5 state machine, written out: pyelftools builds an entry object and a state copy per opcode, which
    made line tables most of an audit of a -g build. A test compares the rows with pyelftools' on real builds."""
    minimum_length = header["minimum_instruction_length"]
    line_base = header["line_base"]
    line_range = header["line_range"]
    opcode_base = header["opcode_base"]
    argument_counts = list(header["standard_opcode_lengths"])
    const_add = minimum_length * ((255 - opcode_base) // line_range)
    rows: list[tuple[int, int, int, int, bool]] = []
    append = rows.append
    address, file, line, column = 0, 1, 1, 0
    offset = start
    while offset < end:
        opcode = data[offset]
        offset += 1
        if opcode >= opcode_base:
            adjusted = opcode - opcode_base
            address += minimum_length * (adjusted // line_range)
            line += line_base + adjusted % line_range
            append((address, file, line, column, False))
        elif opcode == 0:  # extended opcode: length, sub-opcode, operands
            length, offset = _uleb(data, offset)
            following = offset + length
            if length and data[offset] == 1:  # DW_LNE_end_sequence
                append((address, file, line, column, True))
                address, file, line, column = 0, 1, 1, 0
            elif length and data[offset] == 2:  # DW_LNE_set_address
                address = int.from_bytes(data[offset + 1 : offset + 1 + address_size], "little")
            offset = following
        elif opcode == 1:  # DW_LNS_copy
            append((address, file, line, column, False))
        elif opcode == 2:  # DW_LNS_advance_pc
            advance, offset = _uleb(data, offset)
            address += minimum_length * advance
        elif opcode == 3:  # DW_LNS_advance_line
            advance, offset = _sleb(data, offset)
            line += advance
        elif opcode == 4:  # DW_LNS_set_file
            file, offset = _uleb(data, offset)
        elif opcode == 5:  # DW_LNS_set_column
            column, offset = _uleb(data, offset)
        elif opcode == 8:  # DW_LNS_const_add_pc
            address += const_add
        elif opcode == 9:  # DW_LNS_fixed_advance_pc: a 2-byte operand, not LEB128
            address += int.from_bytes(data[offset : offset + 2], "little")
            offset += 2
        else:  # negate_stmt, basic_block, prologue_end, epilogue_begin, set_isa, unknown: skip the operands
            for _ in range(argument_counts[opcode - 1] if opcode - 1 < len(argument_counts) else 0):
                _, offset = _uleb(data, offset)
    return rows


def _uleb(data: bytes, offset: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, offset
        shift += 7


def _sleb(data: bytes, offset: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (value - (1 << shift) if byte & 0x40 else value), offset


def _file_names(program: Any, version: int, compilation_dir: str) -> dict[int, str]:
    directories = [_text(directory) for directory in program.header["include_directory"]]
    entries = program.header["file_entry"]
    # DWARF 5 numbers files and directories from 0 (entry 0 = the CU's own); DWARF 4 from 1 (dir 0 = comp dir).
    first = 0 if version >= 5 else 1
    names = {}
    for offset, entry in enumerate(entries):
        directory_index = entry["dir_index"]
        if version >= 5:
            directory = directories[directory_index] if directory_index < len(directories) else ""
        else:
            directory = directories[directory_index - 1] if 0 < directory_index <= len(directories) else ""
        name = _text(entry["name"])
        path = os.path.join(directory, name) if directory else name
        if not os.path.isabs(path) and compilation_dir:
            path = os.path.join(compilation_dir, path)
        names[offset + first] = os.path.normpath(path)
    return names


def _text(value: Any) -> str:
    if value is None:
        return ""
    raw = getattr(value, "value", value)
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def _unit_scopes(dwarf: Any, unit: Any) -> list[_Scope]:
    top = unit.get_top_DIE()
    files = _call_files(dwarf, unit)
    return [scope for child in top.iter_children() for scope in _scopes_of(dwarf, unit, child, files)]


def _call_files(dwarf: Any, unit: Any) -> dict[int, str]:
    program = dwarf.line_program_for_CU(unit)
    if program is None:
        return {}
    compilation_dir = _text(unit.get_top_DIE().attributes.get("DW_AT_comp_dir"))
    return _file_names(program, program.header["version"], compilation_dir)


def _scopes_of(dwarf: Any, unit: Any, die: Any, files: dict[int, str]) -> list[_Scope]:
    """Subprograms and inlined subroutines with code, nested; lexical blocks and namespaces are looked through."""
    if die.tag in ("DW_TAG_subprogram", "DW_TAG_inlined_subroutine"):
        ranges = _ranges(dwarf, unit, die)
        if not ranges:
            return []
        children = tuple(scope for child in die.iter_children() for scope in _scopes_of(dwarf, unit, child, files))
        call_site = None
        if die.tag == "DW_TAG_inlined_subroutine" and "DW_AT_call_line" in die.attributes:
            call_file = die.attributes.get("DW_AT_call_file")
            call_site = SourceLocation(
                files.get(call_file.value, "??") if call_file else "??",
                die.attributes["DW_AT_call_line"].value,
                die.attributes["DW_AT_call_column"].value if "DW_AT_call_column" in die.attributes else 0,
            )
        return [_Scope(_die_name(die), ranges, call_site, children)]
    if die.tag in ("DW_TAG_lexical_block", "DW_TAG_namespace", "DW_TAG_class_type", "DW_TAG_structure_type"):
        return [scope for child in die.iter_children() for scope in _scopes_of(dwarf, unit, child, files)]
    return []


def _die_name(die: Any, depth: int = 0) -> str | None:
    for attribute in ("DW_AT_name", "DW_AT_linkage_name", "DW_AT_MIPS_linkage_name"):
        if attribute in die.attributes:
            return _text(die.attributes[attribute])
    for reference in ("DW_AT_abstract_origin", "DW_AT_specification"):
        if reference in die.attributes and depth < 4:
            return _die_name(die.get_DIE_from_attribute(reference), depth + 1)
    return None


def _ranges(dwarf: Any, unit: Any, die: Any) -> tuple[tuple[int, int], ...]:
    attributes = die.attributes
    if "DW_AT_low_pc" in attributes and "DW_AT_high_pc" in attributes:
        low = attributes["DW_AT_low_pc"].value
        high_attribute = attributes["DW_AT_high_pc"]
        # DWARF 4+: a constant-class high_pc is a length, an address-class one is an address.
        is_length = high_attribute.form.startswith("DW_FORM_data") or high_attribute.form == "DW_FORM_udata"
        high = low + high_attribute.value if is_length else high_attribute.value
        return ((low, high),) if high > low else ()
    if "DW_AT_ranges" not in attributes:
        return ()
    lists = dwarf.range_lists()
    if lists is None:
        return ()
    base = _unit_base(unit)
    result = []
    for entry in lists.get_range_list_at_offset(attributes["DW_AT_ranges"].value, cu=unit):
        if hasattr(entry, "base_address"):
            base = entry.base_address
            continue
        low, high = entry.begin_offset, entry.end_offset
        if not getattr(entry, "is_absolute", False):
            low, high = low + base, high + base
        if high > low:
            result.append((low, high))
    return tuple(result)


def _unit_base(unit: Any) -> int:
    top = unit.get_top_DIE()
    low = top.attributes.get("DW_AT_low_pc")
    return low.value if low is not None else 0


_FRAME_REGISTERS = {"DW_OP_reg29": "r29", "DW_OP_reg30": "r30", "DW_OP_breg29": "r29", "DW_OP_breg30": "r30"}
_TYPE_WRAPPERS = ("DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type", "DW_TAG_restrict_type")


def _frame_objects_of_unit(dwarf: Any, unit: Any) -> dict[int, tuple[FrameObject, ...]]:
    """Concrete subprogram low_pc -> its frame objects, for the subprograms of the unit that have any.

    A raw scan of the unit's entries finds the few variables with a one-operation frame location; only those and
    their subprograms are decoded through pyelftools (decoding every entry of a unit that way costs ~20 us each)."""
    from elftools.dwarf.dwarf_expr import DWARFExprParser

    try:
        candidates = _frame_location_candidates(dwarf, unit)
    except _UnknownForm:
        candidates = _frame_location_candidates_slowly(unit)
    parser = DWARFExprParser(dwarf.structs)
    result: dict[int, tuple[FrameObject, ...]] = {}
    for subprogram_offset, variable_offsets in candidates.items():
        subprogram = dwarf.get_DIE_from_refaddr(subprogram_offset, unit)
        if "DW_AT_low_pc" not in subprogram.attributes:
            continue
        frame_base = _frame_base(parser, subprogram)
        objects = [
            _frame_object(parser, dwarf.get_DIE_from_refaddr(offset, unit), frame_base) for offset in variable_offsets
        ]
        found = tuple(item for item in objects if item is not None)
        if found:
            result[subprogram.attributes["DW_AT_low_pc"].value] = found
    return result


class _UnknownForm(Exception):
    """An attribute form the raw scan does not know how to skip: the slow path decodes the unit instead."""


_FRAME_OPCODES = frozenset((0x91, 0x8D, 0x8E))  # DW_OP_fbreg, DW_OP_breg29, DW_OP_breg30
_OBJECT_TAGS = ("DW_TAG_variable", "DW_TAG_formal_parameter")


def _frame_location_candidates_slowly(unit: Any) -> dict[int, list[int]]:
    candidates: dict[int, list[int]] = {}
    for die in unit.get_top_DIE().iter_children():
        if die.tag == "DW_TAG_subprogram":
            offsets = [child.offset for child in _descendants(die) if child.tag in _OBJECT_TAGS]
            if offsets:
                candidates[die.offset] = offsets
    return candidates


def _descendants(die: Any) -> Iterator[Any]:
    for child in die.iter_children():
        yield child
        yield from _descendants(child)


def _frame_location_candidates(dwarf: Any, unit: Any) -> dict[int, list[int]]:
    """Subprogram entry offset -> offsets of its variables and parameters (nested ones included) whose location is
    one DW_OP_fbreg / DW_OP_breg29 / DW_OP_breg30 expression, from the raw bytes of .debug_info."""
    data = _section_bytes(dwarf.debug_info_sec.stream)
    offset_size = 8 if unit.structs.dwarf_format == 64 else 4
    address_size = unit["address_size"]
    end = unit.cu_offset + unit["unit_length"] + unit.structs.initial_length_field_size()
    table = unit.get_abbrev_table()
    abbreviations: dict[int, tuple[str, bool, list[tuple[str, str]]]] = {}
    candidates: dict[int, list[int]] = {}
    ancestors: list[tuple[str, int]] = []  # (tag, offset) of the open entries that have children
    offset = unit.cu_die_offset
    while offset < end:
        entry_offset = offset
        code, offset = _uleb(data, offset)
        if code == 0:
            if ancestors:
                ancestors.pop()
            continue
        abbreviation = abbreviations.get(code)
        if abbreviation is None:
            declaration = table.get_abbrev(code)
            specs = [(name, form) for name, form in declaration.iter_attr_specs()]
            abbreviation = abbreviations[code] = (declaration["tag"], declaration.has_children(), specs)
        tag, has_children, specs = abbreviation
        wanted = tag in _OBJECT_TAGS and len(ancestors) >= 2 and ancestors[1][0] == "DW_TAG_subprogram"
        for name, form in specs:
            if wanted and name == "DW_AT_location" and form == "DW_FORM_exprloc":
                length, start = _uleb(data, offset)
                if length and data[start] in _FRAME_OPCODES and _is_one_sleb(data, start + 1, start + length):
                    candidates.setdefault(ancestors[1][1], []).append(entry_offset)
                offset = start + length
            else:
                offset = _skip_form(data, offset, form, address_size, offset_size)
        if has_children:
            ancestors.append((tag, entry_offset))
    return candidates


def _is_one_sleb(data: bytes, start: int, end: int) -> bool:
    """data[start:end] is exactly one LEB128 number."""
    position = start
    while position < end and data[position] & 0x80:
        position += 1
    return position == end - 1


_FIXED_FORM_SIZES = {
    "DW_FORM_addrx1": 1,
    "DW_FORM_addrx2": 2,
    "DW_FORM_addrx3": 3,
    "DW_FORM_addrx4": 4,
    "DW_FORM_data1": 1,
    "DW_FORM_data2": 2,
    "DW_FORM_data4": 4,
    "DW_FORM_data8": 8,
    "DW_FORM_data16": 16,
    "DW_FORM_flag": 1,
    "DW_FORM_flag_present": 0,
    "DW_FORM_implicit_const": 0,
    "DW_FORM_strx1": 1,
    "DW_FORM_strx2": 2,
    "DW_FORM_strx3": 3,
    "DW_FORM_strx4": 4,
    "DW_FORM_ref1": 1,
    "DW_FORM_ref2": 2,
    "DW_FORM_ref4": 4,
    "DW_FORM_ref8": 8,
    "DW_FORM_ref_sig8": 8,
    "DW_FORM_ref_sup4": 4,
    "DW_FORM_ref_sup8": 8,
}
_OFFSET_FORMS = frozenset(("DW_FORM_strp", "DW_FORM_line_strp", "DW_FORM_sec_offset", "DW_FORM_ref_addr"))
_ULEB_FORMS = frozenset(
    ("DW_FORM_addrx", "DW_FORM_udata", "DW_FORM_strx", "DW_FORM_ref_udata", "DW_FORM_loclistx", "DW_FORM_rnglistx")
)
_BLOCK_LENGTH_SIZES = {"DW_FORM_block1": 1, "DW_FORM_block2": 2, "DW_FORM_block4": 4}


def _skip_form(data: bytes, offset: int, form: str, address_size: int, offset_size: int) -> int:
    size = _FIXED_FORM_SIZES.get(form)
    if size is not None:
        return offset + size
    if form in _ULEB_FORMS or form == "DW_FORM_sdata":
        while data[offset] & 0x80:
            offset += 1
        return offset + 1
    if form in _OFFSET_FORMS:
        return offset + offset_size
    if form == "DW_FORM_addr":
        return offset + address_size
    if form in ("DW_FORM_exprloc", "DW_FORM_block"):
        length, offset = _uleb(data, offset)
        return offset + length
    length_size = _BLOCK_LENGTH_SIZES.get(form)
    if length_size is not None:
        return offset + length_size + int.from_bytes(data[offset : offset + length_size], "little")
    if form == "DW_FORM_string":
        return data.index(b"\0", offset) + 1
    raise _UnknownForm(form)  # DW_FORM_indirect and vendor forms


def _frame_base(parser: Any, subprogram: Any) -> str | None:
    attribute = subprogram.attributes.get("DW_AT_frame_base")
    if attribute is None or attribute.form != "DW_FORM_exprloc":
        return None
    operations = parser.parse_expr(attribute.value)
    return _FRAME_REGISTERS.get(operations[0].op_name) if len(operations) == 1 else None


def _frame_object(parser: Any, die: Any, frame_base: str | None) -> FrameObject | None:
    location = die.attributes.get("DW_AT_location")
    if location is None or location.form != "DW_FORM_exprloc":  # a location list: values moving between places
        return None
    operations = parser.parse_expr(location.value)
    if len(operations) != 1:
        return None
    operation = operations[0]
    if operation.op_name == "DW_OP_fbreg" and frame_base is not None:
        base = frame_base
    elif operation.op_name in ("DW_OP_breg29", "DW_OP_breg30"):
        base = _FRAME_REGISTERS[operation.op_name]
    else:
        return None
    size = _type_size(die)
    if size is None or size <= 0:
        return None
    return FrameObject(_die_name(die) or "?", base, operation.args[0], size)


def _type_size(die: Any, depth: int = 0) -> int | None:
    if "DW_AT_type" not in die.attributes or depth > 8:
        return None
    type_die = die.get_DIE_from_attribute("DW_AT_type")
    while type_die.tag in _TYPE_WRAPPERS and "DW_AT_type" in type_die.attributes and depth < 8:
        type_die = type_die.get_DIE_from_attribute("DW_AT_type")
        depth += 1
    if "DW_AT_byte_size" in type_die.attributes:
        return type_die.attributes["DW_AT_byte_size"].value
    if type_die.tag != "DW_TAG_array_type":
        return None
    element = _type_size(type_die, depth + 1)
    if element is None:
        return None
    count = 1
    for subrange in type_die.iter_children():
        if subrange.tag != "DW_TAG_subrange_type":
            continue
        if "DW_AT_count" in subrange.attributes:
            count *= subrange.attributes["DW_AT_count"].value
        elif "DW_AT_upper_bound" in subrange.attributes:
            count *= subrange.attributes["DW_AT_upper_bound"].value + 1
        else:
            return None
    return element * count
