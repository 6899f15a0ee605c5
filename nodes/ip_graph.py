"""Building PECAN's information-point graph (paper §3.1): once per document, cached, reused by questions.

* **level 1** — the document's chunks (``pecan_chunk_tokens``, 300 as in the paper, the one chunker).
* **a level** — :class:`IPConstruction`, the project's bounded loop (``nodes/loop.py``): the layer's
  nodes are batched in order, each batch filled up to the threshold ``s`` (``pecan_batch_tokens``,
  8K, never more than the points prompt can hold), and the model writes one batch's Information Points
  (Table A1 prompt; one node a point). Repeat until a layer forms a single batch: its points are the top
  level. Where the paper is silent: a batch whose answer is unreadable or has no point passes its members
  up unchanged (said in the graph's ``notes``). More than ``max_failed_fraction`` of a level's batches
  failing ends construction with the level below as the top (said in ``construction``): measured with
  SmolLM2 on loong-synth, a 452-second build failed on its one level-3 batch, though the level below was
  a complete graph. On the first summary level the budget is not for points but for chunks, and a
  failed batch loses none (its chunks rise unchanged), so only every batch failing ends it there, with
  the chunks as the top: the search then starts from the chunks most like the question, as it does
  from any top too large for its prompt. It used to raise ``TooManyFailures`` — measured with SmolLM2
  on dev (seed 11, 8K), 1 of 16 PECAN runs failed so on a two-batch level, though every chunk was
  there to read. The graph is kept in the cache like any other (same document, model and prompts
  would give the same unreadable answers at temperature 0), unless a call ran out of the endpoint's
  retries (:func:`save_ip_graph`). A round that does not shrink the layer, or ``max_collapse_rounds``
  rounds, ends construction with the current layer as the top (said too).
* **edges** — an IP's edges go to the members of its batch (the nodes it was written from). With
  ``attention`` they are the paper's: the local model re-reads the batch prompt and the points it
  answered (teacher forcing, ``nodes/attention.py``), attention from each point's tokens to each
  member's averaged over heads, layers and tokens, normalised per point (§3.1(c)). With
  ``embedding-similarity`` (no local model) a point's weights are its cosine similarity to each member
  (best piece, negatives as 0), normalised the same way — labelled as such in the graph, never called
  attention.
* **vectors** — every node is embedded once (chunks in pieces, as the RAG baseline does): the search's
  similarity term, reused by every question.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from langgraph.types import Send

from longgraph.embeddings import resolve_precision
from longgraph.errors import ConfigurationError
from longgraph.nodes.attention import attention_reader, normalise_rows, spans_in
from longgraph.nodes.checks import documents_of
from longgraph.nodes.kit import RunKit
from longgraph.nodes.loop import BoundedLoop, fresh_loop
from longgraph.nodes.reduction import SizedNode, group_in_order
from longgraph.nodes.retrieval import PIECES, pieces_of
from longgraph.nodes.runtime import report_progress
from longgraph.nodes.structure_store import StructureStore, find_built, keep_finished
from longgraph.nodes.tree import tree_key
from longgraph.prompts import neutralise_frames
from longgraph.state.contract import Chunk
from longgraph.state.outputs import InformationPoints
from longgraph.state.pecan import EdgeMode, IPBatch, IPBatchTask, IPGraph, IPNode, PecanState
from longgraph.structured import Mode, format_instructions

PROMPTS = "pecan"
MAX_POINT_CHARS = 300
PIECE_TOKENS = 48
"""Chunks are embedded in pieces this long (a sentence or two) and a chunk scores by its best piece.
Measured with the bundled MiniLM on a planted fact: the fact's sentence alone scores 0.78 against the
question, with 100 characters of prose before it 0.43, with 300 characters 0.07 — while 250-character
pieces of unrelated prose reach 0.56. Whole 300-token chunks would bury a fact under its neighbours."""


def graph_store(kit: RunKit) -> StructureStore[IPGraph] | None:
    path = kit.context.cache_path
    return StructureStore(path, "ip_graphs", IPGraph) if path else None


def edge_mode(kit: RunKit, forced: EdgeMode | None = None) -> EdgeMode:
    """The run's edge mode: the strategy's own (an ablation), else ``pecan_edges`` (see Context)."""
    setting = forced or kit.context.pecan_edges
    if setting in ("embedding", "embedding-similarity"):
        return "embedding-similarity"
    if setting == "attention" and not kit.context.attention_model:
        raise ConfigurationError(
            "PECAN's attention edges need a local model: set attention_model to a transformers folder "
            "(the embedded server's is used automatically), or pecan_edges=embedding"
        )
    return "attention" if kit.context.attention_model else "embedding-similarity"


def node_text(node: IPNode, chunks: Mapping[int, Chunk]) -> str:
    """What a node says, on one line: a chunk's own text (whitespace folded) or the point."""
    text = chunks[node.chunk_id].text if node.chunk_id is not None else node.text
    return " ".join(text.split())


def _settings(kit: RunKit, mode: EdgeMode, precision: str | None) -> dict[str, object]:
    return {
        "model": kit.context.model,
        "endpoint": kit.client().cache_identity,
        "points": kit.prompts(PROMPTS).key("points"),
        "edges": mode,
        "attention_model": kit.context.attention_model if mode == "attention" else None,
        "attention_precision": precision,
        "batch": kit.context.pecan_batch_tokens,
        "temperature": kit.context.temperature,
        "embedding": kit.context.embedding_url or kit.context.embedding_model or "bundled",
        "pieces": PIECES,
        "max_rounds": kit.context.max_collapse_rounds,
        "mode": kit.client().mode,
    }


async def load_ip_graph(state: PecanState, kit: RunKit, *, edges: EdgeMode | None = None) -> PecanState:
    """The cached graph of this document and settings, or a new one holding the chunks as level 1."""
    mode = edge_mode(kit, edges)  # a missing local model is refused here, before any call
    chunks: list[Chunk] = state["input_chunks"]
    # Off the loop: the attention precision asks torch about the CPU (its first import blocks); without
    # attention, torch may not even be installed (an endpoint's embeddings).
    wanted = kit.context.attention_precision
    precision = await asyncio.to_thread(resolve_precision, wanted) if mode == "attention" else None
    key = tree_key(chunks, documents_of(state), parts=_settings(kit, mode, precision))
    saved = "the information-point graph came from the cache: no construction call"
    update: PecanState = {"graph_key": key}
    cached = await find_built(graph_store(kit), key, update, stage="graph", saved=saved)
    if cached is not None:
        return {**update, "ip_graph": cached}
    level_one = [IPNode(id=i, level=1, chunk_id=c.id) for i, c in enumerate(chunks)]
    graph = IPGraph(
        nodes=level_one,
        levels=[[n.id for n in level_one]],
        chunk_ids=[c.id for c in chunks],
        edge_mode=mode,
        edge_model=_model_name(kit, mode),
    )
    handover: PecanState = {
        **update,
        "ip_graph": graph,
        "layer": graph.levels[0],
        "extra": {"previous_tokens": None, "single_batch": False},
    }
    return fresh_loop(handover)


def _model_name(kit: RunKit, mode: EdgeMode) -> str:
    if mode == "attention":
        return str(kit.context.attention_model)
    return kit.context.embedding_model or (kit.context.embedding_url or "all-MiniLM-L6-v2 (bundled)")


def build_or_search(state: PecanState) -> str:
    """A router: a cached graph goes straight to the search; a new one is built level by level."""
    return "search" if state.get("built_from_cache") else "build"


@dataclass(frozen=True)
class IPConstruction(BoundedLoop):
    """One level per round (see the module docstring)."""

    name: str = "graph construction"
    combine_node: str = "write_points"
    results_key: str = "batches"

    async def plan(self, state: PecanState, kit: RunKit) -> PecanState:
        graph: IPGraph = state["ip_graph"]
        layer: list[int] = state.get("layer") or graph.top
        extra = dict(state.get("extra") or {})
        if extra.get("stopped"):
            return {
                "loop_tasks": [],
                "ip_graph": graph.model_copy(update={"construction": str(extra["stopped"])}),
            }
        if extra.get("single_batch"):
            return {"loop_tasks": [], "ip_graph": graph.model_copy(update={"construction": "one batch left"})}
        chunks = {c.id: c for c in state["input_chunks"]}
        texts = [node_text(graph.node(i), chunks) for i in layer]
        counts = _token_counts(graph, layer, texts, chunks, kit)
        total = sum(counts)
        previous = extra.get("previous_tokens")
        stalled = self.did_not_shrink(total, previous, "the layer")
        why = self.stop_reason(state, kit, stalled=stalled)
        if why is not None:
            return {
                "loop_tasks": [],
                "ip_graph": graph.model_copy(update={"construction": f"{why}: its layer is the top"}),
            }
        batches = batch_layer(layer, counts, kit)
        text_of = dict(zip(layer, texts, strict=True))
        round_no = self.next_round(state)
        tasks = [
            IPBatchTask(
                index=b,
                members=[s.node_id for s in batch],
                texts=[text_of[s.node_id] for s in batch],
                round=round_no,
                total=len(batches),
            )
            for b, batch in enumerate(batches)
        ]
        # The vectors of what this round reads (the chunks, then each level's points) can be embedded
        # beside its calls, into the result cache where embed_graph finds them; without a cache they
        # would be embedded twice, so then not.
        prefetch = bool(kit.context.cache_path)
        return {
            "loop_tasks": tasks,
            "extra": {
                **extra,
                "previous_tokens": total,
                "single_batch": len(batches) == 1,
                "prefetch": prefetch,
            },
        }

    def route(self, state: Mapping[str, Any]) -> Sequence[Send | str] | Literal["done", "empty"]:
        """The round's batches, and beside them :func:`prefetch_vectors`."""
        routed = super().route(state)
        if isinstance(routed, list) and (state.get("extra") or {}).get("prefetch"):
            return [*routed, PREFETCH_NODE]
        return routed

    async def absorb(
        self, results: Sequence[Any], state: PecanState, kit: RunKit, round_no: int
    ) -> PecanState:
        failed = [b for b in results if b.error is not None and not b.points]
        # A failed batch loses no chunk (its members rise unchanged, still searched), so the first level
        # stops construction only when no batch could be read: the failure budget is for unread chunks.
        # (Measured: with max_failed_fraction 0.2, 1 of 3 unreadable level-2 batches failed a HotpotQA
        # 16K run with SmolLM2 whose other two batches gave a graph.) Above it, the budget stops
        # construction with the level below as the top.
        if round_no == 1:
            stop = bool(results) and len(failed) == len(results)
        else:
            stop = bool(results) and len(failed) / len(results) > kit.context.max_failed_fraction
        if stop:
            why = (
                f"{len(failed)} of {len(results)} batches of level {round_no + 1} of the graph could not be read "
                f"(batches {', '.join(str(b.index) for b in failed[:20])}); first error: {failed[0].error}"
                + (f"; its answer began: {failed[0].raw[:200]!r}" if failed[0].raw else "")
            )
            top = "the chunks (level 1) are" if round_no == 1 else f"level {round_no} is"
            stopped = f"{why}: construction stopped, {top} the top"
            return {"extra": {**(state.get("extra") or {}), "stopped": stopped}, "decisions": [stopped]}
        graph = state["ip_graph"].model_copy(deep=True)
        layer: list[int] = []
        notes: list[str] = []
        for item in results:
            batch: IPBatch = item
            if not batch.points:
                layer += batch.members
                notes.append(
                    f"level {round_no + 1}: batch {batch.index} gave no information point "
                    f"({batch.error or 'an empty answer'}); its {len(batch.members)} node(s) rose unchanged"
                )
                continue
            level = 1 + max(graph.node(m).level for m in batch.members)
            uniform = {m: 1.0 / len(batch.members) for m in batch.members}
            for p, point in enumerate(batch.points):
                edges = batch.edges[p] if p < len(batch.edges) else uniform
                node = IPNode(id=len(graph.nodes), level=level, text=point, edges=edges)
                graph.nodes.append(node)
                layer.append(node.id)
        graph.levels.append(layer)
        graph.notes += notes
        return {"ip_graph": graph, "layer": layer, "decisions": notes}


def batch_layer(layer: Sequence[int], counts: Sequence[int], kit: RunKit) -> list[list[SizedNode]]:
    """A layer's nodes in consecutive batches of at most ``pecan_batch_tokens`` (and what one points
    call can hold): one construction call each. A dry run batches level 1 with it too."""
    budget = min(kit.context.pecan_batch_tokens, kit.budget(PROMPTS, "points", ""))
    return group_in_order([SizedNode(i, n + 2) for i, n in zip(layer, counts, strict=True)], budget)


def level_one_batch_texts(chunks: Sequence[Chunk], kit: RunKit) -> list[str]:
    """The text of each first-level points call, as :func:`write_points` joins it."""
    texts = {c.id: " ".join(c.text.split()) for c in chunks}
    batches = batch_layer([c.id for c in chunks], [c.tokens for c in chunks], kit)
    return ["\n".join(texts[s.node_id] for s in batch) for batch in batches]


def _token_counts(
    graph: IPGraph, layer: Sequence[int], texts: Sequence[str], chunks: Mapping[int, Chunk], kit: RunKit
) -> list[int]:
    """Tokens per node of the layer: a chunk's count is known from chunking (not counted again: 1.28M
    tokens would be re-tokenized), a point's is counted."""
    points = [k for k, i in enumerate(layer) if graph.node(i).chunk_id is None]
    counted = dict(zip(points, kit.tokenizer.count_batch([texts[k] for k in points]), strict=True))
    return [
        counted[k] if k in counted else chunks[int(graph.node(i).chunk_id or 0)].tokens
        for k, i in enumerate(layer)
    ]


def _points(value: object) -> list[str]:
    """The batch's points, cleaned: trimmed, capped, empty and repeated ones dropped."""
    if not isinstance(value, InformationPoints):
        return []
    seen: set[str] = set()
    points = []
    for raw in value.points:
        point = " ".join(str(raw).split())[:MAX_POINT_CHARS]
        if len(point) > 2 and point.lower() not in seen:
            seen.add(point.lower())
            points.append(point)
    return points


async def write_points(task: IPBatchTask, kit: RunKit, *, edges: EdgeMode | None = None) -> PecanState:
    """One batch's Information Points (Table A1), and their attention edges when a local model reads them."""
    text = "\n".join(task["texts"])
    result = await kit.call(
        PROMPTS,
        "points",
        text=text,
        question="",
        work=f"information points of batch {task['index']} (level {task['round'] + 1})",
        record_unanswered=True,
    )
    report_progress("graph", total=task["total"], message=f"level {task['round'] + 1}")
    points = _points(result.value)
    batch = IPBatch(
        index=task["index"],
        members=task["members"],
        points=points,
        error=result.error,
        raw=result.raw if result.error else None,
    )
    if points and edge_mode(kit, edges) == "attention":
        started = time.perf_counter()
        mode = stage_mode(kit, "points")
        weights = await asyncio.to_thread(_attention_edges, kit, mode, text, task["texts"], points)
        batch.edges = [dict(zip(task["members"], map(float, row), strict=True)) for row in weights]
        batch.attention_seconds = round(time.perf_counter() - started, 3)
    return {"batches": [batch], "usage": result.usage, "build_usage": result.usage}


def stage_mode(kit: RunKit, stage: str) -> Mode:
    """The protocol ``stage``'s calls use in this run (what its prompt looked like). On the event loop."""
    return "text" if kit.prompts(PROMPTS).stage(stage).mode == "text" else kit.client().mode


def _attention_edges(
    kit: RunKit, mode: Mode, text: str, members: Sequence[str], points: Sequence[str]
) -> Any:
    """Teacher-force the batch prompt and its points; each point's attention over the members, normalised."""
    reader = attention_reader(str(kit.context.attention_model), kit.context.attention_precision)
    messages = kit.prompts(PROMPTS).render(
        "points",
        kit.context.task,
        format=format_instructions(InformationPoints, mode),
        context=text,
        question="",
    )
    answer = "\n".join(f"* {p}" for p in points)
    full = reader.chat_text(messages, answer=answer)
    prompt_end = len(full) - len(answer)
    # The prompt shows the members as rendering framed them ("concludes here (quoted)."): look for that.
    shown = [neutralise_frames(member) for member in members]
    context_at = full.find(shown[0]) if shown else 0
    targets = spans_in(full, shown, max(0, context_at))
    sources = spans_in(full, [f"* {p}" for p in points], prompt_end)
    return normalise_rows(reader.read(full, sources, targets).weights)


PREFETCH_NODE = "prefetch_vectors"


async def _chunk_pieces(state: PecanState, kit: RunKit) -> tuple[list[str], list[int]]:
    """The chunks' pieces as the graph embeds them, and the chunk each belongs to."""
    chunks = {c.id: c for c in state["input_chunks"]}
    size = min(PIECE_TOKENS, kit.context.embedding_piece_tokens)
    ordered = [chunks[cid] for cid in state["ip_graph"].chunk_ids]
    return await asyncio.to_thread(pieces_of, ordered, size, kit.tokenizer)


async def prefetch_vectors(state: PecanState, kit: RunKit) -> PecanState:
    """The vectors of the layer a round reads (the chunks' pieces, then the points the last round wrote),
    embedded while the round's points are written (the same superstep): they go to the result cache,
    and :func:`embed_graph` finds them there and embeds only the top level's points. The embedder's time
    then hides behind the model's calls instead of following them; nothing is written to the state."""
    graph: IPGraph = state["ip_graph"]
    layer = [graph.node(i) for i in state.get("layer") or graph.top]
    points = [n.text for n in layer if n.chunk_id is None]
    texts = points if points else (await _chunk_pieces(state, kit))[0]
    if texts:
        await kit.embed(texts)
    report_progress("graph", total=1, message=f"embedded {len(texts)} texts beside the level's calls")
    return {}


async def embed_graph(state: PecanState, kit: RunKit) -> PecanState:
    """Embed every node once (chunks in pieces); in embedding mode, weigh each point's edges by it."""
    graph: IPGraph = state["ip_graph"].model_copy(deep=True)
    texts, owners = await _chunk_pieces(state, kit)
    points = [n for n in graph.nodes if n.chunk_id is None]
    texts += [n.text for n in points]
    owners += [n.id for n in points]
    vectors = await kit.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)
    report_progress("graph", total=1, message=f"embedded {len(texts)} pieces")
    if graph.edge_mode == "embedding-similarity":
        owner_rows: dict[int, list[int]] = {}
        for row, owner in enumerate(owners):
            owner_rows.setdefault(owner, []).append(row)
        for node in points:
            members = [int(m) for m in node.edges]
            own = vectors[owner_rows[node.id][0]]
            sims = np.array([[max(0.0, float(np.max(vectors[owner_rows[m]] @ own))) for m in members]])
            weights = normalise_rows(sims.astype(np.float64))[0]
            if not weights.any():
                weights = np.full(len(members), 1.0 / len(members))
            node.edges = dict(zip(members, map(float, weights), strict=True))
    return {"ip_graph": graph.with_vectors(vectors, owners, _embedder_name(kit))}


def _embedder_name(kit: RunKit) -> str:
    return kit.context.embedding_model or kit.context.embedding_url or "all-MiniLM-L6-v2 (bundled)"


async def save_ip_graph(state: PecanState, kit: RunKit) -> PecanState:
    """Keep the finished graph in the result cache for the next question (:func:`keep_finished`)."""
    seconds = await keep_finished(graph_store(kit), state["graph_key"], state["ip_graph"], state)
    return fresh_loop(PecanState(build_seconds=seconds))


__all__ = [
    "IPConstruction",
    "build_or_search",
    "edge_mode",
    "embed_graph",
    "load_ip_graph",
    "node_text",
    "prefetch_vectors",
    "save_ip_graph",
    "write_points",
]
