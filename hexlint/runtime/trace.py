"""A runtime op trace (GGML_HEXAGON_PROFILE=3): batches, their ops, and each op's trace events, on one timeline.

How the lines relate, read from ggml-hexagon.cpp (`ggml_hexagon_opqueue::pop`) at ggml d99724f2 and from llama.cpp's
scripts/snapdragon/ggml-hexagon-profile.py: a batch prints its OPBATCH line, one profile-op line per op, then every
thread's trace events (threads 0-9 HVX, 10 HMX), each thread's in time order. Op starts and event cycles are the low
32 bits of the cycle counter, the batch start is whole: values are unwrapped against the batch start, and an event
belongs to the op whose [start, start + cycles] holds it. A thread's buffer holds a bounded number of events; the
OPBATCH line's `evt-cnt` says how many each thread recorded, so a thread with more recorded than printed lost some.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from hexlint.runtime.hexlog import ProfileBatch, ProfileOp, TraceEvent, parse_line, split_marker
from hexlint.runtime.logfile import read_text

HMX_THREAD = 10
DMA_EVENTS = ("DMA",)


@dataclass(frozen=True, slots=True)
class Event:
    record: TraceEvent
    cycle: int  # unwrapped


@dataclass
class TracedOp:
    record: ProfileOp
    start: int  # unwrapped
    events: list[Event] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + self.record.cycles

    @property
    def name(self) -> str:
        return self.record.op

    @property
    def tensor(self) -> str:
        return self.record.names.output


@dataclass
class Batch:
    record: ProfileBatch
    ops: list[TracedOp] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    unplaced: list[Event] = field(default_factory=list)  # events in no op's cycle range

    def printed_per_thread(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for event in self.events:
            counts[event.record.thread] = counts.get(event.record.thread, 0) + 1
        return counts

    def saturated_threads(self) -> dict[int, tuple[int, int]]:
        """thread -> (recorded, printed) for threads whose trace buffer dropped events."""
        if self.record.event_counts is None:
            return {}
        printed = self.printed_per_thread()
        return {
            thread: (recorded, printed.get(thread, 0))
            for thread, recorded in enumerate(self.record.event_counts)
            if recorded > printed.get(thread, 0)
        }


@dataclass
class RuntimeTrace:
    path: str
    batches: list[Batch]
    profile_ops: int  # profile-op lines outside any batch too
    trace_events: int

    @property
    def traced(self) -> bool:
        """Whether the run recorded trace events at all (GGML_HEXAGON_PROFILE=3)."""
        return self.trace_events > 0 or any(batch.record.event_counts for batch in self.batches)


class _Unwrapper:
    """The low 32 bits of a counter back to the whole value, against the last value seen."""

    def __init__(self, start: int) -> None:
        self.last = start

    def unwrap(self, raw: int) -> int:
        value = (self.last & ~0xFFFFFFFF) | (raw & 0xFFFFFFFF)
        if value - self.last > 0x80000000:
            value -= 0x100000000
        elif self.last - value > 0x80000000:
            value += 0x100000000
        self.last = value
        return value


def read_trace(path: str) -> RuntimeTrace:
    return parse_trace(read_text(path), path)


@dataclass
class _Open:
    """The batch a session is printing, with the clocks its op starts and events are unwrapped on."""

    batch: Batch
    ops: _Unwrapper
    events: _Unwrapper


def parse_trace(text: str, path: str) -> RuntimeTrace:
    """Batches per session (several NPU sessions, GGML_HEXAGON_NDEV > 1, print from their own threads and their
    lines interleave): a session's lines belong to its latest OPBATCH."""
    trace = RuntimeTrace(path, [], 0, 0)
    printing: dict[str, _Open] = {}
    for number, physical in enumerate(text.splitlines(), 1):
        _, hex_line = split_marker(physical)
        record = parse_line(hex_line, path, number) if hex_line else None
        if isinstance(record, ProfileBatch):
            batch = Batch(record)
            trace.batches.append(batch)
            printing[record.session] = _Open(batch, _Unwrapper(record.start), _Unwrapper(record.start))
        elif isinstance(record, ProfileOp):
            trace.profile_ops += 1
            current = printing.get(record.session)
            if current is not None:
                current.batch.ops.append(TracedOp(record, current.ops.unwrap(record.start)))
        elif isinstance(record, TraceEvent):
            trace.trace_events += 1
            current = printing.get(record.session)
            if current is not None:
                events = current.batch.events
                if events and record.thread != events[-1].record.thread:
                    current.events = _Unwrapper(current.batch.record.start)  # each thread starts at the batch again
                events.append(Event(record, current.events.unwrap(record.cycles)))
    for batch in trace.batches:
        _place(batch)
    return trace


def _place(batch: Batch) -> None:
    ops = sorted(batch.ops, key=lambda op: op.start)
    starts = [op.start for op in ops]
    for event in batch.events:
        position = bisect.bisect_right(starts, event.cycle) - 1
        if position >= 0 and ops[position].start <= event.cycle <= ops[position].end:
            ops[position].events.append(event)
        else:
            batch.unplaced.append(event)


# ------------------------------------------------------------------ facts the rules ask


@dataclass(frozen=True, slots=True)
class Imbalance:
    thread: int
    event: str
    kind: str  # "open" (started, never stopped) | "unstarted" (stopped without a start)
    at: TraceEvent


def imbalances(op: TracedOp) -> list[Imbalance]:
    """Per thread and event type: starts without their stop inside the op, stops without a start."""
    found: list[Imbalance] = []
    open_starts: dict[tuple[int, str], list[TraceEvent]] = {}
    for event in sorted(op.events, key=lambda item: (item.record.thread, item.cycle)):
        key = (event.record.thread, event.record.event)
        if event.record.edge == "start":
            open_starts.setdefault(key, []).append(event.record)
        elif open_starts.get(key):
            open_starts[key].pop()
        else:
            found.append(Imbalance(key[0], key[1], "unstarted", event.record))
    for (thread, name), starts in open_starts.items():
        found.extend(Imbalance(thread, name, "open", start) for start in starts)
    return sorted(found, key=lambda item: item.at.line)


def busy_cycles(op: TracedOp, thread: int, dma: bool) -> int:
    """Cycles of the op during which the thread has a compute (or DMA) event open, overlaps merged."""
    intervals: list[tuple[int, int]] = []
    depth = 0
    opened = op.start
    events = [
        event
        for event in sorted(op.events, key=lambda item: item.cycle)
        if event.record.thread == thread and (event.record.event in DMA_EVENTS) == dma
    ]
    for event in events:
        cycle = min(max(event.cycle, op.start), op.end)
        if event.record.edge == "start":
            if depth == 0:
                opened = cycle
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                intervals.append((opened, cycle))
    if depth > 0:
        intervals.append((opened, op.end))
    total, reach = 0, op.start
    for begin, end in sorted(intervals):
        begin = max(begin, reach)
        if end > begin:
            total += end - begin
            reach = end
    return total


def active_threads(op: TracedOp) -> list[int]:
    return sorted({event.record.thread for event in op.events})


def busy_shares(op: TracedOp, dma: bool) -> list[tuple[int, float]]:
    """(thread, percent of the op's cycles with a compute or DMA event open) for each thread with events in it."""
    if op.record.cycles <= 0:
        return []
    return [(thread, 100.0 * busy_cycles(op, thread, dma) / op.record.cycles) for thread in active_threads(op)]
