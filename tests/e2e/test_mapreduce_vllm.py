"""End to end on the real vLLM CPU server: a 20K+ token document of real text with a planted fact."""

from __future__ import annotations

import pytest

import longgraph
from longgraph.embedded import ServerInfo
from longgraph.tokenizer import get_tokenizer
from longgraph.tests.conftest import planted

pytestmark = pytest.mark.e2e

FACT = "The name of the secret password is Bluefinch."
QUESTION = "What is the secret password?"


def test_mapreduce_finds_the_planted_fact(embedded_server: ServerInfo) -> None:
    document = planted(110_000, at=0.55, fact=FACT)
    tokenizer = get_tokenizer(str(embedded_server.tokenizer_path))
    assert tokenizer.count(document) > 20_000
    result = longgraph.ask(
        QUESTION,
        document,
        base_url=embedded_server.base_url,
        model=embedded_server.model,
        tokenizer=str(embedded_server.tokenizer_path),
        chunk_size=2000,
        max_output_tokens=256,
        temperature=0.0,
        max_concurrency=8,
        structured_output="json_schema",
        request_timeout=300,
        prompt_variant="compact",  # what the embedded default uses with this 135M model
    )
    assert [c.id for c in result.chunks] == list(range(len(result.chunks)))
    assert all(c.reason for c in result.chunks if c.status in ("failed", "filtered"))
    assert "bluefinch" in result.answer.lower(), (result.answer, result.rationale)
    fact_start = document.index(FACT)
    assert any(e.start <= fact_start < e.end for e in result.evidence), result.evidence
