"""ToM and PECAN against mapreduce on one document and stub: first question, second question, and the
seconds spent embedding, side by side in one run.

``python -m longgraph.evals.bench.embedding_reuse [--tokens 64000] [--latency 0.05] [--server stub|embedded]``

With ``--server embedded`` the calls go to the embedded vLLM server (SmolLM2-135M on the CPU, its own
settings): where the model, not the embedder, should set the pace (issue 34 asks for 64K).

ToM embeds every chunk with each question (query-aware compression) and PECAN every information point;
both used to embed the whole document again for a second question. Vectors are now kept in the result
cache per (embedding model, text): the second question's embedding seconds should be about zero and
its wall close to mapreduce's. Each strategy runs on a fresh cache file (what a first question costs),
then a second, different question on the same file. Prints walls, ratios over mapreduce, embedding
seconds and texts embedded per run, and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from longgraph import embeddings
from longgraph.api import aask
from longgraph.evals.bench import load_average, peak_rss_mb, print_figures
from longgraph.evals.bench.mapreduce_stub import build_workload
from longgraph.state.context import Context
from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess

STRATEGIES = ("mapreduce", "tom", "pecan-no-attention")
SECOND_QUESTION = "What does the author say about the first programming language he learned?"


class EmbedMeter:
    """Wraps the uncached encoder: seconds spent and texts embedded since the last reading."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.texts = 0
        self._inner = embeddings._embed_uncached

    async def __call__(self, texts: Sequence[str], context: Context) -> NDArray[np.float32]:
        started = time.perf_counter()
        try:
            return await self._inner(texts, context)
        finally:
            self.seconds += time.perf_counter() - started
            self.texts += len(texts)

    def take(self) -> tuple[float, int]:
        reading = (round(self.seconds, 2), self.texts)
        self.seconds, self.texts = 0.0, 0
        return reading


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokens", type=int, default=64_000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument(
        "--server",
        choices=("stub", "embedded"),
        default="stub",
        help="the stub (answers after --latency) or the embedded vLLM server with its own settings",
    )
    parser.add_argument(
        "--strategies",
        default=",".join(STRATEGIES[1:]),
        help="which of ToM and PECAN to run beside mapreduce (one alone: the peak RSS is its own)",
    )
    args = parser.parse_args(argv)
    chosen = ("mapreduce", *(s for s in STRATEGIES[1:] if s in args.strategies.split(",")))
    workload = build_workload(args.tokens)
    meter = EmbedMeter()
    embeddings._embed_uncached = meter
    embedded = args.server == "embedded"
    figures: dict[str, Any] = {"tokens": workload.tokens, "server": args.server}
    if not embedded:
        figures["stub_latency_s"] = args.latency
    with (
        contextlib.nullcontext(None)
        if embedded
        else run_stub_in_subprocess(StubConfig(model="stub", latency_s=args.latency)) as stub,
        tempfile.TemporaryDirectory() as tmp,
    ):
        walls: dict[str, list[float]] = {}
        for strategy in chosen:
            cache = str(Path(tmp) / f"{strategy}.sqlite")
            settings: dict[str, Any] = {"cache_path": cache, "temperature": 0.0}
            if stub is not None:
                settings |= {
                    "base_url": stub.base_url,
                    "model": "stub",
                    "context_window": 8192,
                    "max_concurrency": 16,
                }
            walls[strategy] = []
            for which, question in (("first", workload.question), ("second", SECOND_QUESTION)):
                started = time.perf_counter()
                asyncio.run(
                    aask(
                        question,
                        documents=workload.documents,
                        strategy=strategy,
                        start_embedded=embedded,
                        **settings,
                    )
                )
                wall = time.perf_counter() - started
                seconds, texts = meter.take()
                walls[strategy].append(wall)
                figures[f"{strategy}_{which}_wall_s"] = round(wall, 2)
                figures[f"{strategy}_{which}_embedding_s"] = seconds
                figures[f"{strategy}_{which}_texts_embedded"] = texts
        for strategy in chosen[1:]:
            for k, which in enumerate(("first", "second")):
                figures[f"{strategy}_{which}_over_mapreduce"] = round(
                    walls[strategy][k] / walls["mapreduce"][k], 2
                )
    figures["peak_rss_mb"] = peak_rss_mb()  # this process's: mapreduce's and the strategies run here
    figures["load_average"] = load_average()
    print_figures("embedding reuse: ToM and PECAN against mapreduce, first and second question", figures)


if __name__ == "__main__":
    main()
