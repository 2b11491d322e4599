"""HX304 trace-info-unvaried: every start of an event type inside an op carries one info value (the runtime side of
HX118): the info argument does not tell the chunks or tiles apart."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hexlint.checks._runtime_helpers import finding_at, op_label, op_related
from hexlint.core import Diagnostic
from hexlint.runtime.trace import RuntimeTrace

CODE = "HX304"


def check(trace: RuntimeTrace, options: Mapping[str, Any]) -> Iterator[Diagnostic]:
    least = int(options.get("min_starts", 3))
    for batch in trace.batches:
        for op in batch.ops:
            starts: dict[str, list] = {}
            for event in op.events:
                if event.record.edge == "start":
                    starts.setdefault(event.record.event, []).append(event.record)
            for name, records in sorted(starts.items()):
                values = {record.info for record in records}
                if len(records) < least or len(values) != 1:
                    continue
                message = (
                    f"All {len(records)} {name} starts in {op_label(op)} carry info {values.pop()}; pass the chunk "
                    "or tile index as the info argument so the trace tells the pieces apart"
                )
                first = min(records, key=lambda record: record.line)
                fingerprint = f"{op.name} {op.tensor} {name} info"
                yield finding_at(CODE, first.path, first.line, message, fingerprint, related=op_related(op))
