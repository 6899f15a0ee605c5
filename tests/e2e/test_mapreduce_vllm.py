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
from longgraph.tests.e2e.conftest import QUESTION, assert_fact_came_back, fact_document, tiny_model_settings

pytestmark = pytest.mark.e2e


def test_mapreduce_brings_back_the_planted_fact(embedded_server: ServerInfo) -> None:
    document = fact_document(embedded_server, 92_000)
    settings = {**tiny_model_settings(embedded_server), "chunk_size": 500, "max_output_tokens": 200}
    result = longgraph.ask(QUESTION, document, **settings)
    parsed = sum(c.status != "failed" for c in result.chunks)
    assert parsed >= 0.8 * len(result.chunks)  # constrained decoding: nearly every answer parses
    assert_fact_came_back(result, document)
