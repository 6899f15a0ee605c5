"""vLLM's prefix cache over a mapreduce run: chunk-first prompts against shared-prefix-first ones.

``python -m longgraph.evals.bench.prefix_cache [--tokens 16000] [--chunk-size 1500]``

The same needle question is asked of the same haystack twice on the embedded vLLM server: with the
``paper`` prompts (the paper's order: the chunk before the instructions and question, so a document's
map calls share only the system line) and with the default ``compact`` prompts (instructions and
question first, then the chunk: every map call of a document shares that prefix). Before each run
the server's prefix cache is reset when the server allows it (``POST /reset_prefix_cache``, vLLM's dev
mode); else the paper run goes first, so the compact one cannot reuse its blocks beyond the system
line. Printed per variant, from ``/metrics`` before and after: prefix-cache queries, hits, hit rate,
the prompt tokens served from the cache and their share of the run's prompt tokens; and the answer.

The variants also differ in wording and output protocol (the compact one was chosen for accuracy with
the 135M model, ``prompts/mapreduce_compact.toml``): the hit rates compare the orders, the answers are
printed so nobody buys cache hits with accuracy.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

import httpx

from longgraph.api import aask
from longgraph.evals.bench import bench_endpoint, load_average, prefix_cache_counters, print_figures
from longgraph.evals.data.needle import build_needle


def reset_prefix_cache(base_url: str) -> bool:
    """Empty the server's prefix cache; False when it does not allow it (vLLM outside dev mode)."""
    try:
        response = httpx.post(base_url.removesuffix("/v1") + "/reset_prefix_cache", timeout=30)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


def one_variant(
    variant: str, question: str, documents: Any, endpoint: dict[str, Any], chunk_size: int
) -> dict[str, Any]:
    base_url = str(endpoint["base_url"])
    reset = reset_prefix_cache(base_url)
    before = prefix_cache_counters(base_url)
    started = time.perf_counter()
    result = asyncio.run(
        aask(
            question,
            documents=documents,
            strategy="mapreduce",
            start_embedded=False,
            prompt_variant=variant,
            chunk_size=chunk_size,
            temperature=0.0,
            cache_path=None,
            **endpoint,
        )
    )
    seconds = time.perf_counter() - started
    after = prefix_cache_counters(base_url)
    queries = after["prefix_cache_queries_total"] - before["prefix_cache_queries_total"]
    hits = after["prefix_cache_hits_total"] - before["prefix_cache_hits_total"]
    cached = after["prompt_tokens_cached_total"] - before["prompt_tokens_cached_total"]
    return {
        "cache reset before": reset,
        "calls": result.stats.llm_calls,
        "prompt tokens": result.stats.prompt_tokens,
        "prefix-cache hit rate": round(hits / queries, 3) if queries else None,
        "prompt tokens served from the cache": int(cached),
        "share of prompt tokens cached": round(cached / result.stats.prompt_tokens, 3)
        if result.stats.prompt_tokens
        else None,
        "seconds": round(seconds, 1),
        "answer": result.answer[:120],
    }


def run(tokens: int, chunk_size: int) -> dict[str, object]:
    instance = build_needle(target_tokens=tokens, n=1, seed=7, depth=0.6)[0]
    with ExitStack() as stack:
        endpoint, _ = bench_endpoint(stack, embedded=True, latency=0.0)
        figures: dict[str, object] = {
            "load average at start": load_average(),
            "tokens": instance.actual_tokens,
            "gold": "; ".join(instance.gold_answers),
        }
        rows = {
            v: one_variant(v, instance.question, instance.documents, endpoint, chunk_size)
            for v in ("paper", "compact")
        }
    for variant, row in rows.items():
        for key, value in row.items():
            figures[f"{variant}: {key}"] = value
    paper, compact = rows["paper"], rows["compact"]
    figures["cached share, compact / paper"] = (
        round(compact["share of prompt tokens cached"] / paper["share of prompt tokens cached"], 2)
        if paper["share of prompt tokens cached"] and compact["share of prompt tokens cached"]
        else "-"
    )
    figures["load average at end"] = load_average()
    return figures


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=16_000)
    parser.add_argument("--chunk-size", type=int, default=1500)
    args = parser.parse_args(argv)
    figures = run(args.tokens, args.chunk_size)
    print_figures("vLLM prefix cache over a mapreduce run: paper order / shared prefix first", figures)
    return figures


if __name__ == "__main__":
    main()
