"""ToM end to end on the real vLLM CPU server: real text, a planted fact, the tree built and reasoned over.

As with the other e2e tests: the final answer holds the fact, rests on a verified note, and its
evidence points at the fact's characters, with every chunk accounted for. Query-aware compression keeps
3 chunks (the paper keeps 7, its public code 3), so the tree is small: the benchmarks, not the tests, cover full lengths.
"""

from __future__ import annotations

import pytest

import longgraph
from longgraph.embedded import ServerInfo
from longgraph.tests.e2e.conftest import (
    QUESTION,
    WINDOW,
    assert_finds_the_fact,
    fact_document,
    tiny_model_settings,
)

pytestmark = pytest.mark.e2e


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
