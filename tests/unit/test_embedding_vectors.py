"""Embeddings computed once and read whole: vectors kept in the result cache per model and text (a second
question over the same document embeds only the question), and a text longer than the bundled model's
window embedded from all its windows, not from its first ~200 words."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from longgraph import embeddings
from longgraph.embeddings import embed_texts, local_embedder, pool_windows
from longgraph.state.context import Context
from longgraph.tests.conftest import planted


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Replace the encoder with a deterministic one that records what it was asked to embed."""
    asked: list[list[str]] = []

    async def fake(texts: Sequence[str], context: Context) -> NDArray[np.float32]:
        asked.append(list(texts))
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).normal(size=8) for t in texts]
        return embeddings.unit_rows(np.asarray(rows, dtype=np.float32))

    monkeypatch.setattr(embeddings, "_embed_uncached", fake)
    return asked


def test_a_second_question_embeds_only_itself(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked = _counting(monkeypatch)
    context = Context(cache_path=str(tmp_path / "cache.sqlite"))
    chunks = [f"chunk {i} about lighthouses" for i in range(40)]
    first = asyncio.run(embed_texts(["Who keeps the lamp?", *chunks, chunks[0]], context))
    second = asyncio.run(embed_texts(["When was it lit?", *chunks], context))
    assert [len(a) for a in asked] == [41, 1]  # duplicates once; the second question's chunks from the cache
    assert asked[1] == ["When was it lit?"]
    np.testing.assert_array_equal(first[1:41], second[1:])
    np.testing.assert_array_equal(first[1], first[41])


def test_vectors_are_kept_per_embedding_model_and_user(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    asked = _counting(monkeypatch)
    path = str(tmp_path / "cache.sqlite")
    for context in (Context(cache_path=path), Context(cache_path=path, embedding_model="/models/other"),
                    Context(cache_path=path, cache_scope="alice"), Context(cache_path=path)):  # fmt: skip
        asyncio.run(embed_texts(["the same text"], context))
    assert len(asked) == 3  # a model, another model, another user; then the first again from the cache


def test_without_a_cache_every_call_embeds(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _counting(monkeypatch)
    for _ in range(2):
        asyncio.run(embed_texts(["a", "b"], Context(cache_path="")))
    assert [len(a) for a in asked] == [2, 2]


def test_a_long_text_is_embedded_from_all_its_windows() -> None:
    embedder = local_embedder()
    text = planted(6_000)
    pieces, owners, _weights = embedder.windows([text, "short"])
    assert len(pieces) > 3 and owners[-1] == 1 and "".join(pieces[:-1]).strip() == text.strip()
    assert all(len(embedder.model.tokenizer(p)["input_ids"]) <= embedder.window for p in pieces)
    whole = embedder.encode([text])[0]
    first = embedder.encode([pieces[0]])[0]
    last = embedder.encode([pieces[-2]])[0]
    assert float(whole @ last) > float(first @ last)  # the end of the text is in its vector
    assert abs(float(np.linalg.norm(whole)) - 1.0) < 1e-5


def test_pooling_is_the_weighted_mean_of_the_windows() -> None:
    vectors = np.asarray([[1, 0], [0, 1], [1, 0]], dtype=np.float32)
    pooled = pool_windows(vectors, [0, 0, 1], [3.0, 1.0, 1.0], 2)
    np.testing.assert_allclose(pooled[0], np.asarray([3, 1]) / np.sqrt(10), rtol=1e-6)
    np.testing.assert_allclose(pooled[1], [1, 0])
