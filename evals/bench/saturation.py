"""What the corpus benchmarks share (``batch_throughput``, ``pyramid_throughput``): a corpus of distinct
essay slices, the small-window run settings, and the throughput / saturating-load figures.

Both run a whole corpus through one shared concurrency budget, capture every request, and replay those
requests with a bare client all at once at the same concurrency: the ratio of the wall times is how
close the budget comes to keeping the server busy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from longgraph.evals.bench import endpoint_label
from longgraph.evals.corpora import load_paul_graham_text

SMALL_WINDOW_RUN: dict[str, Any] = {
    "start_embedded": False,
    "context_window": 2048,
    "max_output_tokens": 256,
    "temperature": 0.0,
    "structured_output": "json_schema",
    "cache_path": None,
}
"""Run settings of a corpus benchmark: the window the embedded model has, no result cache (a cached
answer would make no request to replay)."""


def essay_slices(count: int, chars: int) -> list[str]:
    """``count`` distinct texts of ``chars`` characters: consecutive slices of the installed essays,
    spread over the whole corpus."""
    text = load_paul_graham_text()
    step = max(1, (len(text) - chars) // max(1, count))
    return [text[i * step : i * step + chars] for i in range(count)]


def add_load_options(parser: argparse.ArgumentParser) -> None:
    """``--latency``, ``--concurrency``, ``--embedded``, ``--no-replay``."""
    parser.add_argument("--latency", type=float, default=0.1, help="the stub's seconds per answer")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--embedded", action="store_true", help="the embedded vLLM server, not the stub")
    parser.add_argument("--no-replay", dest="replay", action="store_false", help="skip the saturating replay")


def saturation_figures(
    *,
    what: str,
    requests: Sequence[object],
    concurrency: int,
    latency: float,
    embedded: bool,
    wall_s: float,
    bare_s: float,
) -> dict[str, object]:
    """The throughput figures of ``what`` ("batch", "synth") beside the bare replay of its requests."""
    figures: dict[str, object] = {
        "requests": len(requests),
        "endpoint": endpoint_label(embedded=embedded, latency=latency),
        f"concurrency (shared by the whole {what})": concurrency,
        f"{what} wall time (s)": round(wall_s, 2),
        "bare client, same requests all at once (s)": round(bare_s, 2),
        "throughput / saturating load": round(bare_s / wall_s, 3),
    }
    if not embedded:
        figures["ideal wall time at this concurrency (s)"] = round(len(requests) * latency / concurrency, 2)
    return figures
