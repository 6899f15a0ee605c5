"""Building ToM's DocTree: select chunks, parse each into a subtree, aggregate bottom-up, cache the tree.

* **select** — query-aware compression (paper Algorithm 2): chunks scored by embedding similarity to
  the question (each chunk embedded in pieces and scored by its best piece, as the RAG baseline
  does: a fact at the end of a 1K-token chunk must not be averaged away), the top ``tom_top_k`` (7,
  the paper's; the public code uses 3) kept in document order; the others are reported ``filtered``
  with their rank and score. ``tom_top_k = 0`` turns compression off (the whole document).
* **load / save** — the tree is cached in the result cache's SQLite file, keyed by the selected
  chunks' text, the model, the parse and summary prompt versions and the tree settings: a second
  question that selects the same chunks (always, without compression) makes no parse or aggregation
  call. Build cost and question cost are reported apart (``stats.build``).
* **parse** — one call per selected chunk (paper Figure 12), in parallel; ``nodes/tree.py`` makes the
  outline a subtree whose leaves partition the chunk's own text.
* **aggregate** — :class:`TreeAggregation`, a bounded loop (``nodes/loop.py``): the layer's nodes are
  embedded (title, keywords, summary), linked to their ``k`` nearest neighbours by cosine similarity,
  clustered with Leiden (``leidenalg`` on an ``igraph`` graph, modularity with weights, fixed seed),
  and each cluster of two or more nodes is summarised by the model into a parent (a cluster too large
  for one summary prompt is split in order). Repeat until one node is left, or the clusters stop
  changing (every cluster a single node), or ``max_collapse_rounds`` rounds — then a root joins the
  top layer without a summary call (the documented fallback). Guards: a layer of one node is done; a
  layer of two is joined by one summary (no clustering on two points).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from langgraph.types import Send
from numpy.typing import NDArray

from longgraph.nodes.checks import documents_of
from longgraph.nodes.kit import RunKit
from longgraph.nodes.loop import BoundedLoop, fresh_loop
from longgraph.nodes.reduction import group_in_order
from longgraph.nodes.retrieval import best_piece_scores, pieces_of
from longgraph.nodes.runtime import report_progress
from longgraph.nodes.structure_store import find_built, keep_finished
from longgraph.nodes.tree import TreeStore, assemble, leaf_text, node_info, subtree_from_outline, tree_key
from longgraph.state.contract import Chunk
from longgraph.state.graph_state import cleared
from longgraph.state.outputs import ClusterSummary, DocSections
from longgraph.state.tasks import ReadTask
from longgraph.state.tom import Aggregated, AggregateTask, DocTree, ParsedChunk, ToMState, TreeNode

PROMPTS = "tom"
NEIGHBOURS = 5
"""k of the k-nearest-neighbour graph Leiden clusters (fewer when the layer is smaller)."""
RESOLUTION = 1.0
SEED = 0


async def select_chunks(state: ToMState, kit: RunKit) -> ToMState:
    """Query-aware compression: keep the ``tom_top_k`` chunks most similar to the question."""
    chunks: list[Chunk] = state["input_chunks"]
    k = kit.context.tom_top_k
    if k <= 0 or len(chunks) <= k:
        why = (
            f"retrieved: all {len(chunks)} chunks (query-aware compression keeps {k})"
            if k > 0
            else ("retrieved: query-aware compression is off (tom_top_k 0)")
        )
        return {"selected": [c.id for c in chunks], "selection": {c.id: why for c in chunks}}
    started = time.perf_counter()
    size = kit.context.embedding_piece_tokens
    texts, owners = await asyncio.to_thread(pieces_of, chunks, size, kit.tokenizer)
    vectors = await kit.embed([state["question"], *texts])
    scores = best_piece_scores(vectors[0], vectors[1:], owners, len(chunks))
    ranked = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))
    keep = sorted(ranked[:k])
    rank = {index: r for r, index in enumerate(ranked, start=1)}
    filtered = [
        (
            chunks[i].id,
            f"not among the top {k} chunks for the question (rank {rank[i]} of {len(chunks)}, "
            f"similarity {scores[i]:.3f}): the tree was built without it",
        )
        for i in range(len(chunks))
        if i not in keep
    ]
    report_progress("select", total=1, message=f"{k} of {len(chunks)} chunks")
    return {
        "selected": [chunks[i].id for i in keep],
        "selection": {
            chunks[
                i
            ].id: f"retrieved: rank {rank[i]} of {len(chunks)} by embedding similarity ({scores[i]:.3f})"
            for i in keep
        },
        "filtered": filtered,
        "unread": [chunk_id for chunk_id, _ in filtered],
        "decisions": [
            f"query-aware compression: built the tree from {k} of {len(chunks)} chunks (embedding similarity, "
            f"{time.perf_counter() - started:.1f} s)"
        ],
    }


def _settings_key(kit: RunKit, aggregate: bool) -> dict[str, object]:
    prompts = kit.prompts(PROMPTS)
    return {
        "model": kit.context.model,
        "endpoint": kit.client().cache_identity,
        "parse": prompts.key("parse"),
        "summarize": prompts.key("summarize"),
        "temperature": kit.context.temperature,
        "aggregate": aggregate,
        "neighbours": NEIGHBOURS,
        "resolution": RESOLUTION,
        "embedding": kit.context.embedding_url or kit.context.embedding_model or "bundled",
        "max_rounds": kit.context.max_collapse_rounds,
    }


async def load_tree(state: ToMState, kit: RunKit, *, aggregate: bool = True) -> ToMState:
    """The cached tree of these chunks and settings, if the result cache holds one."""
    chunks = [c for c in state["input_chunks"] if c.id in set(state["selected"])]
    key = tree_key(chunks, documents_of(state), parts=_settings_key(kit, aggregate))
    saved = "the document tree came from the cache: no parse or aggregation call"
    update: ToMState = {"tree_key": key}
    cached = await find_built(_tree_store(kit), key, update, stage="tree", saved=saved)
    return {**update, "doc_tree": cached} if cached is not None else update


def _tree_store(kit: RunKit) -> TreeStore | None:
    path = kit.context.cache_path
    return TreeStore(path) if path else None


def parse_or_reason(target: str) -> Any:
    """A router: the cached tree goes straight to reasoning; otherwise every selected chunk is sent
    to ``target`` (the parser)."""

    def route(state: ToMState) -> list[Send] | str:
        if state.get("built_from_cache"):
            return "reason"
        selected = set(state["selected"])
        chunks = [c for c in state["input_chunks"] if c.id in selected]
        return [Send(target, ReadTask(chunk=c, question="", total=len(chunks))) for c in chunks]

    route.__name__ = f"parse_or_reason_{target}"
    return route


async def parse_chunk(task: ReadTask, kit: RunKit) -> ToMState:
    """Hierarchical semantic parsing of one chunk (its outline; ``build_tree`` makes the subtree)."""
    chunk = task["chunk"]
    result = await kit.call(
        PROMPTS,
        "parse",
        text=chunk.text,
        question="",
        work=f"parse of chunk {chunk.id}",
        record_unanswered=True,
    )
    report_progress("parse", total=task["total"])
    outline = result.value if isinstance(result.value, DocSections) else None
    parsed = ParsedChunk(
        chunk_id=chunk.id, outline=outline, error=result.error, raw=None if outline else result.raw
    )
    return {"parses": [parsed], "usage": result.usage, "build_usage": result.usage}


async def build_tree(state: ToMState, kit: RunKit) -> ToMState:
    """Each chunk's outline made a subtree (leaves hold the chunk's own text), the subtrees assembled;
    their roots are the first layer of the aggregation."""
    chunks = {c.id: c for c in state["input_chunks"]}
    documents = documents_of(state)
    parsed = sorted(state.get("parses") or [], key=lambda p: p.chunk_id)

    def make() -> DocTree:
        return assemble(
            [subtree_from_outline(p.outline, chunks[p.chunk_id], documents, error=p.error) for p in parsed]
        )

    tree = await asyncio.to_thread(make)
    failed = [p.chunk_id for p in parsed if p.outline is None]
    decisions = []
    if tree.losses:
        decisions.append(
            f"the parser lost text in {len(tree.losses)} chunk(s) (chunks "
            f"{', '.join(map(str, sorted(tree.losses)[:20]))}): their own text was kept in the tree"
        )
    if failed:
        decisions.append(f"the parse of {len(failed)} chunk(s) could not be read: each is one leaf")
    handover: ToMState = {
        "doc_tree": tree,
        "layer": list(tree.roots),
        "decisions": decisions,
        "parses": cleared(),
    }
    return fresh_loop(handover)


def knn_clusters(vectors: NDArray[np.float32], neighbours: int = NEIGHBOURS) -> list[list[int]]:
    """Leiden communities of the k-nearest-neighbour cosine graph of unit ``vectors`` (in first-member order)."""
    import igraph
    import leidenalg

    n = len(vectors)
    if n <= 1:
        return [list(range(n))]
    similarity = vectors @ vectors.T
    k = max(1, min(neighbours, n - 1))
    edges: dict[tuple[int, int], float] = {}
    for i in range(n):
        row = similarity[i].copy()
        row[i] = -np.inf
        for j in np.argsort(-row)[:k]:
            a, b = (i, int(j)) if i < j else (int(j), i)
            edges[(a, b)] = max(edges.get((a, b), 0.0), float(max(row[j], 1e-6)))
    graph = igraph.Graph(n=n, edges=list(edges))
    graph.es["weight"] = list(edges.values())
    partition = leidenalg.find_partition(
        graph,
        leidenalg.RBConfigurationVertexPartition,
        weights="weight",
        resolution_parameter=RESOLUTION,
        seed=SEED,
    )
    clusters = [sorted(int(v) for v in community) for community in partition if community]
    return sorted(clusters, key=lambda c: c[0])


@dataclass(frozen=True)
class TreeAggregation(BoundedLoop):
    """Bottom-up aggregation of a DocTree's top layer (see the module docstring)."""

    name: str = "aggregation"
    combine_node: str = "summarize_cluster"
    results_key: str = "aggregated"
    enabled: bool = True
    """False: the "no aggregation" ablation (a root joins the subtrees, no clustering, no summary)."""

    async def plan(self, state: ToMState, kit: RunKit) -> ToMState:
        tree: DocTree = state["doc_tree"]
        layer: list[int] = state.get("layer") or list(tree.roots)
        if len(layer) <= 1:
            return {"loop_tasks": [], "doc_tree": _finished(tree, layer, "one root")}
        if not self.enabled:
            return {
                "loop_tasks": [],
                "doc_tree": _joined(
                    tree, layer, "aggregation turned off (ablation): one root joins the subtrees"
                ),
            }
        question = state["question"]
        if len(layer) == 2:
            clusters = [layer]
        else:
            vectors = await kit.embed([_summary_text(tree.node(i)) for i in layer])
            communities = await asyncio.to_thread(knn_clusters, vectors)  # igraph's import touches the disk
            clusters = [[layer[i] for i in cluster] for cluster in communities]
        budget = kit.budget(PROMPTS, "summarize", question)
        sized = [group for cluster in clusters for group in _split(cluster, tree, kit, budget)]
        stalled = "left every node in a cluster of its own" if all(len(c) == 1 for c in sized) else None
        why = self.stop_reason(state, kit, stalled=stalled)
        if why is not None:
            return {
                "loop_tasks": [],
                "doc_tree": _joined(tree, layer, f"{why}: one root joins the {len(layer)} top nodes"),
            }
        round_no = self.next_round(state)
        multi = [c for c in sized if len(c) > 1]
        tasks = [
            AggregateTask(
                index=i,
                members=[tree.node(n) for n in c],
                question=question,
                round=round_no,
                total=len(multi),
            )
            for i, c in enumerate(multi)
        ]
        order = [c[0] if len(c) == 1 else -1 - multi.index(c) for c in sized]
        return {"loop_tasks": tasks, "extra": {**(state.get("extra") or {}), "layer_order": order}}

    async def absorb(self, results: Sequence[Any], state: ToMState, kit: RunKit, round_no: int) -> ToMState:
        tree = state["doc_tree"].model_copy(deep=True)
        by_index = {r.index: r for r in results}
        next_layer: list[int] = []
        decisions = []
        for entry in (state.get("extra") or {}).get("layer_order", []):
            if entry >= 0:
                next_layer.append(entry)  # a single-node cluster rises unchanged
                continue
            result: Aggregated = by_index[-1 - entry]
            if result.parent is None:
                next_layer += result.members
                decisions.append(
                    f"a cluster summary (round {round_no}) was unreadable ({result.error}): its nodes rise unchanged"
                )
                continue
            parent = result.parent.model_copy(
                update={"id": len(tree.nodes), "children": list(result.members)}
            )
            tree.nodes.append(parent)
            next_layer.append(parent.id)
        tree.roots = next_layer
        tree.aggregation_rounds = round_no
        return {"doc_tree": tree, "layer": next_layer, "decisions": decisions}


def _summary_text(node: TreeNode) -> str:
    return "\n".join(x for x in (node.title, "; ".join(node.keywords), node.summary) if x) or node.title


@dataclass(frozen=True)
class _Sized:
    node_id: int
    tokens: int


def _split(cluster: list[int], tree: DocTree, kit: RunKit, budget: int) -> list[list[int]]:
    """A cluster too large for one summary prompt, split in order under the prompt's budget."""
    counts = kit.tokenizer.count_batch([node_info(tree.node(i)) for i in cluster])
    groups = group_in_order([_Sized(i, n + 4) for i, n in zip(cluster, counts, strict=True)], budget)
    return [[s.node_id for s in g] for g in groups]


def _finished(tree: DocTree, layer: list[int], how: str) -> DocTree:
    return tree.model_copy(update={"roots": list(layer), "aggregation": how})


def _joined(tree: DocTree, layer: list[int], how: str) -> DocTree:
    """The documented fallback: a root without a summary call joins the top layer."""
    joined = tree.model_copy(deep=True)
    root = TreeNode(id=len(joined.nodes), kind="root", title="Document", children=list(layer))
    joined.nodes.append(root)
    joined.roots = [root.id]
    joined.aggregation = how
    return joined


async def summarize_cluster(task: AggregateTask, kit: RunKit) -> ToMState:
    """One parent node (title, keywords, summary) for a cluster of nodes."""
    members = task["members"]
    text = "\n\n".join(f"Section {i}:\n{node_info(m)}" for i, m in enumerate(members, 1))
    result = await kit.call(
        PROMPTS,
        "summarize",
        text=text,
        question=task["question"],
        work=f"summary of cluster {task['index']} in aggregation round {task['round']}",
    )
    report_progress("aggregate", total=task["total"], message=f"round {task['round']}")
    members_ids = [m.id for m in members]
    if isinstance(result.value, ClusterSummary):
        value = result.value
        parent = TreeNode(
            id=-1, kind="cluster", title=value.title, keywords=value.keywords[:5], summary=value.summary
        )
        done = Aggregated(index=task["index"], members=members_ids, parent=parent)
    else:
        done = Aggregated(index=task["index"], members=members_ids, error=result.error)
    return {"aggregated": [done], "usage": result.usage, "build_usage": result.usage}


async def save_tree(state: ToMState, kit: RunKit) -> ToMState:
    """Keep the finished tree in the result cache for the next question (:func:`keep_finished`)."""
    seconds = await keep_finished(_tree_store(kit), state["tree_key"], state["doc_tree"], state)
    return fresh_loop(ToMState(build_seconds=seconds))


__all__ = [
    "TreeAggregation",
    "build_tree",
    "knn_clusters",
    "leaf_text",
    "load_tree",
    "parse_chunk",
    "parse_or_reason",
    "save_tree",
    "select_chunks",
    "summarize_cluster",
]
