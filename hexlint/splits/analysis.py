"""Segments and boundaries of each graph a log dumps.

A segment is a maximal run of (printed) nodes on an NPU backend; a boundary is the node that ends one, on another
backend, classed:
- free: nothing crosses (the split after the segment has no inputs), a view op, a node supports_op took that the
  scheduler still placed elsewhere (its inputs live there), or one kept off the NPU by an input in a CPU buffer that
  no node of the graph produces (a weight or graph input placed there by design);
- hard: the op has no HTP kernel (no supports_op case, no HTP op in the host's mapping, or no kernel dispatch case);
- movable: a kernel exists but a supports_op predicate rejected this node (types, dims, strides, op params, or an
  intermediate in a foreign buffer).
Without a tree the log decides: an op some node of the log was accepted for has a kernel (movable), one never
accepted is hard. A graph's floor is (hard boundaries) + 1 segments.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from hexlint.backend.ops import VIEW_OPS, OpTable
from hexlint.runtime.hexlog import SupportsOp
from hexlint.splits.predicates import foreign_buffers, judge
from hexlint.splits.schedlog import DumpNode, GraphDump, SchedLog

DEFAULT_NPU_PATTERN = r"^HTP\d*$"
CLASSES = ("hard", "movable", "free", "unknown")
_COPY = re.compile(r"^[^#]+#(?P<name>.+)#\d+$")  # the scheduler's copy of a split input: BACKEND#name#copy
_LAYER = re.compile(r"(?:-|_l)(\d+)(?: \(|$)")  # llama.cpp's tensor names end in -IL (the KV cache: cache_k_lIL)


@dataclass(frozen=True)
class Boundary:
    path: str
    graph: int
    number: int  # 1-based within the graph
    kind: str  # hard | movable | free | unknown
    reason: str
    op: str
    tensor: str
    node: int  # the node's graph index
    line: int
    backend: str  # where the node went
    layer: int | None
    predicate: str | None = None
    rejections: tuple[str, ...] = ()  # the predicate's rejections that hold for the node's supports-op line
    possible: tuple[str, ...] = ()  # rejections the line cannot decide
    tests: tuple[str, ...] = ()  # what those rejections test: types, dims, strides, op-params, buffers ...
    supports_line: int | None = None
    reached: str = ""  # how supports_op reaches the predicate: its call chain, each call with its line


@dataclass(frozen=True)
class Segment:
    graph: int
    first: int  # graph index of its first and last node
    last: int
    nodes: int
    first_tensor: str
    last_tensor: str
    line: int
    backend: str


@dataclass
class GraphReport:
    path: str
    number: int
    line: int
    splits: int
    nodes_npu: int
    nodes_other: int
    segments: list[Segment] = field(default_factory=list)
    boundaries: list[Boundary] = field(default_factory=list)
    backends: dict[str, int] = field(default_factory=dict)  # nodes per backend (whole names)
    node_indexes: list[int] = field(default_factory=list)  # graph index of each printed node, in order
    notes: list[str] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for boundary in self.boundaries if boundary.kind == kind)

    def layers(self) -> dict[int, dict[str, int]]:
        """Boundaries per layer (llama.cpp's `-IL` name suffix) and class."""
        found: dict[int, dict[str, int]] = {}
        for boundary in self.boundaries:
            if boundary.layer is not None:
                counts = found.setdefault(boundary.layer, {})
                counts[boundary.kind] = counts.get(boundary.kind, 0) + 1
        return dict(sorted(found.items()))

    @property
    def floor(self) -> int:
        """The fewest NPU segments left once every movable boundary is fixed: hard + 1."""
        return self.count("hard") + 1


@dataclass(frozen=True)
class OpSummary:
    op: str
    kind: str
    boundaries: int
    graphs: int
    predicates: tuple[tuple[str, int], ...]  # (rejection or reason, count)
    tensors: tuple[str, ...]


@dataclass
class SplitsReport:
    graphs: list[GraphReport]
    ops: list[OpSummary]
    npu_pattern: str
    tree: str | None
    torn_records: int
    unreadable: list[tuple[str, int]]
    notes: list[str]


def analyse(logs: list[SchedLog], table: OpTable | None, npu_pattern: str, tree: str | None) -> SplitsReport:
    npu = re.compile(npu_pattern)
    graphs: list[GraphReport] = []
    accepted = {record.op for log in logs for record in _supports(log) if record.supported}
    for log in logs:
        previous_end = 0
        for graph in log.graphs:
            # This build's supports-op lines; a build the backend was not asked about again reads the earlier ones.
            asked = [record for record in _supports(log) if record.line <= graph.end_line]
            records = [record for record in asked if previous_end < record.line] or asked
            graphs.append(_graph(graph, records, table, npu, accepted))
            previous_end = graph.end_line
    notes: list[str] = []
    if table is not None:
        notes.extend(table.notes)
    if not any(_supports(log) for log in logs):
        notes.append("no supports-op lines (run with GGML_HEXAGON_VERBOSE=1): predicates cannot be named")
    return SplitsReport(
        graphs,
        _by_op(graphs),
        npu_pattern,
        tree,
        sum(log.torn_records for log in logs),
        [(log.path, line) for log in logs for line in log.unreadable],
        notes,
    )


def _supports(log: SchedLog) -> list[SupportsOp]:
    return [record for record in log.hex_records if isinstance(record, SupportsOp)]


def _graph(
    graph: GraphDump, records: list[SupportsOp], table: OpTable | None, npu: re.Pattern[str], accepted: set[str]
) -> GraphReport:
    full_names = list(dict.fromkeys(split.backend for split in graph.splits))

    def backend_of(shown: str) -> str:
        matches = [name for name in full_names if name[:5] == shown]
        return matches[0] if len(matches) == 1 else shown

    report = GraphReport(graph.path, graph.number, graph.line, len(graph.splits), 0, 0)
    produced = {node.name for node in graph.nodes}
    npu_names = [node.name for node in graph.nodes if npu.search(backend_of(node.backend))]
    split_at = {split.first_node: split for split in graph.splits}
    run: list[DumpNode] = []
    run_backend = ""
    for position, node in enumerate(graph.nodes):
        backend = backend_of(node.backend)
        report.node_indexes.append(node.index)
        report.backends[backend] = report.backends.get(backend, 0) + 1
        on_npu = bool(npu.search(backend))
        if on_npu:
            report.nodes_npu += 1
            if not run:
                run_backend = backend
            run.append(node)
            continue
        report.nodes_other += 1
        if not run:
            continue
        report.segments.append(_segment(graph.number, run, run_backend))
        split = split_at.get(position)
        record = _record_for(node, records, run_backend)
        report.boundaries.append(
            _boundary(
                graph.path,
                graph.number,
                len(report.boundaries) + 1,
                node,
                backend,
                record,
                split,
                table,
                accepted,
                produced,
                npu_names,
            )
        )
        run = []
    if run:
        report.segments.append(_segment(graph.number, run, run_backend))
    if not any(npu.search(name) for name in full_names):
        report.notes.append(
            f"no backend of this graph matches the NPU pattern `{npu.pattern}`: {', '.join(full_names)}"
        )
    return report


def _segment(graph: int, run: list[DumpNode], backend: str) -> Segment:
    return Segment(graph, run[0].index, run[-1].index, len(run), run[0].name, run[-1].name, run[0].line, backend)


def _source_name(shown: str) -> str:
    copy = _COPY.match(shown)
    return copy.group("name") if copy else shown


def _name_matches(shown: str, full: str) -> bool:
    """A dump name is the first 20 characters of the whole name."""
    return full == shown or (len(shown) == 20 and full.startswith(shown))


def _record_for(node: DumpNode, records: list[SupportsOp], session: str) -> SupportsOp | None:
    """The supports-op line of this node: the same op and tensor (and sources), asked of the segment's session."""
    candidates = [
        record
        for record in records
        if record.op.startswith(node.op) and _name_matches(node.name, record.names.output) and record.line < node.line
    ]
    sources = [_source_name(source.name) for source in node.sources]
    with_sources = [
        record
        for record in candidates
        if len(record.names.inputs) == len(sources)
        and all(_name_matches(shown[:20], full) for shown, full in zip(sources, record.names.inputs, strict=True))
    ]
    candidates = with_sources or candidates
    own = [record for record in candidates if record.session == session]
    candidates = own or candidates
    return candidates[-1] if candidates else None


def _from_npu(source, npu_names: list[str]) -> bool:
    """Whether a source is (a view or a copy of) a tensor an NPU node of the graph produced. The CPU reads the NPU's
    host-visible buffers in place, so a CPU split after an NPU segment often lists no inputs at all."""
    base = _source_name(source.name).split(" (")[0]
    for name in npu_names:
        produced = name.split(" (")[0]
        if base == produced or (
            max(len(base), len(name)) >= 20 and (base.startswith(produced) or produced.startswith(base))
        ):
            return True
    return False


def _layer(name: str) -> int | None:
    match = _LAYER.search(name)
    return int(match.group(1)) if match else None


def _boundary(
    path: str,
    graph: int,
    number: int,
    node: DumpNode,
    backend: str,
    record: SupportsOp | None,
    split,
    table: OpTable | None,
    accepted: set[str],
    produced: set[str],
    npu_names: list[str],
) -> Boundary:
    op = record.op if record is not None else (table.resolve(node.op) if table is not None else node.op)
    base = {
        "path": path,
        "graph": graph,
        "number": number,
        "op": op,
        "tensor": node.name,
        "node": node.index,
        "line": node.line,
        "backend": backend,
        "layer": _layer(node.name),
        "supports_line": record.line if record is not None else None,
    }
    if split is not None and split.n_inputs == 0 and not any(_from_npu(source, npu_names) for source in node.sources):
        reason = "a split with no inputs that reads nothing the NPU produced (independent work placed elsewhere)"
        return Boundary(kind="free", reason=reason, **base)
    if op in VIEW_OPS:
        return Boundary(kind="free", reason="a view op", **base)
    if record is not None and record.supported:
        reason = f"supports_op took it; the scheduler placed it on {backend}, where its inputs are"
        return Boundary(kind="free", reason=reason, **base)
    if table is not None:
        support = table.support(op)
        if support is None:
            return Boundary(kind="hard", reason=f"no HTP kernel: supports_op has no case for {op}", **base)
        if not support.always and not support.kernel:
            if not support.htp_ops:
                reason = f"no HTP kernel: the host maps {support.label} to no HTP op"
            else:
                reason = f"no HTP kernel: no kernel dispatch case handles {', '.join(support.htp_ops)}"
            return Boundary(kind="hard", reason=reason, predicate=support.predicate, **base)
    foreign = foreign_buffers(record) if record is not None else []
    if foreign:
        leaves = [(name, buffer) for name, buffer in foreign if not any(_name_matches(p, name) for p in produced)]
        names = ", ".join(f"{name} ({buffer})" for name, buffer in foreign)
        if len(leaves) == len(foreign):
            reason = f"kept off the NPU by design: {names} is a weight or graph input in a non-NPU buffer"
            return Boundary(kind="free", reason=reason, tests=("buffers",), **base)
        check = table.buffer_checks[0] if table is not None and table.buffer_checks else "supports_op's buffer check"
        return Boundary(
            kind="movable",
            reason=f"{check} rejects it: {names} produced by the graph in a non-NPU buffer",
            predicate=check,
            tests=("buffers",),
            **base,
        )
    if table is not None:
        support = table.support(op)
        assert support is not None
        predicate = table.predicates.get(support.predicate or "")
        if predicate is None or record is None:
            where = support.predicate or "supports_op"
            missing = (
                "no supports-op line for the node" if record is None else "the predicate's body is not in the tree"
            )
            return Boundary(
                kind="movable", reason=f"{where} rejects it ({missing})", predicate=support.predicate, **base
            )
        verdict = judge(predicate, record)
        base["reached"] = _chain_text(table, predicate.name)
        chosen = verdict.rejected_by or verdict.possible
        tests = tuple(sorted({kind for rejection in chosen for kind in rejection.kinds}))
        if verdict.rejected_by:
            reason = f"{predicate.name} rejects it: {verdict.rejected_by[0].text}"
        elif verdict.possible:
            reason = f"{predicate.name} rejects it on a condition the log cannot show: {verdict.possible[0].text}"
        else:
            reason = f"{predicate.name} rejects it, but no rejection of its body holds for the logged operands"
        return Boundary(
            kind="movable",
            reason=reason,
            predicate=predicate.name,
            rejections=tuple(rejection.text for rejection in verdict.rejected_by),
            possible=tuple(rejection.text for rejection in verdict.possible),
            tests=tests,
            **base,
        )
    if record is None:
        return Boundary(kind="unknown", reason="no supports-op line for the node and no --tree", **base)
    if op in accepted:
        reason = (
            "supports_op rejected this node but took other nodes of the op (a kernel exists; --tree names the "
            "predicate)"
        )
        return Boundary(kind="movable", reason=reason, **base)
    reason = "supports_op took no node of this op in the log (no kernel; --tree confirms it from the source)"
    return Boundary(kind="hard", reason=reason, **base)


def _chain_text(table: OpTable, predicate: str) -> str:
    """`supports_op -> supported_x (file:line)`: the calls from supports_op to the predicate (backend.host)."""
    chain = table.chains.get(predicate, ())
    if not chain:
        return ""
    import os

    calls = " -> ".join(f"{hop.callee} ({os.path.basename(hop.site.path)}:{hop.site.line})" for hop in chain)
    return f"{chain[0].caller} -> {calls}"


def _by_op(graphs: list[GraphReport]) -> list[OpSummary]:
    groups: dict[tuple[str, str], list[Boundary]] = {}
    for graph in graphs:
        for boundary in graph.boundaries:
            groups.setdefault((boundary.op, boundary.kind), []).append(boundary)
    summaries = []
    for (op, kind), boundaries in groups.items():
        reasons = Counter(
            (boundary.rejections[0] if boundary.rejections else boundary.reason) for boundary in boundaries
        )
        summaries.append(
            OpSummary(
                op,
                kind,
                len(boundaries),
                len({(boundary.path, boundary.graph) for boundary in boundaries}),
                tuple(reasons.most_common()),
                tuple(dict.fromkeys(boundary.tensor for boundary in boundaries)),
            )
        )
    order = {kind: position for position, kind in enumerate(CLASSES)}
    return sorted(summaries, key=lambda summary: (order[summary.kind], -summary.boundaries, summary.op))
