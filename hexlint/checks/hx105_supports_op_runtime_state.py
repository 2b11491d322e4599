"""HX105 supports-op-runtime-state: supports_op and what it calls must not look at buffers, data or repack state."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.backend.host import CallHop, OwnershipSettings
from hexlint.backend.model import BackendModel
from hexlint.backend.names import matches_any, string_list
from hexlint.c.index import UnitIndex
from hexlint.c.node import Node
from hexlint.checks._c_helpers import node_span
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

CODE = "HX105"
_COMMENT = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)


@dataclass(frozen=True)
class RuntimeStateSettings:
    entry_functions: tuple[str, ...]
    checker_functions: tuple[str, ...]
    forbidden_members: tuple[str, ...]
    tensor_only_members: tuple[str, ...]
    tensor_types: tuple[str, ...]
    forbidden_identifiers: tuple[str, ...]
    forbidden_calls: tuple[str, ...]
    not_followed: tuple[str, ...]
    allowed_functions: tuple[str, ...]
    ownership_calls: tuple[str, ...]

    @staticmethod
    def from_options(options: Mapping[str, Any]) -> RuntimeStateSettings:
        return RuntimeStateSettings(
            entry_functions=string_list(options, "entry_functions"),
            checker_functions=string_list(options, "checker_functions"),
            forbidden_members=string_list(options, "forbidden_members"),
            tensor_only_members=string_list(options, "tensor_only_members"),
            tensor_types=string_list(options, "tensor_types"),
            forbidden_identifiers=string_list(options, "forbidden_identifiers"),
            forbidden_calls=string_list(options, "forbidden_calls"),
            not_followed=string_list(options, "not_followed"),
            allowed_functions=string_list(options, "allowed_functions"),
            ownership_calls=string_list(options, "ownership_calls"),
        )

    def ownership(self) -> OwnershipSettings:
        return OwnershipSettings(
            buffer_member="buffer",
            ownership_calls=self.ownership_calls,
            runtime_members=(*self.forbidden_members, *self.tensor_only_members),
            runtime_calls=self.forbidden_calls,
        )


@dataclass(frozen=True)
class Access:
    """A forbidden read inside `function`."""

    function: str
    span: Span
    what: str


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    settings = RuntimeStateSettings.from_options(options)
    for unit in model.host_units():
        yield from _unit_findings(model, unit, settings)


def _unit_findings(model: BackendModel, unit: UnitIndex, settings: RuntimeStateSettings) -> Iterator[Diagnostic]:
    functions = {function.spelling for function in unit.functions_all()}
    entries = [name for name in sorted(functions) if matches_any(name, settings.entry_functions)]
    checkers = [name for name in sorted(functions) if matches_any(name, settings.checker_functions)]
    if not entries and not checkers:
        return
    # Chains start at supports_op; a checker nothing reaches from there starts its own.
    not_followed = (*settings.not_followed, *settings.forbidden_calls)  # a forbidden call is reported where it is made
    chains = model.call_chains(unit, tuple(entries), tuple(checkers), not_followed)
    for allowed in [name for name in chains if matches_any(name, settings.allowed_functions)]:
        del chains[allowed]
    by_line: dict[tuple[str, int], list[Access]] = {}
    # A session-ownership test that lets an unallocated tensor through is accepted in every shape it is written in.
    accepted = model.ownership_tests(unit, settings.ownership()) if settings.ownership_calls else frozenset()
    for access in _forbidden_accesses(model, unit, settings, set(chains), accepted):
        by_line.setdefault((access.span.path, access.span.line or 0), []).append(access)
    for accesses in by_line.values():
        # One finding per line, as a reviewer comments on `if (t->buffer && is_repack(t->buffer))` once.
        unique = list(dict.fromkeys(access.what for access in accesses))
        first = min(accesses, key=lambda access: access.span.column or 0)
        yield _finding(unit, first, ", ".join(unique), chains[first.function])


def _forbidden_accesses(
    model: BackendModel,
    unit: UnitIndex,
    settings: RuntimeStateSettings,
    reached: set[str],
    accepted: frozenset[tuple[str, int, int]],
) -> Iterator[Access]:
    for member in unit.nodes("MEMBER_REF_EXPR"):
        field = member.member_name  # in a template, `t->buffer` on a dependent `t` has no spelling of its own
        if field not in settings.forbidden_members and field not in settings.tensor_only_members:
            continue
        function = model.enclosing_callable(unit, member)
        if function is None or function not in reached or _key(member) in accepted:
            continue
        if field in settings.tensor_only_members and not _on_tensor(member, settings):
            continue
        yield Access(function, _member_span(member), f"`{_member_text(unit, member)}`")
    for call in unit.nodes("CALL_EXPR"):
        name = call.callee_name
        if not matches_any(name, settings.forbidden_calls) or _key(call) in accepted:
            continue
        function = model.enclosing_callable(unit, call)
        if function is not None and function in reached:
            yield Access(function, node_span(call), f"`{name}()`")
    yield from _forbidden_identifiers(model, unit, settings, reached)


def _key(node: Node) -> tuple[str, int, int]:
    return (node.path, node.start_offset, node.end_offset)


def _on_tensor(member: Node, settings: RuntimeStateSettings) -> bool:
    """`t->data` of a tensor (or of a template parameter, whose type is unknown until instantiation)."""
    children = member.children()
    if not children:
        return False
    base = children[0].unwrapped()
    struct = base.type_declaration
    if struct is None:
        return base.type_kind in ("UNEXPOSED", "DEPENDENT", "INVALID")
    return matches_any(struct.spelling, settings.tensor_types)


def _member_span(member: Node) -> Span:
    # A member access's location is its member name; the column of `->buffer` reads best at the field.
    return Span(member.path, member.line, member.column, member.end_line, member.end_column)


def _member_text(unit: UnitIndex, member: Node) -> str:
    data = unit.source_bytes(member.path)
    text = data[member.start_offset : member.end_offset].decode("utf-8", "replace")
    text = " ".join(text.split())
    return text if 0 < len(text) <= 60 else f"->{member.spelling}"


def _forbidden_identifiers(
    model: BackendModel, unit: UnitIndex, settings: RuntimeStateSettings, reached: set[str]
) -> Iterator[Access]:
    """Identifiers such as `is_tiled` or the `GGML_HEXAGON_TENSOR_TILED` flag, found in the reached functions' text
    (macros leave no name in the AST), comments blanked out."""
    if not settings.forbidden_identifiers:
        return
    pattern = re.compile(
        rb"\b(?:%s)\b" % b"|".join(re.escape(name.encode()) for name in settings.forbidden_identifiers)
    )
    callables = [(function.spelling, function) for function in unit.functions_all()]
    for name, function in [*callables, *model.lambda_variables(unit).items()]:
        if name not in reached:
            continue
        data = unit.source_bytes(function.path)
        start, end = function.start_offset, function.end_offset
        body = _COMMENT.sub(lambda match: b" " * len(match.group()), data[start:end])
        for match in pattern.finditer(body):
            offset = start + match.start()
            line = data.count(b"\n", 0, offset) + 1
            column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
            span = Span(function.path, line, column, line, column + len(match.group()))
            yield Access(name, span, f"`{match.group().decode()}`")


def _finding(unit: UnitIndex, access: Access, what: str, chain: tuple[CallHop, ...]) -> Diagnostic:
    root = chain[0].caller if chain else access.function
    if chain:
        path = " -> ".join([root, *(hop.callee for hop in chain)])
        where = f"`{root}` reaches {what} through {path}"
    else:
        where = f"`{root}` reads {what}"
    message = (
        f"{where}: support is decided during scheduling, before buffers are allocated or weights repacked; "
        "decide from types, shapes, strides and op params only."
    )
    related = tuple(Related(hop.site, f"`{hop.caller}` calls `{hop.callee}` here") for hop in chain)
    return diagnostic(
        CODE,
        message,
        access.span,
        related=related,
        fingerprint_text=unit.source_line(access.span.path, access.span.line or 0).strip(),
    )
