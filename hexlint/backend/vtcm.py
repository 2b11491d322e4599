"""Pointer provenance for VTCM: which variables, struct fields, parameters and returns hold a VTCM-derived pointer.

A *holder* is a place a pointer value is kept: a local or global variable, a function parameter, a struct field (one
holder for the field across the whole tree: `htp_spad.data` is VTCM wherever it is read once some code stores a VTCM
pointer in it), a function's return value, or an array of pointers. A holder gets a provenance from the first *flow*
into it that carries one: a declaration's initialiser, an assignment, a designated or positional struct initialiser, an
argument at a call site (for the callee's parameter), or a `return`. An *origin* is an expression that names VTCM
itself: a pointer-typed field or variable with a VTCM name (`ctx->vtcm_base`, `actx->vtcm_src0`, `dst_vtcm`) or a call
of a VTCM allocator (`vtcm_seq_alloc`). Values are followed through casts, parentheses, pointer arithmetic, `? :`,
`&p[i]` and array-to-pointer decay; a pointer difference is an integer, not a pointer. VTCM is one provenance kind:
the records carry the kind so the other pointer provenances (internal framework pointers, required and optional
operands) can share them.

`scalar_accesses` then lists the loads and stores of scalar type (not HVX vectors, not records or arrays as a whole)
through a VTCM-derived pointer: `*p`, `p[i]`, `p->f`, `p[i].f`, `p->a[i]`; the operand of `&` and of `sizeof` is not an
access. Facts only: no messages, no rule codes. Everything is computed once per project and settings.
"""

from __future__ import annotations

import functools
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.backend.names import matches_any
from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node
from hexlint.core import Span

VTCM = "vtcm"

# Holder kinds.
VARIABLE = "variable"
PARAMETER = "parameter"
FIELD = "field"
RETURN = "return"

# Access kinds.
LOAD = "load"
STORE = "store"
UPDATE = "update"  # read-modify-write: `p[i] += x`, `p[i]++`

_NOT_SCALAR = frozenset(
    {
        "RECORD",
        "CONSTANTARRAY",
        "INCOMPLETEARRAY",
        "VARIABLEARRAY",
        "DEPENDENTSIZEDARRAY",
        "VECTOR",
        "EXTVECTOR",
        "VOID",
        "FUNCTIONPROTO",
        "FUNCTIONNOPROTO",
        "INVALID",
        "UNEXPOSED",
    }
)
_ARRAY_KINDS = frozenset({"CONSTANTARRAY", "INCOMPLETEARRAY", "VARIABLEARRAY", "DEPENDENTSIZEDARRAY"})
_INTEGER_KINDS = frozenset({"INT", "UINT", "LONG", "ULONG", "LONGLONG", "ULONGLONG"})
_WRAPPERS = frozenset({"UNEXPOSED_EXPR", "PAREN_EXPR", "CSTYLE_CAST_EXPR"})
_LONGEST_TEXT = 90
_MISSING: Any = object()
_DEEPEST = 12


@dataclass(frozen=True)
class VtcmNames:
    """The codebase's VTCM names (fnmatch patterns), from the rule's options."""

    fields: tuple[str, ...]
    variables: tuple[str, ...]
    allocators: tuple[str, ...]
    opaque_functions: tuple[str, ...]
    splat_functions: tuple[str, ...]
    address_types: tuple[str, ...]
    every_call_site: bool

    @staticmethod
    def from_options(options: Mapping[str, Any]) -> VtcmNames:
        return VtcmNames(
            fields=_strings(options, "vtcm_fields"),
            variables=_strings(options, "vtcm_variables"),
            allocators=_strings(options, "vtcm_allocators"),
            opaque_functions=_strings(options, "opaque_functions"),
            splat_functions=_strings(options, "splat_functions"),
            address_types=_strings(options, "address_types"),
            every_call_site=str(options.get("parameter_call_sites", "any")) == "every",
        )


@dataclass(frozen=True)
class Holder:
    """A place that keeps a pointer value; `key` is stable across translation units."""

    kind: str
    name: str  # `src_spad`, `htp_spad.data`, `vtcm_seq_alloc()`
    function: str  # the function of a variable or parameter; "" for fields and globals
    key: tuple


@dataclass(frozen=True)
class Origin:
    """An expression that names VTCM by itself."""

    provenance: str
    text: str
    span: Span


@dataclass(frozen=True)
class Flow:
    """A value stored into a holder: the step of a provenance chain."""

    text: str  # `src_spad = octx->src0_spad.data + off`; for a parameter, the argument a call site passes
    span: Span


@dataclass(frozen=True)
class HolderProvenance:
    """Why a holder keeps a pointer of some provenance: the flow that put it there and what that flow read."""

    holder: Holder
    provenance: str
    flow: Flow
    source: Holder | Origin


@dataclass(frozen=True)
class ScalarAccess:
    """A scalar load or store through a pointer of some provenance."""

    node: Node
    unit: UnitIndex
    kind: str  # LOAD, STORE, UPDATE
    text: str  # the access as written: `dst[i]`
    pointer: str  # the pointer expression it goes through: `dst`
    provenance: str
    source: Holder | Origin
    copy_from: Holder | Origin | None  # a store whose value is itself a scalar load through a VTCM pointer
    function: str
    broadcast: bool  # a load whose value only feeds a vector splat (directly or through a local)


@dataclass
class VtcmProvenance:
    """Every holder of a VTCM-derived pointer in the project, with the chain that explains it."""

    holders: dict[tuple, HolderProvenance]

    def chain(self, source: Holder | Origin) -> list[HolderProvenance | Origin]:
        """From `source` back to the origin: each holder's provenance, then the origin itself."""
        steps: list[HolderProvenance | Origin] = []
        seen: set[tuple] = set()
        current: Holder | Origin = source
        while isinstance(current, Holder) and current.key not in seen and len(steps) < _DEEPEST:
            seen.add(current.key)
            provenance = self.holders.get(current.key)
            if provenance is None:
                return steps
            steps.append(provenance)
            current = provenance.source
        if isinstance(current, Origin):
            steps.append(current)
        return steps


def vtcm_provenance(project: Project, names: VtcmNames) -> VtcmProvenance:
    return memoized(project.memo, ("vtcm-provenance", names), lambda: _compute_provenance(project, names))


def scalar_accesses(project: Project, names: VtcmNames) -> list[ScalarAccess]:
    """Scalar loads and stores through VTCM-derived pointers in kernel code, in unit and source order."""
    return memoized(project.memo, ("vtcm-scalar-accesses", names), lambda: _compute_accesses(project, names))


# ---------------------------------------------------------------------------------------------------------------------
# Values: what an expression's pointer value derives from (holders it reads, origins it names).


class _Values:
    """Reads expressions of one unit: the holders and origins a value derives from."""

    def __init__(
        self,
        unit: UnitIndex,
        names: VtcmNames,
        holders: dict[tuple, Holder],
        known_names: frozenset[str] | None = None,
    ) -> None:
        self.unit = unit
        self.names = names
        self.holders = holders
        # Once the holders are known, a name that no VTCM holder has cannot lead to one: skip resolving it.
        self.known_names = known_names
        self._by_declaration: dict[tuple[int, str], Holder | None] = {}

    def pointer_atoms(self, node: Node, depth: int = 0) -> list[Holder | Origin]:
        """Where the value of `node` (a pointer, or an integer holding one) comes from."""
        if depth > _DEEPEST:
            return []
        kind = node.kind
        if kind in _WRAPPERS:
            children = node.children()
            return self.pointer_atoms(children[-1], depth + 1) if children else []
        if kind in ("DECL_REF_EXPR", "MEMBER_REF_EXPR"):
            type_kind = node.type_kind
            if type_kind in _ARRAY_KINDS:
                # An array used as a value decays to the address of its first element: VTCM when it lies there.
                return self.lvalue_atoms(node, depth + 1)
            if kind == "DECL_REF_EXPR":
                return self._reference_atoms(node, type_kind)
            return self._member_atoms(node, type_kind, depth)
        if kind == "BINARY_OPERATOR":
            operator = node.binary_operator
            if operator not in ("+", "-", "=", ","):
                return []
            children = node.children()
            if len(children) != 2:
                return []
            left, right = children
            if operator in ("=", ","):
                return self.pointer_atoms(right, depth + 1)
            if operator == "-" and right.type_kind == "POINTER":
                return []  # a pointer difference is a byte count
            return self.pointer_atoms(left, depth + 1) + self.pointer_atoms(right, depth + 1)
        if kind == "COMPOUND_ASSIGNMENT_OPERATOR":
            children = node.children()
            return self.pointer_atoms(children[0], depth + 1) if children else []
        if kind == "CONDITIONAL_OPERATOR":
            children = node.children()
            if len(children) != 3:
                return []
            return self.pointer_atoms(children[1], depth + 1) + self.pointer_atoms(children[2], depth + 1)
        if kind == "UNARY_OPERATOR":
            operator = node.unary_operator
            if operator not in ("&", "++", "--"):
                return []
            children = node.children()
            if not children:
                return []
            if operator == "&":
                return self.lvalue_atoms(children[0], depth + 1)
            return self.pointer_atoms(children[0], depth + 1)
        if kind == "ARRAY_SUBSCRIPT_EXPR":
            if node.type_kind != "POINTER":
                return []
            # An element of an array of pointers: the array is the holder (`float * rows[2]; rows[0] = vtcm`).
            children = node.children()
            holder = self.array_holder(children[0]) if children else None
            return [holder] if holder is not None else []
        if kind == "CALL_EXPR":
            return self._call_atoms(node)
        return []

    def lvalue_atoms(self, node: Node, depth: int = 0) -> list[Holder | Origin]:
        """For an lvalue (`*p`, `p[i]`, `p->f`, `p[i].f` ...), where the pointer it goes through comes from."""
        if depth > _DEEPEST:
            return []
        kind = node.kind
        if kind in ("UNEXPOSED_EXPR", "PAREN_EXPR"):
            children = node.children()
            return self.lvalue_atoms(children[-1], depth + 1) if children else []
        children = node.children()
        if kind == "UNARY_OPERATOR" and node.unary_operator == "*" and children:
            return self.pointer_atoms(children[0], depth + 1)
        if kind == "ARRAY_SUBSCRIPT_EXPR" and len(children) == 2:
            base = _unwrap(children[0])
            if base.type_kind in _ARRAY_KINDS:
                return self.lvalue_atoms(base, depth + 1)
            return self.pointer_atoms(children[0], depth + 1)
        if kind == "MEMBER_REF_EXPR" and children:
            base = children[0]
            if base.type_kind == "POINTER":
                return self.pointer_atoms(base, depth + 1)
            return self.lvalue_atoms(base, depth + 1)
        return []

    def _reference_atoms(self, node: Node, type_kind: str) -> list[Holder | Origin]:
        if not self.holds_address(node, type_kind):
            return []
        if self.known_names is not None and node.spelling not in self.known_names:
            return []
        declaration = node.referenced
        if declaration is None:
            return []
        atoms: list[Holder | Origin] = []
        if type_kind == "POINTER" and _matches(node.spelling, self.names.variables):
            atoms.append(Origin(VTCM, node.spelling, _span(node)))
        holder = self.variable_holder(declaration)
        if holder is not None:
            atoms.append(holder)
        return atoms

    def _member_atoms(self, node: Node, type_kind: str, depth: int) -> list[Holder | Origin]:
        if not self.holds_address(node, type_kind):
            return []
        if (
            self.known_names is not None
            and node.spelling not in self.known_names
            and not _matches(node.spelling, self.names.fields)
        ):
            return []
        atoms: list[Holder | Origin] = []
        if type_kind == "POINTER" and _matches(node.spelling, self.names.fields):
            atoms.append(Origin(VTCM, self.text(node), _span(node)))
        holder = self.field_holder(node)
        if holder is not None:
            atoms.append(holder)
        return atoms

    def holds_address(self, node: Node, type_kind: str | None = None) -> bool:
        """A pointer, or an integer of an address type (`dma_addr_t`: the newer DMA descriptors carry addresses so)."""
        type_kind = node.type_kind if type_kind is None else type_kind
        if type_kind == "POINTER":
            return True
        if type_kind not in _INTEGER_KINDS or not self.names.address_types:
            return False
        spelling = node.type_spelling.replace("const ", "").replace("volatile ", "").strip()
        return spelling in self.names.address_types

    def _call_atoms(self, call: Node) -> list[Holder | Origin]:
        name = call.spelling
        if _matches(name, self.names.allocators):
            return [Origin(VTCM, f"{name}()", _span(call))]
        if not name:
            return []
        return [self.return_holder(name)]

    # Holders: one record per place, shared by every unit that names it.

    def _holder(self, kind: str, name: str, function: str, key: tuple) -> Holder:
        holder = self.holders.get(key)
        if holder is None:
            holder = self.holders[key] = Holder(kind, name, function, key)
        return holder

    def variable_holder(self, declaration: Node) -> Holder | None:
        # The same declaration is referenced again and again: its cursor's hash finds the holder made for it.
        cached = self._by_declaration.get((hash(declaration), declaration.spelling), _MISSING)
        if cached is not _MISSING:
            return cached
        holder = self._variable_holder(declaration)
        self._by_declaration[(hash(declaration), declaration.spelling)] = holder
        return holder

    def _variable_holder(self, declaration: Node) -> Holder | None:
        kind = declaration.kind
        if kind not in ("VAR_DECL", "PARM_DECL"):
            return None
        key = (VARIABLE, _real(declaration.path), declaration.start_offset, declaration.spelling)
        holder = self.holders.get(key)
        if holder is None:
            function = self.unit.enclosing_function(declaration)
            holder = self.holders[key] = Holder(
                PARAMETER if kind == "PARM_DECL" else VARIABLE,
                declaration.spelling,
                function.spelling if function is not None else "",
                key,
            )
        return holder

    def field_holder(self, member: Node) -> Holder | None:
        field = member.referenced
        if field is None or field.kind != "FIELD_DECL":
            return None
        return self.field_decl_holder(field, lambda: self._struct_name(member))

    def field_decl_holder(self, field: Node, struct: Callable[[], str]) -> Holder:
        key = (FIELD, _real(field.path), field.start_offset, field.spelling)
        holder = self.holders.get(key)
        if holder is None:
            name = struct()
            holder = self.holders[key] = Holder(FIELD, f"{name}.{field.spelling}" if name else field.spelling, "", key)
        return holder

    def return_holder(self, function: str) -> Holder:
        return self._holder(RETURN, f"{function}()", function, (RETURN, function))

    def array_holder(self, base: Node) -> Holder | None:
        base = _unwrap(base)
        if base.type_kind not in _ARRAY_KINDS:
            return None
        if base.kind == "DECL_REF_EXPR":
            declaration = base.referenced
            return self.variable_holder(declaration) if declaration is not None else None
        if base.kind == "MEMBER_REF_EXPR":
            return self.field_holder(base)
        return None

    def _struct_name(self, member: Node) -> str:
        children = member.children()
        struct = children[0].type_declaration if children else None
        name = struct.spelling if struct is not None else ""
        return name.removeprefix("struct ")

    def text(self, node: Node) -> str:
        return expression_text(self.unit, node)


# ---------------------------------------------------------------------------------------------------------------------
# Flows: every store of a value into a holder, gathered once; then a fixed point over them.


@dataclass(frozen=True)
class _FlowRecord:
    target: Holder
    atoms: tuple
    place: tuple  # (unit, node): its text and span are made only for the flows that explain a holder

    def flow(self) -> Flow:
        unit, node = self.place
        return Flow(expression_text(unit, node), _span(node))


def _compute_provenance(project: Project, names: VtcmNames) -> VtcmProvenance:
    holders: dict[tuple, Holder] = {}
    flows: list[_FlowRecord] = []
    definitions = _definitions(project)
    pointer_parameters: dict[Node, list[tuple[int, Holder | None]]] = {}
    for unit in project.kernel_units():
        stores, returns = unit_flows(unit, names)
        flows.extend(stores)
        values = _Values(unit, names, holders)
        for call in unit.nodes("CALL_EXPR"):
            flows.extend(_argument_flows(unit, values, call, definitions, names, pointer_parameters))
        flows.extend(returns)
    by_target: dict[tuple, list[_FlowRecord]] = defaultdict(list)
    for flow in flows:
        by_target[flow.target.key].append(flow)
    known: dict[tuple, HolderProvenance] = {}
    changed = True
    rounds = 0
    while changed and rounds < 64:
        changed = False
        rounds += 1
        for key, target_flows in by_target.items():
            if key in known:
                continue
            found = _first_carrying(target_flows, known, names)
            if found is not None:
                flow, source = found
                known[key] = HolderProvenance(flow.target, VTCM, flow.flow(), source)
                changed = True
    return VtcmProvenance(known)


def _first_carrying(
    flows: list[_FlowRecord], known: dict[tuple, HolderProvenance], names: VtcmNames
) -> tuple[_FlowRecord, Holder | Origin] | None:
    carrying = []
    for flow in flows:
        source = _carried(flow.atoms, known)
        if source is not None:
            carrying.append((flow, source))
        elif names.every_call_site and flow.target.kind == PARAMETER:
            return None  # a call site passes something else: the parameter is not VTCM on every call
    return carrying[0] if carrying else None


def _carried(atoms: Iterable[Holder | Origin], known: Mapping[tuple, HolderProvenance]) -> Holder | Origin | None:
    for atom in atoms:
        if isinstance(atom, Origin) or atom.key in known:
            return atom
    return None


def _definitions(project: Project) -> dict[str, list[tuple[str, Node, UnitIndex]]]:
    """Function definitions of the kernel code by name (static functions of several files share names)."""
    found: dict[str, list[tuple[str, Node, UnitIndex]]] = defaultdict(list)
    for unit in project.kernel_units():
        for function in unit.functions_all():
            found[function.spelling].append((_real(function.path), function, unit))
    return found


def unit_flows(unit: UnitIndex, names: VtcmNames) -> tuple[tuple[_FlowRecord, ...], tuple[_FlowRecord, ...]]:
    """The flows of one unit that read it alone, in source order by kind: its stores (declarations, assignments,
    initializer lists), then its returns. The flows through call arguments need the project's definitions. Kept on
    the unit: a lint run computes them as the unit is indexed (hx113's `prepare_unit`)."""
    return memoized(unit.memo, ("vtcm.unit_flows", names), lambda: _unit_flows(unit, _Values(unit, names, {})))


def _unit_flows(unit: UnitIndex, values: _Values) -> tuple[tuple[_FlowRecord, ...], tuple[_FlowRecord, ...]]:
    stores: list[_FlowRecord] = []
    for declaration in unit.nodes("VAR_DECL"):
        if not values.holds_address(declaration):
            continue
        initializer = _initializer(declaration)
        if initializer is None:
            continue
        holder = values.variable_holder(declaration)
        atoms = values.pointer_atoms(initializer)
        if holder is not None and atoms:
            stores.append(_FlowRecord(holder, tuple(atoms), (unit, declaration)))
    for assignment in unit.nodes("BINARY_OPERATOR"):
        if assignment.binary_operator != "=" or not values.holds_address(assignment):
            continue  # an assignment has its left side's type: most are not pointers
        children = assignment.children()
        if len(children) != 2:
            continue
        holder = _assigned_holder(values, children[0])
        if holder is None:
            continue
        atoms = values.pointer_atoms(children[1])
        if atoms:
            stores.append(_FlowRecord(holder, tuple(atoms), (unit, assignment)))
    for initializers in unit.nodes("INIT_LIST_EXPR"):
        stores.extend(_initializer_flows(values, initializers))
    returns: list[_FlowRecord] = []
    for statement in unit.nodes("RETURN_STMT"):
        function = unit.enclosing_function(statement)
        if function is None or not function.type_spelling.split("(")[0].rstrip().endswith("*"):
            continue  # only functions returning a pointer
        children = statement.children()
        if not children:
            continue
        atoms = values.pointer_atoms(children[0])
        if atoms:
            holder = values.return_holder(function.spelling)
            returns.append(_FlowRecord(holder, tuple(atoms), (unit, statement)))
    return tuple(stores), tuple(returns)


def _assigned_holder(values: _Values, target: Node) -> Holder | None:
    target = _unwrap(target)
    if target.kind == "DECL_REF_EXPR":
        declaration = target.referenced
        return values.variable_holder(declaration) if declaration is not None else None
    if target.kind == "MEMBER_REF_EXPR":
        return values.field_holder(target)
    if target.kind == "ARRAY_SUBSCRIPT_EXPR":
        children = target.children()
        return values.array_holder(children[0]) if children else None
    return None


def _initializer_flows(values: _Values, initializers: Node) -> Iterator[_FlowRecord]:
    struct = initializers.type_declaration
    if struct is None or initializers.type_kind != "RECORD":
        return
    struct_name = struct.spelling.removeprefix("struct ")
    items = initializers.children()
    fields: list[Node] | None = None
    for position, item in enumerate(items):
        parts = item.children() if item.kind == "UNEXPOSED_EXPR" else []
        if len(parts) == 2 and parts[0].kind == "MEMBER_REF":
            field, value = parts[0].referenced, parts[1]  # `.field = value`
        else:
            if fields is None:
                fields = [child for child in struct.children() if child.kind == "FIELD_DECL"]
            field, value = (fields[position] if position < len(fields) else None), item
        if field is None or field.kind != "FIELD_DECL" or not values.holds_address(field):
            continue
        atoms = values.pointer_atoms(value)
        if atoms:
            holder = values.field_decl_holder(field, lambda: struct_name)
            yield _FlowRecord(holder, tuple(atoms), (values.unit, item))


def _argument_flows(
    unit: UnitIndex,
    values: _Values,
    call: Node,
    definitions: Mapping[str, list[tuple[str, Node, UnitIndex]]],
    names: VtcmNames,
    pointer_parameters: dict[Node, list[tuple[int, Holder | None]]],
) -> Iterator[_FlowRecord]:
    name = call.spelling
    if not name or name not in definitions or _matches(name, names.opaque_functions):
        return
    definition = _definition_for(call, definitions[name])
    if definition is None:
        return
    function, owner = definition
    parameters = pointer_parameters.get(function)
    if parameters is None:
        owner_values = values if owner is unit else _Values(owner, values.names, values.holders)
        parameters = pointer_parameters[function] = [
            (position, owner_values.variable_holder(child))
            for position, child in enumerate(child for child in function.children() if child.kind == "PARM_DECL")
            if owner_values.holds_address(child)
        ]
    if not parameters:
        return  # no pointer parameter: nothing to follow, and no need to look at the arguments
    arguments = call.children()[1:]
    for position, holder in parameters:
        if position >= len(arguments):
            continue
        argument = arguments[position]
        atoms = values.pointer_atoms(argument)
        if not atoms and not names.every_call_site:
            continue
        if holder is not None:
            yield _FlowRecord(holder, tuple(atoms), (unit, argument))


def _definition_for(call: Node, candidates: list[tuple[str, Node, UnitIndex]]) -> tuple[Node, UnitIndex] | None:
    if len(candidates) == 1:
        return candidates[0][1], candidates[0][2]
    declaration = call.referenced
    wanted = _real(declaration.path) if declaration is not None else ""
    here = _real(call.path)
    for path, function, owner in candidates:
        if path == wanted:
            return function, owner
    for path, function, owner in candidates:
        if path == here:
            return function, owner
    return None


# ---------------------------------------------------------------------------------------------------------------------
# Accesses.


def _compute_accesses(project: Project, names: VtcmNames) -> list[ScalarAccess]:
    provenance = vtcm_provenance(project, names)
    known_names = frozenset(
        holder.holder.name.rsplit(".", 1)[-1].removesuffix("()") for holder in provenance.holders.values()
    )
    holders: dict[tuple, Holder] = {}
    found: list[ScalarAccess] = []
    mentions = _Mentions(provenance, names)
    for unit in project.kernel_units():
        values = _Values(unit, names, holders, known_names)
        found.extend(_unit_accesses(unit, values, provenance, names, mentions))
    return found


def _unit_accesses(
    unit: UnitIndex,
    values: _Values,
    provenance: VtcmProvenance,
    names: VtcmNames,
    mentions: _Mentions,
) -> Iterator[ScalarAccess]:
    macros = unit_macro_names(unit)
    inside = _mentioning_functions(unit, mentions, macros)
    candidates = [
        node
        for node in (
            *unit.nodes("ARRAY_SUBSCRIPT_EXPR"),
            *unit.nodes("MEMBER_REF_EXPR"),
            *(node for node in unit.nodes("UNARY_OPERATOR") if node.top_index in inside and node.unary_operator == "*"),
        )
        if node.top_index in inside and _may_mention(unit, node, mentions, macros) and node.type_kind not in _NOT_SCALAR
    ]
    if not candidates:
        return
    not_evaluated = _unevaluated_ranges(unit)
    reads: dict[Node, tuple[str, Holder | Origin, Node | None]] = {}
    for node in candidates:
        if node.kind == "MEMBER_REF_EXPR" and not _is_member_access(node):
            continue
        source = _carried(values.lvalue_atoms(node), provenance.holders)
        if source is None or _inside(node, not_evaluated):
            continue
        if node.is_macro_expansion:
            parent, role = None, _macro_role(unit, node)  # the AST's extents collapse inside a macro: read the #define
        else:
            parent, child = _context(unit, node)
            role = _role(parent, child)
        if role != "address":
            reads[node] = (role, source, parent)
    stored = {
        node: _unwrap(parent.children()[-1])
        for node, (role, _source, parent) in reads.items()
        if role == STORE and parent is not None
    }
    copied = {value for value in stored.values() if value in reads}
    splats = _Splats(unit, names.splat_functions)
    for node, (role, source, parent) in reads.items():
        if node in copied:
            continue  # reported with the store it feeds: one finding per element copy
        function = unit.enclosing_function(node)
        function_name = function.spelling if function is not None else ""
        if _matches(function_name, names.opaque_functions):
            continue
        value = stored.get(node)
        copy_from = reads[value][1] if value is not None and value in reads else None
        broadcast = role == LOAD and splats.feeds_only_splats(node, parent, function)
        yield ScalarAccess(
            node=node,
            unit=unit,
            kind=role,
            text=_access_text(unit, node),
            pointer=_access_text(unit, _pointer_of(node), _POINTER_TEXT),
            provenance=VTCM,
            source=source,
            copy_from=copy_from,
            function=function_name,
            broadcast=broadcast,
        )


class _Mentions:
    """A cheap text test before any AST work: an access through VTCM names, where it is written, a VTCM field
    (`->data`, `.vtcm_dst`), a function returning VTCM, or a VTCM variable or parameter of its own function."""

    def __init__(self, provenance: VtcmProvenance, names: VtcmNames) -> None:
        fields: set[str] = set()
        calls: set[str] = set()
        self.variables: dict[str, set[str]] = defaultdict(set)
        for found in provenance.holders.values():
            holder = found.holder
            if holder.kind == FIELD:
                fields.add(re.escape(holder.name.rsplit(".", 1)[-1]))
            elif holder.kind == RETURN:
                calls.add(re.escape(holder.function))
            else:
                self.variables[holder.function].add(holder.name)
        fields.update(re.escape(pattern).replace(r"\*", r"\w*") for pattern in names.fields)
        parts = []
        if fields:
            parts.append(r"(?:\.|->)\s*(?:" + "|".join(sorted(fields)) + r")\b")
        if calls:
            parts.append(r"\b(?:" + "|".join(sorted(calls)) + r")\s*\(")
        globals_ = self.variables.get("", set())
        self.shared = re.compile("|".join(parts).encode()) if parts else None
        self._by_function: dict[str, re.Pattern[bytes] | None] = {}
        self._globals = globals_

    def search(self, data: bytes, start: int, end: int, function: str) -> bool:
        if self.shared is not None and self.shared.search(data, start, end):
            return True
        pattern = self._by_function.get(function, _MISSING)
        if pattern is _MISSING:
            words = sorted(self.variables.get(function, set()) | self._globals)
            pattern = re.compile(rb"\b(?:" + "|".join(map(re.escape, words)).encode() + rb")\b") if words else None
            self._by_function[function] = pattern
        return pattern is not None and pattern.search(data, start, end) is not None


def _mentioning_functions(unit: UnitIndex, mentions: _Mentions, macros: frozenset[bytes]) -> frozenset[int]:
    """The top-level declarations (`Node.top_index`) that are functions whose text may mention VTCM (`_may_mention`
    of the whole function, or a macro of the unit's files used in it): an access elsewhere cannot, and its node need
    not be located."""
    found = set()
    for function in unit.functions_all():
        data = unit.source_bytes(function.path)
        start, end = function.start_offset, function.end_offset
        uses_macro = any(word in macros for word in _IDENTIFIER.findall(data, start, end))
        if uses_macro or mentions.search(data, start, end, function.spelling):
            found.add(function.top_index)
    return frozenset(found)


def _may_mention(unit: UnitIndex, node: Node, mentions: _Mentions, macros: frozenset[bytes]) -> bool:
    """Whether an access may go through VTCM, from its text (code a macro produced always may: its extent is the
    macro use, which starts with the macro's name, and its text is in the #define)."""
    data = unit.source_bytes(node.path)
    start = node.start_offset
    first = _IDENTIFIER.match(data, start)
    if first is not None and first.group() in macros:
        return True
    function = unit.enclosing_function(node)
    return mentions.search(data, start, node.end_offset, function.spelling if function is not None else "")


def unit_macro_names(unit: UnitIndex) -> frozenset[bytes]:
    """The macros the unit's own files define (by their text: cheaper than asking the AST about every node)."""
    return memoized(
        unit.memo,
        "vtcm-macro-names",
        lambda: frozenset(name for path in unit.indexed_files for name in _DEFINE.findall(unit.source_bytes(path))),
    )


_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


class _Splats:
    """Which loads only feed a vector splat: `hvx_vec_splat_f32(p[0])`, or `h = p[k]` with `h` used only in splats."""

    def __init__(self, unit: UnitIndex, patterns: tuple[str, ...]) -> None:
        self.unit = unit
        self.patterns = patterns
        self._calls: dict[str, list[tuple[int, int]]] | None = None

    def feeds_only_splats(self, load: Node, parent: Node | None, function: Node | None) -> bool:
        if not self.patterns:
            return False
        if self._inside_splat(load.path, load.start_offset, load.end_offset):
            return True
        if parent is None or parent.kind != "VAR_DECL" or function is None or load.is_macro_expansion:
            return False
        # `__fp16 s = scales[kt];`: every later mention of `s` in the function must sit inside a splat call.
        data = self.unit.source_bytes(function.path)
        name = parent.spelling
        own = parent.end_offset
        mentions = [
            found.start()
            for found in re.finditer(rb"\b%s\b" % re.escape(name.encode()), data[: function.end_offset])
            if found.start() >= own
        ]
        return bool(mentions) and all(self._inside_splat(function.path, start, start + len(name)) for start in mentions)

    def _inside_splat(self, path: str, start: int, end: int) -> bool:
        if self._calls is None:
            self._calls = defaultdict(list)
            for call in self.unit.nodes("CALL_EXPR"):
                if _matches(call.spelling, self.patterns):
                    self._calls[call.path].append((call.start_offset, call.end_offset))
        return any(low <= start and end <= high for low, high in self._calls.get(path, ()))


_ACCESS_TEXT = re.compile(rb"\*?\s*[A-Za-z_]\w*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*|\s*\[[^\]\n]*\])*")
_POINTER_TEXT = re.compile(rb"[A-Za-z_]\w*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*)*")
_AFTER = re.compile(rb"(?:\s|\\\n)*(==|=|\+\+|--|<<=|>>=|[-+*/%&|^]=)?")


def _access_text(unit: UnitIndex, node: Node, shape: re.Pattern[bytes] | None = None) -> str:
    """The access as written; in a macro (body or argument) only the access itself, read where it is spelled."""
    if node.is_macro_expansion:
        place = node.spelling_start
        data = unit.source_bytes(place.path) if place.path else b""
        access = (shape or _ACCESS_TEXT).match(data, place.offset) if data else None
        if access is not None:
            return " ".join(access.group().decode("utf-8", "replace").replace("\\\n", " ").split())
    return expression_text(unit, node)


def _macro_role(unit: UnitIndex, node: Node) -> str:
    """The role of an access written in a #define, from the text around it there (`&p[i]`, `p[i] = x`, `p[i]++`)."""
    place = node.spelling_start
    data = unit.source_bytes(place.path) if place.path else b""
    if not data:
        return LOAD
    before = data[max(0, place.offset - 3) : place.offset].rstrip()
    if before.endswith(b"&") and not before.endswith(b"&&"):
        return "address"
    if before.endswith((b"++", b"--")):
        return UPDATE
    access = _ACCESS_TEXT.match(data, place.offset)
    if access is None:
        return LOAD
    operator = _AFTER.match(data, access.end()).group(1)
    if operator == b"=":
        return STORE
    if operator is not None and operator != b"==":
        return UPDATE
    return LOAD


def _context(unit: UnitIndex, node: Node) -> tuple[Node | None, Node]:
    """The nearest ancestor that is not a parenthesis or an implicit conversion, and its child on the way down."""
    child = node
    for ancestor in unit.ancestors(node):
        if ancestor.kind not in ("PAREN_EXPR", "UNEXPOSED_EXPR"):
            return ancestor, child
        child = ancestor
    return None, child


def _role(parent: Node | None, child: Node) -> str:
    """LOAD, STORE, UPDATE, or "address" for the operand of `&`."""
    if parent is None:
        return LOAD
    kind = parent.kind
    if kind in ("BINARY_OPERATOR", "COMPOUND_ASSIGNMENT_OPERATOR"):
        children = parent.children()
        if not children or children[0] != child:
            return LOAD
        if kind == "COMPOUND_ASSIGNMENT_OPERATOR":
            return UPDATE
        return STORE if parent.binary_operator == "=" else LOAD
    if kind == "UNARY_OPERATOR":
        operator = parent.unary_operator
        if operator == "&":
            return "address"
        if operator in ("++", "--"):
            return UPDATE
    return LOAD


def _unevaluated_ranges(unit: UnitIndex) -> dict[str, list[tuple[int, int]]]:
    """`sizeof`/`_Alignof` operands: nothing in them is read."""
    ranges: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for node in unit.nodes("CXX_UNARY_EXPR"):
        ranges[node.path].append((node.start_offset, node.end_offset))
    return ranges


def _inside(node: Node, ranges: Mapping[str, list[tuple[int, int]]]) -> bool:
    spans = ranges.get(node.path)
    if not spans:
        return False
    start, end = node.start_offset, node.end_offset
    return any(low <= start and end <= high and (low, high) != (start, end) for low, high in spans)


def _is_member_access(member: Node) -> bool:
    """`p->f` or `x.f` where `x` is itself an lvalue in memory (not a value struct returned by a call)."""
    children = member.children()
    if not children:
        return False
    base = children[0]
    if base.type_kind == "POINTER":
        return True
    inner = _unwrap_parens(base)
    return inner.kind in ("ARRAY_SUBSCRIPT_EXPR", "MEMBER_REF_EXPR", "UNARY_OPERATOR")


def _pointer_of(node: Node) -> Node:
    """The pointer expression an lvalue goes through: `p` of `p[i]`, `*p`, `p->f`, `p[i].f`."""
    current = _unwrap_parens(node)
    for _ in range(_DEEPEST):
        children = current.children()
        if not children:
            return current
        if current.kind == "UNARY_OPERATOR":
            return _unwrap(children[0])
        base = children[0]
        if current.kind == "MEMBER_REF_EXPR" and base.type_kind == "POINTER":
            return _unwrap(base)
        if current.kind == "ARRAY_SUBSCRIPT_EXPR" and _unwrap(base).type_kind not in _ARRAY_KINDS:
            return _unwrap(base)
        current = _unwrap_parens(base)
    return current


# ---------------------------------------------------------------------------------------------------------------------
# Small helpers.


def expression_text(unit: UnitIndex, node: Node) -> str:
    """The expression as written (one line, whitespace collapsed, shortened); a macro use gives its spelling place."""
    if node.is_macro_expansion:
        place = node.spelling_start
        data = unit.source_bytes(place.path) if place.path else b""
        end = _spelled_end(data, place.offset)
        text = data[place.offset : end].decode("utf-8", "replace").rstrip("\\ ") if end > place.offset else node.text
    else:
        data = unit.source_bytes(node.path)
        start, end = node.start_offset, node.end_offset
        text = data[start:end].decode("utf-8", "replace") if 0 <= start < end <= len(data) else node.text
    text = " ".join(text.replace("\\\n", " ").split())
    return text if len(text) <= _LONGEST_TEXT else text[: _LONGEST_TEXT - 3] + "..."


def _spelled_end(data: bytes, start: int) -> int:
    """Where an expression written in a #define ends, at the latest: its statement's `;` or the line's end."""
    ends = [position for position in (data.find(b";", start), data.find(b"\n", start)) if position >= 0]
    return min(ends) if ends else len(data)


def _initializer(declaration: Node) -> Node | None:
    expressions = [
        child
        for child in declaration.children()
        if not child.kind.endswith(("_REF", "_ATTR")) and child.kind not in ("ASM_LABEL_ATTR", "VISIBILITY_ATTR")
    ]
    return expressions[-1] if expressions else None


def _unwrap(node: Node) -> Node:
    for _ in range(_DEEPEST):
        if node.kind not in _WRAPPERS:
            return node
        children = node.children()
        if not children:
            return node
        node = children[-1]
    return node


def _unwrap_parens(node: Node) -> Node:
    """Without parentheses and implicit conversions, keeping explicit casts (an lvalue is never cast)."""
    for _ in range(_DEEPEST):
        if node.kind not in ("PAREN_EXPR", "UNEXPOSED_EXPR"):
            return node
        children = node.children()
        if len(children) != 1:
            return node
        node = children[0]
    return node


def _span(node: Node) -> Span:
    if node.is_macro_expansion:
        place = node.spelling_start
        if place.path:
            return Span(place.path, place.line, place.column)
    return Span(node.path, node.line, node.column, node.end_line, node.end_column)


# Keyed by the absolute path, so an answer never depends on the working directory of the call that cached it.
_realpath_of_absolute = functools.lru_cache(maxsize=4096)(os.path.realpath)


def _real(path: str) -> str:
    """One spelling per file, so a header's declarations get the same key in every unit that includes it."""
    return _realpath_of_absolute(os.path.abspath(path)) if path else ""


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return bool(name) and matches_any(name, patterns if isinstance(patterns, tuple) else tuple(patterns))


def _strings(options: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = options.get(key, ())
    if isinstance(value, str):
        return (value,)
    return tuple(str(item) for item in value or ())
