"""HX103 kernel-params-recomputed: a kernel uses a runtime value or recomputes what the host put in kparams."""

from __future__ import annotations

import fnmatch
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.backend.dispatch import strip_transparent
from hexlint.backend.kernel_params import FieldAccess, KernelParamsFacts, member_refs_by_name, nodes_by_spelling
from hexlint.backend.model import BackendModel
from hexlint.c.index import UnitIndex, memoized
from hexlint.c.node import Node
from hexlint.core import Diagnostic, Related, Span
from hexlint.registry import diagnostic

CODE = "HX103"
DEFAULT_RUNTIME_FIELDS = (
    {"runtime": "octx->n_threads", "field": "n_threads"},
    {"runtime": "octx->ctx->n_threads", "field": "n_threads"},
    {"runtime": "ctx->n_threads", "field": "n_threads"},
)
DEFAULT_RECOMPUTED_NAMES = ("*_per_thread", "*_stride", "n_*chunk*", "*_chunk", "*_chunks")
# A right-hand side that computes something (arithmetic or a call), as opposed to copying a value along.
_COMPUTES = re.compile(rb"[-+*/%]|<<|>>|\w\s*\(|\?")
# `L.row_stride` copies out of a struct value the function built (a layout); `ctx->row_stride` out of a context
# that someone else filled.
_COPY_FROM_VALUE = re.compile(rb"^\s*\(?\s*\w+\s*\.\s*\w+\s*\)?\s*$")
_COPY_THROUGH_POINTER = re.compile(rb"^\s*\(?\s*\w+\s*->\s*\w+\s*\)?\s*$")
_ASSIGNED = re.compile(rb"\s*=(?!=)([^;]*);")  # used with match(data, pos): anchored at pos


@dataclass(frozen=True)
class RuntimeField:
    chain: tuple[str, ...]  # ("octx", "n_threads")
    field: str


def runtime_fields(options: Mapping[str, Any]) -> tuple[RuntimeField, ...]:
    found = []
    for entry in options.get("runtime_fields", DEFAULT_RUNTIME_FIELDS):
        if isinstance(entry, Mapping) and entry.get("runtime") and entry.get("field"):
            chain = tuple(part for part in re.split(r"->|\.", str(entry["runtime"]).replace(" ", "")) if part)
            found.append(RuntimeField(chain, str(entry["field"])))
    return tuple(found)


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    facts = model.kernel_params(options)
    reads_by_function: dict[str, list[FieldAccess]] = defaultdict(list)
    for read in facts.kernel_reads:
        if read.function:
            reads_by_function[read.function].append(read)
    if not reads_by_function:
        return
    fields_by_struct: dict[str, set[str]] = defaultdict(set)
    for struct, path in facts.fields:
        fields_by_struct[struct].add(path)
    name_patterns = tuple(options.get("recomputed_names", DEFAULT_RECOMPUTED_NAMES))
    read_paths = {read.node.path for read in facts.kernel_reads}
    for unit in model.kernel_units():
        if not any(function.path in read_paths for function in unit.functions.values()):
            continue  # no function of this unit reads a params struct
        yield from _runtime_uses(model, unit, reads_by_function, fields_by_struct, runtime_fields(options))
        yield from _recomputed_locals(unit, facts, reads_by_function, fields_by_struct, name_patterns)


def _runtime_uses(
    model: BackendModel,
    unit: UnitIndex,
    reads_by_function: Mapping[str, list[FieldAccess]],
    fields_by_struct: Mapping[str, set[str]],
    mappings: tuple[RuntimeField, ...],
) -> Iterator[Diagnostic]:
    by_name = member_refs_by_name(unit)
    uses: dict[tuple[str, str], list[tuple[Node, str, FieldAccess]]] = defaultdict(list)
    for mapping in mappings:
        for node in by_name.get(mapping.chain[-1], ()):
            if _member_chain(node) != mapping.chain:
                continue
            function = unit.enclosing_function(node)
            reads = reads_by_function.get(function.spelling, []) if function is not None else []
            holder = next((read for read in reads if mapping.field in fields_by_struct[read.struct]), None)
            if holder is None and function is not None:
                # One call down: a helper or worker whose every caller has the kparams in hand.
                holder = _held_by_every_caller(
                    model, function.spelling, mapping.field, reads_by_function, fields_by_struct
                )
            if holder is None:
                continue  # no kparams with that field in scope here
            if any(read.path == mapping.field and read.node.line == node.line for read in reads):
                continue  # used together with the kparams field, e.g. MIN(kparams->n_threads, octx->n_threads)
            uses[(function.spelling, "->".join(mapping.chain))].append((node, mapping.field, holder))
    for (function, runtime), found in uses.items():
        node, field, holder = found[0]
        also = sorted({other.line for other, _field, _holder in found[1:] if other.line != node.line})
        more = f" (and {len(also)} more times in `{function}`)" if also else ""
        caller = f" (which `{holder.function}` reads before calling here)" if holder.function != function else ""
        message = (
            f"`{runtime}` is used here{more} although the host precomputed `kparams->{field}` in struct "
            f"{holder.struct}{caller}; use `kparams->{field}` so the kernel follows the host's plan."
        )
        related = [Related(holder.span, f"struct {holder.struct} is read here")]
        related += [Related(_line_span(node, line), f"`{runtime}` is also used here") for line in also[:5]]
        yield _diagnostic(unit, node, message, tuple(related))


def _held_by_every_caller(
    model: BackendModel,
    function: str,
    field: str,
    reads_by_function: Mapping[str, list[FieldAccess]],
    fields_by_struct: Mapping[str, set[str]],
    depth: int = 0,
) -> FieldAccess | None:
    """A kparams read holding `field` in every caller of `function` (or, up to three calls up, in all of theirs)."""
    callers = model.callers(function) - {function}
    if not callers or depth > 2:
        return None
    found = None
    for caller in sorted(callers):
        holder = next(
            (read for read in reads_by_function.get(caller, ()) if field in fields_by_struct[read.struct]), None
        )
        if holder is None:
            holder = _held_by_every_caller(model, caller, field, reads_by_function, fields_by_struct, depth + 1)
        if holder is None:
            return None
        found = found or holder
    return found


def _recomputed_locals(
    unit: UnitIndex,
    facts: KernelParamsFacts,
    reads_by_function: Mapping[str, list[FieldAccess]],
    fields_by_struct: Mapping[str, set[str]],
    name_patterns: tuple[str, ...],
) -> Iterator[Diagnostic]:
    for function_name, reads in reads_by_function.items():
        function = unit.functions.get(function_name)
        if function is None or function.path != reads[0].node.path:
            continue
        leaf_fields: dict[str, tuple[str, str]] = {}
        for read in reads:
            for path in fields_by_struct[read.struct]:
                leaf = path.rsplit(".", 1)[-1]
                if any(fnmatch.fnmatchcase(leaf, pattern) for pattern in name_patterns):
                    leaf_fields.setdefault(leaf, (read.struct, path))
        if not leaf_fields:
            continue
        data = unit.source_bytes(function.path)
        for name, target, value_start, value_end in _assignments_named(unit, function, set(leaf_fields)):
            struct, path = leaf_fields[name]
            if value_start < 0 or _reads_field(value_start, value_end, path, reads):
                continue
            value = data[value_start:value_end]
            if any(read.path == path and read.node.line == target.line for read in reads):
                continue
            if _COPY_THROUGH_POINTER.match(value):
                continue  # copied along from a context filled elsewhere, not computed here
            if not _COPY_FROM_VALUE.match(value) and not _COMPUTES.search(value):
                continue
            message = (
                f"`{name}` is computed here although the host precomputed `kparams->{path}` in struct {struct}; "
                f"read `kparams->{path}` instead of deriving it again."
            )
            field = facts.fields.get((struct, path))
            related = (Related(field.span, f"`{path}` is declared here"),) if field is not None else ()
            yield _diagnostic(unit, target, message, related)


def _assignments_named(unit: UnitIndex, function: Node, names: set[str]) -> Iterator[tuple[str, Node, int, int]]:
    """(name, node, value byte range) for `T name = ...;` and `x.name = ...;` / `.name = ...` in the function."""
    data = unit.source_bytes(function.path)
    start, end = function.start_offset, function.end_offset
    declarations = _declarations_by_name(unit)
    for node in (node for name in names for node in declarations.get(name, ())):
        if node.path == function.path and start <= node.start_offset < end:
            if node.is_macro_expansion:
                continue
            equals = data.find(b"=", node.start_offset, node.end_offset)
            yield node.spelling, node, (equals + 1 if equals >= 0 else -1), node.end_offset
    by_name = member_refs_by_name(unit)
    for name in names:
        for node in by_name.get(name, ()):
            if node.path != function.path or not start <= node.start_offset < end or node.is_macro_expansion:
                continue
            assigned = _ASSIGNED.match(data, node.end_offset, node.end_offset + 400)
            if assigned is not None:
                yield name, node, assigned.start(1), assigned.end(1)


def _declarations_by_name(unit: UnitIndex) -> dict[str, list[Node]]:
    return memoized(unit.memo, "hx103.declarations", lambda: nodes_by_spelling(unit, "VAR_DECL"))


def _reads_field(start: int, end: int, path: str, reads: list[FieldAccess]) -> bool:
    """The value is derived from the host's own number for this field, not recomputed."""
    return any(read.path == path and start <= read.node.start_offset < end for read in reads)


def _member_chain(node: Node) -> tuple[str, ...]:
    chain = [node.spelling]
    current = node
    while True:
        children = current.children()
        if not children:
            return ()
        base = strip_transparent(children[0])
        if base.kind == "MEMBER_REF_EXPR":
            chain.append(base.spelling)
            current = base
            continue
        if base.kind == "DECL_REF_EXPR":
            chain.append(base.spelling)
            return tuple(reversed(chain))
        return ()


def _line_span(node: Node, line: int) -> Span:
    return Span(node.path, line)


def _diagnostic(unit: UnitIndex, node: Node, message: str, related: tuple[Related, ...]) -> Diagnostic:
    fingerprint_text = unit.source_line(node.path, node.line).strip()
    return diagnostic(CODE, message, node.span(), related=related, fingerprint_text=fingerprint_text)
