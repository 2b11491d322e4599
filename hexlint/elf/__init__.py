"""ELF and DWARF reading for the binary audit: the only package that imports pyelftools.

`load_elf(path) -> ElfImage` (sections, function symbols, PLT stubs, call relocations, CPU version) and
`DebugInfo` (DWARF line table and inlined frames). Every failure becomes `ElfError("path: reason")`.
"""

from hexlint.elf.dwarf import DebugInfo, FrameObject, SourceFrame, SourceLocation
from hexlint.elf.reader import CodeSection, ElfError, ElfImage, FunctionSymbol, load_elf, read_elf_bytes

__all__ = [
    "CodeSection",
    "DebugInfo",
    "ElfError",
    "ElfImage",
    "FrameObject",
    "FunctionSymbol",
    "SourceFrame",
    "SourceLocation",
    "load_elf",
    "read_elf_bytes",
]
