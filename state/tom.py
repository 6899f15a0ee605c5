"""ToM's DocTree and graph state (Tree-oriented MapReduce, Guo et al., 2025).

The DocTree is typed and serialisable: it is cached in the result cache's SQLite file per document,
parser model, prompt version and settings, so a second question on the same document reuses it
without a parse or aggregation call. Nodes are stored flat (``nodes`` by id) with child ids; a leaf's
text is never the model's: it is a span of the original documents (``parts``), the chunk's own text
being the source of truth wherever the parser dropped or rewrote something.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, Field

from longgraph.state.contract import ChunkPart
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, ChunkRead, Note
from longgraph.state.outputs import DocSections

NodeKind = Literal["section", "cluster", "root"]
"""``section``: parsed from a chunk (HSP); ``cluster``: a summary made by bottom-up aggregation;
``root``: joins a top layer that did not converge to one node (no model call, no summary)."""


class TreeNode(BaseModel):
    id: int
    kind: NodeKind
    title: str = ""
    keywords: list[str] = Field(default_factory=list)
    summary: str = ""
    number: str = ""
    """The parser's section number ("1", "1.2", "1.2.1"); empty for aggregation nodes."""
    chunk_id: int | None = None
    """The chunk a section was parsed from."""
    parts: list[ChunkPart] = Field(default_factory=list)
    """A leaf's text: spans of the original documents (empty for inner nodes)."""
    children: list[int] = Field(default_factory=list)


class ChunkParse(BaseModel):
    """What parsing one chunk gave: its subtree roots and what the parser lost, or why it failed."""

    chunk_id: int
    nodes: list[TreeNode] = Field(default_factory=list)
    """The chunk's sections (ids local to this parse, renumbered when the tree is assembled)."""
    roots: list[int] = Field(default_factory=list)
    loss: str | None = None
    """What the parser dropped or rewrote, when it did (the chunk's own text was kept)."""
    error: str | None = None
    raw: str | None = None


class ParsedChunk(BaseModel):
    """A parse call's outcome for one chunk: the outline (None when unreadable), for ``build_tree``."""

    chunk_id: int
    outline: DocSections | None = None
    error: str | None = None
    raw: str | None = None


class DocTree(BaseModel):
    """The document tree: sections parsed from chunks, summaries above them, one root or a few."""

    nodes: list[TreeNode] = Field(default_factory=list)
    """Indexed by id."""
    roots: list[int] = Field(default_factory=list)
    chunk_ids: list[int] = Field(default_factory=list)
    """The chunks the tree was built from (after query-aware compression)."""
    losses: dict[int, str] = Field(default_factory=dict)
    """Chunk id → what its parser dropped or rewrote."""
    aggregation_rounds: int = 0
    aggregation: str = ""
    """How bottom-up aggregation ended (one root, converged, bounded, or turned off)."""

    def node(self, node_id: int) -> TreeNode:
        return self.nodes[node_id]

    def depth_first(self) -> list[tuple[int, TreeNode]]:
        """(depth, node) from the roots down, children in order."""
        out: list[tuple[int, TreeNode]] = []

        def visit(node_id: int, depth: int) -> None:
            node = self.nodes[node_id]
            out.append((depth, node))
            for child in node.children:
                visit(child, depth + 1)

        for root in self.roots:
            visit(root, 0)
        return out

    def heights(self) -> dict[int, int]:
        """Node id → height (0 for a leaf): the post-order level a node is reasoned at."""
        memo: dict[int, int] = {}

        def height(node_id: int) -> int:
            if node_id not in memo:
                children = self.nodes[node_id].children
                memo[node_id] = 0 if not children else 1 + max(height(c) for c in children)
            return memo[node_id]

        for root in self.roots:
            height(root)
        return memo


class AggregateTask(TypedDict):
    """Summarise one cluster of a layer into a parent node."""

    index: int
    members: list[TreeNode]
    question: str
    round: int
    total: int


class Aggregated(BaseModel):
    index: int
    members: list[int]
    parent: TreeNode | None = None
    """None: the summary could not be read; the members are promoted unchanged."""
    error: str | None = None


class ReasonTask(TypedDict):
    """Reason at one node: reduce its children's results, then map on its own information."""

    index: int
    node: TreeNode
    children: list[Note]
    leaf_text: str
    question: str
    round: int
    total: int


class Reasoned(BaseModel):
    index: int
    node_id: int
    read: ChunkRead | None = None
    """A leaf's reading (grounded against the leaf's own text when the round is gathered)."""

    note: Note | None = None
    """An inner node's note (already grounded against its children's quotes)."""
    decision: str | None = None


class ToMState(RunState, total=False):
    selected: list[int]
    """Chunk ids the tree is built from (all, or the top-k of query-aware compression)."""
    selection: dict[int, str]
    """Chunk id → why it was selected (its rank and similarity), reported with the chunk."""
    parses: Annotated[list[ParsedChunk], operator.add]
    doc_tree: DocTree
    tree_key: str
    """The tree cache key of this document and settings."""
    layer: list[int]
    """Node ids of the aggregation's current top layer."""
    aggregated: Annotated[list[Aggregated], operator.add]
    reasoned: Annotated[list[Reasoned], operator.add]
    results: dict[int, Note]
    """Node id → the note its reasoning gave (absent: no evidence below it)."""
    leaf_outcomes: list[ChunkOutcome]
    extra: dict[str, Any]
