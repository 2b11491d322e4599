"""`hexlint splits` output: text (per graph, then per op), JSON (the same records) and an SVG timeline."""

from __future__ import annotations

import json
from dataclasses import asdict

from hexlint.backend.ops import OpTable
from hexlint.splits.analysis import GraphReport, SplitsReport


def _plural(count: int, noun: str) -> str:
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun[:-1]}ies" if noun.endswith("y") else f"{count} {noun}s"


def graph_heading(graph: GraphReport) -> str:
    npu = ", ".join(name for name in graph.backends if graph.nodes_npu and name in _npu_names(graph)) or "the NPU"
    return (
        f"{graph.path}:{graph.line}: graph {graph.number}: {_plural(graph.nodes_npu + graph.nodes_other, 'node')} "
        f"({graph.nodes_npu} on {npu}, {graph.nodes_other} elsewhere), {_plural(graph.splits, 'split')}, "
        f"{_plural(len(graph.segments), 'NPU segment')}, floor {graph.floor} "
        f"({graph.count('hard')} hard + 1)"
    )


def _npu_names(graph: GraphReport) -> set[str]:
    return {segment.backend for segment in graph.segments}


def render_text(report: SplitsReport, verbose: bool = False) -> str:
    lines: list[str] = []
    for graph in report.graphs:
        lines.append(graph_heading(graph))
        for boundary in graph.boundaries:
            layer = f" layer {boundary.layer}" if boundary.layer is not None else ""
            lines.append(
                f"  {boundary.number:>3}  {boundary.kind:<7}  {boundary.op:<14} {boundary.tensor:<22} "
                f"line {boundary.line}{layer} -> {boundary.backend}: {boundary.reason}"
            )
            if verbose:
                for text in boundary.possible[1:] if not boundary.rejections else boundary.rejections[1:]:
                    lines.append(f"         also: {text}")
                if boundary.reached:
                    lines.append(f"         via {boundary.reached}")
                if boundary.supports_line is not None:
                    lines.append(f"         supports-op line {boundary.supports_line}")
        layers = graph.layers()
        if len(layers) > 1:
            per_layer = "; ".join(
                f"{layer}: "
                + ", ".join(f"{count} {kind}" for kind, count in counts.items())
                + f" (floor {counts.get('hard', 0) + 1})"
                for layer, counts in layers.items()
            )
            lines.append(f"  per layer: {per_layer}")
        for note in graph.notes:
            lines.append(f"  note: {note}")
    if report.ops:
        lines.append("")
        lines.append(f"By op ({_plural(sum(op.boundaries for op in report.ops), 'boundary')}, most first per class):")
        for op in report.ops:
            detail = "; ".join(f"{text} ({count})" if count > 1 else text for text, count in op.predicates[:2])
            lines.append(f"  {op.kind:<7}  {op.op:<14} {op.boundaries:>3} in {_plural(op.graphs, 'graph')}: {detail}")
    totals = {kind: sum(graph.count(kind) for graph in report.graphs) for kind in ("hard", "movable", "free")}
    segments = sum(len(graph.segments) for graph in report.graphs)
    floor = sum(graph.floor for graph in report.graphs)
    splits = sum(graph.splits for graph in report.graphs)
    unknown = sum(graph.count("unknown") for graph in report.graphs)
    lines.append("")
    lines.append(
        f"{_plural(len(report.graphs), 'graph')}: {_plural(splits, 'split')} and {_plural(segments, 'NPU segment')} "
        f"today, floor {floor}; "
        f"boundaries {totals['hard']} hard, {totals['movable']} movable, {totals['free']} free"
        + (f", {unknown} unknown (the floor counts hard ones only)" if unknown else "")
        + (
            f" (static op table from {report.tree})"
            if report.tree
            else " (classes from the log alone; --tree reads them from the source)"
        )
    )
    if report.torn_records:
        lines.append(f"{_plural(report.torn_records, 'dump record')} read across other threads' lines")
    for path, line in report.unreadable:
        lines.append(f"{path}:{line}: warning: a dump record that does not parse (left out)")
    for note in report.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines) + "\n"


def render_json(report: SplitsReport) -> str:
    data = asdict(report)
    for graph, source in zip(data["graphs"], report.graphs, strict=True):
        graph["floor"] = source.floor
        graph["layers"] = {str(layer): counts for layer, counts in source.layers().items()}
        graph["hard"], graph["movable"], graph["free"] = (source.count(kind) for kind in ("hard", "movable", "free"))
    data["unreadable"] = [{"path": path, "line": line} for path, line in report.unreadable]
    return json.dumps(data, indent=2) + "\n"


def render_op_table(table: OpTable, as_json: bool) -> str:
    """Each op desc supports_op has a case for: its predicate, its HTP ops, whether a kernel handles them."""
    rows = []
    for op, support in sorted(table.ops.items()):
        predicate = table.predicates.get(support.predicate or "")
        rows.append(
            {
                "op": op,
                "label": support.label,
                "predicate": support.predicate,
                "always": support.always,
                "htp_ops": list(support.htp_ops),
                "kernel": support.kernel,
                "rejections": [
                    {"text": rejection.text, "tests": sorted(rejection.kinds), "line": rejection.span.line}
                    for rejection in (predicate.rejections if predicate else ())
                ],
            }
        )
    if as_json:
        document = {"supports_op": table.supports_op, "buffer_checks": list(table.buffer_checks), "ops": rows}
        return json.dumps(document, indent=2) + "\n"
    lines = [
        f"supports_op: {table.supports_op or '(none found)'}; buffer checks: {', '.join(table.buffer_checks) or '-'}"
    ]
    for row in rows:
        if row["always"]:
            state = "taken, no kernel needed (view / no-op)"
        elif row["kernel"]:
            state = f"HTP kernel ({', '.join(row['htp_ops'])}) if {row['predicate'] or 'supports_op'} accepts"
        elif row["htp_ops"]:
            state = f"no kernel dispatch case for {', '.join(row['htp_ops'])}"
        elif row["predicate"] is None:
            state = "by sub-op (see the unary / GLU ops)" if row["op"] in ("UNARY", "GLU") else "never taken"
        else:
            state = "no HTP op in the host's mapping"
        tests = sorted({test for rejection in row["rejections"] for test in rejection["tests"]})
        rejects = f"; {len(row['rejections'])} rejections ({', '.join(tests)})" if row["rejections"] else ""
        lines.append(f"  {row['op']:<16} {state}{rejects}")
    lines.append("Ops with no case at all have no HTP kernel: a node of one is a hard boundary.")
    return "\n".join(lines) + "\n"
