"""A flaky endpoint: how many runs answer, and from how many chunks, when calls run out of retries.

``python -m longgraph.evals.bench.flaky_endpoint [--runs 20] [--error-rate 0.3] [--retries 1]``

The same mapreduce question (a planted fact in the installed essays, about 30 chunks) runs ``--runs``
times against the stub answering ``--error-rate`` of its requests with a 5xx, each run with another
fault seed. A chunk whose call runs out of ``--retries`` is recorded as failed and the run goes on
(``nodes/endpoint_health.py``); before that change the run stopped at the first such call. Printed:
runs with at least one call out of retries (each one a stopped run before), runs answered (and right),
runs answered from every chunk, runs stopped and why, failed chunks per answered run, wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from longgraph.api import aask
from longgraph.errors import LonggraphError
from longgraph.evals.bench import NEEDLE_QUESTION, planted_haystack, print_figures
from longgraph.testing.stub_server import StubConfig, run_stub_in_thread, stub_settings


def run(runs: int, error_rate: float, retries: int, chars: int, concurrency: int) -> dict[str, object]:
    doc = planted_haystack(chars)
    outcomes: Counter[str] = Counter()
    failed_chunks: list[int] = []
    seconds: list[float] = []
    chunks = 0
    for seed in range(runs):
        with run_stub_in_thread(StubConfig(error_rate=error_rate, seed=seed)) as stub:
            settings: dict[str, Any] = stub_settings(
                stub.base_url, max_concurrency=concurrency, max_retries=retries, start_embedded=False
            )
            started = time.perf_counter()
            try:
                result = asyncio.run(aask(NEEDLE_QUESTION, doc, **settings))
            except LonggraphError as exc:
                outcomes[f"stopped: {type(exc).__name__}"] += 1
                seconds.append(time.perf_counter() - started)
                continue
            seconds.append(time.perf_counter() - started)
        chunks = len(result.chunks)
        failed = sum(c.status == "failed" for c in result.chunks)
        failed_chunks.append(failed)
        outcomes["answered"] += 1
        outcomes["answered right"] += "smoked plums" in result.answer
        outcomes["answered from every chunk"] += failed == 0
        outcomes["with a call out of retries (stopped before)"] += result.stats.unanswered_calls > 0
    figures: dict[str, object] = {
        "load": f"mapreduce, {chars:,} characters ({chunks} chunks); stub answering {error_rate:.0%} of requests "
        f"with 5xx; {retries} retr{'y' if retries == 1 else 'ies'}; {concurrency} in flight; {runs} seeds",
    }
    for name in sorted(outcomes):
        figures[name] = f"{outcomes[name]} of {runs}"
    figures["answered / runs"] = round(outcomes["answered"] / runs, 3)
    if failed_chunks:
        figures["failed chunks per answered run (mean, max)"] = (
            f"{statistics.mean(failed_chunks):.2f}, {max(failed_chunks)}"
        )
    figures["seconds per run (median)"] = round(statistics.median(seconds), 2)
    return figures


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--error-rate", type=float, default=0.3)
    parser.add_argument("--retries", type=int, default=1)
    parser.add_argument("--chars", type=int, default=130_000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args(argv)
    figures = run(args.runs, args.error_rate, args.retries, args.chars, args.concurrency)
    print_figures("a flaky endpoint: runs answered, chunks recorded as failed", figures)
    return figures


if __name__ == "__main__":
    main()
