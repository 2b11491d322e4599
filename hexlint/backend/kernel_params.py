"""Cross-file facts about `*_kernel_params` structs: fields, host writes, kernel reads, and the ops each belongs to.

Shared by HX101 (written, never read), HX102 (read, never written) and HX103 (recomputed in the kernel). Member
accesses come from the index buckets (`unit.nodes(KIND)`), only in TUs whose text names a params struct; the kernel
call graph, macro bodies and op-code constants are read from the source bytes, which is much cheaper than visiting
every reference node.

Op attribution: a kernel function belongs to the ops whose dispatch `case` reaches it through the kernel call graph; a
host write belongs to the ops of the `case HTP_OP_X:` or `if (opcode == HTP_OP_X)` (or a predicate such as
`htp_op_is_unary(opcode)`, whose body lists the ops) around it or around the calls that lead to it, else to the ops
named in the smallest enclosing block (`htp_opnode node(n, {}, HTP_OP_X)`). `None` means unknown: it matches every op.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.backend.dispatch import (
    DEFAULT_IGNORED_OPS,
    DEFAULT_OP_PATTERN,
    case_groups,
    kernel_call_graph,
    kernel_dispatch,
    reachable,
    strip_transparent,
    unit_paths,
)
from hexlint.backend.names import by_spelling
from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node
from hexlint.core import Span

DEFAULT_STRUCT_PATTERN = r"^htp_\w+_kernel_params$"

_RECORD_KINDS = frozenset({"STRUCT_DECL", "UNION_DECL"})
_MAX_CALLER_DEPTH = 4
# What follows or precedes an lvalue that is written: `= v`, `+= v`, `++`, and `&kp->f` handed to a setter.
# Subscripts and sub-members between the field and the operator: `kp->ne[1] = v`, `kp->div.magic = v`.
_SKIP_SUBSCRIPTS = re.compile(rb"^(?:\s*\[[^\]\n]*\]|\s*(?:\.|->)\s*\w+)+")
_WRITE_AFTER = re.compile(rb"^\s*(?:=(?!=)|[-+*/%&|^]=|<<=|>>=|\+\+|--)")
_WRITE_BEFORE = re.compile(rb"(?:(?<![&\w)\]])&|\+\+|--)\s*$")

Ops = frozenset[str] | None


@dataclass(frozen=True)
class ParamsField:
    """One leaf of a params struct, e.g. `u.hmx.row_buf_stride` of `htp_fa_kernel_params`."""

    struct: str
    path: str
    span: Span


@dataclass(frozen=True)
class FieldAccess:
    """A host write or kernel read of one field (or of a whole nested record, `path` then being its prefix)."""

    struct: str
    path: str
    node: Node
    function: str
    ops: Ops
    line_text: str

    @property
    def span(self) -> Span:
        return self.node.span()

    @property
    def where(self) -> str:
        return f"{os.path.basename(self.node.path)}:{self.node.line}"


@dataclass(frozen=True)
class KernelParamsFacts:
    fields: Mapping[tuple[str, str], ParamsField]
    host_writes: tuple[FieldAccess, ...]
    kernel_reads: tuple[FieldAccess, ...]
    # Kernel functions by name, with the ops that reach them (absent: not reached from any dispatch case).
    kernel_function_ops: Mapping[str, frozenset[str]]
    # Ops whose dispatch case calls a function defined in this run: their kernels are present.
    dispatched_ops: frozenset[str]


@dataclass(frozen=True)
class _Settings:
    struct_pattern: re.Pattern[str]
    op_pattern: re.Pattern[str]
    ignored_ops: frozenset[str]


def settings_from(options: Mapping[str, Any]) -> _Settings:
    return _Settings(
        struct_pattern=re.compile(str(options.get("struct_pattern", DEFAULT_STRUCT_PATTERN))),
        op_pattern=re.compile(str(options.get("op_pattern", DEFAULT_OP_PATTERN))),
        ignored_ops=frozenset(options.get("ignored_ops", DEFAULT_IGNORED_OPS)),
    )


def gather(project: Project, options: Mapping[str, Any]) -> KernelParamsFacts:
    """The facts for a project, computed once per project and settings."""
    # The three rules ask for the same facts; gather them once per project and settings.
    settings = settings_from(options)
    return memoized(project.memo, ("kernel_params.facts", settings), _Gatherer(project, settings).run)


def ops_overlap(first: Ops, second: Ops) -> bool:
    """Unknown ops (None) overlap everything."""
    return first is None or second is None or bool(first & second)


def path_covers(writer_path: str, reader_path: str) -> bool:
    """A write of `u.hmx` covers a read of `u.hmx.g_br`, and the other way round."""
    return (
        writer_path == reader_path
        or reader_path.startswith(writer_path + ".")
        or writer_path.startswith(reader_path + ".")
    )


def struct_name_of(node: Node) -> str:
    """The record behind an expression's type (through pointers and typedefs), or ""."""
    declaration = node.type_declaration
    if declaration is None or declaration.kind not in _RECORD_KINDS:
        return ""
    return declaration.spelling


class _FieldTree:
    """The fields of one params struct as nested dicts: a leaf maps to None."""

    def __init__(self, struct: Node) -> None:
        self.name = struct.spelling
        self.leaves: dict[str, Span] = {}
        self.tree = self._record(struct, "")

    def _record(self, record: Node, prefix: str) -> dict[str, Any]:
        members: dict[str, Any] = {}
        nested_records: dict[str, Node] = {}
        for child in record.children():
            if child.kind in _RECORD_KINDS:
                nested_records[child.type_spelling] = child
            elif child.kind == "FIELD_DECL":
                path = f"{prefix}{child.spelling}"
                inner = child.type_declaration
                inline = inner is not None and inner.kind in _RECORD_KINDS and _inside(inner, record)
                if inline:
                    members[child.spelling] = self._record(inner, path + ".")
                else:
                    members[child.spelling] = None
                    self.leaves[path] = child.span()
        return members

    def resolve(self, names: list[str]) -> str | None:
        """The path a chain of member names reaches, cut at the leaf (`div.magic` -> `div`); None if not a field."""
        level: dict[str, Any] | None = self.tree
        path: list[str] = []
        for name in names:
            if level is None:
                break
            if name not in level:
                return None
            path.append(name)
            level = level[name]
        return ".".join(path) if path else None

    def names(self) -> set[str]:
        found: set[str] = set()
        stack = [self.tree]
        while stack:
            level = stack.pop()
            for name, sub in level.items():
                found.add(name)
                if sub is not None:
                    stack.append(sub)
        return found


def _inside(inner: Node, outer: Node) -> bool:
    return inner.path == outer.path and outer.start_offset <= inner.start_offset < outer.end_offset


def find_params_structs(project: Project, pattern: re.Pattern[str]) -> dict[str, _FieldTree]:
    structs: dict[str, _FieldTree] = {}
    for unit in project.units:
        for node in unit.nodes("STRUCT_DECL"):
            name = node.spelling
            if name not in structs and pattern.search(name) and node.is_definition:
                structs[name] = _FieldTree(node)
    return structs


@dataclass
class _Access:
    struct: str
    path: str
    node: Node
    inner: list[Node]


class _Gatherer:
    def __init__(self, project: Project, settings: _Settings) -> None:
        self.project = project
        self.settings = settings
        self.structs = find_params_structs(project, settings.struct_pattern)
        self.member_names = set().union(*(tree.names() for tree in self.structs.values())) if self.structs else set()
        self.op_refs: dict[str, list[tuple[str, int, str]]] = {}
        self.function_ops: dict[str, frozenset[str]] | None = None
        self.callers: dict[str, list[tuple[UnitIndex, Node]]] | None = None
        self.context_cache: dict[tuple[str, int], Ops] = {}
        self.extents: dict[tuple[str, str], list[tuple[str, int, int, Node]]] = {}

    def run(self) -> KernelParamsFacts:
        fields = {
            (name, path): ParamsField(name, path, span)
            for name, tree in self.structs.items()
            for path, span in tree.leaves.items()
        }
        kernel_function_ops, dispatched = self._kernel_ops()
        host_writes: list[FieldAccess] = []
        kernel_reads: list[FieldAccess] = []
        if self.structs:
            struct_names = [name.encode() for name in self.structs]
            for unit in self.project.units:
                if not _mentions_any(unit, struct_names):
                    continue  # a TU that never names a params struct cannot access one
                accesses = self._accesses(unit)
                if unit.role == "host":
                    for access in self._writes(unit, accesses) + self._initialiser_writes(unit):
                        function = unit.enclosing_function(access.node)
                        name = function.spelling if function is not None else ""
                        ops = self._host_ops(unit, access.node, name, 0, set())
                        text = unit.source_line(access.node.path, access.node.line).strip()
                        host_writes.append(FieldAccess(access.struct, access.path, access.node, name, ops, text))
                    continue
                # Kernels see the struct through a const pointer: every access is a read.
                for access in accesses:
                    function = unit.enclosing_function(access.node)
                    name = function.spelling if function is not None else ""
                    ops = kernel_function_ops.get(name)
                    text = unit.source_line(access.node.path, access.node.line).strip()
                    kernel_reads.append(FieldAccess(access.struct, access.path, access.node, name, ops, text))
        return KernelParamsFacts(
            fields=fields,
            host_writes=tuple(host_writes),
            kernel_reads=tuple(kernel_reads),
            kernel_function_ops=kernel_function_ops,
            dispatched_ops=dispatched,
        )

    # Accesses: member expressions whose base has a params struct type.

    def _accesses(self, unit: UnitIndex) -> list[_Access]:
        found: list[_Access] = []
        by_name = member_refs_by_name(unit)
        for node in (node for name in self.member_names for node in by_name.get(name, ())):
            access = self._resolve(node)
            if access is not None:
                found.append(access)
        inner = {id_of(node) for access in found for node in access.inner}
        kept = [access for access in found if id_of(access.node) not in inner]
        return sorted(kept, key=lambda access: (access.node.path, access.node.line, access.node.column))

    def _resolve(self, node: Node) -> _Access | None:
        names: list[str] = []
        inner: list[Node] = []
        current = node
        while True:
            names.append(current.spelling)
            children = current.children()
            if not children:
                return None
            base = children[0]
            struct = struct_name_of(base)
            if struct in self.structs:
                path = self.structs[struct].resolve(list(reversed(names)))
                return _Access(struct, path, node, inner) if path else None
            base = strip_transparent(base)
            if base.kind != "MEMBER_REF_EXPR":
                return None
            inner.append(base)
            current = base

    def _writes(self, unit: UnitIndex, accesses: list[_Access]) -> list[_Access]:
        """Accesses assigned, incremented or handed by address to a function, judged by the bytes around them."""
        written = []
        for access in accesses:
            node = access.node
            if node.is_macro_expansion:
                continue
            data = unit.source_bytes(node.path)
            after = _SKIP_SUBSCRIPTS.sub(b"", data[node.end_offset : node.end_offset + 200], count=1)
            before = data[max(0, node.start_offset - 8) : node.start_offset]
            if _WRITE_AFTER.match(after) or _WRITE_BEFORE.search(before):
                written.append(access)
        return written

    def _initialiser_writes(self, unit: UnitIndex) -> list[_Access]:
        found: list[_Access] = []
        for init_list in unit.nodes("INIT_LIST_EXPR"):
            struct = struct_name_of(init_list)
            tree = self.structs.get(struct)
            if tree is None or init_list.type_spelling.endswith("*") or _is_zero_initialiser(init_list):
                continue
            found.extend(_initialised_fields(init_list, tree.tree, "", struct))
        return found

    # Kernel side: dispatch cases and the call graph.

    def _kernel_ops(self) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
        """Kernel function -> the ops whose dispatch reaches it; and the ops dispatched at all."""
        graph = kernel_call_graph(self.project)
        entries = kernel_dispatch(self.project, self.settings.op_pattern, self.settings.ignored_ops)
        function_ops: dict[str, set[str]] = defaultdict(set)
        for entry, ops in entries.items():
            for name in reachable(graph, entry):
                function_ops[name] |= ops
        dispatched = frozenset(op for ops in entries.values() for op in ops)
        return {name: frozenset(ops) for name, ops in function_ops.items()}, dispatched

    # Host side: which ops a write (or a call leading to it) is made for.

    def _host_ops(self, unit: UnitIndex, site: Node, function: str, depth: int, visiting: set[str]) -> Ops:
        key = (site.path, site.start_offset)
        if key in self.context_cache:
            return self.context_cache[key]
        ops = self._condition_ops(unit, site)
        # A call site names its op in the block around it; a write inside a shared helper takes its callers' ops.
        if ops is None and depth > 0:
            ops = self._block_ops(unit, site)
        if ops is None and function and depth < _MAX_CALLER_DEPTH and function not in visiting:
            union: set[str] = set()
            for caller_unit, call in self._callers().get(function, ()):
                caller = caller_unit.enclosing_function(call)
                caller_name = caller.spelling if caller is not None else ""
                caller_ops = self._host_ops(caller_unit, call, caller_name, depth + 1, visiting | {function})
                if caller_ops:
                    union |= caller_ops
            ops = frozenset(union) if union else None
        if ops is None:
            ops = self._block_ops(unit, site)
        self.context_cache[key] = ops
        return ops

    def _condition_ops(self, unit: UnitIndex, site: Node) -> Ops:
        """Ops of the innermost `case HTP_OP_X:` or `if (opcode == HTP_OP_X)` then-branch that holds the site."""
        offset = site.start_offset
        for switch in self._enclosing(unit, "SWITCH_STMT", site):
            for ops, statement in case_groups(switch, self.settings.op_pattern, self.settings.ignored_ops):
                if statement.path == site.path and statement.start_offset <= offset < statement.end_offset:
                    return ops
        for if_statement in self._enclosing(unit, "IF_STMT", site):
            children = if_statement.children()
            if len(children) < 2:
                continue
            condition, then_branch = children[0], children[1]
            if not then_branch.start_offset <= offset < then_branch.end_offset:
                continue
            ops = self._ops_in_range(unit, condition)
            low, high, where = condition.start_offset, condition.end_offset, condition.path
            for path, start, _end, call in self._extents(unit, "CALL_EXPR"):
                if low <= start < high and path == where:
                    ops |= self._function_ops(call.spelling)
            if ops:
                return frozenset(ops)
        return None

    def _block_ops(self, unit: UnitIndex, site: Node) -> Ops:
        for block in self._enclosing(unit, "COMPOUND_STMT", site):
            ops = self._ops_in_range(unit, block)
            if ops:
                return frozenset(ops)
        return None

    def _extents(self, unit: UnitIndex, kind: str) -> list[tuple[str, int, int, Node]]:
        key = (unit.path, kind)
        found = self.extents.get(key)
        if found is None:
            found = self.extents[key] = [
                (node.path, node.start_offset, node.end_offset, node) for node in unit.nodes(kind)
            ]
        return found

    def _enclosing(self, unit: UnitIndex, kind: str, site: Node) -> list[Node]:
        """Nodes of a kind whose extent holds the site, innermost first."""
        path, offset = site.path, site.start_offset
        holding = [entry for entry in self._extents(unit, kind) if entry[0] == path and entry[1] <= offset < entry[2]]
        return [entry[3] for entry in sorted(holding, key=lambda entry: entry[1], reverse=True)]

    def _ops_in_range(self, unit: UnitIndex, node: Node) -> set[str]:
        low, high, where = node.start_offset, node.end_offset, node.path
        return {name for path, offset, name in self._op_refs(unit) if low <= offset < high and path == where}

    def _op_refs(self, unit: UnitIndex) -> list[tuple[str, int, str]]:
        """Op constants named in the unit's files, found in the bytes (comments blanked) rather than in every node."""
        refs = self.op_refs.get(unit.path)
        if refs is None:
            refs = []
            for path in unit_paths(unit):
                data = _COMMENT.sub(lambda match: b" " * len(match.group(0)), unit.source_bytes(path))
                for match in _IDENTIFIER.finditer(data):
                    name = match.group(0).decode("ascii", "replace")
                    if self.settings.op_pattern.search(name) and name not in self.settings.ignored_ops:
                        refs.append((path, match.start(), name))
            self.op_refs[unit.path] = refs
        return refs

    def _function_ops(self, name: str) -> frozenset[str]:
        """Ops a function body names, for predicates such as `htp_op_is_unary(opcode)` in a condition."""
        if self.function_ops is None:
            self.function_ops = {}
        ops = self.function_ops.get(name)
        if ops is None:
            ops = frozenset()
            for unit in self.project.units:
                function = unit.functions.get(name)
                if function is not None:
                    ops = frozenset(self._ops_in_range(unit, function))
                    break
            self.function_ops[name] = ops
        return ops

    def _callers(self) -> dict[str, list[tuple[UnitIndex, Node]]]:
        if self.callers is None:
            self.callers = defaultdict(list)
            for unit in self.project.host_units():
                for call in unit.nodes("CALL_EXPR"):
                    self.callers[call.spelling].append((unit, call))
        return self.callers


def member_refs_by_name(unit: UnitIndex) -> dict[str, list[Node]]:
    """The unit's member expressions by member name (the one index of names.by_spelling, shared by every rule)."""
    return by_spelling(unit, "MEMBER_REF_EXPR")


def id_of(node: Node) -> tuple[int, ...]:
    """Identity of a node across wrappers (Node equality is exact but not cheap to put in sets of tuples)."""
    return (hash(node), node.start_offset, node.end_offset)


def _is_zero_initialiser(init_list: Node) -> bool:
    """`{}` and `{0}` only zero-fill: they do not count as writing any field."""
    children = init_list.children()
    if not children:
        return True
    return len(children) == 1 and children[0].kind == "INTEGER_LITERAL" and children[0].tokens() == ["0"]


def _initialised_fields(init_list: Node, level: dict[str, Any], prefix: str, struct: str) -> list[_Access]:
    found: list[_Access] = []
    names = list(level)
    position = 0
    for child in init_list.children():
        designator, value = _designated(child)
        if designator is not None:
            name = designator.spelling
            if name in names:
                position = names.index(name)
            anchor = designator
        else:
            anchor = child
        if position >= len(names):
            break
        name = names[position]
        sub = level[name]
        if sub is not None and value is not None and value.kind == "INIT_LIST_EXPR":
            found.extend(_initialised_fields(value, sub, f"{prefix}{name}.", struct))
        else:
            found.append(_Access(struct, prefix + name, anchor, []))
        position += 1
    return found


def _designated(child: Node) -> tuple[Node | None, Node | None]:
    """A designated initialiser `.name = value` appears as an unexposed node holding MEMBER_REF and the value."""
    if child.kind == "UNEXPOSED_EXPR":
        parts = child.children()
        if len(parts) == 2 and parts[0].kind == "MEMBER_REF":
            return parts[0], parts[1]
    return None, child


_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)


def _mentions_any(unit: UnitIndex, names: list[bytes]) -> bool:
    return any(name in unit.source_bytes(path) for path in unit_paths(unit) for name in names)


def first_per_function(accesses: Iterable[FieldAccess]) -> list[list[FieldAccess]]:
    """Accesses grouped by (struct, field, function), in source order: one finding per group, not per line."""
    groups: dict[tuple[str, str, str, str], list[FieldAccess]] = {}
    for access in accesses:
        key = (access.struct, access.path, access.function, access.node.path)
        groups.setdefault(key, []).append(access)
    return list(groups.values())
