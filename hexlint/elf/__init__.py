"""ELF and DWARF reading for the binary audit: the only package that imports pyelftools.

`load_elf(path) -> ElfImage` (sections, function symbols, PLT stubs, call relocations, CPU version) and
`DebugInfo` (DWARF line table and inlined frames). Every failure becomes `ElfError("path: reason")`.
The DWARF names are loaded on first use (PEP 562): an audit of a library without DWARF, whose ELF the reader reads
with struct alone, never imports pyelftools.
"""

from hexlint.elf.reader import CodeSection, ElfError, ElfImage, FunctionSymbol, load_elf, read_elf_bytes

_DWARF_NAMES = ("DebugInfo", "FrameObject", "SourceFrame", "SourceLocation")


def __getattr__(name: str) -> object:
    if name in _DWARF_NAMES:
        from hexlint.elf import dwarf

        return getattr(dwarf, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
