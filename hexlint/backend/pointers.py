"""Pointer provenance: where a pointer comes from, and so whether it can ever be NULL.

A pointer is INTERNAL when it is one of the framework's own (`ctx`, `octx`, `kparams`, a worker's `data`, a local
context struct cast from them, a field of an internal struct that is itself internal), REQUIRED_OPERAND when it is a
required slot of the operand array (`octx->src[0]`, `octx->dst`), REQUIRED_OPERAND_DATA when it is such an operand's
`->data`, or a pointer computed from such data: `(float *) dst->data + offset`, a local initialised from it, a field
every write of which stores it (`.dst = (float *) dst->data` in a params struct handed to a helper), a helper's result
when every `return` gives it (`batch_ptr(params, b2, b3)`), a parameter every caller fills with it. Anything else
(optional slots, allocation results, lookups, `cond ? p : NULL`) has no provenance here.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.backend.loops import assignment_count
from hexlint.backend.names import by_spelling, matches_any, named_not_called, string_list
from hexlint.c.index import Project, UnitIndex, memoized
from hexlint.c.node import Node

_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")


class Provenance:
    """The provenance kinds of a pointer that is never NULL by construction (plain strings: they go into messages)."""

    INTERNAL = "internal"
    REQUIRED_OPERAND = "operand"
    REQUIRED_OPERAND_DATA = "operand data"


@dataclass(frozen=True)
class NullCheckSettings:
    internal_pointer_names: tuple[str, ...]
    internal_pointer_types: tuple[str, ...]
    worker_data_names: tuple[str, ...]
    internal_members: tuple[str, ...]
    operand_array: str
    required_operand_slots: tuple[tuple[str, tuple[int, ...]], ...]
    tensor_data_fields: tuple[str, ...]
    assert_macros: tuple[str, ...]
    never_flag: tuple[str, ...]
    host_functions: tuple[str, ...]
    host_internal_pointer_names: tuple[str, ...]
    exempt_functions: tuple[str, ...]

    @staticmethod
    def from_options(options: Mapping[str, Any]) -> NullCheckSettings:
        slots = options.get("required_operand_slots", {"*": [0]})
        return NullCheckSettings(
            internal_pointer_names=string_list(options, "internal_pointer_names"),
            internal_pointer_types=string_list(options, "internal_pointer_types"),
            worker_data_names=string_list(options, "worker_data_names"),
            internal_members=string_list(options, "internal_members"),
            operand_array=str(options.get("operand_array", "src")),
            required_operand_slots=tuple(
                (str(glob), tuple(int(slot) for slot in wanted)) for glob, wanted in slots.items()
            ),
            tensor_data_fields=string_list(options, "tensor_data_fields"),
            assert_macros=string_list(options, "assert_macros"),
            never_flag=string_list(options, "never_flag"),
            host_functions=string_list(options, "host_functions"),
            host_internal_pointer_names=string_list(options, "host_internal_pointer_names"),
            exempt_functions=string_list(options, "exempt_functions"),
        )

    def required_slots(self, path: str) -> tuple[int, ...]:
        """The operand slots required in this file: the most specific matching glob wins, "*" is the default."""
        name = os.path.basename(path)
        best: tuple[int, ...] = ()
        best_length = -1
        for glob, slots in self.required_operand_slots:
            if fnmatch.fnmatchcase(name, glob) and len(glob) > best_length:
                best, best_length = slots, len(glob)
        return best


@dataclass(frozen=True)
class CheckedPointer:
    """A pointer expression a condition tests for NULL, and why it can never be NULL."""

    node: Node
    text: str
    reason: str


def _unit_null_checks(
    unit: UnitIndex,
    settings: NullCheckSettings,
    resolvers: dict[tuple[int, Node], ProvenanceResolver],
    peers: tuple[UnitIndex, ...],
) -> Iterator[NullCheck]:
    names = settings.internal_pointer_names if unit.role == "kernel" else settings.host_internal_pointer_names
    for statement in [*unit.nodes("IF_STMT"), *unit.nodes("CONDITIONAL_OPERATOR")]:
        children = statement.children()
        condition = _condition_of(statement, children) if children else None
        tested = list(_null_tested(condition)) if condition is not None else []
        if not tested:
            continue  # most conditions test no pointer at all: skip them before finding their function
        function = unit.enclosing_function(statement)
        if function is None or not _in_scope(unit, function, settings):
            continue
        # One resolver per function (it remembers what each variable is), shared by the whole project.
        resolver = resolvers.get((id(unit), function))
        if resolver is None:
            resolver = ProvenanceResolver(unit, function, settings, names, resolvers, peers)
        checked = [found for found in map(resolver.classify, tested) if found is not None]
        if checked:
            yield NullCheck(unit, statement, tuple(checked), _assert_macro_name(unit, statement, settings))


def _in_scope(unit: UnitIndex, function: Node, settings: NullCheckSettings) -> bool:
    name = function.spelling
    if matches_any(name, settings.exempt_functions):
        return False
    return unit.role == "kernel" or matches_any(name, settings.host_functions)


def _condition_of(statement: Node, children: list[Node]) -> Node | None:
    if statement.kind == "CONDITIONAL_OPERATOR":
        return children[0]
    # C++ `if (init; cond)` and condition variables put declarations first: the condition is the last expression
    # before the then-branch, which is the first compound or statement child after it.
    expressions = [child for child in children if child.kind not in ("DECL_STMT", "VAR_DECL", "NULL_STMT")]
    return expressions[0] if expressions else None


def _assert_macro_name(unit: UnitIndex, statement: Node, settings: NullCheckSettings) -> str:
    """The assertion macro this check was expanded from (`assert`, `GGML_ASSERT` ...), else ""."""
    if not statement.is_macro_expansion:
        return ""
    data = unit.source_bytes(statement.path)
    match = _IDENTIFIER.match(data, statement.start_offset)
    name = match.group().decode() if match else ""
    return name if name in settings.assert_macros else ""


def _null_tested(condition: Node) -> Iterator[Node]:
    """The pointer expressions a condition compares with NULL or tests for truth, through `!`, `&&` and `||`."""
    node = condition.unwrapped()
    if node.kind == "UNARY_OPERATOR" and node.unary_operator == "!":
        operand = node.children()
        if operand:
            yield from _null_tested(operand[0])
        return
    if node.kind == "BINARY_OPERATOR":
        operator = node.binary_operator
        operands = node.children()
        if len(operands) != 2:
            return
        if operator in ("&&", "||"):
            yield from _null_tested(operands[0])
            yield from _null_tested(operands[1])
        elif operator in ("==", "!="):
            left, right = operands
            if is_null_constant(right):
                yield left.unwrapped()
            elif is_null_constant(left):
                yield right.unwrapped()
        return
    if node.type_kind == "POINTER":
        yield node


def is_null_constant(node: Node) -> bool:
    """`NULL`, `0`, `nullptr`, `__null`, through casts and parentheses."""
    inner = node.unwrapped()
    if inner.kind in ("CXX_NULL_PTR_LITERAL_EXPR", "GNU_NULL_EXPR"):
        return True
    return inner.kind == "INTEGER_LITERAL" and inner.constant_value == 0


class ProvenanceResolver:
    """Decides whether a tested expression is an internal pointer, a required operand or a required operand's data."""

    def __init__(
        self,
        unit: UnitIndex,
        function: Node,
        settings: NullCheckSettings,
        names: tuple[str, ...],
        resolvers: dict[tuple[int, Node], ProvenanceResolver] | None = None,
        peers: tuple[UnitIndex, ...] = (),
    ) -> None:
        self.unit = unit
        self.function = function
        self.settings = settings
        self.names = names
        self.function_text = unit.source_bytes(function.path)[function.start_offset : function.end_offset]
        self.variables: dict[Node, str | None] = {}
        self.callback: bool | None = None
        # The resolvers by (unit, function), shared so a parameter's callers are each resolved once.
        self.resolvers = {} if resolvers is None else resolvers
        self.resolvers.setdefault((id(unit), function), self)
        # The units where an extern function's callers may be: the project's units of the same role.
        self.peers = peers or (unit,)

    def classify(self, tested: Node) -> CheckedPointer | None:
        node = tested.unwrapped()
        if node.type_kind != "POINTER":
            return None
        kind = self._kind_of(node, depth=0)
        if kind is None:
            return None
        return CheckedPointer(node, _spelled(self.unit, node), kind)

    def _kind_of(self, node: Node, depth: int) -> str | None:
        """ "internal", "operand" or "operand data" for a pointer that can never be NULL here, else None."""
        if depth > 8:  # deep enough for `factx->octx->ctx` with factx = args->factx, args = data
            return None
        node = node.unwrapped()
        if node.kind == "DECL_REF_EXPR":
            return self._variable_kind(node, depth)
        if node.kind == "MEMBER_REF_EXPR":
            return self._member_kind(node, depth)
        if node.kind == "ARRAY_SUBSCRIPT_EXPR":
            return self._operand_kind(node, depth)
        if node.kind == "BINARY_OPERATOR" and node.binary_operator in ("+", "-"):
            return self._offset_kind(node, depth)
        if node.kind == "UNARY_OPERATOR" and node.unary_operator == "&":
            return self._element_address_kind(node, depth)
        if node.kind == "CALL_EXPR":
            return self._returned_kind(node, depth)
        return None

    def _offset_kind(self, arithmetic: Node, depth: int) -> str | None:
        """`(float *) dst->data + offset`: an offset into a required operand's data is in that data (C allows no
        arithmetic that leaves an object, so the result is never NULL)."""
        pointers = [operand for operand in arithmetic.children() if operand.unwrapped().type_kind == "POINTER"]
        if len(pointers) != 1:
            return None
        kind = self._kind_of(pointers[0], depth + 1)
        return kind if kind == Provenance.REQUIRED_OPERAND_DATA else None

    def _element_address_kind(self, address: Node, depth: int) -> str | None:
        """`&data[i]` of a required operand's data."""
        operand = address.children()
        target = operand[0].unwrapped() if operand else None
        if target is None or target.kind != "ARRAY_SUBSCRIPT_EXPR":
            return None
        base = target.children()
        kind = self._kind_of(base[0], depth + 1) if base else None
        return kind if kind == Provenance.REQUIRED_OPERAND_DATA else None

    def _returned_kind(self, call: Node, depth: int) -> str | None:
        """A helper's result is required operand data when every `return` of its definition gives such data
        (`hmx_matmul_dst_batch_ptr(params, b2, b3)` returning `(float *) ((uint8_t *) params->dst + offset)`)."""
        found = _definition(call.callee_name, self.unit, self.peers)
        if found is None:
            return None
        unit, function = found
        if unit is self.unit and function == self.function:
            return None  # recursion
        values = [
            statement.children()[0]
            for statement in unit.nodes("RETURN_STMT")
            if statement.children() and unit.enclosing_function(statement) == function
        ]
        if not values:
            return None
        resolver = self._resolver_for(unit, function)
        kinds = {resolver._kind_of(value, depth + 1) for value in values}
        return Provenance.REQUIRED_OPERAND_DATA if kinds == {Provenance.REQUIRED_OPERAND_DATA} else None

    def _resolver_for(self, unit: UnitIndex, function: Node) -> ProvenanceResolver:
        resolver = self.resolvers.get((id(unit), function))
        if resolver is None:
            resolver = ProvenanceResolver(unit, function, self.settings, self.names, self.resolvers, self.peers)
        return resolver

    def _written_kind(self, member: Node, depth: int) -> str | None:
        """A data pointer field of an internal struct (a helper's params) is required operand data when every write
        of it in the project, by designated or positional initialiser or by assignment, stores such data."""
        field = member.referenced
        if field is None or field.kind != "FIELD_DECL":
            return None
        key = _field_key(field)
        writes = [(unit, value) for unit in self.peers for value in field_writes(unit).get(key, [])]
        if not writes:
            return None
        kinds = set()
        for unit, value in writes:
            function = unit.enclosing_function(value)
            if function is None:
                return None
            kinds.add(self._resolver_for(unit, function)._kind_of(value, depth + 1))
            if kinds != {Provenance.REQUIRED_OPERAND_DATA}:
                return None
        return Provenance.REQUIRED_OPERAND_DATA

    def _variable_kind(self, reference: Node, depth: int) -> str | None:
        name = reference.spelling
        if matches_any(name, self.settings.never_flag):
            return None
        declaration = reference.referenced
        if declaration is None:
            return None
        if declaration not in self.variables:
            self.variables[declaration] = self._declaration_kind(name, declaration, depth)
        return self.variables[declaration]

    def _declaration_kind(self, name: str, declaration: Node, depth: int) -> str | None:
        if declaration.kind not in ("PARM_DECL", "VAR_DECL") or declaration.type_kind != "POINTER":
            return None
        internal = matches_any(name, self.names) or self._has_internal_type(declaration)
        if not internal and declaration.kind == "PARM_DECL" and name in self.settings.worker_data_names:
            internal = self._is_callback()  # `data` is internal only as the argument of a worker callback
        if declaration.kind == "PARM_DECL":
            if self._reassigned(name, 0):
                return None
            return Provenance.INTERNAL if internal else self._passed_by_every_caller(declaration, depth)
        # A local: only when it is initialised once from something that is never NULL, and never reassigned.
        if self._reassigned(name, 1):
            return None
        initializer = _initializer(declaration)
        if initializer is None:
            return None
        source = self._kind_of(initializer, depth + 1)
        if source is None and internal and self._derived_from_internal(initializer, depth):
            source = Provenance.INTERNAL
        if source is not None and _contains_call_or_choice(initializer) and initializer.unwrapped().kind != "CALL_EXPR":
            return None  # allocation results, lookups and `cond ? p : NULL` guards may well be NULL
        # (a call whose every return is required operand data was resolved as such above)
        return source

    def _derived_from_internal(self, initializer: Node, depth: int) -> bool:
        """`(struct x_context *) data` or `(const struct y_kernel_params *) octx->kernel_params`."""
        base = initializer.unwrapped()
        if base.kind == "UNARY_OPERATOR" and base.unary_operator == "&":
            operand = base.children()
            return bool(operand) and self._kind_of_base(operand[0], depth) is not None
        return self._kind_of(base, depth + 1) is not None or self._kind_of_base(base, depth) is not None

    def _kind_of_base(self, node: Node, depth: int) -> str | None:
        node = node.unwrapped()
        if node.kind == "MEMBER_REF_EXPR":
            children = node.children()
            if children and self._kind_of(children[0], depth + 1) == Provenance.INTERNAL:
                return Provenance.INTERNAL
        if node.kind == "DECL_REF_EXPR":
            # A local context struct cast from a parameter (`(struct x_context *) data`) is what the framework
            # handed in: the local's own internal name or type says so, whatever the parameter is called.
            declaration = node.referenced
            if declaration is not None and declaration.kind == "PARM_DECL":
                return Provenance.INTERNAL
        return None

    def _passed_by_every_caller(self, parameter: Node, depth: int) -> str | None:
        """A helper's parameter that every call fills with a pointer of one provenance (`helper(ctx, dst->data,
        src0->data)`) has that provenance. A `static` helper's calls are all in its unit; an extern one's are
        looked for in every unit of the project (a lint run parses the whole tree as context for this rule). A
        function handed around as a value may be called with anything."""
        function = self.function
        units = (self.unit,) if function.is_static else self.peers
        if self._is_callback() or any(_named_as_value(unit, function.spelling) for unit in units):
            return None
        positions = [child for child in function.children() if child.kind == "PARM_DECL"]
        index = next((i for i, child in enumerate(positions) if child == parameter), None)
        calls = [(unit, call) for unit in units for call in by_spelling(unit, "CALL_EXPR").get(function.spelling, [])]
        if index is None or not calls:
            return None
        found: set[str] = set()
        for unit, call in calls:
            arguments = call.arguments()
            caller = unit.enclosing_function(call)
            if len(arguments) <= index or caller is None or caller.spelling == function.spelling:
                return None
            resolver = self.resolvers.get((id(unit), caller))
            if resolver is None:
                resolver = ProvenanceResolver(unit, caller, self.settings, self.names, self.resolvers, self.peers)
            kind = _address_of_local_struct(arguments[index]) or resolver._kind_of(arguments[index], depth + 1)
            if kind is None:
                return None
            found.add(kind)
        if found == {Provenance.REQUIRED_OPERAND, Provenance.REQUIRED_OPERAND_DATA}:
            # Callers that pass `dst->data` and `params->dst`: what the parameter is, its type says.
            return Provenance.REQUIRED_OPERAND if _points_to_record(parameter) else Provenance.REQUIRED_OPERAND_DATA
        return found.pop() if len(found) == 1 else None

    def _is_callback(self) -> bool:
        """Whether this function is handed to something as a value (a worker callback), not only called."""
        if self.callback is None:
            data = self.unit.source_bytes(self.function.path)
            self.callback = named_not_called(data, self.function.spelling)
        return self.callback

    def _member_kind(self, member: Node, depth: int) -> str | None:
        children = member.children()
        if not children:
            return None
        base_kind = self._kind_of(children[0], depth + 1)
        field = member.spelling
        if base_kind == Provenance.INTERNAL and not _points_to_record(member):
            # A plain data pointer in an internal struct (`params->dst` a `float *`): what its writes store.
            written = self._written_kind(member, depth)
            if written is not None:
                return written
            if field == "dst":
                return None  # not the op's output tensor: a data pointer nothing here is known to fill
        if base_kind == Provenance.INTERNAL and field == "dst" and field in self.settings.internal_members:
            return Provenance.REQUIRED_OPERAND
        if base_kind == Provenance.INTERNAL and (
            field in self.settings.internal_members
            or (
                member.type_kind == "POINTER"
                and (
                    matches_any(field, self.names)
                    or self._has_internal_type(member)
                    or self._points_to_context_struct(member)
                )
            )
        ):
            return Provenance.INTERNAL
        if base_kind == Provenance.REQUIRED_OPERAND and field in self.settings.tensor_data_fields:
            return Provenance.REQUIRED_OPERAND_DATA
        return None

    def _operand_kind(self, subscript: Node, depth: int) -> str | None:
        children = subscript.children()
        if len(children) != 2:
            return None
        array, index = children[0].unwrapped(), children[1]
        if array.kind != "MEMBER_REF_EXPR" or array.spelling != self.settings.operand_array:
            return None
        slot = index.constant_value
        if slot is None or slot not in self.settings.required_slots(self.function.path):
            return None  # an optional slot: checking it is right
        base = array.children()
        if not base or self._kind_of(base[0], depth + 1) != Provenance.INTERNAL:
            return None
        return Provenance.REQUIRED_OPERAND

    def _has_internal_type(self, declaration: Node) -> bool:
        struct = declaration.type_declaration
        return struct is not None and matches_any(struct.spelling, self.settings.internal_pointer_types)

    def _points_to_context_struct(self, member: Node) -> bool:
        """A member of an internal struct pointing at a struct that itself carries the op or session context
        (`args->factx`, a `struct hmx_fa_context *` holding `octx`): whatever its type is called, it is a context
        the framework built, as internal as the struct it was reached from."""
        struct = member.type_declaration
        if struct is None or struct.kind not in ("STRUCT_DECL", "UNION_DECL"):
            return False
        return any(
            field.kind == "FIELD_DECL"
            and field.type_kind == "POINTER"
            and (matches_any(field.spelling, self.names) or self._has_internal_type(field))
            for field in struct.children()
        )

    def _reassigned(self, name: str, initialisations: int) -> bool:
        """Whether the function assigns `name` more often than its declaration does (a textual count)."""
        return assignment_count(self.function_text, name) > initialisations


def _address_of_local_struct(argument: Node) -> str | None:
    """`&factx`, a local struct the caller built (an op's context for its helpers and workers), is never NULL."""
    node = argument.unwrapped()
    if node.kind != "UNARY_OPERATOR" or node.unary_operator != "&":
        return None
    operand = node.children()
    target = operand[0].unwrapped() if operand else None
    if target is None or target.kind != "DECL_REF_EXPR":
        return None
    declaration = target.referenced
    if declaration is None or declaration.kind != "VAR_DECL" or declaration.type_kind != "RECORD":
        return None
    return Provenance.INTERNAL


def _named_as_value(unit: UnitIndex, function: str) -> bool:
    """Whether a unit's main file names `function` other than in a call (a callback handed to a pool or queue)."""
    data = unit.source_bytes(unit.path)
    return function.encode() in data and named_not_called(data, function)


def _points_to_record(node: Node) -> bool:
    """Whether a pointer's pointee is a struct or union (an operand tensor), not data (`float *`, `void *`)."""
    declaration = node.type_declaration
    return declaration is not None and declaration.kind in ("STRUCT_DECL", "UNION_DECL")


def _definition(name: str, unit: UnitIndex, peers: tuple[UnitIndex, ...]) -> tuple[UnitIndex, Node] | None:
    """The one definition of function `name` in `unit` (a static helper) or else in a peer unit."""
    if not name:
        return None
    for candidate in (unit, *[peer for peer in peers if peer is not unit]):
        definitions = [function for function in candidate.functions_all() if function.spelling == name]
        if len(definitions) == 1:
            return candidate, definitions[0]
        if definitions:
            return None
    return None


def _field_key(field: Node) -> tuple[str, int]:
    """A field declaration identified across translation units by where it is written."""
    return (field.path, field.start_offset)


def field_writes(unit: UnitIndex) -> dict[tuple[str, int], list[Node]]:
    """The values stored into each struct field in a unit: designated (`.dst = p`) and positional initialisers,
    and assignments (`params.dst = p`, `args->dst = p`). Only nodes: a unit kept in its own memo is a reference
    cycle that keeps its translation unit alive after the run."""

    def compute() -> dict[tuple[str, int], list[Node]]:
        writes: dict[tuple[str, int], list[Node]] = {}

        def add(field: Node | None, value: Node) -> None:
            if field is not None and field.kind == "FIELD_DECL":
                writes.setdefault(_field_key(field), []).append(value)

        for initializer in unit.nodes("INIT_LIST_EXPR"):
            elements = initializer.children()
            designated = False
            for element in elements:
                parts = element.children()
                if element.kind == "UNEXPOSED_EXPR" and len(parts) == 2 and parts[0].kind == "MEMBER_REF":
                    designated = True
                    add(parts[0].referenced, parts[1])
            struct = initializer.type_declaration
            if not designated and struct is not None and struct.kind == "STRUCT_DECL":
                fields = [child for child in struct.children() if child.kind == "FIELD_DECL"]
                for field, element in zip(fields, elements, strict=False):  # trailing fields may be left out
                    add(field, element)
        for assignment in unit.nodes("BINARY_OPERATOR"):
            operands = assignment.children()
            if len(operands) == 2 and assignment.binary_operator == "=":
                target = operands[0].unwrapped()
                if target.kind == "MEMBER_REF_EXPR":
                    add(target.referenced, operands[1])
        return writes

    return memoized(unit.memo, "pointers.field_writes", compute)


def _initializer(declaration: Node) -> Node | None:
    children = [
        child for child in declaration.children() if child.kind not in ("TYPE_REF", "TYPE_REF", "NAMESPACE_REF")
    ]
    expressions = [child for child in children if child.kind.endswith(("_EXPR", "_LITERAL", "_OPERATOR"))]
    return expressions[-1] if expressions else None


def _contains_call_or_choice(node: Node) -> bool:
    """Calls (allocations, lookups) and `cond ? p : NULL` choices may yield NULL; so may a plain NULL initialiser."""
    if is_null_constant(node):
        return True
    return any(inner.kind in ("CALL_EXPR", "CONDITIONAL_OPERATOR") for inner in node.walk())


def _spelled(unit: UnitIndex, node: Node) -> str:
    if node.is_macro_expansion:
        place = node.spelling_start
        data = unit.source_bytes(place.path)
        match = re.compile(rb"[A-Za-z_]\w*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*|\s*\[[^\]]*\])*").match(data, place.offset)
        return match.group().decode("utf-8", "replace") if match else node.spelling
    data = unit.source_bytes(node.path)
    return " ".join(data[node.start_offset : node.end_offset].decode("utf-8", "replace").split())


@dataclass(frozen=True)
class NullCheck:
    """A condition (an `if`, a `?:`, an assertion macro's expansion) that tests pointers never NULL by construction."""

    unit: UnitIndex
    statement: Node
    pointers: tuple[CheckedPointer, ...]
    assert_macro: str  # the assertion macro the check was expanded from (`assert`, `GGML_ASSERT`), else ""


def null_checks(project: Project, settings: NullCheckSettings) -> list[NullCheck]:
    """Every NULL test of a pointer with a provenance, in the project's units, computed once per settings."""

    def compute() -> list[NullCheck]:
        resolvers: dict[tuple[int, Node], ProvenanceResolver] = {}
        peers = {"kernel": tuple(project.kernel_units()), "host": tuple(project.host_units())}
        return [
            check
            for unit in project.units
            for check in _unit_null_checks(unit, settings, resolvers, peers.get(unit.role, (unit,)))
        ]

    return memoized(project.memo, ("pointers.null_checks", settings), compute)
