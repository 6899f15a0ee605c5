"""The strategy registry: names users pass to ``ask``/``longgraph ask --strategy``, mapped to graph builders.

Graph modules are imported lazily, so the CLI starts fast and a strategy with extra dependencies
costs nothing until used. A builder takes the LLM provider and an optional checkpointer.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from longgraph.costing import CostShape
from longgraph.errors import ConfigurationError
from longgraph.llm import LLMProvider, default_provider


@dataclass(frozen=True)
class Strategy:
    name: str
    module: str
    builder: str
    description: str
    options: tuple[tuple[str, Any], ...] = ()
    cost: CostShape | None = None
    """How it spends calls, for a dry run (``longgraph/costing.py``); None: no dry run."""
    served: str = "graph"
    """The attribute of its graph module that ``langgraph.json`` serves (:func:`langgraph_config`)."""


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy(
            "mapreduce",
            "longgraph.graphs.mapreduce",
            "build_graph",
            "LLM×MapReduce: map, collapse, reduce with calibrated confidence",
            cost=CostShape("fan-out", "mapreduce", "map", plans=True),
        ),
        Strategy(
            "segment-plus",
            "longgraph.graphs.segment_plus",
            "build_graph",
            "Segment+: evidence/reasoning notes per segment, filtered, merged in batches, answered from notes",
            cost=CostShape("fan-out", "segment_plus", "gather", filters=True),
        ),
        Strategy(
            "segment-plus-no-filter",
            "longgraph.graphs.segment_plus",
            "build_graph",
            "Segment+ ablation without the Keep/Remove filter (every note is merged)",
            options=(("use_filter", False), ("name", "segment-plus-no-filter")),
            served="graph_no_filter",
            cost=CostShape("fan-out", "segment_plus", "gather"),
        ),
        Strategy(
            "segment-plus-no-structure",
            "longgraph.graphs.segment_plus",
            "build_graph",
            "Segment+ ablation with free-text notes instead of Evidence/Reasoning (filter kept)",
            options=(("structured", False), ("name", "segment-plus-no-structure")),
            served="graph_no_structure",
            cost=CostShape("fan-out", "segment_plus", "gather_text", filters=True),
        ),
        Strategy(
            "segment-plus-plain",
            "longgraph.graphs.segment_plus",
            "build_graph",
            "Segment+ ablation with neither filter nor structure: chunk, free-text notes, merge",
            options=(("use_filter", False), ("structured", False), ("name", "segment-plus-plain")),
            served="graph_plain",
            cost=CostShape("fan-out", "segment_plus", "gather_text"),
        ),
        Strategy(
            "mapreduce-segment-merge",
            "longgraph.graphs.mapreduce_segment_merge",
            "build_graph",
            "LLM×MapReduce with the Segment+ merge as its collapse stage",
            cost=CostShape("fan-out", "mapreduce", "map", plans=True),
        ),
        Strategy(
            "tom",
            "longgraph.graphs.tom",
            "build_graph",
            "ToM: a document tree (parsed chunks, Leiden-clustered summaries) reasoned over bottom-up",
            cost=CostShape("tree", "tom", "parse"),
        ),
        Strategy(
            "tom-no-aggregation",
            "longgraph.graphs.tom",
            "build_graph",
            "ToM ablation without bottom-up aggregation (the chunks' subtrees under one root)",
            options=(("aggregate", False), ("name", "tom-no-aggregation")),
            served="graph_no_aggregation",
            cost=CostShape("tree", "tom", "parse"),
        ),
        Strategy(
            "tom-no-confidence",
            "longgraph.graphs.tom",
            "build_graph",
            "ToM ablation without confidence scores in its Map and Reduce",
            options=(("confidence", False), ("name", "tom-no-confidence")),
            served="graph_no_confidence",
            cost=CostShape("tree", "tom", "parse"),
        ),
        Strategy(
            "pecan",
            "longgraph.graphs.pecan",
            "build_graph",
            "PECAN: an information-point graph (attention or embedding-similarity edges) searched until the "
            "model says it has enough",
            cost=CostShape("ip-graph", "pecan", "points"),
        ),
        Strategy(
            "pecan-no-attention",
            "longgraph.graphs.pecan",
            "build_graph",
            "PECAN ablation: embedding-similarity edges and relevance only (no attention read)",
            options=(("edges", "embedding-similarity"), ("name", "pecan-no-attention")),
            served="graph_no_attention",
            cost=CostShape("ip-graph", "pecan", "points"),
        ),
        Strategy(
            "pecan-no-embedding",
            "longgraph.graphs.pecan",
            "build_graph",
            "PECAN ablation: attention only, no embedding-similarity term in the search (needs a local model)",
            options=(("edges", "attention"), ("use_similarity", False), ("name", "pecan-no-embedding")),
            served="graph_no_embedding",
            cost=CostShape("ip-graph", "pecan", "points"),
        ),
        Strategy(
            "pecan-fixed-k",
            "longgraph.graphs.pecan",
            "build_graph",
            "PECAN ablation without dynamic progress control: a fixed number of retrieved nodes (pecan_fixed_k)",
            options=(("fixed_k", True), ("name", "pecan-fixed-k")),
            served="graph_fixed_k",
            cost=CostShape("ip-graph", "pecan", "points"),
        ),
        Strategy(
            "truncate",
            "longgraph.graphs.truncate",
            "build_graph",
            "Baseline: the whole input in one call if it fits, else its prefix that fits (cut recorded)",
            cost=CostShape("single-call", "baseline", "answer"),
        ),
        Strategy(
            "rag-bm25",
            "longgraph.graphs.rag",
            "build_graph",
            "Baseline: top-k chunks by BM25, one call",
            options=(("retriever", "bm25"),),
            served="graph_bm25",
            cost=CostShape("single-call", "baseline", "answer"),
        ),
        Strategy(
            "rag-embed",
            "longgraph.graphs.rag",
            "build_graph",
            "Baseline: top-k chunks by embeddings (bundled MiniLM or an /embeddings endpoint), one call",
            options=(("retriever", "embed"),),
            served="graph_embed",
            cost=CostShape("single-call", "baseline", "answer"),
        ),
    )
}


DATA_ENGINES: dict[str, tuple[str, str, str]] = {
    "pyramid-align": (
        "longgraph.graphs.pyramid",
        "graph",
        "Data engine, not a reader: training records (X, Q, M, A) from documents with `longgraph synth` "
        "(LLM×MapReduce §5)",
    ),
}
"""Served graphs that answer no question: name -> (module, served attribute, description)."""
AUTH = "./longgraph/auth.py:auth"


def langgraph_config() -> dict[str, Any]:
    """What ``langgraph.json`` holds, derived from the registry (``longgraph strategies --langgraph-json``
    prints it; a test checks the file is this): every strategy and data engine served by its name."""

    def spec(module: str, attribute: str) -> str:
        return f"./{module.removeprefix('longgraph.').replace('.', '/')}.py:{attribute}"

    graphs = {s.name: spec(s.module, s.served) for s in STRATEGIES.values()}
    graphs |= {name: spec(module, attribute) for name, (module, attribute, _) in DATA_ENGINES.items()}
    return {"dependencies": ["."], "graphs": graphs, "auth": {"path": AUTH}}


def register(strategy: Strategy) -> None:
    """Add a strategy (for plug-ins and the evaluation baselines)."""
    STRATEGIES[strategy.name] = strategy


def build_strategy(
    name: str, llm: LLMProvider = default_provider, *, checkpointer: BaseCheckpointSaver[str] | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    try:
        strategy = STRATEGIES[name]
    except KeyError as exc:
        raise ConfigurationError(
            f"unknown strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}"
        ) from exc
    module = importlib.import_module(strategy.module)
    builder = getattr(module, strategy.builder)
    graph: CompiledStateGraph[Any, Any, Any, Any] = builder(
        llm, checkpointer=checkpointer, **dict(strategy.options)
    )
    return graph


def decomposes(name: str) -> bool:
    """Whether ``name``'s graph plans questions over several documents (``nodes/decompose.py``)."""
    strategy = STRATEGIES.get(name)
    return bool(strategy and strategy.cost and strategy.cost.plans)
