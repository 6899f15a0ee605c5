"""Adaptive concurrency against a server with less capacity than the client's ceiling, side by side.

``python -m longgraph.evals.bench.adaptive_concurrency [--chars 600000] [--capacity 3] [--concurrency 12]``

The same mapreduce question (a planted fact in the installed essays) runs twice per server behaviour —
``adaptive_concurrency`` off, then on — against the stub serving ``--capacity`` requests at once in
``--latency`` seconds each, with ``--concurrency`` as the client's ceiling:

* ``reject``: above capacity the stub answers 429 (a rate-limiting proxy). Printed: 429s per answer,
  and whether the run finished (a fixed limit can exhaust its retries);
* ``queue``: above capacity requests wait (vLLM), the queue shown at ``/metrics``. Printed: the
  request-seconds spent queued, and wall time (adaptation must not cost throughput).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence
from typing import Any, Literal

from longgraph.api import aask
from longgraph.errors import LonggraphError
from longgraph.evals.bench import NEEDLE_QUESTION, planted_haystack, print_figures
from longgraph.testing.stub_server import StubConfig, run_stub_in_thread, stub_settings


def one_run(
    doc: str,
    mode: Literal["queue", "reject"],
    *,
    adaptive: bool,
    capacity: int,
    latency: float,
    concurrency: int,
) -> dict[str, Any]:
    config = StubConfig(latency_s=latency, capacity=capacity, over_capacity=mode, retry_after_s=0.05)
    with run_stub_in_thread(config) as stub:
        started = time.perf_counter()
        settings: dict[str, Any] = stub_settings(
            stub.base_url, max_concurrency=concurrency, max_retries=20, adaptive_concurrency=adaptive
        )
        try:
            result = asyncio.run(aask(NEEDLE_QUESTION, doc, start_embedded=False, **settings))
            outcome = "right" if "smoked plums" in result.answer else f"wrong: {result.answer[:60]}"
        except LonggraphError as exc:
            outcome = f"failed ({type(exc).__name__})"
        seconds = time.perf_counter() - started
        stats = stub.stats()
    status = stats["by_status"]
    return {
        "outcome": outcome,
        "seconds": round(seconds, 2),
        "answers": status.get("200", 0),
        "429s": status.get("429", 0),
        "429s per answer": round(status.get("429", 0) / max(status.get("200", 0), 1), 2),
        "request-seconds queued": stats["waiting_seconds"],
        "peak queue": stats["max_waiting"],
    }


def run(chars: int, capacity: int, latency: float, concurrency: int) -> dict[str, object]:
    doc = planted_haystack(chars)
    figures: dict[str, object] = {
        "load": f"mapreduce, {chars:,} characters; stub serving {capacity} at once in {latency} s; client ceiling {concurrency}",
    }
    for mode in ("reject", "queue"):
        fixed = one_run(
            doc, mode, adaptive=False, capacity=capacity, latency=latency, concurrency=concurrency
        )
        adaptive = one_run(
            doc, mode, adaptive=True, capacity=capacity, latency=latency, concurrency=concurrency
        )
        for name, row in (("fixed", fixed), ("adaptive", adaptive)):
            shown = (
                ("outcome", "seconds", "answers", "429s per answer")
                if mode == "reject"
                else ("outcome", "seconds", "request-seconds queued", "peak queue")
            )
            figures[f"{mode}, {name}"] = ", ".join(f"{k} {row[k]}" for k in shown)
        if mode == "reject":
            figures["reject: 429s per answer, adaptive / fixed"] = round(
                adaptive["429s per answer"] / max(fixed["429s per answer"], 1e-9), 3
            )
        else:
            figures["queue: request-seconds queued, adaptive / fixed"] = round(
                adaptive["request-seconds queued"] / max(fixed["request-seconds queued"], 1e-9), 3
            )
            figures["queue: wall time, adaptive / fixed"] = round(adaptive["seconds"] / fixed["seconds"], 3)
    return figures


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=600_000)
    parser.add_argument("--capacity", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=12)
    args = parser.parse_args(argv)
    figures = run(args.chars, args.capacity, args.latency, args.concurrency)
    print_figures("adaptive concurrency / a fixed limit, on an over-capacity server", figures)
    return figures


if __name__ == "__main__":
    main()
