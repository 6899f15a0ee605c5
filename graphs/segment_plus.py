"""Segment+ (Shi et al., 2024): segment → note ∥ → filter ∥ → [merge ∥]* → answer from the notes only.

START → segment ──Send per segment──▶ take_note → gather_notes → screen_notes
screen_notes ──Send per non-empty note──▶ filter_note → gather_filter → plan_merge
screen_notes ──nothing to label──▶ plan_merge
plan_merge ──too long──Send per batch──▶ merge_batch → gather_merge → plan_merge
plan_merge ──fits──▶ answer → finalize → END
plan_merge ──no note left──▶ finalize

The ablations of the paper's §4.3 are the same wiring with stages swapped: ``use_filter=False``
replaces the filter by ``skip_filter`` ("No Label": every note goes on); ``structured=False`` takes
one free-text note per segment and merges free text ("No Structure"); both together is the plain
chunk-and-merge baseline ("Normal"). Stage behaviour (segment size, evidence overflow, the bounded
merge loop, provenance) is documented in ``nodes/segment.py``, ``nodes/notes_filter.py`` and
``nodes/merge.py``.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.merge import gather_merge, merge_batch, plan_merge, route_merge
from longgraph.nodes.notes_filter import filter_note, gather_filter, route_filter, screen_notes, skip_filter
from longgraph.nodes.runtime import as_node
from longgraph.nodes.segment import fan_out_segments, gather_notes, segment_input, take_note
from longgraph.nodes.segment_answer import answer_notes, finalize_notes
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.mapreduce import MapTask
from longgraph.state.segment_plus import FilterTask, MergeTask, SegmentPlusState


def build_graph(
    llm: LLMProvider = default_provider,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    use_filter: bool = True,
    structured: bool = True,
    name: str = "segment-plus",
) -> CompiledStateGraph[SegmentPlusState, Context, GraphInputState, GraphOutputState]:
    builder = StateGraph(
        SegmentPlusState, context_schema=Context, input_schema=GraphInputState, output_schema=GraphOutputState
    )
    builder.add_node("segment", as_node(segment_input, structured=structured))
    builder.add_node("take_note", as_node(take_note, llm=llm, structured=structured), input_schema=MapTask)
    builder.add_node("gather_notes", as_node(gather_notes))
    builder.add_node("plan_merge", as_node(plan_merge))
    builder.add_node("merge_batch", as_node(merge_batch, llm=llm), input_schema=MergeTask)
    builder.add_node("gather_merge", as_node(gather_merge))
    builder.add_node("answer", as_node(answer_notes, llm=llm))
    builder.add_node("finalize", as_node(finalize_notes, strategy=name))

    builder.add_edge(START, "segment")
    builder.add_conditional_edges("segment", fan_out_segments, ["take_note"])
    builder.add_edge("take_note", "gather_notes")
    if use_filter:
        builder.add_node("screen_notes", as_node(screen_notes))
        builder.add_node("filter_note", as_node(filter_note, llm=llm), input_schema=FilterTask)
        builder.add_node("gather_filter", as_node(gather_filter))
        builder.add_edge("gather_notes", "screen_notes")
        builder.add_conditional_edges(
            "screen_notes", route_filter, {"filter_note": "filter_note", "done": "plan_merge"}
        )
        builder.add_edge("filter_note", "gather_filter")
        builder.add_edge("gather_filter", "plan_merge")
    else:
        builder.add_node("skip_filter", as_node(skip_filter))
        builder.add_edge("gather_notes", "skip_filter")
        builder.add_edge("skip_filter", "plan_merge")
    builder.add_conditional_edges(
        "plan_merge", route_merge, {"merge_batch": "merge_batch", "done": "answer", "empty": "finalize"}
    )
    builder.add_edge("merge_batch", "gather_merge")
    builder.add_edge("gather_merge", "plan_merge")
    builder.add_edge("answer", "finalize")
    builder.add_edge("finalize", END)
    return builder.compile(name=name, checkpointer=checkpointer)


graph = build_graph()
graph_no_filter = build_graph(use_filter=False, name="segment-plus-no-filter")
graph_no_structure = build_graph(structured=False, name="segment-plus-no-structure")
graph_plain = build_graph(use_filter=False, structured=False, name="segment-plus-plain")
