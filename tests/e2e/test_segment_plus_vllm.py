"""Segment+ end to end on the real vLLM CPU server: a document longer than the window, of real text, a planted fact.

As with the mapreduce e2e test: the final answer holds the fact, rests on a verified note, and its
evidence points at the fact's characters, with every segment accounted for.
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
