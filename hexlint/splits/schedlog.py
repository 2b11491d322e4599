"""The scheduler's graph dumps (GGML_SCHED_DEBUG=2 with llama.cpp's -v) and the `ggml-hex:` lines around them.

Format read from ggml's src/ggml-backend.cpp, `ggml_backend_sched_print_assignments`, at ggml d99724f2 (2026-08-21).
Each piece is a GGML_LOG_DEBUG call of its own:

    "\\n## SPLIT #%d: %s # %d inputs"  [": "  "[%s (%5.5s)] " per input]  "\\n"
    "node #%3d (%10.10s): %20.20s (%5.5s) [%5.5s %8.8s] use=%d,c=%d:"
        " %20.20s (%5.5s) [%5.5s %8.8s]" per source  "\\n"

so node names are cut to 20 characters, op descriptions to 10, backend names in node lines to 5 (the split headers
spell them whole), and the cause is empty unless ggml was built with its debug causes. View ops (RESHAPE, VIEW,
PERMUTE, TRANSPOSE) are not printed. Another thread's whole line can land between two pieces: it then follows a
record's unterminated piece on one physical line, and the record goes on at the start of the next line. A graph
build prints one dump; `## SPLIT #0` starts the next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hexlint.runtime.hexlog import HexRecord, parse_line, split_marker
from hexlint.runtime.logfile import LogError, read_text

__all__ = ["LogError", "SchedLog", "parse_log", "read_log"]

_SPLIT = re.compile(r"## SPLIT #(?P<number>\d+): (?P<backend>.*?) # (?P<inputs>\d+) inputs(?P<rest>.*)$")
_SPLIT_HEAD = re.compile(r"## SPLIT #\d+: .*? # \d+ inputs")
_SPLIT_INPUT = re.compile(r"\[(?P<name>.*?) \((?P<size>.{5})\)\] ")
_NODE = re.compile(
    r"node #\s*(?P<index>\d+) \((?P<op>.{10})\): (?P<name>.{20}) \((?P<size>.{5})\) "
    r"\[(?P<backend>.{5}) (?P<cause>.{8})\] use=(?P<use>\d+),c=(?P<compute>[01]):"
)
_SOURCE = re.compile(r" (?P<name>.{20}) \((?P<size>.{5})\) \[(?P<backend>.{5}) (?P<cause>.{8})\]")
_RECORD_START = re.compile(r"## SPLIT #\d|node #\s*\d")


@dataclass(frozen=True, slots=True)
class TensorRef:
    """A tensor as a dump line shows it: name (first 20 characters), size, backend (first 5), cause."""

    name: str
    size: str
    backend: str
    cause: str


@dataclass(frozen=True, slots=True)
class DumpNode:
    index: int  # the node's index in the graph (view nodes are counted but not printed)
    op: str  # ggml_op_desc, first 10 characters
    tensor: TensorRef
    use: int
    compute: bool
    sources: tuple[TensorRef, ...]
    line: int  # where the record starts
    torn: bool  # another thread's output landed inside the record

    @property
    def name(self) -> str:
        return self.tensor.name

    @property
    def backend(self) -> str:
        return self.tensor.backend


@dataclass(frozen=True, slots=True)
class SplitHeader:
    number: int
    backend: str  # the backend's whole name
    n_inputs: int
    inputs: tuple[tuple[str, str], ...]  # (name, size) of each input copied into the split
    line: int
    first_node: int  # index in the graph's printed nodes of the first node after the header


@dataclass(slots=True)
class GraphDump:
    """One graph build's dump."""

    path: str
    number: int  # 1-based, in log order
    line: int
    splits: list[SplitHeader] = field(default_factory=list)
    nodes: list[DumpNode] = field(default_factory=list)
    end_line: int = 0


@dataclass(slots=True)
class SchedLog:
    path: str
    graphs: list[GraphDump]
    hex_records: list[HexRecord]
    torn_records: int  # dump records read across another thread's output
    unreadable: list[int]  # lines that start a dump record but do not parse


def read_log(path: str) -> SchedLog:
    return parse_log(read_text(path), path)


def parse_log(text: str, path: str) -> SchedLog:
    log = SchedLog(path, [], [], 0, [])
    pending: list[str] = []  # pieces of an unterminated dump record
    pending_line = 0
    torn = False
    for number, physical in enumerate(text.splitlines(), 1):
        fragment, hex_line = split_marker(physical)
        if hex_line:
            record = parse_line(hex_line, path, number)
            if record is not None:
                log.hex_records.append(record)
        start = _RECORD_START.search(fragment)
        if start is not None:
            if pending:
                _finish(log, "".join(pending), pending_line, torn)  # cut short: its rest never came
            piece = fragment[start.start() :]
            pending, pending_line, torn = [], number, False
        elif pending and (fragment.startswith(" ") or (not fragment and not hex_line)):
            piece, torn = fragment, True  # the record goes on after another thread's line
        else:
            continue  # another thread's line, or text outside any dump
        consumed = _consumed(piece, first=not pending)
        pending.append(piece[:consumed])
        # Text after the record's pieces is another thread's line glued to them: the record goes on below.
        if not hex_line and consumed == len(piece):
            _finish(log, "".join(pending), pending_line, torn)
            pending = []
    if pending:
        _finish(log, "".join(pending), pending_line, torn)
    return log


def _consumed(piece: str, first: bool) -> int:
    """How much of a record's piece the dump's grammar reads (the rest is another thread's text)."""
    position = 0
    if first and piece.startswith("## SPLIT"):
        header = _SPLIT_HEAD.match(piece)
        if header is None:
            return len(piece)  # left to fail visibly
        position = header.end()
        if piece.startswith(": ", position):
            position += 2
            while (item := _SPLIT_INPUT.match(piece, position)) is not None:
                position = item.end()
        return position
    if first:
        head = _NODE.match(piece)
        if head is None:
            return len(piece)
        position = head.end()
    while (source := _SOURCE.match(piece, position)) is not None:
        position = source.end()
    return position


def _finish(log: SchedLog, record: str, line: int, torn: bool) -> None:
    record = record.rstrip("\r\n")
    if record.startswith("## SPLIT"):
        _add_split(log, record, line)
    else:
        _add_node(log, record, line, torn)
    if torn:
        log.torn_records += 1


def _current_graph(log: SchedLog, line: int, new: bool) -> GraphDump:
    if new or not log.graphs:
        log.graphs.append(GraphDump(log.path, len(log.graphs) + 1, line))
    graph = log.graphs[-1]
    graph.end_line = line
    return graph


def _add_split(log: SchedLog, record: str, line: int) -> None:
    match = _SPLIT.match(record)
    if match is None:
        log.unreadable.append(line)
        return
    number = int(match.group("number"))
    graph = _current_graph(log, line, new=number == 0 or not log.graphs)
    inputs = tuple((item.group("name"), item.group("size").strip()) for item in _SPLIT_INPUT.finditer(match["rest"]))
    graph.splits.append(
        SplitHeader(number, match.group("backend"), int(match.group("inputs")), inputs, line, len(graph.nodes))
    )


def _add_node(log: SchedLog, record: str, line: int, torn: bool) -> None:
    head = _NODE.match(record)
    if head is None:
        log.unreadable.append(line)
        return
    sources: list[TensorRef] = []
    position = head.end()
    while position < len(record):
        source = _SOURCE.match(record, position)
        if source is None:
            log.unreadable.append(line)
            return
        sources.append(_tensor(source))
        position = source.end()
    index = int(head.group("index"))
    graph = _current_graph(log, line, new=bool(log.graphs and log.graphs[-1].nodes and _restarts(log, index)))
    graph.nodes.append(
        DumpNode(
            index,
            head.group("op").strip(),
            _tensor(head),
            int(head.group("use")),
            head.group("compute") == "1",
            tuple(sources),
            line,
            torn,
        )
    )


def _restarts(log: SchedLog, index: int) -> bool:
    """A node index at or below the last one printed: a new dump whose split header was lost."""
    graph = log.graphs[-1]
    return index <= graph.nodes[-1].index and (not graph.splits or graph.splits[-1].first_node < len(graph.nodes))


def _tensor(match: re.Match[str]) -> TensorRef:
    return TensorRef(
        match.group("name").strip(), match.group("size").strip(), match.group("backend").strip(), match["cause"].strip()
    )
