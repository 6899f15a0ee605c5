"""Map-stage throughput on the real vLLM CPU server: through the graph, and as a bare saturating load.

``python -m longgraph.evals.bench.vllm_map [--chunks 24] [--chunk-size 1000] [--repeats 2]``

The stub benchmark measures what orchestration costs when the server is free; this one asks the
question that matters with a real model: does the graph keep the server as busy as a plain client
that does nothing but keep ``max_concurrency`` requests in flight? Both send the same kind of
requests (the graph's own map bodies, ``response_format`` and ``max_tokens`` included) with the same
concurrency; ``ratio = graph map calls/s ÷ bare map calls/s`` (1.0: the graph loses nothing).

Two things make a fair comparison on vLLM harder than on the stub, and how they are handled:

* **Prefix caching, and the same work on both sides.** vLLM caches the KV of prompts it has seen, so
  replaying the graph's requests after the graph ran them would be nearly free; reading another
  document instead made the two sides' work differ (completions of 251 to 1,276 tokens per run at
  temperature 0, ratios from 0.64 to 1.30 within one invocation). So each repeat reads one
  document, fresh (needle seeds start from the clock; ``--seed`` to choose): the graph maps it, and
  the bare client replays the graph's own map bodies for it (captured beforehand against the stub:
  map bodies do not depend on the server's answers) with vLLM's ``cache_salt``, which gives the
  replay a prefix cache of its own. What its calls share (the instructions before the chunk) is
  warmed first with one request, as the graph finds its own cached from earlier runs; both then send the same prompts, and at
  temperature 0 get much the same answers.
* **A shared server and shared cores.** Another developer may be using the server: before measuring,
  the benchmark waits (up to ``--max-wait`` seconds) until the 1-minute load average is below
  ``--max-load`` and the server reports no running or waiting request, and prints what it saw.

The server is reused if :func:`~longgraph.embedded.find_running` finds one; otherwise it is started
with :func:`~longgraph.embedded.ensure_running` and stopped afterwards (only then).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from longgraph.api import aask
from longgraph.embedded import ServerInfo, ensure_running, find_running, stop_server
from longgraph.evals.bench import (
    add_quiet_options,
    load_average,
    print_figures,
    spread,
    wait_for_quiet,
)
from longgraph.evals.bench.mapreduce_stub import (
    Call,
    RecordingProvider,
    Workload,
    build_workload,
    salted,
    warm_shared_prefix,
)
from longgraph.nodes.runtime import Progress
from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess

DEFAULT_CHUNKS = 24
DEFAULT_CHUNK_SIZE = 1000
DEFAULT_MAX_OUTPUT_TOKENS = 128
DEFAULT_CONCURRENCY = 8
_QUEUE_METRIC = re.compile(r"^vllm:num_requests_(running|waiting)\{[^}]*\}\s+([0-9.eE+-]+)", re.MULTILINE)


def settings(
    server: ServerInfo, *, chunk_size: int, max_output_tokens: int, concurrency: int
) -> dict[str, Any]:
    """Run settings shared by the capture (against the stub) and the timed graph runs."""
    return {
        "model": server.model,
        "tokenizer": str(server.tokenizer_path),
        "context_window": 8192,
        "chunk_size": chunk_size,
        "max_output_tokens": max_output_tokens,
        "max_concurrency": concurrency,
        "temperature": 0.0,
        "request_timeout": 600.0,
        "max_retries": 0,
        "start_embedded": False,
    }


def build_workloads(count: int, tokens: int, first_seed: int) -> list[Workload]:
    """``count`` needle documents of one size, each from another seed (so none shares a prefix)."""
    return [build_workload(tokens, seed) for seed in range(first_seed, first_seed + count)]


def capture_map_calls(workload: Workload, run_settings: dict[str, Any]) -> list[Call]:
    """The graph's map request bodies for ``workload``, captured against the stub (no model time)."""
    with run_stub_in_subprocess(StubConfig(model=str(run_settings["model"]))) as stub:
        recorder = RecordingProvider()
        asyncio.run(
            aask(
                workload.question,
                documents=workload.documents,
                llm=recorder,
                base_url=stub.base_url,
                **run_settings,
            )
        )
    return [c for c in recorder.calls if c.stage == "map"]


# --------------------------------------------------------------------------------------------------
# Waiting for a quiet machine and an idle server
# --------------------------------------------------------------------------------------------------


def server_queue(base_url: str) -> float | None:
    """Requests running plus waiting on the vLLM server (from ``/metrics``), None if unreadable."""
    try:
        text = httpx.get(base_url.removesuffix("/v1") + "/metrics", timeout=5.0).text
    except httpx.HTTPError:
        return None
    values = [float(v) for _, v in _QUEUE_METRIC.findall(text)]
    return sum(values) if values else None


# --------------------------------------------------------------------------------------------------
# The two contenders
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapRun:
    """One map stage: how long it took, how many calls, and their prompt and completion tokens."""

    wall_s: float
    calls: int
    prompt_tokens: int
    completion_tokens: int | None

    @property
    def calls_per_s(self) -> float:
        return self.calls / self.wall_s

    @property
    def prompt_tokens_per_s(self) -> float:
        return self.prompt_tokens / self.wall_s


async def _replay(base_url: str, calls: Sequence[Call], concurrency: int) -> tuple[float, int, int]:
    url = base_url.rstrip("/") + "/chat/completions"
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    prompt = completion = 0
    start = time.perf_counter()
    async with httpx.AsyncClient(limits=limits, timeout=600.0) as client:

        async def send(call: Call) -> None:
            nonlocal prompt, completion
            async with gate:
                response = await client.post(url, content=call.body, headers=call.headers)
                response.raise_for_status()
                usage = response.json().get("usage") or {}
                prompt += int(usage.get("prompt_tokens", 0))
                completion += int(usage.get("completion_tokens", 0))

        await asyncio.gather(*(send(call) for call in calls))
    return time.perf_counter() - start, prompt, completion


def run_bare(base_url: str, calls: Sequence[Call], concurrency: int) -> MapRun:
    """The map bodies sent as a plain saturating load: ``concurrency`` in flight until all are done."""
    wall, prompt, completion = asyncio.run(_replay(base_url, calls, concurrency))
    return MapRun(wall, len(calls), prompt, completion)


def run_graph(
    workload: Workload, base_url: str, run_settings: dict[str, Any]
) -> tuple[MapRun, dict[str, int]]:
    """The graph on ``workload``; its map stage runs from its first map request to the last map result
    (the chunk node starts map calls while it chunks, so the end of chunking is no longer the start).

    The provider is the default one plus hooks that read each answer's usage (the graph's own stats
    sum the tokens of every stage); reading costs nothing extra, the openai client reads it anyway.
    """
    marks: dict[str, float] = {}

    def on_progress(event: Progress) -> None:
        marks[event.get("stage", "?")] = time.perf_counter()

    recorder = RecordingProvider(record_usage=True)
    output = asyncio.run(
        aask(
            workload.question,
            documents=workload.documents,
            llm=recorder,
            on_progress=on_progress,
            base_url=base_url,
            **run_settings,
        )
    )
    calls = dict(output.stats.calls_by_stage)
    wall = marks.get("map", math.nan) - recorder.first_sent.get("map", math.nan)
    maps = [(p, c) for stage, p, c in recorder.usage if stage == "map"]
    run = MapRun(wall, len(maps), sum(p for p, _ in maps), sum(c for _, c in maps))
    return run, calls


# --------------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------------


def run_benchmark(
    server: ServerInfo,
    *,
    chunks: int,
    chunk_size: int,
    max_output_tokens: int,
    concurrency: int,
    repeats: int,
    max_load: float,
    max_wait_s: float,
    first_seed: int,
) -> dict[str, object]:
    """Everything the module prints, as an ordered mapping of figure name to formatted value."""
    run_settings = settings(
        server, chunk_size=chunk_size, max_output_tokens=max_output_tokens, concurrency=concurrency
    )
    # cl100k tokens for ~`chunks` chunks of `chunk_size` model tokens (SmolLM2 counts ~10% more).
    graph_docs = build_workloads(repeats, int(chunks * chunk_size * 0.9), first_seed=first_seed)
    bare_calls = [
        salted(capture_map_calls(w, run_settings), f"longgraph-bench-{first_seed}-{i}")
        for i, w in enumerate(graph_docs)
    ]
    figures: dict[str, object] = {
        "server": f"{server.base_url} ({server.model})",
        "concurrency": concurrency,
        "chunk_size": chunk_size,
        "max_output_tokens": max_output_tokens,
        "first_seed": first_seed,
        "bare_map_calls_per_run": [len(c) for c in bare_calls],
    }
    figures.update(wait_for_quiet(max_load, max_wait_s, busy=lambda: server_queue(server.base_url)))
    started = time.monotonic()
    graph_runs: list[MapRun] = []
    bare_runs: list[MapRun] = []
    stage_counts: dict[str, int] = {}
    for i in range(repeats):
        order = ("graph", "bare") if i % 2 == 0 else ("bare", "graph")
        for who in order:
            if who == "graph":
                run, stage_counts = run_graph(graph_docs[i], server.base_url, run_settings)
                graph_runs.append(run)
            else:
                warm_shared_prefix(server.base_url, bare_calls[i])
                bare_runs.append(run_bare(server.base_url, bare_calls[i], concurrency))
    ratios = [g.calls_per_s / b.calls_per_s for g, b in zip(graph_runs, bare_runs, strict=True)]
    token_ratios = [
        g.prompt_tokens_per_s / b.prompt_tokens_per_s for g, b in zip(graph_runs, bare_runs, strict=True)
    ]
    figures.update(
        {
            "graph_calls_by_stage": stage_counts,
            "graph_map_wall": spread([r.wall_s for r in graph_runs]).format(),
            "bare_map_wall": spread([r.wall_s for r in bare_runs]).format(),
            "graph_map_calls_per_s": spread([r.calls_per_s for r in graph_runs]).format(unit=""),
            "bare_map_calls_per_s": spread([r.calls_per_s for r in bare_runs]).format(unit=""),
            "graph_map_prompt_tokens_per_s": spread([r.prompt_tokens_per_s for r in graph_runs]).format(
                unit="", digits=0
            ),
            "bare_map_prompt_tokens_per_s": spread([r.prompt_tokens_per_s for r in bare_runs]).format(
                unit="", digits=0
            ),
            "graph_map_calls_per_run": [r.calls for r in graph_runs],
            "graph_map_tokens_per_run (prompt, completion)": [
                (r.prompt_tokens, r.completion_tokens) for r in graph_runs
            ],
            "bare_map_tokens_per_run (prompt, completion)": [
                (r.prompt_tokens, r.completion_tokens) for r in bare_runs
            ],
            "ratio_calls_per_s_graph_over_bare": spread(ratios).format(unit=""),
            "ratio_prompt_tokens_per_s_graph_over_bare": spread(token_ratios).format(unit=""),
            "ratio_target": ">= 0.95",
            "measured_s": round(time.monotonic() - started),
            "load_average_after": load_average(),
        }
    )
    return figures


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m longgraph.evals.bench.vllm_map", description=__doc__)
    parser.add_argument("--chunks", type=int, default=DEFAULT_CHUNKS, help="map calls per run (about)")
    parser.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, help="tokens per chunk")
    parser.add_argument("--max-output-tokens", type=int, default=DEFAULT_MAX_OUTPUT_TOKENS)
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY, help="max_concurrency")
    parser.add_argument("--repeats", type=int, default=2, help="graph/bare pairs (order alternates)")
    add_quiet_options(parser)
    parser.add_argument("--seed", type=int, help="first needle seed (default: from the clock)")
    parser.add_argument("--cache-dir", type=Path, help="the embedded server's home (default: LONGGRAPH_HOME)")
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    """Find (or start) the server, run the benchmark, print its figures, stop what it started."""
    args = _parser().parse_args(argv)
    server = find_running(args.cache_dir)
    started = False
    if server is None:
        server, started = ensure_running(cache_dir=args.cache_dir)
    try:
        figures = run_benchmark(
            server,
            chunks=args.chunks,
            chunk_size=args.chunk_size,
            max_output_tokens=args.max_output_tokens,
            concurrency=args.concurrency,
            repeats=args.repeats,
            max_load=args.max_load,
            max_wait_s=args.max_wait_s,
            first_seed=args.seed if args.seed is not None else int(time.time()) % 1_000_000,
        )
        figures["server_started_by_benchmark"] = started
    finally:
        if started:
            stop_server(args.cache_dir)
    print_figures("map stage on vLLM: graph vs bare saturating load", figures)
    return figures


if __name__ == "__main__":
    main()
