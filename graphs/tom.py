"""ToM, Tree-oriented MapReduce (Guo et al., 2025): a document tree, built once, reasoned over bottom-up.

START → plan_records ──aggregates──▶ the records route (``graphs/wiring.py``) → finalize
plan_records ──otherwise──▶ chunk → select → load_tree ──cached──▶ plan_reasoning
load_tree ──Send per selected chunk──▶ parse_chunk → build_tree → plan_aggregation
plan_aggregation ──Send per cluster──▶ summarize_cluster → gather_aggregation → plan_aggregation
plan_aggregation ──one root, or converged, or bounded──▶ save_tree → plan_reasoning
plan_reasoning ──Send per node of the next tree level──▶ reason_at_node → gather_reasoning → plan_reasoning
plan_reasoning ──root reached──▶ conclude → finalize → END

``select`` is the query-aware compression (top-k chunks by embedding similarity); ``parse_chunk`` the
Hierarchical Semantic Parsing (leaves keep the chunk's own text); aggregation embeds a layer, clusters
it with Leiden and summarises each cluster (``nodes/tree_build.py``); reasoning is the recursive
Map/Reduce in post-order, grounded against the source (``nodes/tree_reason.py``). Both loops are the
project's bounded loop (``nodes/loop.py``). Ablations: ``aggregate=False`` ("no aggregation": the
subtrees under one root), ``confidence=False`` ("no confidence": prompts and notes without scores).
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.wiring import add_finalize, add_loop, add_records_route, answering_builder, chain
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.runtime import NodeFactory, node_factory
from longgraph.nodes.tree import NODE_INFO_TOKENS
from longgraph.nodes.tree_build import (
    TreeAggregation,
    build_tree,
    load_tree,
    parse_chunk,
    parse_or_reason,
    save_tree,
    select_chunks,
    summarize_cluster,
)
from longgraph.nodes.tree_reason import TreeReduce, conclude, reason_at_node
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.tasks import ReadTask
from longgraph.state.tom import AggregateTask, ReasonTask, ToMState

PROMPTS = "tom"
REASONING = TreeReduce()


def add_tree_building(
    builder: StateGraph[ToMState, Context, Any, Any],
    node: NodeFactory,
    *,
    aggregate: bool,
    then: str,
    **chunking: Any,
) -> None:
    """The tree: chunk → select → (cached) or parse ∥ → build → aggregate ⟲ → save → ``then`` (the caller
    wires what leads to ``chunk``). ``chunking``: more options of :func:`chunk_input` (what else a chunk
    must fit)."""
    chunk = node(chunk_input, prompts=PROMPTS, stage="parse", size="tom_chunk_tokens", **chunking)
    builder.add_node("chunk", chunk)
    builder.add_node("select", node(select_chunks))
    builder.add_node("load_tree", node(load_tree, aggregate=aggregate))
    builder.add_node("parse_chunk", node(parse_chunk), input_schema=ReadTask)
    builder.add_node("build_tree", node(build_tree))
    builder.add_node("save_tree", node(save_tree))
    chain(builder, "chunk", "select", "load_tree")
    builder.add_conditional_edges(
        "load_tree", parse_or_reason("parse_chunk"), {"parse_chunk": "parse_chunk", "reason": then}
    )
    aggregation = TreeAggregation(enabled=aggregate)
    summarize = node(summarize_cluster)
    plan = add_loop(builder, node, aggregation, step=summarize, task=AggregateTask, done="save_tree")
    chain(builder, "parse_chunk", "build_tree", plan)
    builder.add_edge("save_tree", then)


def build_graph(
    llm: LLMProvider = default_provider,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    aggregate: bool = True,
    confidence: bool = True,
    name: str = "tom",
) -> CompiledStateGraph[ToMState, Context, GraphInputState, GraphOutputState]:
    node = node_factory(llm)
    builder = answering_builder(ToMState)
    # The chunk must fit the reasoning prompts too (a leaf is a whole chunk beside its title and summary).
    fits = ("map", "reduce") if confidence else ("map_plain", "reduce_plain")
    builder.add_edge(START, add_records_route(builder, node, otherwise="chunk"))
    add_tree_building(
        builder, node, aggregate=aggregate, then="plan_reasoning", also_fits=fits, reserve=NODE_INFO_TOKENS
    )

    reason = node(reason_at_node, confidence=confidence)
    add_loop(builder, node, REASONING, step=reason, task=ReasonTask, done="conclude")
    builder.add_node("conclude", node(conclude))
    add_finalize(builder, node, name, after=("conclude", "compute_records"))
    return builder.compile(name=name, checkpointer=checkpointer)


def build_tree_graph(
    llm: LLMProvider = default_provider, *, aggregate: bool = True
) -> CompiledStateGraph[ToMState, Context, ToMState, ToMState]:
    """The tree alone, for ``longgraph tree show``: no question, so no reasoning."""
    builder = StateGraph(ToMState, context_schema=Context)
    builder.add_edge(START, "chunk")
    add_tree_building(builder, node_factory(llm), aggregate=aggregate, then=END)
    return builder.compile(name="tom-tree")


TOM = Strategy(
    "tom",
    build_graph,
    "ToM: a document tree (parsed chunks, Leiden-clustered summaries) reasoned over bottom-up",
    cost=CostShape("tree", PROMPTS, "parse", plans=True),
)
NO_AGGREGATION = TOM.variant(
    "tom-no-aggregation",
    "ToM ablation without bottom-up aggregation (the chunks' subtrees under one root)",
    aggregate=False,
)
NO_CONFIDENCE = TOM.variant(
    "tom-no-confidence", "ToM ablation without confidence scores in its Map and Reduce", confidence=False
)
STRATEGIES = (TOM, NO_AGGREGATION, NO_CONFIDENCE)

graph = TOM.build()
graph_no_aggregation = NO_AGGREGATION.build()
graph_no_confidence = NO_CONFIDENCE.build()
