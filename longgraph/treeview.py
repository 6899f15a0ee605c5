"""Showing a DocTree to a person: an indented text view, and a self-contained HTML page that folds.

The page has no script and loads nothing: sections are ``<details>`` elements (folded by the browser
itself), styles are inline, and every text from the document is escaped. Each node shows its number,
title, keywords and summary; a leaf shows which chunk it came from and its text (the chunk's own).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from longgraph.outputs import PAGE_MARK
from longgraph.state.contract import DocumentIn
from longgraph.state.tom import DocTree, TreeNode

_PREVIEW = 160


def _text(node: TreeNode, documents: Sequence[DocumentIn]) -> str:
    return "\n".join(documents[p.doc_index].text[p.start : p.end] for p in node.parts)


def _label(node: TreeNode) -> str:
    kind = {"section": "", "cluster": "[summary] ", "root": "[root] "}[node.kind]
    number = f"{node.number} " if node.number else ""
    return f"{kind}{number}{node.title or '(untitled)'}"


def text_lines(tree: DocTree, documents: Sequence[DocumentIn]) -> list[str]:
    """The tree as indented lines: title, keywords, and for leaves the chunk and a preview of the text."""
    lines = []
    for depth, node in tree.depth_first():
        pad = "  " * depth
        keywords = f"  [{'; '.join(node.keywords)}]" if node.keywords else ""
        lines.append(f"{pad}{_label(node)}{keywords}")
        if node.parts:
            preview = " ".join(_text(node, documents).split())
            more = "…" if len(preview) > _PREVIEW else ""
            lines.append(f"{pad}  (chunk {node.chunk_id}) {preview[:_PREVIEW]}{more}")
    return lines


_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222}
details{margin:.2em 0 .2em 1.2em;border-left:2px solid #dde}summary{cursor:pointer;padding:.15em .4em}
.kw{color:#666;font-size:.9em}.sum{color:#333;margin:.2em 1.6em}.chunk{color:#888;font-size:.85em}
pre{white-space:pre-wrap;background:#f7f7fa;padding:.6em;margin:.3em 1.6em;font-size:.9em}
.cluster>summary{color:#244a8f}.root>summary{color:#8f2424}
"""


def html_page(tree: DocTree, documents: Sequence[DocumentIn], *, title: str = "Document tree") -> str:
    """A self-contained page: one ``<details>`` per node, nested as the tree."""
    esc = html.escape

    def render(node_id: int, depth: int) -> str:
        node = tree.node(node_id)
        head = f"<summary><b>{esc(_label(node))}</b>"
        if node.keywords:
            head += f' <span class="kw">{esc("; ".join(node.keywords))}</span>'
        head += "</summary>"
        body = f'<div class="sum">{esc(node.summary)}</div>' if node.summary else ""
        if node.parts:
            body += (
                f'<div class="chunk">from chunk {node.chunk_id}</div><pre>{esc(_text(node, documents))}</pre>'
            )
        body += "".join(render(child, depth + 1) for child in node.children)
        opened = " open" if depth < 2 else ""
        return f'<details class="{node.kind}"{opened}>{head}{body}</details>'

    losses = "".join(f"<li>chunk {k}: {esc(v)}</li>" for k, v in sorted(tree.losses.items()))
    meta = (
        f"<p>{len(tree.nodes)} nodes from {len(tree.chunk_ids)} chunks; aggregation: {esc(tree.aggregation or '-')}"
        f" ({tree.aggregation_rounds} round(s)).</p>"
    )
    lost = (
        f"<details><summary>What the parser lost ({len(tree.losses)})</summary><ul>{losses}</ul></details>"
        if losses
        else ""
    )
    roots = "".join(render(root, 0) for root in tree.roots)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{PAGE_MARK}<title>{esc(title)}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{esc(title)}</h1>{meta}{lost}{roots}</body></html>"
    )
