"""Three strategies end to end on the real vLLM CPU server: a document longer than the window (1.5
windows) of real text with a planted fact.

With the compact protocol and the grounding check the embedded SmolLM2-135M answers right: each test
asserts the final answer itself, that a verified note supports it, and that its evidence points at the
fact's characters, with every chunk accounted for and the structured outputs parsed. ToM's
query-aware compression keeps 3 chunks (the paper keeps 7, its public code 3), so its tree is small:
the benchmarks, not the tests, cover full lengths.
"""

from __future__ import annotations

import pytest

import longgraph
from longgraph.embedded import ServerInfo
from longgraph.tests.e2e.conftest import (
    QUESTION,
    WINDOW,
    assert_answers_with_the_fact,
    assert_finds_the_fact,
    fact_document,
    tiny_model_settings,
)

pytestmark = pytest.mark.e2e


def test_mapreduce_brings_back_the_planted_fact(embedded_server: ServerInfo) -> None:
    document = fact_document(embedded_server, 30_000)
    settings = {
        **tiny_model_settings(embedded_server), "context_window": WINDOW, "chunk_size": 1500,
        "max_output_tokens": 160,
    }  # fmt: skip
    result = longgraph.ask(QUESTION, document, **settings)
    parsed = sum(c.status != "failed" for c in result.chunks)
    assert parsed >= 0.8 * len(result.chunks)  # constrained decoding: nearly every answer parses
    assert_answers_with_the_fact(result, document)


def test_segment_plus_finds_the_planted_fact(embedded_server: ServerInfo) -> None:
    document = fact_document(embedded_server, 30_000)
    settings = {
        **tiny_model_settings(embedded_server),
        "context_window": WINDOW,
        "segment_size": 1500,  # ~5 segments: the gather calls dominate the CPU time
        "max_output_tokens": 256,  # room for quoted sentences in the constrained JSON note
    }
    result = longgraph.ask(QUESTION, document, strategy="segment-plus", **settings)
    assert_answers_with_the_fact(result, document)
    assert result.strategy == "segment-plus"


def test_tom_finds_the_planted_fact(embedded_server: ServerInfo) -> None:
    document = fact_document(embedded_server, 30_000)
    settings = {
        **tiny_model_settings(embedded_server),
        "context_window": WINDOW,
        "max_output_tokens": 256,
        "tom_top_k": 3,
    }
    result = longgraph.ask(QUESTION, document, strategy="tom", **settings)
    # SmolLM2's tree answer runs on past the fact into copied instructions: withheld whole, never cut.
    assert_finds_the_fact(result, document)
    assert result.strategy == "tom"
    stats = result.stats
    assert stats.build is not None and stats.build.calls_by_stage.get("parse") == 3
    assert (
        len(result.chunks) > 3
        and sum(c.status == "filtered" for c in result.chunks) == len(result.chunks) - 3
    )
