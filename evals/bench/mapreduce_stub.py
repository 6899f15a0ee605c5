"""Orchestration overhead of the mapreduce graph: the graph against a bare HTTP client, same calls.

``python -m longgraph.evals.bench.mapreduce_stub [--tokens 1280000] [--latency 1.0] [--concurrency 64]``

The stub server (a subprocess, so it does not share our GIL) answers every call after a fixed
latency. On a 1.28M-token needle document with ``context_window=8192`` the graph makes a few hundred
calls; what we want to know is how much wall time LangGraph, langchain and our own nodes add on top
of the calls themselves. So, in one run and on the same stub:

(a) the graph, through :func:`longgraph.aask` exactly as a user calls it (default provider);
(b) the *same* requests — captured byte for byte from a warm-up run of the graph, grouped by the
    LangGraph superstep that sent them (map round, collapse rounds, reduce) — replayed by a bare
    ``httpx.AsyncClient`` with the same concurrency, each superstep waiting for the previous one;
    ``ratio = bare_wall / graph_wall`` (1.0: the graph adds nothing);
(c) the ideal critical path (each superstep ``ceil(calls / concurrency)`` latencies), with the CPU
    seconds spent by the stub process and by this process, which explain the gap on 2 cores;
(d) the peak RSS of a fresh subprocess that only runs the graph;
(e) the calls per stage.

The graph and the bare client alternate, ``--repeats`` times each, and medians with their spread are
printed with the load average (other developers share the cores).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx
import psutil
from langgraph.config import get_config

from longgraph.api import aask
from longgraph.evals.bench import (
    DEFAULT_MAX_LOAD,
    DEFAULT_MAX_WAIT_S,
    add_quiet_options,
    load_average,
    peak_rss_mb,
    run_and_print,
    spread,
    wait_for_quiet,
)
from longgraph.llm import LLMClient, OpenAIProvider
from longgraph.nodes.chunking import forget_chunks
from longgraph.nodes.runtime import Progress
from longgraph.openai_chat import OpenAIChat
from longgraph.state.context import Context
from longgraph.testing.stub_server import STAGE_HEADER, StubConfig, run_stub_in_subprocess

DEFAULT_TOKENS = 1_280_000
DEFAULT_LATENCY_S = 1.0
DEFAULT_CONCURRENCY = 64
CONTEXT_WINDOW = 8192
_REPLAYED_HEADERS = ("content-type", "authorization", STAGE_HEADER.lower())


@dataclass(frozen=True)
class Workload:
    """The input: one needle document (its title labels it in the prompts, as in the eval suite)."""

    question: str
    documents: list[dict[str, str]]
    tokens: int


RATIO_TARGETS = {0.1: 0.85, 1.0: 0.95}
"""Issue 12's targets for ``ratio_bare_over_graph`` by stub latency (seconds per call)."""


def build_workload(tokens: int, seed: int = 0) -> Workload:
    """A needle-in-a-haystack document of ``tokens`` cl100k tokens (real text, built in ~1 s)."""
    from longgraph.evals.data.needle import build_needle

    instance = build_needle(target_tokens=tokens, n=1, seed=seed)[0]
    documents = [{"title": d["title"], "text": d["text"]} for d in instance.documents]
    return Workload(instance.question, documents, instance.actual_tokens)


def graph_settings(base_url: str, concurrency: int) -> dict[str, Any]:
    """The run settings both the timed runs and the memory child use."""
    return {
        "base_url": base_url,
        "model": "stub",
        "max_concurrency": concurrency,
        "context_window": CONTEXT_WINDOW,
        "temperature": 0.0,
        "start_embedded": False,
    }


# --------------------------------------------------------------------------------------------------
# Capturing the graph's requests
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One request as the graph sent it, and the superstep that sent it."""

    step: int
    stage: str
    body: bytes
    headers: dict[str, str]


class RecordingProvider(OpenAIProvider):
    """The default provider plus httpx hooks that keep every chat request's bytes (and its usage).

    The request hook runs in the node's task, so LangGraph's run config (and with it the superstep
    number) is visible: requests of one step can run together, a later step waits for the earlier
    ones. With ``record_usage`` a response hook also reads each answer's ``usage`` (the graph's own
    stats sum the tokens of every stage); the body is read there instead of a moment later by the
    openai client, which then finds it already read.
    """

    def __init__(self, *, record_usage: bool = False) -> None:
        super().__init__()
        self.calls: list[Call] = []
        self.usage: list[tuple[str, int, int]] = []
        """(stage, prompt tokens, completion tokens) per answered call."""
        self.first_sent: dict[str, float] = {}
        """``time.perf_counter()`` when each stage's first request left."""
        self._record_usage = record_usage

    def build(self, context: Context) -> LLMClient:
        client = super().build(context)
        for endpoint in client.endpoints:
            http = cast(OpenAIChat, endpoint.model).http
            hooks = http.event_hooks
            hooks["request"] = [*hooks["request"], self._record]
            if self._record_usage:
                hooks["response"] = [*hooks["response"], self._read_usage]
            http.event_hooks = hooks
        return client

    async def _record(self, request: httpx.Request) -> None:
        if not request.url.path.endswith("/chat/completions"):
            return
        step = int(get_config()["metadata"]["langgraph_step"])
        headers = {k: v for k, v in request.headers.items() if k.lower() in _REPLAYED_HEADERS}
        stage = request.headers.get(STAGE_HEADER, "unknown")
        self.first_sent.setdefault(stage, time.perf_counter())
        self.calls.append(Call(step=step, stage=stage, body=request.content, headers=headers))

    async def _read_usage(self, response: httpx.Response) -> None:
        if not response.request.url.path.endswith("/chat/completions") or response.status_code != 200:
            return
        await response.aread()
        usage = json.loads(response.content).get("usage") or {}
        stage = response.request.headers.get(STAGE_HEADER, "unknown")
        self.usage.append((stage, int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))))


def waves_of(calls: Sequence[Call]) -> list[list[Call]]:
    """Calls grouped by superstep, in step order: what may run at once, and what must wait."""
    by_step: dict[int, list[Call]] = {}
    for call in calls:
        by_step.setdefault(call.step, []).append(call)
    return [by_step[step] for step in sorted(by_step)]


def calls_by_stage(calls: Sequence[Call]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for call in calls:
        counts[call.stage] = counts.get(call.stage, 0) + 1
    return counts


def ideal_critical_path(waves: Sequence[Sequence[Call]], concurrency: int, latency_s: float) -> float:
    """Each superstep takes ``ceil(calls / concurrency)`` latencies; supersteps run one after another."""
    return sum(math.ceil(len(wave) / concurrency) for wave in waves) * latency_s


# --------------------------------------------------------------------------------------------------
# The two contenders
# --------------------------------------------------------------------------------------------------


@dataclass
class Timing:
    """Wall and CPU seconds of one run, this process's and the stub's."""

    wall_s: float
    cpu_s: float
    stub_cpu_s: float
    phases: dict[str, float] = field(default_factory=dict)
    stage_counts: dict[str, int] = field(default_factory=dict)
    loop_cpu_s: float = math.nan
    """CPU of the thread running the event loop: the per-call path (rendering, HTTP, LangGraph's
    tasks), without chunking and grounding, which run in worker threads."""
    helper_cpu_s: float = 0.0
    """CPU of this process's helper processes (the token count worker, ``longgraph/count_worker.py``),
    which ``cpu_s`` includes: work moved out of the process is still the orchestrator's."""


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _helpers_cpu(stub: psutil.Process) -> float:
    """CPU seconds of this process's children other than the stub (the count worker)."""
    total = 0.0
    for child in psutil.Process().children():
        if child.pid != stub.pid:
            with contextlib.suppress(psutil.NoSuchProcess):
                total += _cpu(child)
    return total


def run_graph(
    workload: Workload,
    base_url: str,
    concurrency: int,
    stub: psutil.Process,
    llm: OpenAIProvider | None = None,
) -> Timing:
    """One graph run through ``aask`` on a fresh event loop (as ``longgraph.ask`` does)."""
    marks: dict[str, float] = {}
    start = time.perf_counter()

    def on_progress(event: Progress) -> None:
        now = time.perf_counter() - start
        stage = event.get("stage", "?")
        marks.setdefault(f"{stage}_first_s", now)
        marks[f"{stage}_last_s"] = now

    forget_chunks()  # every run reads the document as a first question does
    cpu0, stub0, loop0, helpers0 = time.process_time(), _cpu(stub), time.thread_time(), _helpers_cpu(stub)
    start, started_at = time.perf_counter(), time.time()
    output = asyncio.run(
        aask(
            workload.question,
            documents=workload.documents,
            llm=llm,
            on_progress=on_progress,
            **graph_settings(base_url, concurrency),
        )
    )
    wall, loop_cpu = time.perf_counter() - start, time.thread_time() - loop0
    first_request_at = stub_first_request_at(base_url)
    phases = {
        "first_call_at": math.nan if first_request_at is None else first_request_at - started_at,
        "chunked_at": marks.get("chunk_last_s", math.nan),
        "maps_done_at": marks.get("map_last_s", math.nan),
        "reduced_at": marks.get("reduce_last_s", math.nan),
    }
    helpers = _helpers_cpu(stub) - helpers0
    return Timing(
        wall,
        time.process_time() - cpu0 + helpers,
        _cpu(stub) - stub0,
        phases,
        dict(output.stats.calls_by_stage),
        loop_cpu,
        helpers,
    )


def salted(calls: Sequence[Call], salt: str) -> list[Call]:
    """The same requests in their own prefix-cache space (vLLM's ``cache_salt``): the graph's reading
    of the same document leaves nothing the replay could reuse, and the replay nothing for the graph."""
    return [
        Call(
            step=c.step,
            stage=c.stage,
            body=json.dumps({**json.loads(c.body), "cache_salt": salt}).encode(),
            headers=c.headers,
        )
        for c in calls
    ]


def warm_shared_prefix(base_url: str, calls: Sequence[Call]) -> None:
    """Cache what every map call of the replay shares (the instructions before the chunk) under its
    salt, as the graph finds its own cached from earlier runs: one request of the shared prefix alone."""
    bodies = [json.loads(c.body) for c in calls]
    first = [str(b["messages"][0]["content"]) for b in bodies]
    shared = os.path.commonprefix(first)  # noqa: RUF071 - a string prefix is meant, not a path
    body = {**bodies[0], "messages": [{**bodies[0]["messages"][0], "content": shared}], "max_tokens": 1}
    body.pop("response_format", None)
    httpx.post(base_url.rstrip("/") + "/chat/completions", json=body, headers=calls[0].headers, timeout=600)


def stub_first_request_at(base_url: str) -> float | None:
    """When the stub saw its first chat request since its last reset (wall clock)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    stats = httpx.get(f"{root}/stub/stats", timeout=10).json()
    at = stats.get("first_request_at")
    return None if at is None else float(at)


async def _replay(base_url: str, waves: Sequence[Sequence[Call]], concurrency: int) -> dict[str, float]:
    url = base_url.rstrip("/") + "/chat/completions"
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    start = time.perf_counter()
    marks: dict[str, float] = {}
    async with httpx.AsyncClient(limits=limits, timeout=120.0) as client:

        async def send(call: Call) -> None:
            async with gate:
                response = await client.post(url, content=call.body, headers=call.headers)
                response.raise_for_status()
                response.json()

        for wave in waves:
            await asyncio.gather(*(send(call) for call in wave))
            marks[f"{wave[0].stage}_done_at"] = time.perf_counter() - start
    return marks


def replay_wall(base_url: str, calls: Sequence[Call], concurrency: int) -> float:
    """Seconds a bare client takes to send ``calls``, all available at once, ``concurrency`` in flight:
    the saturating load a corpus benchmark compares itself with."""
    started = time.perf_counter()
    asyncio.run(_replay(base_url, [calls], concurrency))
    return time.perf_counter() - started


def run_bare(
    base_url: str, waves: Sequence[Sequence[Call]], concurrency: int, stub: psutil.Process
) -> Timing:
    """Replay the captured requests with a bare client (its connection pool built inside the timing)."""
    cpu0, stub0, loop0 = time.process_time(), _cpu(stub), time.thread_time()
    start = time.perf_counter()
    marks = asyncio.run(_replay(base_url, waves, concurrency))
    wall, loop_cpu = time.perf_counter() - start, time.thread_time() - loop0
    return Timing(wall, time.process_time() - cpu0, _cpu(stub) - stub0, marks, loop_cpu_s=loop_cpu)


# --------------------------------------------------------------------------------------------------
# Peak memory, in a process that does nothing else
# --------------------------------------------------------------------------------------------------


def _memory_child(workload_path: Path, base_url: str, concurrency: int) -> None:
    """Entry of the memory subprocess: load the input, run the graph once, print RSS figures as JSON."""
    data = json.loads(workload_path.read_text(encoding="utf-8"))
    workload = Workload(data["question"], data["documents"], data["tokens"])
    before_mb = psutil.Process().memory_info().rss / 2**20
    started = time.perf_counter()
    result = asyncio.run(
        aask(workload.question, documents=workload.documents, **graph_settings(base_url, concurrency))
    )
    seconds = time.perf_counter() - started
    peak_mb = peak_rss_mb()
    helpers_mb = sum(child.memory_info().rss for child in psutil.Process().children()) / 2**20
    figures = {
        "count_worker_rss_mb": helpers_mb,
        "rss_before_run_mb": before_mb,
        "peak_rss_mb": peak_mb,
        "seconds": seconds,
        "calls": result.stats.llm_calls,
        "chunks": len(result.chunks),
        "answer": result.answer[:200],
    }
    print(json.dumps(figures), flush=True)


def measure_peak_memory(
    workload: Workload, base_url: str, concurrency: int, *, timeout: float = 600
) -> dict[str, Any]:
    """Run the graph once in a fresh interpreter: its RSS before the run and at its peak, the run's wall
    time, calls, chunks and answer."""
    with tempfile.TemporaryDirectory(prefix="longgraph-bench-") as tmp:
        path = Path(tmp) / "workload.json"
        path.write_text(json.dumps(vars(workload)), encoding="utf-8")
        cmd = [sys.executable, "-m", __spec__.name if __spec__ else "longgraph.evals.bench.mapreduce_stub"]
        cmd += ["--memory-child", str(path), "--base-url", base_url, "--concurrency", str(concurrency)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"memory subprocess failed ({proc.returncode}): {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------------


def run_benchmark(
    *,
    tokens: int,
    latency_s: float,
    concurrency: int,
    repeats: int,
    memory: bool = True,
    max_load: float = DEFAULT_MAX_LOAD,
    max_wait_s: float = DEFAULT_MAX_WAIT_S,
) -> dict[str, object]:
    """Everything the module prints, as an ordered mapping of figure name to formatted value."""
    workload = build_workload(tokens)
    figures: dict[str, object] = {
        "input_tokens": workload.tokens,
        "latency_s": latency_s,
        "concurrency": concurrency,
        "context_window": CONTEXT_WINDOW,
    }
    figures.update(wait_for_quiet(max_load, max_wait_s))
    with run_stub_in_subprocess(StubConfig(model="stub", latency_s=latency_s)) as stub:
        stub_process = psutil.Process(stub.pid)
        # Warm-up and capture in one: imports, the tokenizer's vocabulary, and the exact request bytes.
        stub.configure(latency_s=0.0)
        recorder = RecordingProvider()
        run_graph(workload, stub.base_url, concurrency, stub_process, llm=recorder)
        stub.configure(latency_s=latency_s)
        waves = waves_of(recorder.calls)
        graph_runs: list[Timing] = []
        bare_runs: list[Timing] = []
        for _ in range(repeats):
            stub.reset()
            graph_runs.append(run_graph(workload, stub.base_url, concurrency, stub_process))
            sent = dict(stub.stats()["by_stage"])
            if sent != calls_by_stage(recorder.calls):
                raise RuntimeError(
                    f"the graph sent {sent}, the capture holds {calls_by_stage(recorder.calls)}"
                )
            bare_runs.append(run_bare(stub.base_url, waves, concurrency, stub_process))
        memory_figures = measure_peak_memory(workload, stub.base_url, concurrency) if memory else None

    pairs = list(zip(graph_runs, bare_runs, strict=True))

    def per_call(cpu_s: Sequence[float]) -> str:
        """CPU seconds per run as milliseconds per call (both contenders make the graph's calls)."""
        calls = [max(1, sum(g.stage_counts.values())) for g in graph_runs]
        return spread([1000 * c / n for c, n in zip(cpu_s, calls, strict=True)]).format(unit=" ms", digits=2)

    ratios = [b.wall_s / g.wall_s for g, b in pairs]
    first = f"{waves[0][0].stage}_done_at"  # the bare client's first wave: the map round
    ideal = ideal_critical_path(waves, concurrency, latency_s)
    body_kb = [len(c.body) / 1024 for c in recorder.calls]
    figures.update(
        {
            "calls_by_stage": calls_by_stage(recorder.calls),
            "supersteps_with_calls": [f"{w[0].stage}×{len(w)}" for w in waves],
            "request_body_kb_mean": f"{sum(body_kb) / len(body_kb):.1f}",
            "graph_wall": spread([g.wall_s for g in graph_runs]).format(),
            "bare_wall": spread([b.wall_s for b in bare_runs]).format(),
            "ratio_bare_over_graph": spread(ratios).format(unit=""),
            "ratio_target": f">= {RATIO_TARGETS.get(latency_s, 0.85)}",
            "ideal_critical_path_s": f"{ideal:.3f}",
            "graph_over_ideal_s": spread([g.wall_s - ideal for g in graph_runs]).format(),
            "bare_over_ideal_s": spread([b.wall_s - ideal for b in bare_runs]).format(),
            "graph_phases_s": _median_marks([g.phases for g in graph_runs]),
            "bare_phases_s": _median_marks([b.phases for b in bare_runs]),
            "gap_graph_minus_bare_s": spread([g.wall_s - b.wall_s for g, b in pairs]).format(),
            "graph_first_call_s": spread([g.phases["first_call_at"] for g in graph_runs]).format(),
            "graph_first_call_target_s": "<= 0.1",
            "gap_chunking_s": spread([g.phases["chunked_at"] for g in graph_runs]).format(),
            "gap_map_round_s": spread([_map_round(g) - b.phases[first] for g, b in pairs]).format(),
            "gap_after_map_round_s": spread(
                [(g.wall_s - g.phases["maps_done_at"]) - (b.wall_s - b.phases[first]) for g, b in pairs]
            ).format(),
            "graph_cpu_s_orchestrator": spread([g.cpu_s for g in graph_runs]).format(),
            "bare_cpu_s_orchestrator": spread([b.cpu_s for b in bare_runs]).format(),
            # Chunking, grounding and the count worker included: the whole run's CPU over its calls.
            "graph_cpu_ms_per_call": per_call([g.cpu_s for g in graph_runs]),
            "bare_cpu_ms_per_call": per_call([b.cpu_s for b in bare_runs]),
            # The event loop's thread alone: the per-call path, without chunking and grounding
            # (issue 12's target: 3 ms).
            "graph_cpu_ms_per_call_event_loop": per_call([g.loop_cpu_s for g in graph_runs]),
            "bare_cpu_ms_per_call_event_loop": per_call([b.loop_cpu_s for b in bare_runs]),
            "graph_cpu_s_worker_threads": spread(
                [g.cpu_s - g.loop_cpu_s - g.helper_cpu_s for g in graph_runs]
            ).format(),
            "graph_cpu_s_count_worker": spread([g.helper_cpu_s for g in graph_runs]).format(),
            "graph_cpu_s_stub": spread([g.stub_cpu_s for g in graph_runs]).format(),
            "bare_cpu_s_stub": spread([b.stub_cpu_s for b in bare_runs]).format(),
            "cpu_cores": os.cpu_count(),
        }
    )
    if memory_figures is not None:
        figures["rss_before_run_mb"] = f"{memory_figures['rss_before_run_mb']:.0f}"
        figures["peak_rss_mb"] = f"{memory_figures['peak_rss_mb']:.0f}"
        figures["peak_rss_target_mb"] = "< 500"
        figures["count_worker_rss_mb"] = f"{memory_figures['count_worker_rss_mb']:.0f}"
    figures["load_average_after"] = load_average()
    return figures


def _map_round(run: Timing) -> float:
    """Seconds from the end of chunking to the last map result."""
    return run.phases["maps_done_at"] - run.phases["chunked_at"]


def _median_marks(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    keys = [k for k in runs[0] if all(k in r for r in runs)]
    return {k: round(spread([r[k] for r in runs]).median, 3) for k in keys}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m longgraph.evals.bench.mapreduce_stub", description=__doc__
    )
    parser.add_argument("--tokens", type=int, default=DEFAULT_TOKENS, help="input size in cl100k tokens")
    parser.add_argument(
        "--latency", dest="latency_s", type=float, default=DEFAULT_LATENCY_S, help="stub seconds per call"
    )
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY, help="max_concurrency")
    add_quiet_options(parser)
    parser.add_argument("--repeats", type=int, default=3, help="graph/bare pairs to run")
    parser.add_argument(
        "--no-memory", dest="memory", action="store_false", help="skip the peak-RSS subprocess"
    )
    parser.add_argument("--memory-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    """Run the benchmark, print its figures and return them."""
    options = vars(_parser().parse_args(argv))
    child, base_url = options.pop("memory_child"), options.pop("base_url")
    if child is not None:
        _memory_child(child, base_url, options["concurrency"])
        return {}
    return run_and_print("mapreduce graph vs bare client on the stub", run_benchmark, **options)


if __name__ == "__main__":
    main()
