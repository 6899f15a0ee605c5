"""End to end on the real vLLM CPU server: a 20K+ token document of real text with a planted fact.

The embedded SmolLM2-135M proves the plumbing, not the method: it reliably copies the planted fact
out of the chunk that holds it (map stage), but its reduce answer over dozens of mostly confused notes
is often wrong. So the test asserts what this model can carry: the fact comes back through the graph
(in the answer, or in what the map stage took from the chunk that holds it, reported with the right
offsets),
with every chunk accounted for and the structured outputs parsed from the real server.
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


def test_mapreduce_brings_back_the_planted_fact(embedded_server: ServerInfo) -> None:
    document = planted(92_000, at=0.55, fact=FACT)
    tokenizer = get_tokenizer(str(embedded_server.tokenizer_path))
    assert tokenizer.count(document) > 20_000
    result = longgraph.ask(
        QUESTION,
        document,
        base_url=embedded_server.base_url,
        model=embedded_server.model,
        tokenizer=str(embedded_server.tokenizer_path),
        chunk_size=500,
        max_output_tokens=200,
        temperature=0.0,
        max_concurrency=8,
        structured_output="json_schema",
        request_timeout=300,
        prompt_variant="compact",  # what the embedded default uses with this 135M model
        cache_path=None,
    )
    assert [c.id for c in result.chunks] == list(range(len(result.chunks)))
    assert all(c.reason for c in result.chunks if c.status in ("failed", "filtered"))
    parsed = sum(c.status != "failed" for c in result.chunks)
    assert parsed >= 0.8 * len(result.chunks)  # constrained decoding: nearly every answer parses
    fact_at = document.index(FACT)
    holder = next(c for c in result.chunks if any(p.start <= fact_at < p.end for p in c.parts))
    carried = [result.answer, holder.answer or "", holder.extracted or ""]
    surfaced = any("bluefinch" in text.lower() for text in carried)
    assert surfaced, (result.answer, holder)
