"""RAG baselines: the top-k chunks by BM25 (``rag-bm25``) or by embeddings (``rag-embed``), one call.

START → chunk → retrieve → answer → finalize → END

``chunk`` cuts the input into ``rag_chunk_tokens`` chunks with the one chunker; ``retrieve`` scores
them against the question and keeps the ``rag_top_k`` best that fit the window, in document order;
``answer`` asks once; ``finalize`` reports every chunk, those not shown as ``filtered`` with their rank
and score.
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START
from langgraph.graph.state import CompiledStateGraph

from longgraph.graphs.declare import CostShape, Strategy
from longgraph.graphs.wiring import add_finalize, answering_builder, chain
from longgraph.llm import LLMProvider, default_provider
from longgraph.nodes.retrieval import RetrieverName, chunk_for_retrieval, retrieve
from longgraph.nodes.runtime import node_factory
from longgraph.nodes.single_pass import answer_once
from longgraph.state.baseline import BaselineState
from longgraph.state.context import Context
from longgraph.state.graph_state import GraphInputState, GraphOutputState


def build_graph(
    llm: LLMProvider = default_provider,
    *,
    checkpointer: BaseCheckpointSaver[str] | None = None,
    retriever: RetrieverName = "bm25",
) -> CompiledStateGraph[BaselineState, Context, GraphInputState, GraphOutputState]:
    name = f"rag-{retriever}"
    node = node_factory(llm)
    builder = answering_builder(BaselineState)
    builder.add_node("chunk", node(chunk_for_retrieval))
    builder.add_node("retrieve", node(retrieve, retriever=retriever))
    builder.add_node("answer", node(answer_once))
    chain(builder, START, "chunk", "retrieve", "answer")
    add_finalize(builder, node, name, after=("answer",), grounded=False)
    return builder.compile(name=name, checkpointer=checkpointer)


BM25 = Strategy(
    "rag-bm25",
    build_graph,
    "Baseline: top-k chunks by BM25, one call",
    options=(("retriever", "bm25"),),
    served="graph_bm25",
    cost=CostShape("single-call", "baseline", "answer"),
)
EMBED = BM25.variant(
    "rag-embed",
    "Baseline: top-k chunks by embeddings (bundled MiniLM or an /embeddings endpoint), one call",
    served="graph_embed",
    retriever="embed",
)
STRATEGIES = (BM25, EMBED)

graph_bm25 = BM25.build()
graph_embed = EMBED.build()
