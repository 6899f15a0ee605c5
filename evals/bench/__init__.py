"""Benchmarks that print figures: orchestration overhead, chunking speed, map throughput on vLLM.

Run as modules (``python -m longgraph.evals.bench.<name>``); see ``evals/bench/README.md``. Nothing
here asserts on timings: the machine they run on is shared, so each benchmark measures the thing it
compares side by side in one run, repeats it, and prints the median with its spread and the load
average, leaving the judgement to whoever reads the figures.

This module holds the small helpers they share: load averages, medians with spread, and one
``key: value`` printing format that the smoke tests can check without caring about the numbers.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from longgraph.testing.stub_server import StubHandle

__all__ = [
    "NEEDLE_FACT",
    "NEEDLE_QUESTION",
    "Spread",
    "add_quiet_options",
    "bench_endpoint",
    "endpoint_label",
    "load_average",
    "peak_rss_mb",
    "planted_haystack",
    "prefix_cache_counters",
    "print_figures",
    "run_and_print",
    "spread",
    "wait_for_quiet",
]

DEFAULT_MAX_LOAD = 3.0
DEFAULT_MAX_WAIT_S = 600.0


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, formatted: printed with every figure (2 shared cores)."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB, from its own address space's high-water mark.

    Not ``getrusage``'s ``ru_maxrss``: on Linux a process started by ``fork`` + ``exec`` inherits its
    parent's peak there, so a memory child spawned by a benchmark that had grown to 500 MB reported
    500 MB however little it used itself (measured: 508 MB for a run that peaks at 204 MB)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB elsewhere


def wait_for_quiet(
    max_load: float = DEFAULT_MAX_LOAD,
    max_wait_s: float = DEFAULT_MAX_WAIT_S,
    *,
    busy: Callable[[], object] | None = None,
    poll_s: float = 15.0,
) -> dict[str, object]:
    """Wait until the 1-minute load average is below ``max_load`` (and ``busy()`` is falsy), at most
    ``max_wait_s`` seconds; return what was seen, to be printed with the figures.

    Measuring while another developer's test-suite saturates both cores gives numbers that say more
    about them than about us; waiting a little is cheaper than a misleading figure. The benchmark
    still runs after the wait runs out, and says so (``quiet: False``).
    """
    start = time.monotonic()
    while True:
        load1 = os.getloadavg()[0]
        other = busy() if busy is not None else None
        quiet = load1 < max_load and not other
        waited = time.monotonic() - start
        if quiet or waited >= max_wait_s:
            seen: dict[str, object] = {"waited_s": round(waited), "quiet": quiet}
            if busy is not None:
                seen["server_requests_in_queue"] = other
            seen["load_average_at_start"] = load_average()
            return seen
        time.sleep(min(poll_s, max(0.1, max_wait_s - waited)))


@dataclass(frozen=True)
class Spread:
    """Median and range of repeated measurements (the median resists one run disturbed by a neighbour)."""

    median: float
    low: float
    high: float
    n: int

    def format(self, unit: str = "s", digits: int = 3) -> str:
        return f"{self.median:.{digits}f}{unit} (min {self.low:.{digits}f}, max {self.high:.{digits}f}, n={self.n})"


def spread(values: Sequence[float]) -> Spread:
    """Median, min and max of ``values`` (at least one)."""
    if not values:
        raise ValueError("no measurements")
    return Spread(statistics.median(values), min(values), max(values), len(values))


NEEDLE_QUESTION = "What is the secret ingredient of Grandma Olga's borscht?"
NEEDLE_FACT = "The secret ingredient of Grandma Olga's borscht is smoked plums."


def planted_haystack(chars: int, *, at: float = 0.5) -> str:
    """``chars`` characters of the installed essays with :data:`NEEDLE_FACT` as a paragraph at depth
    ``at``: the one haystack of the stub benchmarks (the stub's oracle answers from it)."""
    from longgraph.evals.corpora import load_paul_graham_text

    text = load_paul_graham_text()
    filler = (text * (chars // len(text) + 1))[:chars]
    cut = filler.rfind(" ", 0, int(len(filler) * at)) + 1
    return f"{filler[:cut]}\n\n{NEEDLE_FACT}\n\n{filler[cut:]}"


def print_figures(title: str, figures: Mapping[str, object]) -> None:
    """Print ``title`` then one ``key: value`` line per figure, in order (the format tests check)."""
    print(f"== {title}", flush=True)
    for key, value in figures.items():
        print(f"{key}: {value}", flush=True)


def run_and_print(title: str, run: Callable[..., dict[str, object]], **options: Any) -> dict[str, object]:
    """A benchmark's ``main``: ``run(**options)`` (the parsed command line, each option's ``dest`` a
    parameter of ``run``), its figures printed under ``title`` and returned."""
    figures = run(**options)
    print_figures(title, figures)
    return figures


def add_quiet_options(parser: argparse.ArgumentParser) -> None:
    """``--max-load`` and ``--max-wait`` (as ``max_load``, ``max_wait_s``): see :func:`wait_for_quiet`."""
    parser.add_argument("--max-load", type=float, default=DEFAULT_MAX_LOAD, help="wait while load1 is above")
    parser.add_argument(
        "--max-wait",
        dest="max_wait_s",
        type=float,
        default=DEFAULT_MAX_WAIT_S,
        help="seconds to wait for quiet",
    )


def bench_endpoint(
    stack: ExitStack, *, embedded: bool, latency: float
) -> tuple[dict[str, Any], StubHandle | None]:
    """The endpoint settings of a corpus benchmark: the embedded vLLM server (started if need be), or
    the stub answering in ``latency`` seconds in a subprocess kept open by ``stack`` (also returned)."""
    if embedded:
        from longgraph.embedded import ensure_running

        server, _ = ensure_running()
        settings = {
            "base_url": server.base_url,
            "model": server.model,
            "tokenizer": str(server.tokenizer_path),
            "request_timeout": 900,
        }
        return settings, None
    from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess

    stub = stack.enter_context(run_stub_in_subprocess(StubConfig(model="stub", latency_s=latency)))
    return {"base_url": stub.base_url, "model": "stub"}, stub


def endpoint_label(*, embedded: bool, latency: float) -> str:
    """What :func:`bench_endpoint` served, for the printed figures: the embedded server's own model."""
    if not embedded:
        return f"stub, oracle, {latency} s per answer"
    from longgraph.embedded import find_running

    server = find_running()
    return f"embedded vLLM ({server.model if server else 'not running'}, CPU)"


PREFIX_COUNTERS = ("prefix_cache_queries_total", "prefix_cache_hits_total", "prompt_tokens_cached_total")


def prefix_cache_counters(base_url: str) -> dict[str, float]:
    """vLLM's prefix-cache counters from ``/metrics`` (summed over series; external caches left out).
    Read before and after a run: the difference is what the run queried, hit and was served cached."""
    import re

    import httpx

    from longgraph.concurrency import metrics_url

    found: dict[str, float] = dict.fromkeys(PREFIX_COUNTERS, 0.0)
    for line in httpx.get(metrics_url(base_url), timeout=5).text.splitlines():
        match = re.match(r"vllm:(\w+)\{[^}]*\}\s+([0-9.e+]+)$", line)
        if match and match.group(1) in PREFIX_COUNTERS and "external" not in line:
            found[match.group(1)] += float(match.group(2))
    return found
