"""PECAN (pecan.txt): an information-point graph built once per document, searched under the model's control.

START → chunk → load_graph ──cached──▶ start_search
load_graph ──new──▶ plan_level ──Send per batch──▶ write_points → gather_level → plan_level
plan_level ──with a result cache──▶ prefetch_vectors (the layer's vectors, beside write_points) → gather_level
plan_level ──one batch left, or bounded──▶ embed_graph → save_graph → start_search
start_search → ask ──"No"──▶ retrieve → ask …        ask ──p × "Yes", or the bound──▶ answer
retrieve ──the next node would overflow the prompt──▶ condense (its nodes become a note) → retrieve
answer → conclude → finalize → END

``write_points`` is Table A1 (one node per Information Point) with attention edges read from a local
model, or embedding-similarity edges when only an endpoint is at hand (``nodes/ip_graph.py``);
``ask``/``retrieve`` are dynamic progress control and graph search (``z = Eᵀ r`` + similarity,
``nodes/graph_search.py``); ``answer`` is Table A2's second turn; ``conclude`` grounds the answer on the
chunks the search reached. Ablations: ``edges="embedding"`` (no attention), ``use_similarity=False``
(attention only), ``fixed_k=True`` (no progress control: ``pecan_fixed_k`` nodes, no Yes/No turn).
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.wiring import add_finalize, add_loop, answering_builder, chain
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.graph_search import (
    after_condensing,
    after_retrieval,
    after_verdict,
    answer_from_graph,
    ask_sufficiency,
    conclude_search,
    condense_search_prompt,
    retrieve_node,
    start_search,
)
from longgraph.nodes.ip_graph import (
    PREFETCH_NODE,
    IPConstruction,
    build_or_search,
    embed_graph,
    load_ip_graph,
    prefetch_vectors,
    save_ip_graph,
    write_points,
)
from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.runtime import NodeFactory, node_factory
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.pecan import EdgeMode, IPBatchTask, PecanState

PROMPTS = "pecan"
CONSTRUCTION = IPConstruction()
SERVED_RECURSION_LIMIT = 200
"""Served graphs get no per-run config from ``longgraph.ask``: a ceiling above the search's own bounds."""


def add_graph_construction(
    builder: StateGraph[PecanState, Context, Any, Any],
    node: NodeFactory,
    *,
    edges: EdgeMode | None,
    then: str,
    **chunking: Any,
) -> None:
    """START → chunk → load_graph ──cached──▶ ``then``; else levels ⟲ → embed → save → ``then``.
    ``chunking``: more options of :func:`chunk_input` (what else a chunk must fit)."""
    builder.add_node(
        "chunk", node(chunk_input, prompts=PROMPTS, stage="points", size="pecan_chunk_tokens", **chunking)
    )
    builder.add_node("load_graph", node(load_ip_graph, edges=edges))
    builder.add_node(PREFETCH_NODE, node(prefetch_vectors))
    builder.add_node("embed_graph", node(embed_graph))
    builder.add_node("save_graph", node(save_ip_graph))
    chain(builder, START, "chunk", "load_graph")
    write = node(write_points, edges=edges)
    levels = add_loop(
        builder,
        node,
        CONSTRUCTION,
        step=write,
        task=IPBatchTask,
        done="embed_graph",
        stem="level",
        beside=(PREFETCH_NODE,),
    )
    builder.add_conditional_edges("load_graph", build_or_search, {"build": levels, "search": then})
    chain(builder, "embed_graph", "save_graph", then)


def build_graph(
    llm: LLMProvider = default_provider,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    edges: EdgeMode | None = None,
    use_similarity: bool = True,
    fixed_k: bool = False,
    name: str = "pecan",
) -> CompiledStateGraph[PecanState, Context, GraphInputState, GraphOutputState]:
    node = node_factory(llm)
    builder = answering_builder(PecanState)
    add_graph_construction(builder, node, edges=edges, then="start_search", also_fits=("enough", "answer"))
    builder.add_node("start_search", node(start_search, use_similarity=use_similarity, fixed_k=fixed_k))
    builder.add_node("ask", node(ask_sufficiency))
    builder.add_node("retrieve", node(retrieve_node, use_similarity=use_similarity, fixed_k=fixed_k))
    builder.add_node("condense", node(condense_search_prompt))
    builder.add_node("answer", node(answer_from_graph))
    builder.add_node("conclude", node(conclude_search))
    builder.add_edge("start_search", "retrieve" if fixed_k else "ask")
    builder.add_conditional_edges("ask", after_verdict, {"retrieve": "retrieve", "answer": "answer"})
    builder.add_conditional_edges(
        "retrieve",
        after_retrieval(fixed_k),
        {"ask": "ask", "retrieve": "retrieve", "condense": "condense", "answer": "answer"},
    )
    builder.add_conditional_edges("condense", after_condensing, {"retrieve": "retrieve", "answer": "answer"})
    builder.add_edge("answer", "conclude")
    add_finalize(builder, node, name, after=("conclude",))
    compiled = builder.compile(name=name, checkpointer=checkpointer)
    return compiled.with_config({"recursion_limit": SERVED_RECURSION_LIMIT})


def build_ip_graph_graph(
    llm: LLMProvider = default_provider, *, edges: EdgeMode | None = None
) -> CompiledStateGraph[PecanState, Context, PecanState, PecanState]:
    """The graph construction alone, for ``longgraph graph show``: no question, no search."""
    builder = StateGraph(PecanState, context_schema=Context)
    add_graph_construction(builder, node_factory(llm), edges=edges, then=END)
    return builder.compile(name="pecan-graph")


PECAN = Strategy(
    "pecan",
    build_graph,
    "PECAN: an information-point graph (attention or embedding-similarity edges) searched until the model "
    "says it has enough",
    cost=CostShape("ip-graph", PROMPTS, "points"),
)
NO_ATTENTION = PECAN.variant(
    "pecan-no-attention",
    "PECAN ablation: embedding-similarity edges and relevance only (no attention read)",
    edges="embedding-similarity",
)
NO_EMBEDDING = PECAN.variant(
    "pecan-no-embedding",
    "PECAN ablation: attention only, no embedding-similarity term in the search (needs a local model)",
    edges="attention",
    use_similarity=False,
)
FIXED_K = PECAN.variant(
    "pecan-fixed-k",
    "PECAN ablation without dynamic progress control: a fixed number of retrieved nodes (pecan_fixed_k)",
    fixed_k=True,
)
STRATEGIES = (PECAN, NO_ATTENTION, NO_EMBEDDING, FIXED_K)

graph = PECAN.build()
graph_no_attention = NO_ATTENTION.build()
graph_no_embedding = NO_EMBEDDING.build()
graph_fixed_k = FIXED_K.build()
