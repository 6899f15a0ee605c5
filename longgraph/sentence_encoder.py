"""A mean-pooled BERT sentence encoder in plain torch: neither ``transformers`` nor ``sentence-transformers``.

The bundled all-MiniLM-L6-v2 is a six-layer BERT whose sentence vector is the mean of its token vectors,
normalised (its ``modules.json``: Transformer, Pooling with mean tokens, Normalize). Loading it through
``sentence-transformers`` costs about 400 MB of resident memory before its 90 MB of weights are read
(measured here: a process at 220 MB with torch imported went to 472 MB on ``from transformers import
AutoModel`` alone, and to 490 MB with ``sentence_transformers``), which alone puts ToM and PECAN over
issue 34's 600 MB. A BERT encoder is small enough to write out: embeddings, then per layer
self-attention (``scaled_dot_product_attention``, the kernel transformers' BERT uses on the CPU) and a
GELU feed-forward, each with its residual and layer norm; then the masked mean. Its vectors are the
library's (tested against sentence-transformers where that is installed: cosine 1.0 in float32).
A folder of another shape (other pooling, extra layers, not BERT) still goes through
``sentence-transformers``.
"""

from __future__ import annotations

import ctypes
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

PAD_TO = 8
"""Batches are padded to a multiple of this many word pieces: fewer distinct shapes for the CPU kernels
to prepare and keep."""
PIECES_PER_BATCH = 2048
"""Word pieces (padded) in one forward pass: eight texts of the model's 256."""

TOKENIZE_AT_ONCE = 256
"""Texts handed to the tokenizer in one call (it spreads a call over the cores)."""
TRIM_EVERY = 16
"""Forward passes between handing the memory they freed back to the system (:func:`release_freed_memory`)."""

MEAN_POOLED = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)


def is_mean_pooled(folder: Path) -> bool:
    """Whether a sentence-transformers folder is a BERT encoder (GELU, absolute positions, safetensors
    weights, a fast tokenizer), mean pooling and Normalize, nothing else."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    kinds = tuple(str(m.get("type")) for m in modules) if isinstance(modules, list) else ()
    modes = {k: v for k, v in pooling.items() if k.startswith("pooling_mode_")}
    only_mean = modes.get("pooling_mode_mean_tokens") is True and not any(
        v for k, v in modes.items() if k != "pooling_mode_mean_tokens"
    )
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    bert = (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
    )
    files = all(
        (folder / f).is_file() for f in ("tokenizer.json", "model.safetensors", "sentence_bert_config.json")
    )
    return kinds == MEAN_POOLED and only_mean and bert and files


class MeanPooledEncoder:
    """The folder's BERT encoder over word pieces cut at ``max_seq_length`` and padded to the longest of
    a batch, and the mean of its token vectors under the attention mask, normalised. Offers the part of
    ``SentenceTransformer`` that :class:`~longgraph.embeddings.LocalEmbedder` uses (``encode``, ``to``,
    ``max_seq_length``)."""

    def __init__(self, folder: Path, dtype: Any = None) -> None:
        """``dtype``: the torch dtype to compute in (None: the file's). Each tensor is converted as it is
        read, so the file's float32 copy is never held whole beside the bfloat16 one."""
        import torch
        from safetensors import safe_open
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        settings = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_seq_length = int(settings.get("max_seq_length") or 256)
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.weights: dict[str, Any] = {}
        with safe_open(str(folder / "model.safetensors"), framework="pt") as stored:
            for key in stored.keys():  # noqa: SIM118 - a safetensors handle, not a dict
                if not key.endswith("position_ids"):
                    tensor = stored.get_tensor(key)
                    self.weights[key.removeprefix("bert.")] = tensor if dtype is None else tensor.to(dtype)
        self.word_pieces = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # The file may preset a fixed length (128 here); sentence-transformers cuts at max_seq_length.
        self.word_pieces.enable_truncation(self.max_seq_length)
        self.word_pieces.no_padding()  # batches are padded in :meth:`encode` (masked out: the id is moot)
        self._torch = torch

    def to(self, dtype: Any) -> MeanPooledEncoder:
        for name in list(self.weights):  # one tensor at a time: the float32 copy is not held whole twice
            self.weights[name] = self.weights[name].to(dtype)
        return self

    def word_pieces_of(self, texts: list[str]) -> list[NDArray[np.int32]]:
        """Each text's word-piece ids, its two markers included, cut at ``max_seq_length``.

        Tokenised :data:`TOKENIZE_AT_ONCE` texts at a time and kept as bare arrays: the tokenizer's
        ``Encoding`` objects carry each piece's string, offsets and masks besides its id, about 40 MB
        for one ToM question's 2,656 texts at 256K, held until the last batch was encoded."""
        ids: list[NDArray[np.int32]] = []
        for start in range(0, len(texts), TOKENIZE_AT_ONCE):
            batch = self.word_pieces.encode_batch(texts[start : start + TOKENIZE_AT_ONCE])
            ids.extend(np.asarray(encoding.ids, dtype=np.int32) for encoding in batch)
        return ids

    def _forward(self, ids: Any, mask: Any, types: Any) -> Any:
        torch, w, F = self._torch, self.weights, self._torch.nn.functional
        positions = torch.arange(ids.shape[1])
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][positions]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        batch, length, width = x.shape
        attend = mask.bool()[:, None, None, :]

        def linear(name: str, value: Any) -> Any:
            return F.linear(value, w[f"{name}.weight"], w[f"{name}.bias"])

        def norm(name: str, value: Any) -> Any:
            return F.layer_norm(
                value, (width,), w[f"{name}.LayerNorm.weight"], w[f"{name}.LayerNorm.bias"], self.eps
            )

        def split(value: Any) -> Any:
            return value.view(batch, length, self.heads, width // self.heads).transpose(1, 2)

        x = norm("embeddings", x)
        for i in range(self.layers):
            at = f"encoder.layer.{i}"
            q, k, v = (split(linear(f"{at}.attention.self.{n}", x)) for n in ("query", "key", "value"))
            mixed = F.scaled_dot_product_attention(q, k, v, attn_mask=attend)
            mixed = mixed.transpose(1, 2).reshape(batch, length, width)
            x = norm(f"{at}.attention.output", linear(f"{at}.attention.output.dense", mixed) + x)
            inner = F.gelu(linear(f"{at}.intermediate.dense", x))
            x = norm(f"{at}.output", linear(f"{at}.output.dense", inner) + x)
        return x

    def encode(self, texts: list[str], *, batch_size: int = 32, **_: Any) -> Any:
        """Unit vectors (a float32 tensor, rows in the order of ``texts``).

        Texts are batched longest first, as sentence-transformers does, but by word pieces rather
        than by count: a batch holds at most :data:`PIECES_PER_BATCH` (padded to :data:`PAD_TO`), so
        30-piece texts go sixty at a time and 256-piece ones eight. ``batch_size`` is accepted and
        ignored. Measured on the 2-core server in bfloat16 (2,400 texts of 25 words, then 334 of 180;
        a process holding the model and the corpus): 32 texts a batch at their longest took 3.40 s
        and 3.08 s and peaked at 708 MB resident; 4,096 pieces a batch 2.87 s and 2.86 s, 532 MB;
        2,048 pieces 3.02 s and 3.11 s, 430 MB (chosen: ToM and PECAN must stay under 600 MB)."""
        torch = self._torch
        pieces = self.word_pieces_of(texts)
        order = sorted(range(len(texts)), key=lambda i: -len(pieces[i]))
        rows: list[Any] = [None] * len(texts)
        passes = 0
        with torch.inference_mode():
            start = 0
            while start < len(order):
                longest = -(-len(pieces[order[start]]) // PAD_TO) * PAD_TO
                batch = order[start : start + max(1, PIECES_PER_BATCH // max(longest, 1))]
                start += len(batch)
                ids, mask = (torch.zeros((len(batch), longest), dtype=torch.long) for _ in range(2))
                for row, index in enumerate(batch):
                    ids[row, : len(pieces[index])] = torch.from_numpy(pieces[index])
                    mask[row, : len(pieces[index])] = 1
                # One text per row: every word piece is of segment 0, the markers included.
                hidden = self._forward(ids, mask, torch.zeros_like(ids))
                passes += 1
                if passes % TRIM_EVERY == 0:
                    release_freed_memory()
                weights = mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
                unit = torch.nn.functional.normalize(pooled.float(), dim=-1)
                for row, index in zip(unit, batch, strict=True):
                    rows[index] = row
        release_freed_memory()
        return torch.stack(rows) if rows else torch.zeros((0, 0))


def release_freed_memory() -> None:
    """Return the heap memory freed since the last call to the system, where the C library can (glibc's
    ``malloc_trim``; elsewhere nothing).

    Each forward pass allocates and frees tensors of a few megabytes, of shapes that change from batch
    to batch; glibc keeps what is freed for reuse and the shapes rarely fit, so the process grew by about
    250 MB over one ToM question at 256K and kept it. Measured on the 2-core server, 2,656 texts of
    about 100 word pieces in bfloat16 (the encoder alone): the peak went from 533-574 MB to 422-437 MB
    trimming after every pass (8.2 s against 9.0-9.5 s) and to 453 MB every 16 passes, within the
    noise of the untrimmed time (chosen: :data:`TRIM_EVERY`)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except OSError:  # pragma: no cover - a platform without a C library to open
        return None


def load_sentence_encoder(folder: Path, dtype: Any = None) -> Any:
    """The lighter :class:`MeanPooledEncoder` where the folder allows it, else a ``SentenceTransformer``;
    in ``dtype`` (a torch dtype; None: as stored)."""
    if is_mean_pooled(folder):
        return MeanPooledEncoder(folder, dtype)
    import transformers.utils.logging
    from sentence_transformers import SentenceTransformer

    # No "Loading weights" progress bar on the stderr of every evaluation.
    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    model = SentenceTransformer(str(folder), device="cpu")
    return model if dtype is None else model.to(dtype)
