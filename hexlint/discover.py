"""Turn the PATHS a user gives into the files to lint: C/C++ sources and ELF objects.

Directories are walked; hidden directories and `.gitignore`d paths are skipped while walking. A file named
explicitly on the command line is always linted, whatever its name or ignore status (like ruff and clang-tidy).

`.gitignore` handling is our own small matcher instead of `git check-ignore`: it needs no git binary, behaves the
same inside and outside a work tree, and is deterministic in tests. It reads every `.gitignore` from the directory
holding `.git` (or the walk root when there is none) down to each walked directory, plus `.git/info/exclude`,
and supports the gitignore syntax people use: `#` comments, `!` negation, trailing `/` (directories only),
a leading or inner `/` (anchored to the .gitignore's directory), `*`, `?`, `[...]` and `**`.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Sequence

from hexlint.record import record

# typing.TYPE_CHECKING without importing typing at start-up; paths are strings here (pathlib's import costs a
# pre-commit run ~2.5 ms), and every function also takes a pathlib.Path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import PathLike

    StrPath = str | PathLike[str]

SOURCE_SUFFIXES = (".c", ".h", ".cpp", ".hpp", ".cc", ".cxx", ".hh", ".hxx")
TRANSLATION_UNIT_SUFFIXES = (".c", ".cpp", ".cc", ".cxx")
BINARY_SUFFIXES = (".so", ".o")


class DiscoveryError(Exception):
    """A path the user named cannot be linted; the message names it."""


@record
class IgnorePattern:
    regex: re.Pattern[str] | SimpleGlob
    negated: bool
    directory_only: bool
    base: str  # the directory of the .gitignore that holds the pattern


@record
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


def glob_to_regex(glob: str) -> str:
    """Translate one gitignore glob (already stripped of ! and the trailing /) to a regex over posix paths."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
                i += 1
            else:
                body = glob[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        elif char == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


@record
class SimpleGlob:
    """A glob with one `*` at most, at its start or end, matched with string methods: a repository's .gitignore is
    mostly `*.o`, `build/` and `/models/*`, and compiling a regex for each of them cost more than the whole walk."""

    text: str  # the literal part
    star: str  # "" (no star), "start" (`*.o`) or "end" (`build*`)
    anchored: bool  # matched from the .gitignore's directory, not at any depth

    def match(self, relative: str) -> bool:
        """What the glob's regex (`_glob_regex`) says for a posix path relative to the .gitignore's directory."""
        if self.anchored:
            if self.star == "end":
                return relative.startswith(self.text)
            head = relative.split("/", 1)[0] if self.star == "start" else relative
            if self.star == "start":
                return head.endswith(self.text)
            return relative == self.text or relative.startswith(self.text + "/")
        names = relative.split("/")
        if self.star == "start":
            return any(name.endswith(self.text) for name in names)
        if self.star == "end":
            return any(name.startswith(self.text) for name in names)
        return self.text in names


_GLOB_SPECIALS = frozenset("*?[\\")


@functools.lru_cache(maxsize=1024)
def compile_glob(glob: str) -> re.Pattern[str] | SimpleGlob:
    """A gitignore-style glob: without an inner "/" it matches a name at any depth, with one it is anchored.
    The result's `match(posix_relative_path)` is truthy when the glob matches."""
    anchored = "/" in glob.rstrip("/")
    body = glob.strip("/")
    star = "start" if body.startswith("*") else "end" if body.endswith("*") else ""
    literal = body.strip("*") if star else body
    simple = literal and not _GLOB_SPECIALS.intersection(literal) and body.count("*") == (1 if star else 0)
    # An anchored `*` followed by a path (`/*/x`) spans two names: left to the regex.
    if simple and not (star == "start" and anchored and "/" in literal):
        return SimpleGlob(literal, star, anchored)
    return _glob_regex(glob)


def _glob_regex(glob: str) -> re.Pattern[str]:
    anchored = "/" in glob.rstrip("/")
    body = glob_to_regex(glob.strip("/"))
    return re.compile(f"^{body}(?:/.*)?$" if anchored else f"^(?:.*/)?{body}(?:/.*)?$")


def parse_gitignore(text: str, base: StrPath) -> list[IgnorePattern]:
    """The patterns of one .gitignore file whose directory is `base`."""
    base = spelled(base)
    patterns: list[IgnorePattern] = []
    for raw_line in text.splitlines():
        line = raw_line.rstrip()
        if raw_line.endswith("\\ "):  # an escaped trailing space is significant
            line = raw_line
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated or line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        directory_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        patterns.append(IgnorePattern(compile_glob(line), negated, directory_only, base))
    return patterns


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


def _matches(pattern: IgnorePattern, path_text: str, is_dir: bool) -> bool:
    relative = _relative_posix(path_text, pattern.base)
    if relative is None or relative == ".":
        return False
    if pattern.directory_only and not is_dir:
        # "build/" ignores everything under a directory named build, never a file named build.
        parent = relative.rsplit("/", 1)[0] if "/" in relative else ""
        return bool(parent) and bool(pattern.regex.match(parent))
    return bool(pattern.regex.match(relative))


def is_ignored(path: StrPath, is_dir: bool, patterns: Sequence[IgnorePattern]) -> bool:
    """The last matching pattern decides, as in git."""
    ignored = False
    path_text = spelled(path)
    for pattern in patterns:
        if _matches(pattern, path_text, is_dir):
            ignored = not pattern.negated
    return ignored


def _read_patterns(gitignore: str, base: str | None = None) -> list[IgnorePattern]:
    """The patterns of an ignore file, relative to `base` (its own directory unless given)."""
    try:
        with open(gitignore, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return []
    return parse_gitignore(text, base if base is not None else os.path.dirname(gitignore))


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


def inherited_patterns(directory: StrPath) -> list[IgnorePattern]:
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

    def walk(directory: str, shown: str, patterns: list[IgnorePattern]) -> Iterator[str]:
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
