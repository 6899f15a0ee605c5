"""ToM's DocTree: a chunk's outline made into a subtree, subtrees assembled, nodes shown to the model.

**The chunk's text is the source of truth.** The parser (paper Figure 12) restructures a chunk into
numbered sections and is asked to carry the original text in its leaves; a model may drop, shorten
or rewrite it. So a leaf's text here is never the model's: each leaf's start is located in the chunk
(the opening words of its text, tolerant to case, spacing and punctuation: ``nodes/checks: find_span``)
and the leaves partition the chunk in order — a leaf runs from its start to the next leaf's, the
first one from the chunk's start, the last one to its end. Every character of the chunk is in exactly
one leaf. A leaf whose start cannot be found keeps its title and summary in the outline but no text
of its own (its text stays with the leaf before it); when no leaf can be found, or the parse failed
or gave no section, the chunk is one leaf. What the parser lost is recorded per chunk (sections not
found, and for the paper's protocol the share of the chunk's words its leaves did not reproduce).

Where the paper is silent: numbers deeper than four levels are attached at the fourth; top-level
sections beyond the fifth are folded into the fifth (their text stays in the partition); a node's
information for the model is its title, keywords, summary and (leaves) its text.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from pathlib import Path

from longgraph.nodes.checks import Indexed, find_span, words_of
from longgraph.nodes.structure_store import StructureStore
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn
from longgraph.state.outputs import DocSections, ParsedSection
from longgraph.state.tom import ChunkParse, DocTree, TreeNode

MAX_TOP_SECTIONS = 5
MAX_LEVELS = 4
_ANCHOR_WORDS = 12
"""Opening words of a leaf's text used to find where it starts in the chunk."""
_REWRITE_NOTE = 0.1
"""Record a rewrite when the leaves' own text misses more than this share of the chunk's words."""


def _number(section: ParsedSection) -> tuple[int, ...]:
    digits = [p for p in section.number.replace(" ", "").strip(".").split(".") if p.isdigit()]
    return tuple(int(p) for p in digits[:MAX_LEVELS]) or (0,)


def _locate_start(text: str, chunk: Chunk, documents: Sequence[DocumentIn]) -> tuple[int, int] | None:
    """(part index, offset in its document) where ``text``'s opening words occur in the chunk."""
    anchor = " ".join(words_of(text)[:_ANCHOR_WORDS])
    if not anchor:
        return None
    for index, part in enumerate(chunk.parts):
        doc_text = documents[part.doc_index].text[part.start : part.end]
        found = find_span(anchor, Indexed.of(doc_text, part.start))
        if found is not None:
            return index, found[0]
    return None


def _spans(chunk: Chunk, cuts: Sequence[tuple[int, int]]) -> list[list[ChunkPart]]:
    """The chunk cut at ``cuts`` (part index, offset), in order: one list of spans per piece."""
    pieces: list[list[ChunkPart]] = []
    bounds = [(0, chunk.parts[0].start), *cuts[1:], (len(chunk.parts) - 1, chunk.parts[-1].end)]
    for (p0, o0), (p1, o1) in itertools.pairwise(bounds):
        spans = []
        for index in range(p0, p1 + 1):
            part = chunk.parts[index]
            start = o0 if index == p0 else part.start
            end = o1 if index == p1 else part.end
            if end > start:
                spans.append(ChunkPart(doc_index=part.doc_index, title=part.title, start=start, end=end))
        pieces.append(spans)
    return pieces


def subtree_from_outline(
    outline: DocSections | None, chunk: Chunk, documents: Sequence[DocumentIn], *, error: str | None = None
) -> ChunkParse:
    """The chunk's subtree: the outline's sections, leaves holding spans of the chunk (module docstring)."""
    if outline is None or not outline.sections:
        title = (outline.title if outline else "") or " ".join(words_of(chunk.text)[:8])
        root = TreeNode(
            id=0,
            kind="section",
            title=title,
            keywords=outline.keywords if outline else [],
            summary=outline.summary if outline else "",
            chunk_id=chunk.id,
            parts=list(chunk.parts),
        )
        loss = None if outline is not None else f"the parse failed ({error}): the chunk is one leaf"
        if outline is not None:
            loss = "the outline had no section: the chunk is one leaf"
        return ChunkParse(chunk_id=chunk.id, nodes=[root], roots=[0], loss=loss, error=error)

    root = TreeNode(
        id=0,
        kind="section",
        title=outline.title,
        keywords=outline.keywords,
        summary=outline.summary,
        chunk_id=chunk.id,
    )
    nodes: list[TreeNode] = [root]
    by_number: dict[tuple[int, ...], int] = {}
    folded = 0
    tops: list[tuple[int, ...]] = []
    renamed: dict[int, tuple[int, ...]] = {}
    texts: dict[int, str] = {}
    for section in outline.sections:
        number = _number(section)
        if len(number) == 1 and number not in tops:
            tops.append(number)
            if len(tops) > MAX_TOP_SECTIONS:  # folded under the fifth, sub-numbers carried along
                folded += 1
                renamed[number[0]] = (*tops[MAX_TOP_SECTIONS - 1], 100 + folded)
        if number[0] in renamed:
            number = (renamed[number[0]] + number[1:])[:MAX_LEVELS]
        parent_id = 0
        for depth in range(len(number) - 1, 0, -1):
            if number[:depth] in by_number:
                parent_id = by_number[number[:depth]]
                break
        node = TreeNode(
            id=len(nodes),
            kind="section",
            title=section.title,
            keywords=section.keywords[:5],
            summary=section.summary,
            number=".".join(map(str, number)),
            chunk_id=chunk.id,
        )
        nodes.append(node)
        by_number.setdefault(number, node.id)
        nodes[parent_id].children.append(node.id)
        texts[node.id] = section.text

    leaves = [nodes[i] for i in _preorder(nodes, 0) if not nodes[i].children and i != 0]  # document order
    located: list[tuple[tuple[int, int], TreeNode]] = []
    unfound: list[TreeNode] = []
    for leaf in leaves:
        start = _locate_start(texts.get(leaf.id, ""), chunk, documents)
        if start is None or (located and start <= located[-1][0]):
            unfound.append(leaf)
        else:
            located.append((start, leaf))
    losses: list[str] = []
    if folded:
        losses.append(f"{folded} top-level section(s) beyond the fifth were folded into the fifth")
    if not located:
        root.parts = list(chunk.parts)
        root.children = []
        losses.append("no section's text was found in the chunk: the chunk is one leaf")
        return ChunkParse(chunk_id=chunk.id, nodes=[root], roots=[0], loss="; ".join(losses))
    for (_, leaf), spans in zip(located, _spans(chunk, [start for start, _ in located]), strict=True):
        leaf.parts = spans
    if unfound:
        losses.append(
            f"{len(unfound)} of {len(leaves)} section(s) had text not found in the chunk; the chunk's own "
            "text stays with the sections around them"
        )
        _prune_textless(nodes, {leaf.id for leaf in unfound})
    claimed = set(words_of(" ".join(texts.get(leaf.id, "") for _, leaf in located)))
    words = words_of(" ".join(documents[p.doc_index].text[p.start : p.end] for p in chunk.parts))
    missing = sum(w not in claimed for w in words) / len(words) if words else 0.0
    if missing > _REWRITE_NOTE and any(
        len(texts.get(leaf.id, "").split()) > _ANCHOR_WORDS for _, leaf in located
    ):
        losses.append(f"the outline's text left out or rewrote {missing:.0%} of the chunk's words")
    kept = set(_preorder(nodes, 0))
    return ChunkParse(
        chunk_id=chunk.id, nodes=[n for n in nodes if n.id in kept], roots=[0], loss="; ".join(losses) or None
    )


def _prune_textless(nodes: Sequence[TreeNode], unfound: set[int]) -> None:
    """Detach the ``unfound`` leaves, then every section left with neither children nor text: a node
    with no text under it holds only model-written summary, which nothing could verify."""
    dropped = set(unfound)
    while dropped:
        for node in nodes:
            node.children = [c for c in node.children if c not in dropped]
        dropped = {n.id for n in nodes if n.id != 0 and not n.children and not n.parts} - dropped
        dropped = {i for i in dropped if any(i in n.children for n in nodes)}


def _preorder(nodes: Sequence[TreeNode], root: int) -> list[int]:
    order: list[int] = []
    stack = [root]
    while stack:
        node_id = stack.pop()
        order.append(node_id)
        stack.extend(reversed(nodes[node_id].children))
    return order


def assemble(parses: Sequence[ChunkParse]) -> DocTree:
    """One tree from the chunks' subtrees (in chunk order), node ids renumbered."""
    tree = DocTree()
    for parse in sorted(parses, key=lambda p: p.chunk_id):
        mapping: dict[int, int] = {}
        for node in parse.nodes:
            mapping[node.id] = len(tree.nodes) + len(mapping)
        for node in parse.nodes:
            tree.nodes.append(
                node.model_copy(
                    update={"id": mapping[node.id], "children": [mapping[c] for c in node.children]}
                )
            )
        tree.roots += [mapping[r] for r in parse.roots]
        tree.chunk_ids.append(parse.chunk_id)
        if parse.loss:
            tree.losses[parse.chunk_id] = parse.loss
    return tree


def leaf_text(node: TreeNode, documents: Sequence[DocumentIn]) -> str:
    return "\n".join(documents[p.doc_index].text[p.start : p.end] for p in node.parts)


NODE_INFO_TOKENS = 200
"""Tokens a node's title, keywords and summary may take in a prompt (their lengths are capped below):
chunks are sized so that a leaf's whole text fits beside them."""


def _capped(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars].rsplit(" ", 1)[0] + "…"


def node_info(node: TreeNode, text: str = "") -> str:
    """What the model is shown of a node: title, keywords, summary (model-written, so capped to fit
    :data:`NODE_INFO_TOKENS`), and a leaf's original text."""
    lines = [f"Title: {_capped(node.title, 120) or '(untitled)'}"]
    if node.keywords:
        lines.append(f"Keywords: {'; '.join(_capped(k, 40) for k in node.keywords[:5])}")
    if node.summary:
        lines.append(f"Summary: {_capped(node.summary, 400)}")
    if text:
        lines.append(f"Original Text: {text}")
    return "\n".join(lines)


def tree_key(chunks: Sequence[Chunk], documents: Sequence[DocumentIn], *, parts: dict[str, object]) -> str:
    """The cache key of a tree: the chunks' text and what shapes the tree (model, prompts, settings)."""
    digest = hashlib.sha256()
    for chunk in chunks:
        for part in chunk.parts:
            digest.update(
                documents[part.doc_index].text[part.start : part.end].encode("utf-8", "surrogatepass")
            )
            digest.update(b"\x00")
        digest.update(b"\x01")
    digest.update(json.dumps(parts, sort_keys=True, default=str).encode())
    return digest.hexdigest()


class TreeStore(StructureStore[DocTree]):
    """DocTrees in the result cache's SQLite file (table ``doc_trees``): build once, ask many times."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(path, "doc_trees", DocTree)
