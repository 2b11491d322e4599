"""Where the binary audit's source locations come from and how their paths are spelled.

- `--debug-file`: a -g build whose code is this library's (a stripped copy of it: `strip --strip-debug`) lends its
  DWARF; one whose code differs (built with other flags) would put findings on the wrong lines and is not used.
- A library without DWARF looks beside itself for such a build (`NAME-g.so`, `NAME.so.debug` ...) and says which
  file to pass.
- `--source-prefix-map OLD=NEW`: DWARF paths are the build machine's; like the compilers' `-ffile-prefix-map`, a path
  starting with OLD starts with NEW instead (the last matching pair wins). A path no pair maps that does not exist
  here, while its tail names a file of this tree, gets a note with the pair that would map it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

# typing.TYPE_CHECKING without importing typing at start-up: annotations are strings (postponed evaluation).
TYPE_CHECKING = False
if TYPE_CHECKING:  # hexlint.elf (pyelftools) where an ELF is read: the cache's key needs only debug_builds_beside
    from hexlint.elf import ElfImage
    from hexlint.elf.dwarf import SourceLocation

PrefixMap = Sequence[tuple[str, str]]


def same_code(image: ElfImage, other: ElfImage) -> bool:
    """Both files hold the same machine code at the same addresses (one is a stripped copy of the other)."""
    mine = [(section.address, section.data) for section in image.code_sections]
    theirs = [(section.address, section.data) for section in other.code_sections]
    return mine == theirs


def debug_image_for(image: ElfImage, candidates: Sequence[ElfImage]) -> ElfImage | None:
    """The first candidate with DWARF and this library's code."""
    return next((other for other in candidates if other.has_debug_info and same_code(image, other)), None)


def load_debug_files(paths: Iterable[str]) -> list[ElfImage]:
    """The --debug-file images; a file that is no auditable Hexagon ELF is the user's error (ElfError, one line)."""
    from hexlint.elf import ElfError, load_elf

    images = []
    for path in paths:
        image = load_elf(path)
        if not image.has_debug_info:
            raise ElfError(path, "--debug-file: no DWARF debug information in it")
        images.append(image)
    return images


def debug_builds_beside(path: str) -> list[str]:
    """Files next to `path` that are, by their names, its -g build or its split debug information."""
    directory, name = os.path.split(path)
    if name not in ("", ".", ".."):  # most libraries have none: pathlib (a few ms to import) spells only those found
        candidates = [os.path.join(directory, entry) for entry in _debug_names(name)]
        if not any(os.path.isfile(candidate) for candidate in candidates):
            return []
    from pathlib import Path

    library = Path(path)
    candidates_found = [library.parent / entry for entry in _debug_names(library.name)]
    return [str(candidate) for candidate in candidates_found if candidate.is_file()]


def _debug_names(name: str) -> list[str]:
    """The names, relative to a library's directory, its -g build or split debug information may have (`name`'s stem
    and suffix as pathlib has them)."""
    dot = name.rfind(".")
    stem, suffix = (name[:dot], name[dot:]) if 0 < dot < len(name) - 1 else (name, "")
    names = [f"{stem}-g{suffix}", f"{stem}_g{suffix}", f"{stem}.g{suffix}", f"{name}.debug", f"{stem}.debug"]
    return [*names, os.path.join(".debug", f"{name}.debug")]


def missing_dwarf_note(image: ElfImage, given: Sequence[ElfImage]) -> str:
    """What the audit says of a library without line information: which file to pass, when one is at hand."""
    from hexlint.elf import ElfError, load_elf

    if given:
        names = ", ".join(other.path for other in given)
        return (
            f"no DWARF line information, and the code of --debug-file {names} differs from this build's: "
            "findings carry addresses only; pass the -g build this file was stripped from"
        )
    for candidate in debug_builds_beside(image.path):
        try:
            other = load_elf(candidate)
        except ElfError:
            continue
        if not other.has_debug_info:
            continue
        if same_code(image, other):
            return f"no DWARF line information here; {candidate} has it for the same code: --debug-file {candidate}"
        return (
            f"no DWARF line information: findings carry addresses only; {candidate} has DWARF but other code "
            "(built with other flags), so audit it itself for source lines"
        )
    return "no DWARF line information: findings carry addresses only (--debug-file LIB-g.so lends a -g build's)"


def map_prefix(path: str, prefix_map: PrefixMap) -> str:
    """`path` with the last matching OLD prefix replaced by NEW; OLD matches whole path components."""
    for old, new in reversed(prefix_map):
        stem = old.rstrip("/") or "/"
        if path == stem:
            rest = ""
        elif path.startswith(stem if stem.endswith("/") else stem + "/"):
            rest = path[len(stem) :].lstrip("/")
        else:
            continue
        mapped = os.path.join(new, rest) if new else rest
        return os.path.normpath(mapped) if mapped else "."
    return path


def mapped_locate(
    locate: Callable[[int], SourceLocation | None], prefix_map: PrefixMap
) -> Callable[[int], SourceLocation | None]:
    if not prefix_map:
        return locate
    from dataclasses import replace

    def located(address: int) -> SourceLocation | None:
        location = locate(address)
        if location is None or not location.file:
            return location
        return replace(location, file=map_prefix(location.file, prefix_map))

    return located


def prefix_map_hint(paths: Iterable[str], root: str) -> str | None:
    """For build-machine paths absent here: `OLD=NEW` mapping the first whose tail is a file below `root`."""
    from pathlib import PurePath

    for path in paths:
        if not os.path.isabs(path) or os.path.exists(path):
            continue
        parts = PurePath(path).parts[1:]
        for start in range(1, len(parts)):
            tail = os.path.join(*parts[start:])
            if os.path.isfile(os.path.join(root, tail)):
                old = os.path.join(PurePath(path).anchor, *parts[:start])
                new = os.path.relpath(root) if os.path.isabs(root) else root
                return f"{old}={new}"
    return None
