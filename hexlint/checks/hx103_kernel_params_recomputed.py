"""HX103 kernel-params-recomputed: a kernel uses a runtime value or recomputes what the host put in kparams."""

from __future__ import annotations

import fnmatch
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from hexlint.backend.dispatch import strip_transparent
from hexlint.backend.kernel_params import FieldAccess, KernelParamsFacts, member_refs_by_name
from hexlint.backend.model import BackendModel
from hexlint.backend.names import by_spelling
from hexlint.c.index import UnitIndex
from hexlint.c.node import Node
from hexlint.core import Diagnostic, Edit, Fix, Related, Span
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
            if _set_from_the_field(unit, mapping, reads, node):
                continue  # `octx->n_threads = kparams->n_threads` earlier: the runtime value is the host's plan
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
        fix = _runtime_fix(unit, [use for use, _field, _holder in found], holder, field, runtime)
        yield _diagnostic(unit, node, message, tuple(related), fix)


def _set_from_the_field(unit: UnitIndex, mapping: RuntimeField, reads: list[FieldAccess], use: Node) -> bool:
    """True when, before the use, the function set the runtime value from the kparams field: assigned it
    (`octx->n_threads = (uint32_t) kparams->n_threads;`) or handed both to a setter
    (`htp_ops_context_set_n_threads(octx, kparams->n_threads)`), on the line that reads the field."""
    runtime = r"\s*(?:->|\.)\s*".join(map(re.escape, mapping.chain))
    assigned = re.compile(rf"(?<![\w.>]){runtime}\s*=(?!=)")
    setter = re.compile(rf"\b\w*set\w*{re.escape(mapping.chain[-1])}\w*\s*\(\s*&?\s*{re.escape(mapping.chain[0])}\s*,")
    for read in reads:
        if read.path != mapping.field or read.node.path != use.path or read.node.line >= use.line:
            continue
        line = unit.source_line(read.node.path, read.node.line)
        if assigned.search(line) or setter.search(line):
            return True
    return False


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
            fix = _recomputed_fix(unit, facts, target, value_start, value_end, struct, path, reads)
            yield _diagnostic(unit, target, message, related, fix)


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
    return by_spelling(unit, "VAR_DECL")


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


def _diagnostic(
    unit: UnitIndex, node: Node, message: str, related: tuple[Related, ...], fix: Fix | None = None
) -> Diagnostic:
    fingerprint_text = unit.source_line(node.path, node.line).strip()
    return diagnostic(CODE, message, node.span(), related=related, fix=fix, fingerprint_text=fingerprint_text)


# ---------------------------------------------------------------- fixes

_SPACES = re.compile(rb"\s+")


def _access_prefix(unit: UnitIndex, read: FieldAccess, at: Node) -> bytes | None:
    """`kparams->` (or `job->kparams->`) from a read of the struct, when the variable it starts from is declared
    where `at` can see it: a parameter of the function, or a local of a block holding `at`, declared before it."""
    data = unit.source_bytes(read.node.path)
    text = _SPACES.sub(b"", data[read.node.start_offset : read.node.end_offset])
    path = read.path.encode()
    if not text.endswith(path) or read.node.is_macro_expansion:
        return None
    prefix = text[: -len(path)]
    if not prefix.endswith((b"->", b".")):
        return None
    root = read.node
    while root.kind != "DECL_REF_EXPR":
        children = root.children()
        if not children:
            return None
        root = children[0]
    declaration = root.referenced
    if declaration is None or declaration.path != at.path or declaration.start_offset >= at.start_offset:
        return None
    if declaration.kind == "PARM_DECL":
        return prefix
    if declaration.kind != "VAR_DECL":
        return None
    statement = unit.parent(declaration)
    block = unit.parent(statement) if statement is not None else None
    if block is None or block.kind != "COMPOUND_STMT":
        return None
    return prefix if block.start_offset <= at.start_offset < block.end_offset else None


def _prefix_for(unit: UnitIndex, reads: Iterable[FieldAccess], struct: str, at: Node) -> bytes | None:
    for read in reads:
        if read.struct == struct:
            prefix = _access_prefix(unit, read, at)
            if prefix is not None:
                return prefix
    return None


def _runtime_fix(unit: UnitIndex, uses: list[Node], holder: FieldAccess, field: str, runtime: str) -> Fix | None:
    """Every use of the runtime value in the function becomes the kparams field. Unsafe: the host's number and the
    runtime's are not provably equal (the host plans for the threads it expects; that is the point of the rule)."""
    if any(use.is_macro_expansion for use in uses) or holder.function != unit.enclosing_function(uses[0]).spelling:
        return None  # one call down the struct is not in scope: the author passes it along
    edits = []
    for use in uses:
        parent = unit.parent(use)
        if parent is not None and (
            (
                parent.kind == "BINARY_OPERATOR"
                and parent.binary_operator.endswith("=")
                and parent.binary_operator not in ("==", "!=", "<=", ">=")
                and parent.children()[0].start_offset == use.start_offset
            )
            or (parent.kind == "UNARY_OPERATOR" and parent.unary_operator in ("&", "++", "--"))
        ):
            return None  # written or addressed, not read  # fmt: skip
        prefix = _access_prefix(unit, holder, use)
        if prefix is None:
            return None
        edits.append(Edit(use.path, use.start_offset, use.end_offset, prefix + field.encode()))
    title = f"Use `{(prefix + field.encode()).decode()}` instead of `{runtime}`"
    return Fix(title, tuple(edits), safe=False)


def _normalized(text: bytes, replaced: list[tuple[int, int, bytes]], start: int) -> bytes:
    """`text` (starting at byte `start` of its file) with each (start, end, name) range replaced, spaces dropped."""
    pieces, position = [], start
    for begin, end, name in sorted(replaced):
        pieces += [text[position - start : begin - start], b"@" + name]
        position = end
    pieces.append(text[position - start :])
    return _SPACES.sub(b"", b"".join(pieces))


def _provably_equal(
    unit: UnitIndex, facts: KernelParamsFacts, value_start: int, value_end: int, struct: str, path: str, reads
) -> bool:
    """The kernel's expression is made of kparams fields and constants only, and every host write of the field
    assigns the same expression of the same fields: the field holds exactly the recomputed value."""
    data = unit.source_bytes(reads[0].node.path)
    inside = [
        (read.node.start_offset, read.node.end_offset, read.path.encode())
        for read in reads
        if value_start <= read.node.start_offset < value_end and read.struct == struct
    ]
    kernel = _normalized(data[value_start:value_end], inside, value_start)
    if re.search(rb"(?<![@\w.])[A-Za-z_]", re.sub(rb"@[\w.]+", b"", kernel)):
        return False  # a variable of the kernel's own: its value is not the host's
    writes = [write for write in facts.host_writes if write.struct == struct and write.path == path]
    if not writes:
        return False
    fields = sorted({field_path for name, field_path in facts.fields if name == struct}, key=len, reverse=True)
    for write in writes:
        host = write.node
        host_bytes = unit.source_bytes(host.path)  # the index reads (and keeps) any file's bytes
        assigned = _ASSIGNED.match(host_bytes, host.end_offset, host.end_offset + 400)
        if assigned is None:
            return False
        lhs = _SPACES.sub(b"", host_bytes[host.start_offset : host.end_offset])
        prefix = lhs[: -len(path)] if lhs.endswith(path.encode()) else None
        if not prefix:
            return False
        value = _SPACES.sub(b"", assigned.group(1))
        for field_path in fields:
            value = value.replace(prefix + field_path.encode(), b"@" + field_path.encode())
        if value != kernel:
            return False
    return True


def _recomputed_fix(
    unit: UnitIndex,
    facts: KernelParamsFacts,
    target: Node,
    value_start: int,
    value_end: int,
    struct: str,
    path: str,
    reads: list[FieldAccess],
) -> Fix | None:
    """The recomputed value becomes the kparams field: safe when the field provably holds it, else unsafe."""
    if value_start < 0 or target.is_macro_expansion:
        return None
    data = unit.source_bytes(target.path)
    value = data[value_start:value_end]
    if b"{" in value or b"\\\n" in value:
        return None  # an initializer list or a spliced line: left to the author
    prefix = _prefix_for(unit, reads, struct, target)
    if prefix is None:
        return None
    leading = value[: len(value) - len(value.lstrip())]
    replacement = leading + prefix + path.encode()
    safe = _provably_equal(unit, facts, value_start, value_end, struct, path, reads)
    edit = Edit(target.path, value_start, value_end, replacement)
    return Fix(f"Read `{(prefix + path.encode()).decode()}` instead", (edit,), safe=safe)
