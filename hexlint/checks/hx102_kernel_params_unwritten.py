"""HX102 kernel-params-unwritten: a kernel reads a `*_kernel_params` field the host never writes for that op."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.kernel_params import FieldAccess, KernelParamsFacts, first_per_function, ops_overlap, path_covers
from hexlint.backend.model import BackendModel
from hexlint.checks._c_helpers import access_diagnostic, describe_ops, for_ops
from hexlint.core import Diagnostic, Related

CODE = "HX102"


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    facts = model.kernel_params(options)
    writes_by_struct: dict[str, list[FieldAccess]] = defaultdict(list)
    for write in facts.host_writes:
        writes_by_struct[write.struct].append(write)
    for group in first_per_function(facts.kernel_reads):
        read = group[0]
        writes = writes_by_struct.get(read.struct)
        if not writes or not any(ops_overlap(write.ops, read.ops) for write in writes):
            continue  # the host code that fills this struct for these ops is not part of the run
        if any(path_covers(write.path, read.path) and ops_overlap(write.ops, read.ops) for write in writes):
            continue
        yield _finding(read, writes, facts)


def _finding(read: FieldAccess, writes: list[FieldAccess], facts: KernelParamsFacts) -> Diagnostic:
    other_writes = [write for write in writes if path_covers(write.path, read.path)]
    where_else = f" (it writes it only for {describe_ops(other_writes[0].ops)})" if other_writes else ""
    message = (
        f"`{read.path}` of struct {read.struct} is read here{for_ops(read.ops)} but the host never writes it"
        f"{' for that op' if read.ops and len(read.ops) == 1 else ' for those ops' if read.ops else ''}{where_else}; "
        f"set it in the host's kernel_params precompute or compute it in the kernel."
    )
    related = [
        Related(field.span, f"`{read.path}` is declared here")
        for (struct, path), field in facts.fields.items()
        if struct == read.struct and path == read.path
    ]
    related += [Related(write.span, f"written here for {describe_ops(write.ops)}") for write in other_writes[:1]]
    return access_diagnostic(CODE, message, read, tuple(related))
