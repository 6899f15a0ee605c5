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

import json
from pathlib import Path
from typing import Any

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

    def __init__(self, folder: Path) -> None:
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        settings = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_seq_length = int(settings.get("max_seq_length") or 256)
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        weights = load_file(str(folder / "model.safetensors"))
        self.weights = {
            k.removeprefix("bert."): v for k, v in weights.items() if not k.endswith("position_ids")
        }
        self.word_pieces = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # The file may preset a fixed length (128 here); sentence-transformers pads to the batch's longest.
        self.word_pieces.enable_truncation(self.max_seq_length)
        pad = self.word_pieces.token_to_id("[PAD]")
        self.word_pieces.enable_padding(pad_id=0 if pad is None else pad, pad_token="[PAD]")
        self._torch = torch

    def to(self, dtype: Any) -> MeanPooledEncoder:
        for name in list(self.weights):  # one tensor at a time: the float32 copy is not held whole twice
            self.weights[name] = self.weights[name].to(dtype)
        return self

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
        """Unit vectors (a float32 tensor, rows in the order of ``texts``). Texts are batched longest
        first, as sentence-transformers does, so that a batch pads little."""
        torch = self._torch
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        rows: list[Any] = [None] * len(texts)
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                encoded = self.word_pieces.encode_batch([texts[i] for i in batch])
                ids = torch.tensor([e.ids for e in encoded])
                mask = torch.tensor([e.attention_mask for e in encoded])
                types = torch.tensor([e.type_ids for e in encoded])
                hidden = self._forward(ids, mask, types)
                weights = mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
                unit = torch.nn.functional.normalize(pooled.float(), dim=-1)
                for row, index in zip(unit, batch, strict=True):
                    rows[index] = row
        return torch.stack(rows) if rows else torch.zeros((0, 0))


def load_sentence_encoder(folder: Path) -> Any:
    """The lighter :class:`MeanPooledEncoder` where the folder allows it, else a ``SentenceTransformer``."""
    if is_mean_pooled(folder):
        return MeanPooledEncoder(folder)
    import transformers.utils.logging
    from sentence_transformers import SentenceTransformer

    # No "Loading weights" progress bar on the stderr of every evaluation.
    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]

    return SentenceTransformer(str(folder), device="cpu")
