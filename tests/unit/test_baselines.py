"""The baselines: truncation (and where it cuts), BM25 and embedding retrieval, every chunk accounted for."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import Any

import httpx
import numpy as np
import pytest

from longgraph.errors import EndpointError, TooManyFailures
from longgraph.nodes.chunking import split_into_chunks
from longgraph.nodes.retrieval import bm25_scores, endpoint_embedding_scores, local_embedding_scores
from longgraph.state.context import Context
from longgraph.state.contract import Chunk, DocumentIn, GraphOutput
from longgraph.state.outputs import NO_INFORMATION
from longgraph.strategies import STRATEGIES, build_strategy
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import FACT, FAKE_SETTINGS, QUESTION, essays, planted
from longgraph.tokenizer import get_tokenizer

SMALL = {**FAKE_SETTINGS, "rag_chunk_tokens": 256}


def _run(
    strategy: str, document: str, model: ScriptedChatModel | None = None, **settings: Any
) -> GraphOutput:
    graph = build_strategy(strategy, FakeProvider(model or ScriptedChatModel()))
    return GraphOutput.model_validate(
        graph.invoke({"question": QUESTION, "document": document}, context={**SMALL, **settings})
    )


def _shown(model: ScriptedChatModel) -> str:
    """The text between the prompt's fences in the (only) call."""
    user = str(model.calls[-1]["messages"][-1]["content"])
    return user.split("The article begins as follows:\n", 1)[1].split("\nThe article concludes here.", 1)[0]


def _fact_chunk(document: str, size: int) -> tuple[list[Chunk], int]:
    chunks = split_into_chunks([DocumentIn(text=document)], size, get_tokenizer(None))
    return chunks, next(c.id for c in chunks if FACT in c.text)


def test_the_baselines_are_registered_strategies() -> None:
    for name in ("truncate", "rag-bm25", "rag-embed"):
        assert name in STRATEGIES
        assert build_strategy(name, FakeProvider()).name == name


def test_truncate_reads_the_whole_input_when_it_fits() -> None:
    document = planted(3_000, at=0.9)
    model = ScriptedChatModel()
    out = _run("truncate", document, model)
    assert "smoked plums" in out.answer
    assert {c.status for c in out.chunks} == {"used"}
    assert not any("truncated" in note for note in out.stats.notes)
    assert FACT in _shown(model)
    assert _shown(model).rstrip().endswith(document.rstrip()[-40:])
    assert out.stats.llm_calls == 1 and out.stats.calls_by_stage == {"answer": 1}


def test_truncation_records_its_cut_and_filters_what_lies_beyond() -> None:
    document = planted(60_000, at=0.9)
    model = ScriptedChatModel()
    out = _run("truncate", document, model)
    assert out.answer == NO_INFORMATION  # the fact lies past the cut
    notes = [n for n in out.stats.notes if n.startswith("truncated")]
    assert len(notes) == 1, out.stats.notes
    cut = int(re.search(r"character ([\d,]+)", notes[0]).group(1).replace(",", ""))  # type: ignore[union-attr]
    shown = _shown(model)
    # the model saw exactly the document up to the cut, and the cut fills the window
    assert document[:cut].strip().endswith(shown.strip()[-60:])
    assert document[cut : cut + 60] not in shown
    tokenizer = get_tokenizer(None)
    budget = 2048 - 256
    assert 0.7 * budget < tokenizer.count(shown) <= budget
    assert [c.id for c in out.chunks] == list(range(len(out.chunks)))
    used = [c for c in out.chunks if c.status == "used"]
    filtered = [c for c in out.chunks if c.status == "filtered"]
    assert used and filtered and len(used) + len(filtered) == len(out.chunks)
    assert max(c.id for c in used) < min(c.id for c in filtered)
    assert all(c.reason and "beyond the cut" in c.reason for c in filtered)
    assert all(c.parts[0].start >= cut for c in filtered)


def test_truncation_finds_a_fact_before_the_cut() -> None:
    out = _run("truncate", planted(60_000, at=0.01))
    assert "smoked plums" in out.answer
    assert any(e.chunk_id == 0 for e in out.evidence)


def test_bm25_ranks_the_planted_chunk_first() -> None:
    chunks, fact_id = _fact_chunk(planted(60_000, at=0.63), 256)
    scores = bm25_scores(QUESTION, [c.text for c in chunks])
    assert len(scores) == len(chunks) > 20
    assert int(np.argmax(scores)) == fact_id
    assert bm25_scores("the of and", [c.text for c in chunks]) == [0.0] * len(chunks)  # stop words only


def test_rag_bm25_shows_the_top_k_in_document_order_and_reports_the_rest() -> None:
    document = planted(60_000, at=0.63)
    model = ScriptedChatModel()
    out = _run("rag-bm25", document, model, rag_top_k=3)
    assert "smoked plums" in out.answer
    used = [c for c in out.chunks if c.status == "used"]
    assert len(used) == 3
    fact_report = next(c for c in used if any(FACT in document[p.start : p.end] for p in c.parts))
    assert fact_report.reason is not None and "rank 1 of" in fact_report.reason
    assert all(
        c.reason and c.reason.startswith("not retrieved") for c in out.chunks if c.status == "filtered"
    )
    # shown in document order, whatever their rank
    shown = _shown(model)
    starts = [shown.index(document[c.parts[0].start : c.parts[0].start + 80]) for c in used]
    assert starts == sorted(starts)


def test_rag_never_overflows_the_window_whatever_k() -> None:
    out = _run("rag-bm25", planted(60_000, at=0.3), rag_top_k=50)
    used = [c for c in out.chunks if c.status == "used"]
    assert sum(c.tokens for c in used) <= 2048 - 256
    assert any("did not fit" in (c.reason or "") for c in out.chunks if c.status == "filtered")
    assert any("did not fit" in note for note in out.stats.notes)


def test_an_unparseable_answer_is_never_the_answer() -> None:
    garbage = ScriptedChatModel(responder=lambda m, e: "I will not answer in JSON.")
    with pytest.raises(TooManyFailures, match="the one answer call failed"):
        _run("truncate", planted(3_000), garbage, parse_retries=0)
    # allowed to answer whatever fails: NO INFORMATION, and the shown chunks say why
    model = ScriptedChatModel(responder=lambda m, e: "I will not answer in JSON.")
    out = _run("truncate", planted(3_000), model, parse_retries=1, max_failed_fraction=1.0)
    assert out.answer == NO_INFORMATION
    assert {c.status for c in out.chunks} == {"failed"}
    assert all(c.raw_output == "I will not answer in JSON." for c in out.chunks)
    assert all(c.reason and "unparseable after 2 attempt(s)" in c.reason for c in out.chunks)
    assert out.stats.failed_calls == 2


def _fact_deep_in_its_chunk() -> tuple[list[Chunk], int]:
    """Ten ~900-token documents; one ends with the fact, far past MiniLM's 256-word-piece window."""
    text = essays()
    docs = [DocumentIn(text=text[i * 4_000 : (i + 1) * 4_000]) for i in range(10)]
    docs[6] = DocumentIn(text=docs[6].text + " " + FACT)
    chunks = split_into_chunks(docs, 1024, get_tokenizer(None))
    assert len(chunks) == 10
    fact_id = next(c.id for c in chunks if FACT in c.text)
    assert chunks[fact_id].text.index(FACT) > 3_500
    return chunks, fact_id


def test_the_offline_embedding_model_finds_a_fact_at_the_end_of_a_long_chunk() -> None:
    chunks, fact_id = _fact_deep_in_its_chunk()
    scores = local_embedding_scores(QUESTION, chunks, Context(**SMALL))
    assert int(np.argmax(scores)) == fact_id
    assert scores[fact_id] > max(s for i, s in enumerate(scores) if i != fact_id) + 0.1


def test_rag_embed_answers_from_the_retrieved_chunk() -> None:
    out = _run("rag-embed", planted(30_000, at=0.4), rag_top_k=2)
    assert "smoked plums" in out.answer
    assert sum(c.status == "used" for c in out.chunks) == 2
    assert any("embeddings (all-MiniLM-L6-v2, " in note for note in out.stats.notes)  # and its precision


def _bag_of_words(text: str, dims: int = 512) -> list[float]:
    vector = [0.0] * dims
    for word in re.findall(r"[a-z]{4,}", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % dims] += 1.0
    return vector


class _EmbeddingServer:
    """An /embeddings endpoint (bag of hashed words) that records what it was asked."""

    def __init__(self, status: int = 200) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = status

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append({"url": str(request.url), **body})
        if self.status != 200:
            return httpx.Response(self.status, text="no such model")
        data = [
            {"index": i, "embedding": _bag_of_words(text), "object": "embedding"}
            for i, text in reversed(list(enumerate(body["input"])))  # out of order on purpose
        ]
        return httpx.Response(200, json={"data": data, "model": body["model"]})


def test_an_embeddings_endpoint_is_used_when_configured() -> None:
    chunks, fact_id = _fact_deep_in_its_chunk()
    server = _EmbeddingServer()
    context = Context(
        **SMALL, embedding_url="http://embed.invalid/v1", embedding_model="bow", embedding_piece_tokens=128
    )
    scores = asyncio.run(
        endpoint_embedding_scores(QUESTION, chunks, context, transport=httpx.MockTransport(server))
    )
    assert int(np.argmax(scores)) == fact_id
    assert all(
        r["url"] == "http://embed.invalid/v1/embeddings" and r["model"] == "bow" for r in server.requests
    )
    pieces = sum(len(r["input"]) for r in server.requests) - 1  # minus the question
    assert pieces >= 10 * 6  # ~900-token chunks in 128-token pieces
    assert all(len(r["input"]) <= 64 for r in server.requests)


def test_an_embeddings_endpoint_that_rejects_the_request_raises_a_typed_error() -> None:
    chunks, _ = _fact_deep_in_its_chunk()
    context = Context(**SMALL, embedding_url="http://embed.invalid/v1", embedding_model="bow")
    with pytest.raises(EndpointError, match="rejected the request"):
        asyncio.run(
            endpoint_embedding_scores(
                QUESTION, chunks, context, transport=httpx.MockTransport(_EmbeddingServer(status=404))
            )
        )
