"""PECAN's information-point graph and graph state (paper: pecan.txt §3, Appendices A–C).

The graph is built once per document and reused by every question: typed and serialisable, it is
cached in the result cache's SQLite file per document, model, prompt version and settings. Level-1
nodes are the document's chunks (their text is a span of the documents, never the model's); every
higher node is one Information Point (IP) the model wrote about a batch of lower nodes, with weighted
edges to the members of that batch (normalised so an upper node's weights sum to 1, §3.1(c)).

How the edges were weighted is part of the graph (``edge_mode``): ``attention`` (the paper's: a local
model's attention from the IP's tokens to each member's, teacher-forced) or ``embedding-similarity``
(the fallback for a served endpoint, which returns no attention). The two are never mixed in a graph,
and the label travels to the result's ``stats.structure`` and every eval record.
"""

from __future__ import annotations

import base64
import operator
from typing import Annotated, Any, Literal, TypedDict

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from longgraph.state.graph_state import RunState

EdgeMode = Literal["attention", "embedding-similarity"]
RelevanceMode = Literal["attention", "embedding-similarity"]


class IPNode(BaseModel):
    id: int
    level: int
    """1: a chunk of the document; 2 and up: an Information Point written about lower nodes."""
    text: str = ""
    """An IP's text (empty for a chunk: its text is the chunk's span of the documents)."""
    chunk_id: int | None = None
    edges: dict[int, float] = Field(default_factory=dict)
    """Lower node id → edge weight (sums to 1 over an IP's edges; empty for chunks)."""


class IPGraph(BaseModel):
    """The hierarchical weighted DAG of one document (paper §3.1)."""

    nodes: list[IPNode] = Field(default_factory=list)
    """Indexed by id: chunks first (id = position in ``chunk_ids``), then IPs level by level."""
    levels: list[list[int]] = Field(default_factory=list)
    """The layers the construction went through, bottom (the chunks) first; the last is the top."""
    chunk_ids: list[int] = Field(default_factory=list)
    edge_mode: EdgeMode = "embedding-similarity"
    edge_model: str = ""
    """The model whose attention (or embeddings) weighted the edges."""
    construction: str = ""
    """How construction ended: one batch left, or the fallback taken (bound, no progress)."""
    notes: list[str] = Field(default_factory=list)
    """What went wrong on the way (unreadable batches whose members rose unchanged, ...)."""
    vectors: str = ""
    """Unit embedding vectors of every node's pieces, int8 (× 127) in base64: the search's similarity
    term. A cosine from int8 vectors is within ~0.01 of the float one; a quarter of float32's size."""
    vector_owners: list[int] = Field(default_factory=list)
    """Node id of each row of ``vectors`` (a chunk is embedded in pieces)."""
    embedding_model: str = ""

    @property
    def top(self) -> list[int]:
        return list(self.levels[-1]) if self.levels else []

    def node(self, node_id: int) -> IPNode:
        return self.nodes[node_id]

    def piece_vectors(self) -> NDArray[np.float32]:
        if not self.vectors:
            return np.zeros((0, 0), dtype=np.float32)
        flat = np.frombuffer(base64.b64decode(self.vectors), dtype=np.int8).astype(np.float32) / 127.0
        return flat.reshape(len(self.vector_owners), -1)

    def with_vectors(self, vectors: NDArray[np.float32], owners: list[int], model: str) -> IPGraph:
        quantised = np.clip(np.rint(np.asarray(vectors, dtype=np.float32) * 127.0), -127, 127).astype(np.int8)
        packed = base64.b64encode(quantised.tobytes()).decode("ascii")
        return self.model_copy(update={"vectors": packed, "vector_owners": owners, "embedding_model": model})

    def edge_matrix(self) -> NDArray[np.float32]:
        """E with ``E[i, j]`` the weight of the edge from node i down to node j (paper §3.2.2)."""
        n = len(self.nodes)
        matrix = np.zeros((n, n), dtype=np.float32)
        for node in self.nodes:
            for lower, weight in node.edges.items():
                matrix[node.id, int(lower)] = weight
        return matrix


class IPBatchTask(TypedDict):
    """Write the Information Points of one batch of a layer."""

    index: int
    members: list[int]
    texts: list[str]
    round: int
    total: int


class IPBatch(BaseModel):
    index: int
    members: list[int]
    points: list[str] = Field(default_factory=list)
    edges: list[dict[int, float]] = Field(default_factory=list)
    """Per point: member id → weight (attention mode; filled later from embeddings otherwise)."""
    error: str | None = None
    raw: str | None = None
    """The model's answer when it could not be read (shown in the failure's message)."""
    attention_seconds: float = 0.0


class SearchStep(BaseModel):
    """One turn of the dynamic graph search, for the result's trace."""

    turn: int
    node: int | None = None
    """The node retrieved before this turn (None: the first turn, on the top-level nodes)."""
    score: float | None = None
    verdict: str = ""
    """"Yes", "No", or why the turn asked nothing (fixed-k, unreadable)."""


class PecanState(RunState, total=False):
    ip_graph: IPGraph
    graph_key: str
    layer: list[int]
    """Node ids of the construction's current layer."""
    batches: Annotated[list[IPBatch], operator.add]
    extra: dict[str, Any]
    visited: list[int]
    """S, in the order the nodes entered the search prompt (top-level nodes first)."""
    relevance: dict[int, float]
    """r: each visited node's relevance to the question (attention × position index, or similarity)."""
    similarity: list[float]
    """Each node's embedding similarity to the question (best piece)."""
    yes_count: int
    search_trace: list[SearchStep]
    search_stop: str
    """Why the search stopped (the patience reached, the bound, the window, nothing left)."""
    search_limits: dict[str, int]
    """``patience`` (0: fixed-k, no Yes/No turn) and ``max_nodes``, from the run's context."""
    search_tokens: int
    """Tokens the search prompt's information takes (the condensed note and the shown nodes)."""
    condensed_note: str
    """What the model noted from the nodes condensed out of the search prompt (shown before the nodes)."""
    shown_from: int
    """The search prompt shows ``visited[shown_from:]``: the nodes visited since the last condensing."""
    condensations: int
    """How many times the search prompt was condensed."""
    room_needed: int | None
    """The node that would overflow the search prompt, while its nodes are condensed to make room."""
    answer_error: str
    """Why the answer turn gave no answer (unparseable after its retries); empty when it answered."""
