"""``longgraph batch`` over a corpus: its throughput / the server's saturating load, in one run.

``python -m longgraph.evals.bench.batch_throughput [--items 100] [--latency 0.1] [--concurrency 32]``
``python -m longgraph.evals.bench.batch_throughput --embedded --items 20 --chars 4000 --concurrency 4``

Runs :func:`longgraph.abatch` over ``--items`` questions, each about its own slice of the installed Paul
Graham essays with a fact planted in it, against the stub answering in ``--latency`` seconds with its
oracle (or the embedded vLLM server), capturing every request; then replays exactly those requests with
a bare async HTTP client, all available at once, at the same concurrency — the most the server can be
kept busy with this work. The ratio of the two wall times is how close one shared concurrency budget
across items comes to saturating the server (an item's stages depend on each other; the items do not).
On vLLM the replay runs under its own ``cache_salt`` (what the map prompts share warmed first), so the
prefix cache the batch filled does not serve the replay's prompts.
Also printed: items answered right, calls per item, and the stub's peak of requests in flight.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longgraph.batch import abatch
from longgraph.evals.bench import bench_endpoint, run_and_print
from longgraph.evals.bench.mapreduce_stub import RecordingProvider, replay_wall, salted, warm_shared_prefix
from longgraph.evals.bench.saturation import (
    SMALL_WINDOW_RUN,
    add_load_options,
    essay_slices,
    saturation_figures,
)

QUESTION = "What is the secret ingredient of Grandma Olga's borscht?"


def corpus_items(count: int, chars: int) -> list[dict[str, Any]]:
    """``count`` items, each a distinct slice of the essays with its own planted answer."""
    rows = []
    for i, filler in enumerate(essay_slices(count, chars)):
        cut = filler.rfind(" ", 0, len(filler) * ((i % 9) + 1) // 10) + 1
        fact = f"The secret ingredient of Grandma Olga's borscht is smoked plums from orchard {i}."
        rows.append(
            {
                "id": f"item-{i}",
                "question": QUESTION,
                "document": f"{filler[:cut]}\n\n{fact}\n\n{filler[cut:]}",
                "metadata": {"gold": f"orchard {i}"},
            }
        )
    return rows


def run(
    items: int,
    chars: int,
    latency: float,
    concurrency: int,
    *,
    embedded: bool = False,
    replay: bool = True,
    items_in_flight: int | None = None,
) -> dict[str, object]:
    corpus = corpus_items(items, chars)
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="batch-bench-")))
        endpoint, stub = bench_endpoint(stack, embedded=embedded, latency=latency)
        provider = RecordingProvider()
        started = time.perf_counter()
        summary = asyncio.run(
            abatch(
                corpus,
                out=scratch / "results.jsonl",
                llm=provider,
                max_concurrency=concurrency,
                items_in_flight=items_in_flight,
                **SMALL_WINDOW_RUN,
                **endpoint,
            )
        )
        batch_seconds = time.perf_counter() - started
        peak = stub.stats()["max_in_flight"] if stub is not None else None
        calls = provider.calls
        bare_seconds = math.nan
        if replay:
            replayed = calls
            if embedded:  # the same prompts in a prefix cache of their own, what they share warmed first
                replayed = salted(calls, f"longgraph-batch-bench-{time.time_ns()}")
                warm_shared_prefix(str(endpoint["base_url"]), [c for c in replayed if c.stage == "map"])
            bare_seconds = replay_wall(str(endpoint["base_url"]), replayed, concurrency)
    rows = summary.rows
    right = sum(str(r["metadata"]["gold"]) in str(r.get("answer") or "") for r in rows)
    per_item = [int(r.get("llm_calls") or 0) for r in rows]
    return {
        "items": items,
        "answered right / failed": f"{right} / {summary.failed}",
        "items in flight": items_in_flight or f"default ({2 * concurrency})",
        "peak requests in flight at the stub": peak if peak is not None else "-",
        **saturation_figures(
            what="batch",
            requests=calls,
            concurrency=concurrency,
            latency=latency,
            embedded=embedded,
            wall_s=batch_seconds,
            bare_s=bare_seconds,
        ),
        "calls per item: mean (min-max)": f"{statistics.mean(per_item):.1f} ({min(per_item)}-{max(per_item)})",
        "items per second": round(items / batch_seconds, 2),
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--chars", type=int, default=8000, help="characters per item's document")
    parser.add_argument("--items-in-flight", type=int, default=None, help="default: abatch's")
    add_load_options(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    return run_and_print(
        "longgraph batch over a corpus / saturating load", run, **vars(_parser().parse_args(argv))
    )


if __name__ == "__main__":
    main()
