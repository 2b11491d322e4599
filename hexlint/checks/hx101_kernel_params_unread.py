"""HX101 kernel-params-unread: the host writes a `*_kernel_params` field for an op that no kernel of it reads."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.kernel_params import (
    FieldAccess,
    KernelParamsFacts,
    Ops,
    first_per_function,
    ops_overlap,
    path_covers,
)
from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import access_diagnostic, describe_ops, for_ops
from hexlint.core import Diagnostic, Related

CODE = "HX101"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    facts = model.kernel_params(options)
    reads_by_struct: dict[str, list[FieldAccess]] = defaultdict(list)
    for read in facts.kernel_reads:
        reads_by_struct[read.struct].append(read)
    unread: list[FieldAccess] = []
    unread_ops: dict[int, Ops] = {}
    for write in facts.host_writes:
        ops = _ops_without_reader(write, reads_by_struct.get(write.struct, []), facts)
        if ops is not False:
            unread.append(write)
            unread_ops[id(write)] = ops
    for group in first_per_function(unread):
        first = group[0]
        yield _finding(first, unread_ops[id(first)], group, reads_by_struct[first.struct], facts)


def _ops_without_reader(write: FieldAccess, reads: list[FieldAccess], facts: KernelParamsFacts) -> Ops | bool:
    """The ops for which a host write is unread (None: unknown ops), or False when every op's kernels read it.

    A write shared by several ops (`case HTP_OP_MUL_MAT: case HTP_OP_MUL_MAT_ID:`) is unread for an op whose
    kernels read the struct but not this field, even when another op's kernels read the field."""
    if not reads or not _kernel_present(write, facts):
        return False  # the kernels of this struct (or of these ops) are not part of the run
    ops = write.ops & facts.dispatched_ops if write.ops and facts.dispatched_ops else write.ops
    if not any(path_covers(read.path, write.path) and ops_overlap(write.ops, read.ops) for read in reads):
        return ops
    if not ops or len(ops) < 2:
        return False
    readers_of_struct = {op for read in reads if read.ops for op in read.ops}
    unread = frozenset(
        op
        for op in ops
        if op in readers_of_struct
        and not any(path_covers(read.path, write.path) and (read.ops is None or op in read.ops) for read in reads)
    )
    return unread or False


def _kernel_present(write: FieldAccess, facts: KernelParamsFacts) -> bool:
    return write.ops is None or not facts.dispatched_ops or bool(write.ops & facts.dispatched_ops)


def _finding(
    write: FieldAccess, ops: Ops, group: list[FieldAccess], reads: list[FieldAccess], facts: KernelParamsFacts
) -> Diagnostic:
    other_reads = [read for read in reads if path_covers(read.path, write.path)]
    where_else = f" (kernels read it only for {describe_ops(other_reads[0].ops)})" if other_reads else ""
    message = (
        f"`{write.path}` of struct {write.struct} is written here{for_ops(ops)} but no kernel"
        f"{' of that op' if ops and len(ops) == 1 else ' of those ops' if ops else ''} reads it{where_else}; "
        f"use it in the kernel or stop computing it on the host."
    )
    related = [Related(field.span, f"`{write.path}` is declared here") for field in _declaration(write, facts)]
    related += [Related(other.span, "also written here, also unread") for other in group[1:4]]
    related += [Related(read.span, f"read here for {describe_ops(read.ops)}") for read in other_reads[:1]]
    return access_diagnostic(CODE, message, write, tuple(related))


def _declaration(access: FieldAccess, facts: KernelParamsFacts) -> list[Any]:
    return [field for (struct, path), field in facts.fields.items() if struct == access.struct and path == access.path]
