"""Turn the PATHS a user gives into the files to lint: C/C++ sources and ELF objects.

Directories are walked; hidden directories and `.gitignore`d paths are skipped while walking. A file named
explicitly on the command line is always linted, whatever its name or ignore status (like ruff and clang-tidy).

`.gitignore` files are matched with pathspec's GitIgnoreSpec (what black, mypy and most Python tools use) instead of
`git check-ignore`: it needs no git binary, behaves the same inside and outside a work tree, and is deterministic in
tests. hexlint reads every `.gitignore` from the directory holding `.git` (or the walk root when there is none) down to
each walked directory, plus `.git/info/exclude`; each file's patterns are relative to its own directory, and the
last pattern that matches decides, a deeper file's over the ones above. Config globs use the same syntax.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# typing.TYPE_CHECKING without importing typing at start-up; paths are strings here (pathlib's import costs a
# pre-commit run ~2.5 ms), and every function also takes a pathlib.Path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike

    from pathspec import GitIgnoreSpec

    StrPath = str | PathLike[str]

SOURCE_SUFFIXES = (".c", ".h", ".cpp", ".hpp", ".cc", ".cxx", ".hh", ".hxx")
TRANSLATION_UNIT_SUFFIXES = (".c", ".cpp", ".cc", ".cxx")
BINARY_SUFFIXES = (".so", ".o")


class DiscoveryError(Exception):
    """A path the user named cannot be linted; the message names it."""


@dataclass(frozen=True)
class IgnoreFile:
    """One .gitignore (or .git/info/exclude): its patterns and the directory they are relative to."""

    spec: GitIgnoreSpec
    base: str


@dataclass(frozen=True)
class Discovered:
    """What to lint, in a stable order."""

    sources: tuple[str, ...] = ()
    binaries: tuple[str, ...] = ()


def _suffix(path: StrPath) -> str:
    """pathlib's suffix: a name's last dotted part, none for a name that starts with its only dot."""
    name = os.path.basename(os.fspath(path))
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def is_source(path: StrPath) -> bool:
    return _suffix(path) in SOURCE_SUFFIXES


def is_translation_unit(path: StrPath) -> bool:
    return _suffix(path) in TRANSLATION_UNIT_SUFFIXES


def is_binary(path: StrPath) -> bool:
    # Versioned shared objects (libfoo.so.1) count as binaries too.
    return _suffix(path) in BINARY_SUFFIXES or ".so." in os.path.basename(os.fspath(path))


def spelled(path: StrPath) -> str:
    """The path as pathlib spells it (`./a//b/` is `a/b`): how files are named when a walk yields them."""
    text = os.fspath(path)
    parts = [part for part in text.split(os.sep) if part and part != "."]
    if text.startswith(os.sep):
        return os.sep + os.sep.join(parts)
    return os.sep.join(parts) or "."


@functools.lru_cache(maxsize=1024)
def compile_glob(glob: str) -> GitIgnoreSpec:
    """A config glob in gitignore syntax (pathspec's GitIgnoreSpec): without an inner "/" it matches a name at any
    depth, with one it is anchored; a match on a directory covers what is below it."""
    return _gitignore_spec([glob])


def _gitignore_spec(lines: Sequence[str]) -> GitIgnoreSpec:
    # Imported on first use: a run in a tree without .gitignore files or config globs does not pay for it.
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(lines)


def glob_matches(glob: str, relative: str) -> bool:
    """Whether a config glob matches a posix path relative to the configuration's directory."""
    return compile_glob(glob).match_file(relative)


def parse_gitignore(text: str, base: StrPath) -> list[IgnoreFile]:
    """The patterns of one .gitignore file whose directory is `base` (a list: empty when it holds none)."""
    lines = text.splitlines()
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return []
    return [IgnoreFile(_gitignore_spec(lines), spelled(base))]


def _relative_posix(path_text: str, base: StrPath) -> str | None:
    """`path.relative_to(base).as_posix()` on strings spelled as pathlib does: pathlib's own was most of a walk."""
    base_text = os.fspath(base)
    if path_text == base_text:
        return "."
    if base_text == ".":  # the working directory, spelled relatively: every relative path is below it
        return None if os.path.isabs(path_text) else path_text.replace(os.sep, "/")
    prefix = base_text if base_text.endswith(os.sep) else base_text + os.sep
    if not path_text.startswith(prefix):
        return None
    relative = path_text[len(prefix) :]
    return relative if os.sep == "/" else relative.replace(os.sep, "/")


def is_ignored(path: StrPath, is_dir: bool, patterns: Sequence[IgnoreFile]) -> bool:
    """As git decides: the last matching pattern wins, a deeper .gitignore over the ones above it (`patterns` runs
    from .git/info/exclude and the top .gitignore down)."""
    ignored = False
    path_text = spelled(path)
    for ignore_file in patterns:
        relative = _relative_posix(path_text, ignore_file.base)
        if relative is None or relative == ".":
            continue
        # pathspec tells a directory by its trailing slash ("build/" ignores the directory, never a file named build).
        decided = ignore_file.spec.check_file(relative + "/" if is_dir else relative).include
        if decided is not None:
            ignored = decided
    return ignored


def _read_patterns(gitignore: str, base: str | None = None) -> list[IgnoreFile]:
    """The patterns of an ignore file, relative to `base` (its own directory unless given)."""
    try:
        with open(gitignore, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return []
    return parse_gitignore(text, base if base is not None else os.path.dirname(gitignore))


def read_bytes_or_none(path: str) -> bytes | None:
    """A file's bytes, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def self_and_parents(directory: str) -> list[str]:
    """`[directory, *Path(directory).parents]` for an absolute, spelled directory."""
    chain = [directory]
    while (parent := os.path.dirname(chain[-1])) != chain[-1]:
        chain.append(parent)
    return chain


def find_repository_root(start: StrPath) -> str | None:
    for directory in self_and_parents(spelled(os.path.abspath(start))):
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
    return None


def inherited_patterns(directory: StrPath) -> list[IgnoreFile]:
    """Patterns from .git/info/exclude and the .gitignore files above `directory` up to the repository root."""
    directory = spelled(os.path.abspath(directory))
    root = find_repository_root(directory)
    if root is None:
        return []
    git = os.path.join(root, ".git")
    # .git/info/exclude holds patterns relative to the work tree's root, like a top-level .gitignore.
    patterns = _read_patterns(os.path.join(git, "info", "exclude"), root) if os.path.isdir(git) else []
    chain = self_and_parents(directory)
    for parent in reversed(chain[1 : chain.index(root) + 1] if root in chain else []):
        patterns.extend(_read_patterns(os.path.join(parent, ".gitignore")))
    return patterns


def _is_hidden(name: str) -> bool:
    return name.startswith(".") and name not in (".", "..")


def _is_regular_file(entry: os.DirEntry[str]) -> bool:
    """A file to lint; a symbolic link loop met while walking is skipped like a dangling link (nothing to read)."""
    try:
        return entry.is_file()
    except OSError:
        return False


def walk_directory(root: StrPath) -> Iterator[str]:
    """Every lintable file below `root`, sorted, skipping hidden and gitignored directories and files.

    Ignore patterns are matched on absolute paths; the files are yielded in the form the user spelled `root`.
    """
    absolute_root = os.path.realpath(root)
    base_patterns = inherited_patterns(absolute_root)

    def walk(directory: str, shown: str, patterns: list[IgnoreFile]) -> Iterator[str]:
        local = patterns + _read_patterns(os.path.join(directory, ".gitignore"))
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError as error:
            # Skipping it silently would let a CI run pass without linting what is inside.
            raise DiscoveryError(f"{shown}: cannot read directory: {error.strerror or error}") from None
        for entry in entries:
            if _is_hidden(entry.name):
                continue
            path = os.path.join(directory, entry.name)
            is_dir = entry.is_dir(follow_symlinks=False)
            if is_ignored(path, is_dir, local):
                continue
            shown_path = os.path.join(shown, entry.name) if shown != "." else entry.name
            if is_dir:
                yield from walk(path, shown_path, local)
            elif _is_regular_file(entry) and (is_source(entry.name) or is_binary(entry.name)):
                yield shown_path

    yield from walk(absolute_root, spelled(root), base_patterns)


EM_HEXAGON = 164


def is_hexagon_elf(path: StrPath) -> bool:
    """A directory walk audits only Hexagon objects: build trees also hold host .so files that are not ours to audit."""
    try:
        with open(path, "rb") as stream:
            header = stream.read(20)
    except OSError:
        return False
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return False
    byte_order = "little" if header[5] == 1 else "big"
    return int.from_bytes(header[18:20], byte_order) == EM_HEXAGON


def _looks_like_elf(path: str) -> bool:
    try:
        with open(path, "rb") as stream:
            return stream.read(4) == b"\x7fELF"
    except OSError:
        return False


def discover(paths: Sequence[StrPath]) -> Discovered:
    """Files to lint for the given PATHS; raises DiscoveryError naming a path that does not exist or is no file."""
    sources: dict[str, None] = {}
    binaries: dict[str, None] = {}
    for given in paths:
        path = spelled(given)
        if not os.path.exists(path):
            if os.path.islink(path):
                raise DiscoveryError(f"{given}: symbolic link to a missing file, or a symbolic link loop")
            raise DiscoveryError(f"{given}: no such file or directory")
        if os.path.isdir(path):
            for file in walk_directory(path):
                if not is_binary(file):
                    sources[file] = None
                elif is_hexagon_elf(file):
                    binaries[file] = None
        elif not os.path.isfile(path):
            # FIFOs, sockets and devices would block or never end; refuse them by name.
            raise DiscoveryError(f"{given}: not a regular file")
        elif is_binary(path) or _looks_like_elf(path):
            binaries[path] = None
        else:
            # A file named explicitly is linted as C/C++ whatever its suffix (e.g. a .inc fragment).
            sources[path] = None
    return Discovered(tuple(sources), tuple(binaries))
