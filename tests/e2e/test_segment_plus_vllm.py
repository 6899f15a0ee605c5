"""Segment+ end to end on the real vLLM CPU server: a 20K+ token document of real text, a planted fact.

As with the mapreduce e2e test, the 135M model proves the plumbing rather than the method: the test
asserts that the fact comes back through the graph (in the answer, or in the note of the segment that
holds it, reported with that segment's offsets), with every segment accounted for.
"""

from __future__ import annotations

import pytest

import longgraph
from longgraph.embedded import ServerInfo
from longgraph.tests.conftest import planted
from longgraph.tokenizer import get_tokenizer

pytestmark = pytest.mark.e2e

FACT = "The name of the secret password is Bluefinch."
QUESTION = "What is the secret password?"


def test_segment_plus_finds_the_planted_fact(embedded_server: ServerInfo) -> None:
    document = planted(100_000, at=0.55, fact=FACT)
    tokenizer = get_tokenizer(str(embedded_server.tokenizer_path))
    assert tokenizer.count(document) > 20_000
    result = longgraph.ask(
        QUESTION,
        document,
        strategy="segment-plus",
        base_url=embedded_server.base_url,
        model=embedded_server.model,
        tokenizer=str(embedded_server.tokenizer_path),
        segment_size=1500,  # ~15 segments: the gather calls dominate the CPU time
        max_output_tokens=256,  # room for quoted sentences in the constrained JSON note
        temperature=0.0,
        max_concurrency=8,
        structured_output="json_schema",
        request_timeout=300,
        prompt_variant="compact",  # what the embedded default uses with this 135M model
        cache_path=None,
    )
    assert [c.id for c in result.chunks] == list(range(len(result.chunks)))
    assert all(c.reason for c in result.chunks if c.status in ("failed", "filtered"))
    fact_at = document.index(FACT)
    holder = next(c for c in result.chunks if any(p.start <= fact_at < p.end for p in c.parts))
    carried = [result.answer, holder.answer or "", holder.extracted or ""]
    assert any("bluefinch" in text.lower() for text in carried), (result.answer, holder, result.stats.notes)
    assert result.strategy == "segment-plus"
