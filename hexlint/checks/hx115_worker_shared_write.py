"""HX115 worker-shared-write: a pool worker writing state every thread shares (globals, statics, context fields)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.backend.model import BackendModel
from hexlint.backend.workers import Worker, Write
from hexlint.checks._c_helpers import diagnostic_where_spelled, node_span, spelled_place
from hexlint.core import Diagnostic, Related

CODE = "HX115"
_WHAT = {
    "global": "the file-scope variable",
    "static": "the static variable",
    "shared_field": "the context field",
}


def check(model: BackendModel, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    allowed_guards = frozenset(options.get("legal_guards", ("atomic", "lock", "single_thread")))
    reported: set[tuple[str, int, int]] = set()
    for worker in model.worker_writes(options):
        if worker.runs_on_one_thread:
            continue
        for write in worker.writes:
            if write.kind not in _WHAT or write.guard in allowed_guards:
                continue
            place = spelled_place(write.node)
            if place in reported:
                continue  # a helper shared by several workers, or a macro stamping out several: one finding
            reported.add(place)
            yield _finding(worker, write)


def _finding(worker: Worker, write: Write) -> Diagnostic:
    message = _message(worker.name, write)
    related = _related(worker, write)
    return diagnostic_where_spelled(CODE, write.unit, write.node, message, related)


def _message(worker: str, write: Write) -> str:
    if write.function == worker:
        where = f"Worker `{worker}`"
    else:
        where = f"`{write.function}` (called by worker `{worker}` with its context)"
    what = _WHAT[write.kind]
    if write.kind == "shared_field":
        return (
            f"{where} writes {what} `{write.target}` that every thread of the pool shares: give each thread its own "
            "slot (indexed by the thread index) and combine the slots after the run, or use an atomic."
        )
    return (
        f"{where} writes {what} `{write.target}`, which every thread of the pool shares: keep per-thread state in "
        "locals or in a slot of the context indexed by the thread index."
    )


def _related(worker: Worker, write: Write) -> list[Related]:
    related = []
    if write.function != worker.name:
        related.append(Related(node_span(worker.node), f"the worker `{worker.name}`"))
    return related
