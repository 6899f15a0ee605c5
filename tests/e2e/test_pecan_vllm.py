"""PECAN end to end on the real vLLM CPU server, with real attention read from the SmolLM2 weights.

The graph is built by the served model and its edges weighted by the same model's attention, run
locally with ``transformers`` (teacher forcing, ``nodes/attention.py``); a small document keeps the
attention passes short (one batch): the benchmarks, not the tests, cover full lengths.
"""

from __future__ import annotations

from typing import Any, cast

import pytest

import longgraph
from longgraph.embedded import ServerInfo
from longgraph.graphs.pecan import build_ip_graph_graph
from longgraph.state.pecan import IPGraph, PecanState
from longgraph.tests.conftest import planted
from longgraph.tests.e2e.conftest import FACT, QUESTION, assert_answers_with_the_fact, tiny_model_settings

pytestmark = pytest.mark.e2e


def _attention_settings(server: ServerInfo) -> dict[str, Any]:
    return {
        **tiny_model_settings(server), "max_output_tokens": 256, "pecan_edges": "attention",
        "attention_model": str(server.tokenizer_path),
    }  # fmt: skip


def test_pecan_finds_the_planted_fact_with_attention_edges(embedded_server: ServerInfo) -> None:
    document = planted(12_000, at=0.55, fact=FACT)
    result = longgraph.ask(QUESTION, document, strategy="pecan", **_attention_settings(embedded_server))
    assert_answers_with_the_fact(result, document)
    structure = result.stats.structure or {}
    assert structure["edges"] == "attention" and structure["relevance"] == "attention × position index"
    assert structure["edge_model"] == str(embedded_server.tokenizer_path)
    assert result.stats.build is not None and result.stats.build.calls_by_stage.get("points", 0) >= 1


def test_attention_edges_are_normalised_weights_of_the_batch_members(embedded_server: ServerInfo) -> None:
    document = planted(6_000, at=0.5, fact=FACT)
    graph = build_ip_graph_graph()
    values = graph.invoke(
        cast(PecanState, {"question": "(graph)", "document": document}),
        context=_attention_settings(embedded_server),
    )
    ip_graph: IPGraph = values["ip_graph"]
    assert ip_graph.edge_mode == "attention" and len(ip_graph.levels) >= 2
    points = [n for n in ip_graph.nodes if n.chunk_id is None]
    assert points
    for node in points:
        weights = list(node.edges.values())
        assert abs(sum(weights) - 1.0) < 1e-6 and all(w >= 0 for w in weights)
    members = len(ip_graph.levels[0])
    if members > 1:  # attention, unlike the uniform placeholder, tells the members apart
        assert any(len(set(round(w, 4) for w in n.edges.values())) > 1 for n in points)


def test_pecan_without_attention_on_the_served_model(embedded_server: ServerInfo) -> None:
    document = planted(20_000, at=0.55, fact=FACT)
    settings = {**tiny_model_settings(embedded_server), "max_output_tokens": 256}
    result = longgraph.ask(QUESTION, document, strategy="pecan-no-attention", **settings)
    assert_answers_with_the_fact(result, document)
    assert (result.stats.structure or {})["edges"] == "embedding-similarity"
