"""LLM×MapReduce (Zhou et al., 2024): chunk → map ∥ → ground → [collapse ∥]* → reduce → finalize.

START → plan_records ──aggregates──▶ chunk_records ──Send per chunk──▶ extract_records → compute_records → finalize
plan_records ──otherwise──▶ chunk ──Send per chunk──▶ map_chunk → ground → plan_collapse
plan_collapse ──fits──▶ reduce → finalize → END
plan_collapse ──too long──Send per group──▶ collapse_group → gather_collapse → plan_collapse
plan_collapse ──no evidence──▶ finalize

``plan_records`` plans the question once (``nodes/records/``): one that aggregates is answered by code
over records every chunk gives (the records route, ``graphs/wiring.py``); delete the route (START →
chunk) and every question takes the map-reduce path.

The front half, through ``ground``, is the grounded reading Segment+ shares (``graphs/reading.py``).
``chunk`` starts each chunk's map call as soon as the chunk is final, so calls leave while a long
input is still being counted; ``map_chunk`` joins the call under way (``nodes/early_calls.py``).
``ground`` keeps a map answer as a note only with a verbatim quote of its chunk (``nodes/checks``).
The collapse loop is the project's one bounded reduction loop (``nodes/reduction.py``); ``finalize``
gives the verdict on the reduce's own answer (``nodes/finalize.py``). ``prompt_variant="paper"`` runs the paper's
four-field protocol with self-reported confidence; the default "compact" protocol asks for the
answering sentence first (``prompts/mapreduce_compact.toml``).
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.reading import add_grounded_reading
from longgraph.graphs.wiring import Builder, add_finalize, add_loop, add_records_route, answering_builder
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.answer import answer_from_notes
from longgraph.nodes.combine import collapse_group
from longgraph.nodes.reduction import ReductionLoop
from longgraph.nodes.runtime import NodeFactory, StageFn, node_factory
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState
from longgraph.state.mapreduce import MapReduceState
from longgraph.state.tasks import GroupTask

PROMPTS = "mapreduce"
COLLAPSE = ReductionLoop(
    name="collapse",
    combine_node="collapse_group",
    combine_prompts=PROMPTS,
    combine_stage="collapse",
    final_prompts=PROMPTS,
    final_stage="reduce",
)


def build_graph(
    llm: LLMProvider = default_provider,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    name: str = "mapreduce",
    collapse: ReductionLoop = COLLAPSE,
    combine: StageFn = collapse_group,
    always_plan: bool = False,
) -> CompiledStateGraph[MapReduceState, Context, GraphInputState, GraphOutputState]:
    """``collapse``/``combine``: the reduction loop and its combining stage (an ablation swaps them);
    ``always_plan``: plan whatever the run's ``plan_records`` setting (the ``records`` strategy)."""
    node = node_factory(llm)
    builder = answering_builder(MapReduceState)
    entry = add_mapreduce(
        builder, node, name=name, collapse=collapse, combine=combine, always_plan=always_plan
    )
    builder.add_edge(START, entry)
    return builder.compile(name=name, checkpointer=checkpointer)


def add_mapreduce(
    builder: Builder,
    node: NodeFactory,
    *,
    name: str,
    collapse: ReductionLoop = COLLAPSE,
    combine: StageFn = collapse_group,
    always_plan: bool = False,
) -> str:
    """Mapreduce's nodes and edges, records route included, in ``builder`` (``auto`` adds them beside its
    plain call); returns the entry node."""
    entry = add_records_route(builder, node, otherwise="chunk", always=always_plan)
    add_grounded_reading(
        builder, node, prompts=PROMPTS, stage="map", then=f"plan_{collapse.name}", read_early="always"
    )
    step = node(combine, prompts=collapse.combine_prompts, stage=collapse.combine_stage)
    add_loop(builder, node, collapse, step=step, task=GroupTask, done="reduce", empty="finalize")
    builder.add_node("reduce", node(answer_from_notes, prompts=PROMPTS, stage="reduce"))
    add_finalize(builder, node, name, after=("reduce", "compute_records"), path="mapreduce")
    return entry


MAPREDUCE = Strategy(
    "mapreduce",
    build_graph,
    "LLM×MapReduce: map, collapse, reduce with calibrated confidence",
    cost=CostShape("fan-out", PROMPTS, "map", plans=True),
)
RECORDS = MAPREDUCE.variant(
    "records",
    "Records: an aggregating question answered by code over typed records with quotes; others as mapreduce",
    served="graph_records",
    always_plan=True,
)
STRATEGIES = (MAPREDUCE, RECORDS)

graph = MAPREDUCE.build()
graph_records = RECORDS.build()
