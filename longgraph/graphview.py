"""Showing PECAN's information-point graph to a person, as the paper's Figure A1 does.

Levels are columns (the chunks on the left, the top level on the right), each node a dot labelled
with its id, edges drawn from an upper node to the nodes it was written from, thicker and redder
the heavier the weight; edges under :data:`MIN_WEIGHT` are left out (the paper omits those under
0.05). Two renderings of one layout: a PNG (matplotlib) and a self-contained HTML page (an inline SVG
with each node's text as its tooltip, then every node's text by level; no script, nothing loaded,
every text escaped). A level with more than :data:`MAX_PER_LEVEL` nodes is sampled evenly (said).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from longgraph.outputs import PAGE_MARK, PICTURE_MARK
from longgraph.state.contract import Chunk
from longgraph.state.pecan import IPGraph

MIN_WEIGHT = 0.05
MAX_PER_LEVEL = 60
_WIDTH, _ROW, _MARGIN = 260, 18, 40


@dataclass(frozen=True)
class Layout:
    """Where each shown node sits and which edges are drawn (x, y in pixels)."""

    positions: dict[int, tuple[float, float]]
    edges: list[tuple[int, int, float]]
    width: int
    height: int
    sampled: list[str]


def layout(graph: IPGraph) -> Layout:
    columns: list[list[int]] = []
    seen: set[int] = set()
    sampled: list[str] = []
    for index, level in enumerate(graph.levels):
        fresh = [i for i in level if i not in seen]  # a node that rose unchanged stays where it was made
        seen.update(fresh)
        if len(fresh) > MAX_PER_LEVEL:
            step = len(fresh) / MAX_PER_LEVEL
            sampled.append(f"layer {index + 1}: {MAX_PER_LEVEL} of {len(fresh)} nodes shown")
            fresh = [fresh[int(k * step)] for k in range(MAX_PER_LEVEL)]
        if fresh:
            columns.append(fresh)
    tallest = max((len(c) for c in columns), default=1)
    height = 2 * _MARGIN + tallest * _ROW
    positions: dict[int, tuple[float, float]] = {}
    for x, column in enumerate(columns):
        gap = (height - 2 * _MARGIN) / max(1, len(column))
        for y, node_id in enumerate(column):
            positions[node_id] = (_MARGIN + x * _WIDTH, _MARGIN + (y + 0.5) * gap)
    edges = [
        (node.id, int(lower), weight)
        for node in graph.nodes
        for lower, weight in node.edges.items()
        if weight >= MIN_WEIGHT and node.id in positions and int(lower) in positions
    ]
    return Layout(
        positions, edges, 2 * _MARGIN + max(0, len(columns) - 1) * _WIDTH + 120, int(height), sampled
    )


def _colour(weight: float) -> str:
    red = int(120 + 135 * min(1.0, weight))
    return f"#{red:02x}{int(160 * (1 - min(1.0, weight))):02x}{int(160 * (1 - min(1.0, weight))):02x}"


def node_texts(graph: IPGraph, chunks: Mapping[int, Chunk]) -> dict[int, str]:
    return {
        n.id: " ".join(
            (chunks[n.chunk_id].text if n.chunk_id is not None and n.chunk_id in chunks else n.text).split()
        )
        for n in graph.nodes
    }


def svg(graph: IPGraph, texts: Mapping[int, str]) -> str:
    """The graph as an SVG document (the HTML page embeds it)."""
    shape = layout(graph)
    esc = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{shape.width}" height="{shape.height}" '
        f'viewBox="0 0 {shape.width} {shape.height}" font-family="sans-serif" font-size="10">'
    ]
    for upper, lower, weight in sorted(shape.edges, key=lambda e: e[2]):
        (x1, y1), (x2, y2) = shape.positions[upper], shape.positions[lower]
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{_colour(weight)}" '
            f'stroke-width="{0.5 + 4 * weight:.2f}" stroke-opacity="0.8"><title>{upper} → {lower}: {weight:.3f}</title></line>'
        )
    for node_id, (x, y) in shape.positions.items():
        node = graph.node(node_id)
        fill = "#4a6fa5" if node.chunk_id is not None else "#d98b2b"
        parts.append(
            f'<g><circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{fill}"><title>{esc(texts[node_id][:600])}</title>'
            f'</circle><text x="{x + 8:.1f}" y="{y + 3:.1f}">{node_id}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def html_page(graph: IPGraph, chunks: Mapping[int, Chunk], *, title: str = "Information-point graph") -> str:
    esc = html.escape
    texts = node_texts(graph, chunks)
    shape = layout(graph)
    rows = "".join(
        f"<tr><td>{n.level}</td><td>{n.id}</td><td>{esc(texts[n.id][:400])}</td>"
        f"<td>{esc(', '.join(f'{int(k)}: {w:.2f}' for k, w in sorted(n.edges.items(), key=lambda e: -e[1])[:6]))}</td></tr>"
        for n in sorted(graph.nodes, key=lambda n: (-n.level, n.id))
    )
    meta = (
        f"<p>{len(graph.nodes)} nodes in {len(graph.levels)} layer(s) ({', '.join(str(len(v)) for v in graph.levels)});"
        f" edges: <b>{esc(graph.edge_mode)}</b> ({esc(graph.edge_model)}); construction: {esc(graph.construction)}."
        f" Edges under {MIN_WEIGHT} are not drawn; hover a node for its text.</p>"
        + "".join(f"<p>{esc(s)}</p>" for s in shape.sampled)
        + "".join(f"<p>note: {esc(s)}</p>" for s in graph.notes[:20])
    )
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{PAGE_MARK}<title>{esc(title)}</title>'
        "<style>body{font:14px/1.4 system-ui,sans-serif;margin:1.5em}td{vertical-align:top;padding:.2em .5em;"
        "border-bottom:1px solid #eee}svg{border:1px solid #ddd;max-width:100%;height:auto}</style></head>"
        f"<body><h1>{esc(title)}</h1>{meta}{svg(graph, texts)}<h2>Nodes</h2><table><tr><th>level</th><th>id</th>"
        f"<th>text</th><th>heaviest edges</th></tr>{rows}</table></body></html>"
    )


def write_png(graph: IPGraph, path: Path, *, title: str = "Information-point graph") -> None:
    """The same layout as a PNG (matplotlib, the report plots' backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shape = layout(graph)
    figure, axes = plt.subplots(figsize=(max(4.0, shape.width / 100), max(3.0, shape.height / 100)), dpi=100)
    for upper, lower, weight in sorted(shape.edges, key=lambda e: e[2]):
        (x1, y1), (x2, y2) = shape.positions[upper], shape.positions[lower]
        axes.plot([x1, x2], [y1, y2], color=_colour(weight), linewidth=0.5 + 4 * weight, alpha=0.8, zorder=1)
    for node_id, (x, y) in shape.positions.items():
        chunk = graph.node(node_id).chunk_id is not None
        axes.scatter([x], [y], s=30, color="#4a6fa5" if chunk else "#d98b2b", zorder=2)
        axes.annotate(str(node_id), (x + 6, y), fontsize=6, va="center")
    axes.set_xlim(0, shape.width)
    axes.set_ylim(shape.height, 0)
    axes.axis("off")
    axes.set_title(f"{title} — {graph.edge_mode} edges", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, metadata=PICTURE_MARK)
    plt.close(figure)


def text_lines(graph: IPGraph, chunks: Mapping[int, Chunk], preview: int = 120) -> Sequence[str]:
    """The graph as text: top level first, each node with its heaviest edges."""
    texts = node_texts(graph, chunks)
    lines = [f"{len(graph.nodes)} nodes, layers {[len(v) for v in graph.levels]}, edges: {graph.edge_mode}"]
    for node in sorted(graph.nodes, key=lambda n: (-n.level, n.id)):
        heavy = ", ".join(f"{int(k)}:{w:.2f}" for k, w in sorted(node.edges.items(), key=lambda e: -e[1])[:4])
        lines.append(
            f"L{node.level} #{node.id} {texts[node.id][:preview]}" + (f"  → {heavy}" if heavy else "")
        )
    return lines
