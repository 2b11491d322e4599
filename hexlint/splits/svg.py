"""An SVG timeline per graph: the graph's printed nodes left to right, NPU segments as bars, and each boundary as a
full-height marker coloured by class (hard red, movable orange, free green, unknown grey), with its op below."""

from __future__ import annotations

from xml.sax.saxutils import escape

from hexlint.splits.analysis import SplitsReport

COLOURS = {"hard": "#d62728", "movable": "#ff7f0e", "free": "#2ca02c", "unknown": "#7f7f7f"}
NPU_COLOUR = "#1f77b4"
OTHER_COLOUR = "#d9d9d9"
WIDTH = 1100
LEFT = 20
ROW = 120
MARKER = 8  # boundary marker width in px


def render_svg(report: SplitsReport) -> str:
    height = 60 + ROW * len(report.graphs) + 40
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>',
        '<text x="20" y="24" font-size="16">hexlint splits: NPU segments and the boundaries that end them</text>',
    ]
    legend_x = LEFT
    legend = [("NPU segment", NPU_COLOUR), ("other backend", OTHER_COLOUR)]
    legend += [(kind, COLOURS[kind]) for kind in ("hard", "movable", "free")]
    for label, colour in legend:
        parts.append(f'<rect x="{legend_x}" y="34" width="12" height="12" fill="{colour}"/>')
        parts.append(f'<text x="{legend_x + 16}" y="44">{escape(label)}</text>')
        legend_x += 20 + 8 * len(label) + 10
    for row, graph in enumerate(report.graphs):
        top = 60 + ROW * row
        count = graph.nodes_npu + graph.nodes_other
        title = (
            f"{graph.path} graph {graph.number}: {len(graph.segments)} NPU segments, floor {graph.floor}, "
            f"{graph.count('hard')} hard / {graph.count('movable')} movable / {graph.count('free')} free"
        )
        parts.append(f'<g class="graph" data-graph="{graph.number}">')
        parts.append(f'<text x="{LEFT}" y="{top + 14}">{escape(title)}</text>')
        span = WIDTH - 2 * LEFT
        parts.append(f'<rect x="{LEFT}" y="{top + 24}" width="{span}" height="40" fill="{OTHER_COLOUR}"/>')
        indexes = {index: position for position, index in enumerate(graph.node_indexes)}
        scale = span / max(count, 1)
        for segment in graph.segments:
            first, last = indexes[segment.first], indexes[segment.last]
            x = LEFT + first * scale
            parts.append(
                f'<rect class="segment" x="{x:.1f}" y="{top + 24}" width="{(last - first + 1) * scale:.1f}" '
                f'height="40" fill="{NPU_COLOUR}"><title>{escape(segment.first_tensor)} .. '
                f"{escape(segment.last_tensor)} ({segment.nodes} nodes)</title></rect>"
            )
        for boundary in graph.boundaries:
            x = LEFT + indexes[boundary.node] * scale
            colour = COLOURS[boundary.kind]
            parts.append(
                f'<rect class="boundary {boundary.kind}" x="{x:.1f}" y="{top + 20}" width="{MARKER}" height="64" '
                f'fill="{colour}"><title>{escape(boundary.kind)} {escape(boundary.op)} {escape(boundary.tensor)}: '
                f"{escape(boundary.reason)}</title></rect>"
            )
            anchor = "end" if x > WIDTH - 120 else "start"  # a label at the right edge ends at its marker
            label_x = x + MARKER if anchor == "end" else x
            parts.append(
                f'<text x="{label_x:.1f}" y="{top + 98 + 11 * (boundary.number % 2)}" font-size="10" fill="{colour}" '
                f'text-anchor="{anchor}">{escape(boundary.op)}</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
