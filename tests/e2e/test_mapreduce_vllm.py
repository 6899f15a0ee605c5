"""End to end on the real vLLM CPU server: a document longer than the window (1.5 windows) of real text with a planted fact.

With the compact protocol and the grounding check the embedded SmolLM2-135M answers right: the test
asserts the final answer itself, that a verified note supports it, and that its evidence points at
the fact's characters, with every chunk accounted for and the structured outputs parsed.
"""

from __future__ import annotations

import pytest

import longgraph
from longgraph.embedded import ServerInfo
from longgraph.tests.e2e.conftest import (
    QUESTION,
    WINDOW,
    assert_answers_with_the_fact,
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
