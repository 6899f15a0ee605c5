"""Segment+ (Shi et al., 2024): segment → note ∥ → ground → filter ∥ → [merge ∥]* → answer from notes.

START → plan_records ──aggregates──▶ the records route (``graphs/wiring.py``) → finalize
plan_records ──otherwise──▶ segment ──Send per segment──▶ take_note → ground
ground → screen ──Send per note──▶ filter_note → gather_filter → plan_merge
screen ──nothing to label──▶ plan_merge
plan_merge ──too long──Send per batch──▶ merge_batch → gather_merge → plan_merge
plan_merge ──fits──▶ answer → finalize → END                    plan_merge ──no note left──▶ finalize

``segment`` starts each segment's note call as soon as the segment is final; ``take_note`` joins it
(``nodes/early_calls.py``). The ablations of the paper's §4.3 are the same wiring with stages swapped: ``use_filter=False`` leaves
the filter out ("No Label"); ``structured=False`` takes one free-text note per segment and merges free
text ("No Structure"); both together is the plain chunk-and-merge baseline ("Normal"). The grounding
check (``nodes/checks``: a note only with a verbatim quote) runs in every variant: it is this
project's, not the paper's.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.reading import add_grounded_reading
from longgraph.graphs.wiring import add_finalize, add_loop, add_records_route, answering_builder, chain
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.answer import answer_from_notes
from longgraph.nodes.combine import merge_batch
from longgraph.nodes.notes_filter import filter_each_note, filter_note, gather_filter, pass_notes
from longgraph.nodes.reduction import ReductionLoop
from longgraph.nodes.runtime import node_factory
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.segment_plus import SegmentPlusState
from longgraph.state.tasks import GroupTask, NoteTask

PROMPTS = "segment_plus"
MERGE = ReductionLoop(
    name="merge",
    combine_node="merge_batch",
    combine_prompts=PROMPTS,
    combine_stage="merge",
    final_prompts=PROMPTS,
    final_stage="answer",
    keeps_quotes=True,
)


def build_graph(
    llm: LLMProvider = default_provider,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    use_filter: bool = True,
    structured: bool = True,
    name: str = "segment-plus",
) -> CompiledStateGraph[SegmentPlusState, Context, GraphInputState, GraphOutputState]:
    node = node_factory(llm)
    gather = "gather" if structured else "gather_text"
    builder = answering_builder(SegmentPlusState)
    after_reading = "screen" if use_filter else "plan_merge"
    builder.add_edge(START, add_records_route(builder, node, otherwise="segment"))
    add_grounded_reading(
        builder,
        node,
        prompts=PROMPTS,
        stage=gather,
        then=after_reading,
        chunk="segment",
        read="take_note",
        size="segment_size",
        read_early="always",
    )
    if use_filter:
        builder.add_node("screen", node(pass_notes))
        builder.add_node("filter_note", node(filter_note, prompts=PROMPTS), input_schema=NoteTask)
        builder.add_node("gather_filter", node(gather_filter))
        builder.add_conditional_edges(
            "screen", filter_each_note("filter_note"), {"filter_note": "filter_note", "done": "plan_merge"}
        )
        chain(builder, "filter_note", "gather_filter", "plan_merge")
    merge = node(merge_batch, prompts=PROMPTS, stage="merge")
    add_loop(builder, node, MERGE, step=merge, task=GroupTask, done="answer", empty="finalize")
    builder.add_node("answer", node(answer_from_notes, prompts=PROMPTS, stage="answer"))
    add_finalize(builder, node, name, after=("answer", "compute_records"))
    return builder.compile(name=name, checkpointer=checkpointer)


SEGMENT_PLUS = Strategy(
    "segment-plus",
    build_graph,
    "Segment+: evidence/reasoning notes per segment, filtered, merged in batches, answered from notes",
    cost=CostShape("fan-out", PROMPTS, "gather", filters=True, plans=True),
)
NO_FILTER = SEGMENT_PLUS.variant(
    "segment-plus-no-filter",
    "Segment+ ablation without the Keep/Remove filter (every note is merged)",
    cost=CostShape("fan-out", PROMPTS, "gather", plans=True),
    use_filter=False,
)
NO_STRUCTURE = SEGMENT_PLUS.variant(
    "segment-plus-no-structure",
    "Segment+ ablation with free-text notes instead of Evidence/Reasoning (filter kept)",
    cost=CostShape("fan-out", PROMPTS, "gather_text", filters=True, plans=True),
    structured=False,
)
PLAIN = SEGMENT_PLUS.variant(
    "segment-plus-plain",
    "Segment+ ablation with neither filter nor structure: chunk, free-text notes, merge",
    cost=CostShape("fan-out", PROMPTS, "gather_text", plans=True),
    use_filter=False,
    structured=False,
)
STRATEGIES = (SEGMENT_PLUS, NO_FILTER, NO_STRUCTURE, PLAIN)

graph = SEGMENT_PLUS.build()
graph_no_filter = NO_FILTER.build()
graph_no_structure = NO_STRUCTURE.build()
graph_plain = PLAIN.build()
