"""Codebase names: the backend's facts are found by name patterns that rule options and configuration supply."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hexlint.c.index import Project, UnitIndex, included_files, memoized
from hexlint.c.node import Node


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    """Whether `name` matches one of the fnmatch patterns (case-sensitive, as C identifiers are)."""
    if isinstance(patterns, tuple):
        return _matcher(patterns)(name) is not None
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


@functools.lru_cache(maxsize=256)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], object]:
    """One compiled regex for a tuple of patterns: the backend asks the same few tuples about every name."""
    if not patterns:
        return lambda _name: None
    return re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in patterns)).match


def named_not_called(data: bytes, name: str) -> bool:
    """Whether `data` holds `name` as a whole word not followed by `(`: `re.search(rb"\\bNAME\\b(?!\\s*\\()", data)`,
    searched from the name's bytes (a pattern that starts with `\\b` is tried at every byte of a whole file)."""
    word = name.encode()
    if not word or not _WORD_START.match(word):
        return re.search(rb"\b%s\b(?!\s*\()" % re.escape(word), data) is not None
    # An identifier holds no byte that ends a word, so two occurrences of it that both start a word cannot overlap.
    for found in re.finditer(rb"%s\b(?!\s*\()" % re.escape(word), data):
        start = found.start()
        if start == 0 or not _WORD_BYTE.match(data, start - 1):
            return True
    return False


_WORD_START = re.compile(rb"[A-Za-z_]\w*\Z")
_WORD_BYTE = re.compile(rb"\w")


def string_list(options: Mapping[str, Any], key: str) -> tuple[str, ...]:
    """A list-of-strings option (a lone string is a one-item list), tolerant of a missing key."""
    value = options.get(key, ())
    if isinstance(value, str):
        return (value,)
    return tuple(str(item) for item in value or ())


# ---------------------------------------------------------------------------------------------------------------------
# Nodes by name, text first: a node's spelling costs libclang calls, a word of the source text does not.

_WORD = re.compile(rb"[A-Za-z_]\w*")
_DEFINITION = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+[A-Za-z_]\w*((?:[^\n]*\\\r?\n)*[^\n]*)", re.MULTILINE)
_PASTED = re.compile(rb"(\w*)\s*##\s*(\w*)")


def nodes_named(project: Project, unit: UnitIndex, kind: str, name: str) -> list[Node]:
    """The unit's nodes of `kind` spelled `name` (`DECL_REF_EXPR`, `MEMBER_REF_EXPR`, `CALL_EXPR`, `VAR_DECL` ...), in
    unit order. A unit none of whose files writes the name, where no macro body of the project writes it or could paste
    it together, has none: its nodes' spellings are never read."""
    if not may_spell(project, unit, name):
        return []
    return by_spelling(unit, kind).get(name, [])


def by_spelling(unit: UnitIndex, kind: str) -> dict[str, list[Node]]:
    """Every node of `kind` of the unit by spelling, in unit order (computed once per unit and kind)."""

    def compute() -> dict[str, list[Node]]:
        found: dict[str, list[Node]] = {}
        for node in unit.nodes(kind):
            found.setdefault(node.spelling, []).append(node)
        return found

    return memoized(unit.memo, ("names.by_spelling", kind), compute)


def may_spell(project: Project, unit: UnitIndex, name: str) -> bool:
    """Whether a node of the unit can be spelled `name`: the name is a word of the unit's own files or of a macro
    body of the project, or, where the project's macros paste identifiers (`##`), it is made of such words and of
    the literal pieces those macros paste."""
    word = name.encode()
    words = unit_words(unit)
    macro_words, pasted_pieces, pastes = _macro_words(project, unit.role == "kernel")
    if word in words or word in macro_words:
        return True
    return pastes and _made_of(word, lambda piece: piece in words or piece in macro_words or piece in pasted_pieces)


def _made_of(word: bytes, known: Callable[[bytes], bool]) -> bool:
    """Whether `word` splits into two or more known pieces (a word break over its positions)."""
    reachable = [True] + [False] * len(word)
    for start in range(len(word)):
        if reachable[start]:
            for end in range(start + 1, len(word) + 1):
                if not reachable[end] and (start, end) != (0, len(word)) and known(word[start:end]):
                    reachable[end] = True
    return reachable[-1]


def unit_words(unit: UnitIndex) -> frozenset[bytes]:
    return memoized(
        unit.memo,
        "names.words",
        lambda: frozenset(word for path in unit.indexed_files for word in _WORD.findall(unit.source_bytes(path))),
    )


def _macro_words(project: Project, kernel: bool) -> tuple[frozenset[bytes], frozenset[bytes], bool]:
    """The words of every macro body a unit of the role can expand (a kernel unit: those of the files kernel units
    include), the literal pieces bodies paste, and whether any body pastes."""

    def compute() -> tuple[frozenset[bytes], frozenset[bytes], bool]:
        words: set[bytes] = set()
        pieces: set[bytes] = set()
        pastes = False
        for unit, path in _macro_files(project, kernel):
            for body in _DEFINITION.findall(unit.source_bytes(path)):
                words.update(_WORD.findall(body))
                parameters = _parameters(body)
                for left, right in _PASTED.findall(body):
                    # `hvx_##op##_f32`: a name made so is the literal pieces and the words the macro's arguments
                    # bring (words of the unit that uses it).
                    pastes = True
                    pieces.update(piece for piece in (left, right) if piece and piece not in parameters)
        return frozenset(words), frozenset(pieces), pastes

    return memoized(project.memo, ("names.macro_words", kernel), compute)


def _macro_files(project: Project, kernel: bool) -> list[tuple[UnitIndex, str]]:
    if not kernel:
        return [(unit, path) for unit in project.units for path in unit.indexed_files]
    kernels = project.kernel_units()
    found = [(unit, path) for unit in kernels for path in unit.indexed_files]
    if project.hosts_pending:
        return found  # the kernel units come first: they own every project header one of them includes
    # A host unit indexed first (a run's host before its context's kernels) owns the headers it includes.
    included = {path for unit in kernels for path in included_files(unit.unit)}
    return found + [(unit, path) for unit in project.host_units() for path in unit.indexed_files if path in included]


def _parameters(body: bytes) -> frozenset[bytes]:
    """A function-like macro's parameter names (`(a, b)` right after the name)."""
    if not body.startswith(b"("):
        return frozenset()
    end = body.find(b")")
    return frozenset(_WORD.findall(body[1:end])) if end > 0 else frozenset()
