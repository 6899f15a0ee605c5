"""Attention between spans of one text, read from a local ``transformers`` model (PECAN §3.1, App. C).

A served endpoint returns no attention, so PECAN's attention edges need the model run locally: the
prompt a call saw plus the answer it gave are fed to the model once (teacher forcing), and the
attention from the tokens of each *source* span (an Information Point, a retrieved node) to the tokens
of each *target* span (a batch member, the question) is read out.

Memory is bounded the way the paper describes ("accumulated during each layer's inference"): the model
runs with a registered attention function that computes the layer's output with SDPA as usual and, on
the side, the softmax rows of the source tokens only, in blocks of :data:`ROW_BLOCK` rows, reduced at
once to per-target means and added to a ``sources × targets`` sum. No layer's full ``heads × T × T`` map
is ever held (at 8K tokens that would be 2.3 GB per layer for SmolLM2-135M; the blocks take ~150 MB).

Aggregation, exactly as §3.1(a)–(b): averaged over heads and layers; token→node is the mean over the
target span's tokens; node→node the mean of that over the source span's tokens. Spans never overlap, so
intra-node attention is never counted. Normalisation (§3.1(c), per source over targets) and the
position-index heuristic of Appendix C are the callers' (``nodes/ip_graph.py``, ``nodes/graph_search.py``).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from longgraph.embeddings import resolve_precision
from longgraph.errors import ConfigurationError
from longgraph.state.context import EmbeddingPrecision

ROW_BLOCK = 256
"""Source-token rows whose attention is computed at once in a layer."""
IMPLEMENTATION = "longgraph_span_attention"
CaptureSpans = tuple[list[tuple[int, int]], list[tuple[int, int]]]


@dataclass
class _Capture:
    """Per-forward accumulator: which token spans to read, and the running sum over layers."""

    sources: list[tuple[int, int]]
    targets: list[tuple[int, int]]
    total: NDArray[np.float64]
    layers: int = 0

    def add(self, query: Any, key: Any, scaling: float) -> None:
        import torch

        groups = query.shape[1] // key.shape[1]
        keys = key[0].repeat_interleave(groups, dim=0).float() if groups > 1 else key[0].float()
        queries = query[0].float()
        starts = torch.tensor([a for a, _ in self.targets])
        ends = torch.tensor([b for _, b in self.targets])
        widths = (ends - starts).clamp(min=1).double()
        for s, (start, end) in enumerate(self.sources):
            sums = torch.zeros(len(self.targets), dtype=torch.float64)
            for block in range(start, end, ROW_BLOCK):
                last = min(end, block + ROW_BLOCK)
                # A row reads the keys up to its own position: later keys are never needed, and only the
                # block's own square holds masked entries.
                scores = torch.matmul(queries[:, block:last, :], keys[:, :last, :].transpose(1, 2)) * scaling
                own = scores[:, :, block:last]
                own.masked_fill_(
                    torch.ones(last - block, last - block, dtype=torch.bool).triu(1), float("-inf")
                )
                probs = torch.softmax(scores, dim=-1).mean(dim=0)  # heads averaged: rows × keys
                cumulative = torch.nn.functional.pad(probs.cumsum(dim=-1), (1, 0)).double()
                # Every target at once; a target past the rows (none in PECAN's prompts) reads nothing.
                spans = cumulative[:, ends.clamp(max=last)] - cumulative[:, starts.clamp(max=last)]
                sums += (spans / widths).sum(dim=0)
            self.total[s] += (sums / max(1, end - start)).numpy()
        self.layers += 1

    def mean(self) -> NDArray[np.float64]:
        return self.total / max(1, self.layers)


def _span_attention(
    module: Any, query: Any, key: Any, value: Any, attention_mask: Any, *args: Any, **kwargs: Any
) -> Any:
    """The model's attention as usual (SDPA), plus the capture of the current forward, if any."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    capture: _Capture | None = kwargs.pop("longgraph_capture", None)
    if capture is not None:
        scaling = kwargs.get("scaling") or query.shape[-1] ** -0.5
        capture.add(query, key, float(scaling))
    return sdpa_attention_forward(module, query, key, value, attention_mask, *args, **kwargs)


@dataclass(frozen=True)
class AttentionReading:
    """Head- and layer-averaged attention, ``sources × targets``, and what reading it took."""

    weights: NDArray[np.float64]
    tokens: int
    seconds: float


class AttentionReader:
    """A local causal LM loaded once (per folder and process), read one forward pass at a time."""

    def __init__(self, folder: str, precision: str = "float32") -> None:
        path = Path(folder).expanduser()
        if not (path / "config.json").is_file():
            raise ConfigurationError(
                f"attention_model {folder!r} is not a transformers model folder (no config.json): PECAN "
                "reads attention from a local model; set pecan_edges=embedding to use embedding similarity"
            )
        try:
            import torch
            from transformers import AttentionInterface, AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise ConfigurationError(
                "PECAN's attention edges need torch and transformers (the `model` extra); "
                "set pecan_edges=embedding to use embedding similarity instead"
            ) from exc
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

        AttentionInterface.register(IMPLEMENTATION, _span_attention)
        # SDPA's own causal masking, as for the "sdpa" implementation (no T × T mask tensor).
        ALL_MASK_ATTENTION_FUNCTIONS.register(IMPLEMENTATION, sdpa_mask)
        self.name = path.name
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        self.precision = precision
        self.model = AutoModelForCausalLM.from_pretrained(
            str(path), attn_implementation=IMPLEMENTATION, dtype=getattr(torch, precision)
        )
        self.model.train(False)  # inference: no dropout
        self.max_tokens = int(getattr(self.model.config, "max_position_embeddings", 8192))
        self._lock = threading.Lock()

    def chat_text(self, messages: Sequence[tuple[str, str]], *, answer: str | None = None) -> str:
        """The prompt as the model's chat template lays it out, with ``answer`` as its reply when given."""
        turns = [{"role": role, "content": content} for role, content in messages if content]
        text = self.tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)
        return str(text) + (answer or "")

    def read(
        self, text: str, sources: Sequence[tuple[int, int]], targets: Sequence[tuple[int, int]]
    ) -> AttentionReading:
        """Attention from each source character span to each target span of ``text`` (one forward)."""
        import torch

        started = time.perf_counter()
        encoded = self.tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
        ids: list[int] = encoded["input_ids"]
        if len(ids) > self.max_tokens:
            raise ConfigurationError(
                f"attention needs {len(ids)} tokens in one pass; {self.name} takes {self.max_tokens}"
            )
        starts = [int(a) for a, _ in encoded["offset_mapping"]]
        capture = _Capture(
            sources=[_token_span(starts, s) for s in sources],
            targets=[_token_span(starts, t) for t in targets],
            total=np.zeros((len(sources), len(targets)), dtype=np.float64),
        )
        with self._lock, torch.inference_mode():
            # logits for the last position only: all of them would be T × vocabulary floats (1.3 GB at 6.7K
            # tokens for SmolLM2's 49K vocabulary), and only the attention is read.
            self.model(torch.tensor([ids]), use_cache=False, logits_to_keep=1, longgraph_capture=capture)
        return AttentionReading(capture.mean(), len(ids), time.perf_counter() - started)


def _token_span(starts: Sequence[int], span: tuple[int, int]) -> tuple[int, int]:
    """The tokens whose first character lies in the character ``span`` (at least one token)."""
    import bisect

    first = bisect.bisect_left(starts, span[0])
    last = bisect.bisect_left(starts, span[1])
    if last <= first:
        last = min(len(starts), first + 1)
        first = max(0, last - 1)
    return first, last


_LOADING = threading.Lock()


@functools.lru_cache(maxsize=2)
def _reader(folder: str, precision: str) -> AttentionReader:
    return AttentionReader(folder, precision)


def attention_reader(folder: str, precision: EmbeddingPrecision = "auto") -> AttentionReader:
    """The reader of ``folder``, loaded once (loading SmolLM2-135M takes ~1 s from safetensors).

    One load at a time: batches read in worker threads asked for it at once, and two threads importing
    transformers together failed one import (seen once in an evaluation: "PECAN's attention edges need
    torch and transformers" with both installed)."""
    with _LOADING:
        return _reader(folder, resolve_precision(precision))


def spans_in(text: str, pieces: Sequence[str], start: int = 0) -> list[tuple[int, int]]:
    """Character spans of ``pieces`` found in order in ``text`` from ``start`` (raises when one is not)."""
    spans: list[tuple[int, int]] = []
    cursor = start
    for piece in pieces:
        found = text.find(piece, cursor)
        if found < 0:
            raise ValueError(f"a span is not in the text: {piece[:60]!r}")
        spans.append((found, found + len(piece)))
        cursor = found + len(piece)
    return spans


def normalise_rows(weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """§3.1(c): each source's weights over its targets sum to 1 (a row of zeros stays zero)."""
    sums = weights.sum(axis=1, keepdims=True)
    normalised: NDArray[np.float64] = np.divide(weights, sums, out=np.zeros_like(weights), where=sums > 0)
    return normalised


__all__ = ["AttentionReader", "AttentionReading", "attention_reader", "normalise_rows", "spans_in"]
