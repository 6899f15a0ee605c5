"""LLM×MapReduce with the Segment+ merge as its collapse stage: a stage swapped by editing wiring only.

Compare with ``graphs/mapreduce.py``: the chunk, map, reduce and finalize nodes are the same; the
collapse loop (``plan_reduction → collapse_group ∥ → gather_collapse``) is replaced by the Segment+
merge loop (``plan_merge → merge_batch ∥ → gather_merge``), which keeps the map outputs' Extracted
Information verbatim and merges only their reasoning. Two small adapter nodes translate the notes
(``nodes/note_adapters.py``): map outputs into Segment+ notes before the loop, and back before reduce.

START → chunk ──Send per chunk──▶ map_chunk → gather_map → to_merge_notes → plan_merge
plan_merge ──too long──Send per batch──▶ merge_batch → gather_merge → plan_merge
plan_merge ──fits (or nothing left)──▶ to_map_notes ──notes──▶ reduce → finalize → END
to_map_notes ──no note left──▶ finalize
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.collapse import gather_map
from longgraph.nodes.finalize import finalize
from longgraph.nodes.map import fan_out_map, map_chunk
from longgraph.nodes.merge import gather_merge, merge_batch, plan_merge, route_merge
from longgraph.nodes.note_adapters import map_notes_to_merge, merge_notes_to_map, route_after_merge
from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.reduce import reduce_notes
from longgraph.nodes.runtime import as_node
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.mapreduce import MapTask
from longgraph.state.segment_plus import MapReduceMergeState, MergeTask


def build_graph(
    llm: LLMProvider = default_provider,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    name: str = "mapreduce-segment-merge",
) -> CompiledStateGraph[MapReduceMergeState, Context, GraphInputState, GraphOutputState]:
    builder = StateGraph(
        MapReduceMergeState,
        context_schema=Context,
        input_schema=GraphInputState,
        output_schema=GraphOutputState,
    )
    builder.add_node("chunk", as_node(chunk_input))
    builder.add_node("map_chunk", as_node(map_chunk, llm=llm), input_schema=MapTask)
    builder.add_node("gather_map", as_node(gather_map))
    builder.add_node("to_merge_notes", as_node(map_notes_to_merge))
    builder.add_node("plan_merge", as_node(plan_merge, final_prompts="mapreduce", final_stage="reduce"))
    builder.add_node("merge_batch", as_node(merge_batch, llm=llm), input_schema=MergeTask)
    builder.add_node("gather_merge", as_node(gather_merge))
    builder.add_node("to_map_notes", as_node(merge_notes_to_map))
    builder.add_node("reduce", as_node(reduce_notes, llm=llm))
    builder.add_node("finalize", as_node(finalize, strategy=name))

    builder.add_edge(START, "chunk")
    builder.add_conditional_edges("chunk", fan_out_map, ["map_chunk"])
    builder.add_edge("map_chunk", "gather_map")
    builder.add_edge("gather_map", "to_merge_notes")
    builder.add_edge("to_merge_notes", "plan_merge")
    builder.add_conditional_edges(
        "plan_merge",
        route_merge,
        {"merge_batch": "merge_batch", "done": "to_map_notes", "empty": "to_map_notes"},
    )
    builder.add_edge("merge_batch", "gather_merge")
    builder.add_edge("gather_merge", "plan_merge")
    builder.add_conditional_edges("to_map_notes", route_after_merge, ["reduce", "finalize"])
    builder.add_edge("reduce", "finalize")
    builder.add_edge("finalize", END)
    return builder.compile(name=name, checkpointer=checkpointer)


graph = build_graph()
