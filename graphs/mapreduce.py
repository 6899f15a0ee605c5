"""LLM×MapReduce (Zhou et al., 2024): chunk → map ∥ → gather → [collapse ∥ → gather]* → reduce.

START → chunk ──Send per chunk──▶ map_chunk → gather_map → plan_reduction
plan_reduction ──fits──▶ reduce → finalize → END
plan_reduction ──too long──Send per group──▶ collapse_group → gather_collapse → plan_reduction
plan_reduction ──no information──▶ finalize
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.collapse import (
    collapse_group,
    gather_collapse,
    gather_map,
    plan_reduction,
    route_reduction,
)
from longgraph.nodes.finalize import finalize
from longgraph.nodes.map import fan_out_map, map_chunk
from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.reduce import reduce_notes
from longgraph.nodes.runtime import as_node
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.mapreduce import CollapseTask, MapReduceState, MapTask


def build_graph(
    llm: LLMProvider = default_provider, *, checkpointer: BaseCheckpointSaver[str] | None = None
) -> CompiledStateGraph[MapReduceState, Context, GraphInputState, GraphOutputState]:
    builder = StateGraph(
        MapReduceState, context_schema=Context, input_schema=GraphInputState, output_schema=GraphOutputState
    )
    builder.add_node("chunk", as_node(chunk_input))
    builder.add_node("map_chunk", as_node(map_chunk, llm=llm), input_schema=MapTask)
    builder.add_node("gather_map", as_node(gather_map))
    builder.add_node("plan_reduction", as_node(plan_reduction))
    builder.add_node("collapse_group", as_node(collapse_group, llm=llm), input_schema=CollapseTask)
    builder.add_node("gather_collapse", as_node(gather_collapse))
    builder.add_node("reduce", as_node(reduce_notes, llm=llm))
    builder.add_node("finalize", as_node(finalize))

    builder.add_edge(START, "chunk")
    builder.add_conditional_edges("chunk", fan_out_map, ["map_chunk"])
    builder.add_edge("map_chunk", "gather_map")
    builder.add_edge("gather_map", "plan_reduction")
    builder.add_conditional_edges("plan_reduction", route_reduction, ["collapse_group", "reduce", "finalize"])
    builder.add_edge("collapse_group", "gather_collapse")
    builder.add_edge("gather_collapse", "plan_reduction")
    builder.add_edge("reduce", "finalize")
    builder.add_edge("finalize", END)
    return builder.compile(name="mapreduce", checkpointer=checkpointer)


graph = build_graph()
