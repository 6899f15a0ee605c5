"""How wall time and peak memory grow with the input: 128K, 1.28M and 10M tokens through mapreduce.

``python -m longgraph.evals.bench.growth [--sizes 128000,1280000,10000000] [--latency 0.0] [--concurrency 64]``

Each size is one needle document (the installed essays, repeated, with a planted fact) answered by
mapreduce in a fresh interpreter against the stub (a subprocess answering in ``--latency`` seconds
with its oracle, window 8192): its wall time, its peak RSS and its RSS before the run (imports and the
input itself), and whether the needle came back. Between consecutive sizes the printed slope is
``log(y2/y1) / log(x2/x1)``: 1.0 is linear growth, below 1 grows slower than the input. The peak RSS
minus the RSS before the run is the run's own working memory.
"""

from __future__ import annotations

import argparse
import itertools
import math
from collections.abc import Sequence
from typing import Any

from longgraph.evals.bench import load_average, print_figures
from longgraph.evals.bench.mapreduce_stub import build_workload, measure_peak_memory
from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess


def slope(x1: float, y1: float, x2: float, y2: float) -> float:
    return math.log(y2 / y1) / math.log(x2 / x1) if min(x1, y1, x2, y2) > 0 and x1 != x2 else math.nan


def run(sizes: Sequence[int], latency: float, concurrency: int) -> dict[str, object]:
    figures: dict[str, object] = {
        "load average at start": load_average(),
        "stub": f"oracle, {latency} s per answer, {concurrency} in flight, window 8192",
    }
    rows: list[dict[str, Any]] = []
    with run_stub_in_subprocess(StubConfig(model="stub", latency_s=latency)) as stub:
        for tokens in sizes:
            workload = build_workload(tokens)
            row = measure_peak_memory(workload, stub.base_url, concurrency, timeout=7200)
            row["tokens"] = workload.tokens
            rows.append(row)
            figures[f"{workload.tokens:,} tokens"] = (
                f"{row['seconds']:.1f} s, peak RSS {row['peak_rss_mb']:.0f} MB (before the run "
                f"{row['rss_before_run_mb']:.0f} MB), {row['calls']} calls, {row['chunks']} chunks, "
                f"answer: {row['answer'][:80]!r}"
            )
    for a, b in itertools.pairwise(rows):
        span = f"{a['tokens'] / 1e6:.2f}M → {b['tokens'] / 1e6:.2f}M"
        work_a = a["peak_rss_mb"] - a["rss_before_run_mb"]
        work_b = b["peak_rss_mb"] - b["rss_before_run_mb"]
        figures[f"slope {span}: wall, peak RSS, working memory"] = (
            f"{slope(a['tokens'], a['seconds'], b['tokens'], b['seconds']):.2f}, "
            f"{slope(a['tokens'], a['peak_rss_mb'], b['tokens'], b['peak_rss_mb']):.2f}, "
            f"{slope(a['tokens'], work_a, b['tokens'], work_b):.2f}"
        )
    figures["load average at end"] = load_average()
    return figures


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="128000,1280000,10000000")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    figures = run(sizes, args.latency, args.concurrency)
    print_figures("growth with the input: mapreduce on the stub", figures)
    return figures


if __name__ == "__main__":
    main()
