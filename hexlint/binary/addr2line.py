"""Resolve code addresses of a library to function+offset and file:line, inlined frames included.

Addresses are link-time addresses of the library (what llvm-addr2line takes). From crash logs (`-`: logcat, FARF,
tombstones) every `0x...` hex number and every tombstone `pc 0001a2b4` is taken; those that do not fall inside the
library's code are skipped, since logs are full of pointers and timestamps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from hexlint.elf import DebugInfo, ElfImage, SourceFrame

_LOG_ADDRESS = re.compile(r"\b0x([0-9a-fA-F]{1,16})\b|\bpc\s+([0-9a-fA-F]{4,16})\b")


class AddressError(ValueError):
    pass


@dataclass(frozen=True)
class Resolution:
    address: int
    function: str | None
    offset: int
    frames: tuple[SourceFrame, ...]

    @property
    def in_code(self) -> bool:
        return self.function is not None


def parse_address(text: str) -> int:
    """`0x51a30`, `51a30` (hex, as addr2line reads it)."""
    cleaned = text.strip().lower()
    cleaned = cleaned[2:] if cleaned.startswith("0x") else cleaned
    if not cleaned or not re.fullmatch(r"[0-9a-f]{1,16}", cleaned):
        raise AddressError(f"not a hex address: {text!r}")
    return int(cleaned, 16)


def addresses_in_text(text: str) -> list[int]:
    """Every address-looking number of a log, in order of first appearance, without repeats."""
    found: dict[int, None] = {}
    for match in _LOG_ADDRESS.finditer(text):
        found.setdefault(int(match.group(1) or match.group(2), 16), None)
    return list(found)


def resolve(image: ElfImage, debug: DebugInfo, address: int) -> Resolution:
    function = image.function_at(address)
    if function is None:
        return Resolution(address, None, 0, ())
    return Resolution(address, function.name, address - function.address, debug.frames(address))


def format_resolution(resolution: Resolution) -> str:
    if not resolution.in_code:
        return f"{resolution.address:#010x}: ?? (not in the library's code)"
    lines = [f"{resolution.address:#010x}: {resolution.function}+{resolution.offset:#x}"]
    for depth, frame in enumerate(resolution.frames):
        location = frame.location
        where = f"{location.file}:{location.line}" if location else "??:0"
        if location and location.column:
            where += f":{location.column}"
        prefix = "    at" if depth == 0 else "    (inlined by)"
        lines.append(f"{prefix} {frame.function or '??'} {where}")
    return "\n".join(lines)


def resolve_lines(image: ElfImage, addresses: Iterable[str], log_text: str | None = None) -> str:
    """The report for explicit addresses (every one is printed) and for a log's addresses (code addresses only)."""
    debug = DebugInfo(image)
    explicit = [parse_address(text) for text in addresses]
    out = [format_resolution(resolve(image, debug, address)) for address in explicit]
    if log_text is not None:
        in_code = [resolve(image, debug, address) for address in addresses_in_text(log_text)]
        out += [format_resolution(resolution) for resolution in in_code if resolution.in_code]
    if not debug.available:
        out.append(f"note: {image.path}: {debug.error or 'no DWARF line information'}; function+offset only")
    return "\n".join(out) + ("\n" if out else "")
