"""One walk per translation unit: every node of the project's own code, with its children, bucketed by kind.

Rules ask for the kinds they want (`unit.nodes("IF_STMT")`) instead of walking the AST themselves, so a TU is walked
once however many rules run. Declarations from system, builtin and stand-in headers are never descended into.
"""

from __future__ import annotations

import bisect
import functools
import gc
import os
import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

import clang.cindex as cindex

from hexlint.c.node import _KIND_NAMES, DECLARATION_KINDS, Node, declaration_key, declarations_of, file_of, kind_name
from hexlint.c.parse import ParsedUnit

_T = TypeVar("_T")
_CONTINUE = 1
_RECURSE = 2
# Real paths are asked for every top-level declaration's file and every inclusion: resolve each path once. Keyed by
# the absolute path, so an answer never depends on the working directory of the call that memoized it.
_realpath_of_absolute = functools.lru_cache(maxsize=4096)(os.path.realpath)


def _realpath(path: str) -> str:
    return _realpath_of_absolute(os.path.abspath(path))


_INCLUDE = re.compile(rb"^[ \t]*#[ \t]*include", re.MULTILINE)
_FUNCTION_KINDS = frozenset({"FUNCTION_DECL", "CXX_METHOD", "FUNCTION_TEMPLATE", "CONSTRUCTOR", "DESTRUCTOR"})


class UnitIndex:
    """The nodes of one TU that lie in `indexed_files` (its main file and the project headers it owns)."""

    def __init__(self, unit: ParsedUnit, indexed_files: Iterable[str] | None = None, freeze: bool = True) -> None:
        self.path = unit.path
        self.role = unit.role
        self.unit = unit
        self.indexed_files = frozenset(os.path.realpath(path) for path in (indexed_files or [unit.path]))
        self._nodes_by_kind: dict[int, list[Node]] = defaultdict(list)
        self._top_nodes: list[Node] = []
        self._lines: dict[str, list[str]] = {}
        self._bytes: dict[str, bytes] = dict(unit.unsaved)  # stdin's text, not the file on disk
        self._functions: dict[str, Node] | None = None
        self._function_ranges: dict[str, list[tuple[int, int, Node]]] | None = None
        self._function_starts: dict[str, list[int]] = {}
        self._all_functions: list[Node] | None = None
        self._top_functions: dict[int, Node] | None = None
        self._by_top: dict[str, dict[int, list[Node]]] = {}
        # Facts rules derive from this unit, shared between rules; they live exactly as long as the unit.
        self.memo: dict[Hashable, Any] = {}
        if unit.translation_unit is not None:
            # The walk allocates a cursor and a node per AST node and no reference cycles: pausing the cyclic collector
            # keeps it from rescanning every live object again and again (it cost more than the walk in long runs).
            collecting = gc.isenabled()
            gc.disable()
            try:
                self._walk(unit.translation_unit)
            finally:
                if collecting:
                    gc.enable()
            # The nodes live as long as the run; freezing them takes them out of every later collection, which
            # otherwise made each small allocation in the rules pay for a scan of all of them. Some of what a run
            # builds on them is in reference cycles, so a process that lints again and again gives it back with
            # engine.release_run_memory() (--watch and the server do). Not once rules have run on the project (the
            # host units after the kernel units' early rules): it would freeze their facts, cycles and all.
            if freeze:
                gc.freeze()

    def _walk(self, translation_unit: cindex.TranslationUnit) -> None:
        # The per-node callback does as little as possible: the walk costs a fraction of the parse this way. It builds
        # each node once with its children, so every later walk over the tree is plain Python.
        visit_children = cindex.conf.lib.clang_visitChildren
        file_is_indexed: dict[str, bool] = {}
        top_level: list[cindex.Cursor] = []
        top_level_files: list[str] = []

        def visit_top_level(cursor: cindex.Cursor, _parent: cindex.Cursor, _data: object) -> int:
            name = file_of(translation_unit, cursor)
            indexed = file_is_indexed.get(name)
            if indexed is None:
                indexed = file_is_indexed[name] = bool(name) and _realpath(name) in self.indexed_files
            if indexed:
                top_level.append(cursor)
                top_level_files.append(name)
            return _CONTINUE

        visit_children(translation_unit.cursor, cindex.cursor_visit_callback(visit_top_level), [])
        by_kind = self._nodes_by_kind
        # The open ancestors of the node being visited, as (cursor bytes, children list): libclang hands each callback
        # its parent cursor, equal byte for byte to the one it handed when visiting that parent.
        open_nodes: list[tuple[bytes, list[Node]]] = []
        declarations = self._declarations = declarations_of(translation_unit)
        # Every node of a top-level declaration is in its file, unless an #include sits inside its extent.
        path: str | None = None
        top = -1
        known_kinds = _KIND_NAMES

        def visit(cursor: cindex.Cursor, parent: cindex.Cursor, _data: object) -> int:
            parent_key = bytes(parent)
            open_node = open_nodes[-1]
            if open_node[0] != parent_key:
                while len(open_nodes) > 1 and open_nodes[-1][0] != parent_key:
                    open_nodes.pop()
                open_node = open_nodes[-1]
            kind_id = cursor._kind_id
            children: list[Node] = []
            node = Node(cursor, known_kinds.get(kind_id) or kind_name(kind_id), path, children, top, translation_unit)
            open_node[1].append(node)
            by_kind[kind_id].append(node)
            raw = bytes(cursor)
            if kind_id in DECLARATION_KINDS:
                declarations.setdefault(declaration_key(raw), node)
            open_nodes.append((raw, children))
            return _RECURSE

        callback = cindex.cursor_visit_callback(visit)
        for cursor, name in zip(top_level, top_level_files, strict=True):
            node = Node(cursor, kind_name(cursor._kind_id), name, [], len(self._top_nodes), translation_unit)
            top = node.top_index
            self._top_nodes.append(node)
            by_kind[cursor._kind_id].append(node)
            raw = bytes(cursor)
            if cursor._kind_id in DECLARATION_KINDS:
                declarations.setdefault(declaration_key(raw), node)
            path = None if _INCLUDE.search(self.source_bytes(name), *node._load_offsets()) else name
            open_nodes[:] = [(raw, node._children)]
            visit_children(cursor, callback, [])

    def nodes(self, *kinds: str) -> list[Node]:
        """All indexed nodes of these CursorKind names, in source order."""
        if len(kinds) == 1:
            return list(self._nodes_by_kind.get(_kind_id(kinds[0]), ()))
        found = [node for kind in kinds for node in self._nodes_by_kind.get(_kind_id(kind), ())]
        if len(kinds) > 1:
            found.sort(key=lambda node: (node.path, node.start_offset))
        return found

    def is_top(self, node: Node) -> bool:
        """Whether the node is one of this unit's top-level declarations (the walk built it as one)."""
        return 0 <= node.top_index < len(self._top_nodes) and self._top_nodes[node.top_index] is node

    def nodes_in_top(self, kind: str, top: Node) -> list[Node]:
        """The nodes of one CursorKind name the walk built in the top-level declaration `top` (see `is_top`),
        itself included, in walk order: its subtree's nodes of that kind, grouped once per kind for every top."""
        groups = self._by_top.get(kind)
        if groups is None:
            groups = self._by_top[kind] = defaultdict(list)
            for node in self._nodes_by_kind.get(_kind_id(kind), ()):
                groups[node.top_index].append(node)
        return groups.get(top.top_index, [])

    @property
    def functions(self) -> dict[str, Node]:
        """Function definitions by name."""
        if self._functions is None:
            self._functions = {}
            for node in self.nodes(*_FUNCTION_KINDS):
                if node.is_definition:
                    self._functions.setdefault(node.spelling, node)
        return self._functions

    def enclosing_function(self, node: Node) -> Node | None:
        """The innermost function definition whose extent holds `node` (a bisection over sorted extents)."""
        if self.role == "kernel" and node._path is not None:
            # C has no nested functions: a node the walk built in a top-level function definition (and in its file)
            # is in that function, found without locating either.
            if self._top_functions is None:
                tops = self._top_nodes
                self._top_functions = {
                    function.top_index: function
                    for function in self.functions_all()
                    if 0 <= function.top_index < len(tops) and tops[function.top_index] is function
                }
            function = self._top_functions.get(node.top_index)
            if function is not None:
                return function
        if self._function_ranges is None:
            ranges: dict[str, list[tuple[int, int, Node]]] = defaultdict(list)
            for function in self.functions_all():
                ranges[function.path].append((function.start_offset, function.end_offset, function))
            for path_ranges in ranges.values():
                path_ranges.sort(key=lambda item: item[0])
            self._function_ranges = ranges
            self._function_starts = {path: [item[0] for item in items] for path, items in ranges.items()}
        path_ranges = self._function_ranges.get(node.path)
        if not path_ranges:
            return None
        offset = node.start_offset
        position = bisect.bisect_right(self._function_starts[node.path], offset)
        for start, end, function in reversed(path_ranges[:position]):
            if start <= offset < end:
                return function
        return None

    def functions_all(self) -> list[Node]:
        """Every function definition (overloads and methods of the same name included), in source order."""
        if self._all_functions is None:
            self._all_functions = []
            for kind in _FUNCTION_KINDS:
                self._all_functions.extend(node for node in self.nodes(kind) if node.is_definition)
        return self._all_functions

    def ancestors(self, node: Node) -> list[Node]:
        """From the node's parent up to its top-level declaration, found by descending through containing extents."""
        top = self._containing_top_level(node)
        if top is None:
            return []
        chain = [top]
        target_start, target_end = node.start_offset, node.end_offset
        while chain[-1] != node:
            step = None
            for child in chain[-1].children():
                if child == node:
                    step = child
                    break
                if child.path == node.path and child.start_offset <= target_start and target_end <= child.end_offset:
                    step = child
            if step is None:
                return []
            chain.append(step)
        return list(reversed(chain[:-1]))

    def parent(self, node: Node) -> Node | None:
        chain = self.ancestors(node)
        return chain[0] if chain else None

    def _containing_top_level(self, node: Node) -> Node | None:
        for top in self._top_nodes:
            if top.path == node.path and top.start_offset <= node.start_offset and node.end_offset <= top.end_offset:
                return top
        return None

    def source_bytes(self, path: str) -> bytes:
        """The bytes of an indexed file (empty when unreadable): offsets of nodes index into them."""
        data = self._bytes.get(path)
        if data is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                data = b""
            self._bytes[path] = data
        return data

    def source_line(self, path: str, line: int) -> str:
        """A line of an indexed file as text (undecodable bytes replaced), for messages and baseline fingerprints."""
        lines = self._lines.get(path)
        if lines is None:
            lines = self.source_bytes(path).decode("utf-8", errors="replace").splitlines()
            self._lines[path] = lines
        return lines[line - 1] if 0 < line <= len(lines) else ""


@functools.cache
def _kind_id(name: str) -> int:
    return getattr(cindex.CursorKind, name).value


class HostUnitsPending(BaseException):
    """Raised by a project whose host units are still being parsed when asked for them (or for all its units): the
    rule asking is run again once they are in. A BaseException, so no rule's own `except Exception` hides it."""


class Project:
    """Every TU of a run: cross-file rules (host writes vs kernel reads) look at all of them at once.

    While the host units of a run still parse, the engine runs the rules on the project of its kernel units
    (`hosts_pending`): a rule that reads kernel units alone is done by the time they are in, and a rule that asks
    for the host units, or all units, raises HostUnitsPending and runs again on the whole project. What the kernel
    facts memoized meanwhile stays valid: no more kernel units come."""

    def __init__(
        self, units: Iterable[UnitIndex] = (), built_libraries: tuple[Any, ...] = (), hosts_pending: bool = False
    ) -> None:
        self._units = list(units)
        # Facts several rules derive from the whole project (call graph, macro bodies...): they die with the project.
        self.memo: dict[Hashable, Any] = {}
        # Facts of the built libraries the same run audits (hexlint.binary.run.LibraryFacts), for source rules that
        # point at what the binary shows; empty when the run audits none.
        self.built_libraries = built_libraries
        self.hosts_pending = hosts_pending

    @property
    def units(self) -> list[UnitIndex]:
        if self.hosts_pending:
            raise HostUnitsPending
        return self._units

    def kernel_units(self) -> list[UnitIndex]:
        return [unit for unit in self._units if unit.role == "kernel"]

    def host_units(self) -> list[UnitIndex]:
        return [unit for unit in self.units if unit.role == "host"]

    def complete(self, units: Iterable[UnitIndex]) -> None:
        """The host units are in: `units` is the whole project, its kernel units the same as before."""
        self._units = list(units)
        self.hosts_pending = False


def memoized(memo: dict[Hashable, Any], key: Hashable, compute: Callable[[], _T]) -> _T:
    """What `memo` holds under `key`, computed on first use (setdefault would compute it on every call)."""
    if key not in memo:
        memo[key] = compute()
    return memo[key]


def project_headers_included(unit: ParsedUnit, project_files: Sequence[str]) -> list[str]:
    """The files of the run that this TU includes (directly or not)."""
    wanted = {_realpath(path) for path in project_files}
    return [name for name in included_files(unit) if name in wanted]


def included_files(unit: ParsedUnit) -> list[str]:
    """Every file the TU includes (real paths, first inclusion order), computed once per unit."""
    if unit.translation_unit is None:
        return []
    cached = getattr(unit, "_included_files", None)
    if cached is None:
        cached = []
        seen: set[str] = set()
        for inclusion in unit.translation_unit.get_includes():
            name = _realpath(inclusion.include.name)
            if name not in seen:
                seen.add(name)
                cached.append(name)
        unit._included_files = cached  # type: ignore[attr-defined]
    return cached


class ProjectBuilder:
    """Indexes units one at a time, in the order given: a project header is indexed in the first unit that includes
    it, so it is walked once. A lint run hands each unit over as soon as it is parsed, while the next ones parse."""

    def __init__(self, project_files: Sequence[str] = ()) -> None:
        self._wanted = {_realpath(path) for path in project_files}
        self._owned: set[str] = set()
        self.indexes: list[UnitIndex] = []

    def add(self, unit: ParsedUnit, freeze: bool = True) -> UnitIndex:
        files = [os.path.realpath(unit.path)]
        for header in included_files(unit):
            if header in self._wanted and header not in self._owned:
                self._owned.add(header)
                files.append(header)
        index = UnitIndex(unit, files, freeze)
        self.indexes.append(index)
        return index

    def adopt(self, index: UnitIndex) -> UnitIndex:
        """Takes a unit another builder indexed, with the headers it owns there (when the units before it are the
        same, it would own the same headers here)."""
        self._owned.update(index.indexed_files - {os.path.realpath(index.path)})
        self.indexes.append(index)
        return index

    def project(self, hosts_pending: bool = False) -> Project:
        return Project(list(self.indexes), hosts_pending=hosts_pending)


def build_project(units: Sequence[ParsedUnit], project_files: Sequence[str] = ()) -> Project:
    """Index every unit; a project header is indexed in the first unit that includes it, so it is walked once."""
    builder = ProjectBuilder(project_files)
    for unit in units:
        builder.add(unit)
    return builder.project()
