"""RAG baselines: top-k chunks by BM25 or by embeddings, shown to one call.

The input is chunked with the one chunker at ``rag_chunk_tokens`` (Loong §4: 1024), every chunk is
scored against the question, and the ``rag_top_k`` best are shown in document order (so the text
still reads as it was written) as long as they fit the window together; the others are reported
``filtered`` with their rank and score. Ties (e.g. a question none of whose words occur) go to the
earlier chunk, so the result is deterministic.

Embeddings come from the bundled all-MiniLM-L6-v2 on the CPU (offline: ``HF_HUB_OFFLINE=1`` is set
before it loads) or from an OpenAI-compatible ``/embeddings`` endpoint when ``embedding_url`` is set.
An embedding model reads a bounded number of tokens (MiniLM: 256 word pieces, silently dropping the
rest), and a mean-pooled vector of a long chunk averages one relevant sentence away, so a chunk is
embedded in pieces of ``embedding_piece_tokens`` (default 128, what MiniLM was trained on) and scored
by its best piece: a fact at the end of a 1024-token chunk is as findable as one at its start. (On
needles in Paul Graham essays, whole 256-token pieces ranked the needle's chunk first in 3 of 4 cases,
128-token pieces in 4 of 4, with twice the margin.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Literal

import httpx
import numpy as np
from numpy.typing import NDArray

from longgraph.embeddings import endpoint_embeddings, local_embedder
from longgraph.errors import ConfigurationError
from longgraph.nodes.chunking import chunk_bodies, split_into_chunks
from longgraph.nodes.kit import RunKit
from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.runtime import report_progress
from longgraph.state.baseline import BaselineState, ShownChunk
from longgraph.state.context import Context
from longgraph.state.contract import Chunk, DocumentIn
from longgraph.state.graph_state import RunState
from longgraph.tokenizer import Tokenizer, get_tokenizer

log = logging.getLogger(__name__)

RetrieverName = Literal["bm25", "embed"]
PROMPTS = "baseline"
STAGE = "answer"
_JOIN_TOKENS = 1
_ENDPOINT_BATCH = 64
_ENCODE_BATCH = 32
_SPECIAL_TOKENS = 2  # [CLS] and [SEP] count against the embedding model's window


# --------------------------------------------------------------------------------------------------
# Scoring


def bm25_scores(question: str, texts: Sequence[str]) -> list[float]:
    """BM25 (bm25s, Lucene variant, English stop words) of every text against the question."""
    try:
        import bm25s
    except ImportError as exc:
        raise ConfigurationError("rag-bm25 needs the `eval` extra (package bm25s)") from exc
    if not logging.getLogger().isEnabledFor(logging.DEBUG):
        # bm25s sets its own logger to DEBUG on import, which would print on every index it builds.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
    corpus = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    query = bm25s.tokenize([question], stopwords="en", return_ids=False, show_progress=False)[0]
    if not query or not any(corpus):
        return [0.0] * len(texts)
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    return [float(s) for s in index.get_scores(query)]


PIECES = "bodies-v2"
"""How :func:`pieces_of` cuts chunks (v2: their title labels left out): part of a stored graph's key, so
that a graph whose vectors were embedded another way is built again rather than searched."""


def pieces_of(chunks: Sequence[Chunk], size: int, tokenizer: Tokenizer) -> tuple[list[str], list[int]]:
    """Each chunk's own text (:func:`~longgraph.nodes.chunking.chunk_bodies`: its title labels left
    out) cut by the one chunker into pieces of at most ``size`` tokens, with owners."""
    texts: list[str] = []
    owners: list[int] = []
    for index, chunk in enumerate(chunks):
        for body in chunk_bodies(chunk):
            for piece in split_into_chunks([DocumentIn(text=body)], size, tokenizer):
                texts.append(piece.text)
                owners.append(index)
    return texts, owners


def best_piece_scores(
    question_vector: NDArray[np.float32], piece_vectors: NDArray[np.float32], owners: list[int], n: int
) -> list[float]:
    """Cosine similarity of each chunk's best piece (vectors are unit length)."""
    similarities = piece_vectors @ question_vector
    best = np.full(n, -1.0, dtype=np.float32)
    np.maximum.at(best, np.asarray(owners, dtype=np.int64), similarities.astype(np.float32))
    return [float(s) for s in best]


def local_embedding_scores(question: str, chunks: Sequence[Chunk], context: Context) -> list[float]:
    """Scores with a sentence-transformers model on the CPU (blocking: run it in a thread)."""
    embedder = local_embedder(context.embedding_model, context.embedding_precision)
    size = min(context.embedding_piece_tokens, embedder.model.max_seq_length - _SPECIAL_TOKENS)
    texts, owners = pieces_of(chunks, size, embedder.tokenizer)
    vectors = embedder.encode([question, *texts])
    return best_piece_scores(vectors[0], vectors[1:], owners, len(chunks))


async def endpoint_embedding_scores(
    question: str,
    chunks: Sequence[Chunk],
    context: Context,
    tokenizer: Tokenizer | None = None,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[float]:
    """Scores with a served embedding model; pieces are counted with the run's tokenizer."""
    counter = (
        tokenizer if tokenizer is not None else await asyncio.to_thread(get_tokenizer, context.tokenizer)
    )
    texts, owners = pieces_of(chunks, context.embedding_piece_tokens, counter)
    vectors = await endpoint_embeddings([question, *texts], context, transport=transport)
    return best_piece_scores(vectors[0], vectors[1:], owners, len(chunks))


async def score_chunks(
    retriever: RetrieverName, question: str, chunks: Sequence[Chunk], context: Context, tokenizer: Tokenizer
) -> tuple[list[float], str]:
    """(score per chunk, what scored them); blocking work runs in a thread, off the event loop."""
    if retriever == "bm25":
        return await asyncio.to_thread(bm25_scores, question, [c.text for c in chunks]), "BM25"
    if retriever == "embed":
        if context.embedding_url:
            return await endpoint_embedding_scores(
                question, chunks, context, tokenizer
            ), "embeddings (endpoint)"
        scores = await asyncio.to_thread(local_embedding_scores, question, chunks, context)
        embedder = local_embedder(context.embedding_model, context.embedding_precision)
        return scores, f"embeddings ({embedder.name}, {embedder.precision})"
    raise ConfigurationError(f"unknown retriever {retriever!r}: expected bm25 or embed")


# --------------------------------------------------------------------------------------------------
# Selection and the nodes


def select_top_k(
    chunks: Sequence[Chunk], scores: Sequence[float], *, k: int, budget: int, label: str
) -> tuple[list[ShownChunk], list[tuple[int, str]], list[str]]:
    """The ``k`` best chunks that fit ``budget`` together, in document order; the rest with reasons."""
    ranked = sorted(range(len(chunks)), key=lambda i: (-scores[i], i))
    rank_of = {index: r for r, index in enumerate(ranked, start=1)}
    chosen: set[int] = set()
    too_big: set[int] = set()
    used = 0
    for index in ranked[:k]:
        cost = chunks[index].tokens + (_JOIN_TOKENS if chosen else 0)
        if used + cost <= budget:
            chosen.add(index)
            used += cost
        else:
            too_big.add(index)
    n = len(chunks)
    shown = [
        ShownChunk(
            chunk_id=chunks[i].id,
            text=chunks[i].text,
            note=f"retrieved: rank {rank_of[i]} of {n} by {label} (score {scores[i]:.3f})",
        )
        for i in sorted(chosen)
    ]
    filtered = [
        (
            chunks[i].id,
            f"retrieved at rank {rank_of[i]} of {n} by {label} (score {scores[i]:.3f}) but did not fit "
            f"the window with the higher-ranked chunks"
            if i in too_big
            else f"not retrieved: rank {rank_of[i]} of {n} by {label} (score {scores[i]:.3f}); top {k} shown",
        )
        for i in range(n)
        if i not in chosen
    ]
    decisions = [f"{label}: showed {len(chosen)} of {n} chunks ({used:,} tokens), top {k} requested"]
    if too_big:
        decisions.append(
            f"{len(too_big)} of the top {k} chunks did not fit the {budget:,}-token text budget: lower "
            "rag_top_k or rag_chunk_tokens"
        )
    return shown, filtered, decisions


async def chunk_for_retrieval(state: BaselineState, kit: RunKit) -> RunState:
    """Chunk at ``rag_chunk_tokens`` (capped by what one call can read)."""
    return await chunk_input(state, kit, prompts=PROMPTS, stage=STAGE, size="rag_chunk_tokens")


async def retrieve(state: BaselineState, kit: RunKit, *, retriever: RetrieverName) -> BaselineState:
    """Score every chunk against the question and keep the top ``rag_top_k`` that fit the window."""
    context = kit.context
    chunks: list[Chunk] = state["input_chunks"]
    scores, label = await score_chunks(retriever, state["question"], chunks, context, kit.tokenizer)
    budget = kit.budget(PROMPTS, STAGE, state["question"])
    shown, filtered, decisions = select_top_k(chunks, scores, k=context.rag_top_k, budget=budget, label=label)
    report_progress("retrieve", total=1, message=decisions[0])
    return {"shown": shown, "filtered": filtered, "decisions": decisions}
