"""What serving through ``langgraph dev`` costs per run, and whether 50 concurrent runs all come back right.

``python -m longgraph.evals.bench.server_load [--graph mapreduce] [--runs 50] [--latency 0.2] [--repeats 5]
[--users 2]``

One stub server (a subprocess, fixed latency per call) is the model for both sides:

(a) **in process**: the served graph object itself, ``graph.ainvoke(input, context=...)``;
(b) **through the server**: the same graph served by ``langgraph dev`` on loopback, called with
    ``langgraph_sdk``'s ``runs.wait`` (a stateless run: the server's own thread, queue, checkpointer
    and HTTP round trips included).

Measured, alternating (a) and (b) ``--repeats`` times: the wall time of one run alone (the overhead per
run is the difference of the medians), then ``--runs`` runs at once (each with its own planted fact,
so a run answered from another's state shows as wrong), with the wall time of the batch and the
per-run latencies. The server runs with ``--n-jobs-per-worker`` equal to ``--runs`` (so all execute
at once) and, by default, ``--allow-blocking``: that is what production has (no BlockBuster); pass
``--strict-blocking`` to keep ``langgraph dev``'s check on. Auth is on (``longgraph/auth.py``): the
server gets a bearer token for each of ``--users`` users, who take turns sending the runs. Figures
are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import itertools
import secrets
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langgraph_sdk import get_client

from longgraph.evals.bench import load_average, print_figures, spread
from longgraph.state.contract import GraphOutput
from longgraph.testing.langgraph_dev import run_langgraph_dev, served_config
from longgraph.testing.stub_server import STUB_SETTINGS, StubConfig, run_stub_in_subprocess, stub_settings

REPO_ROOT = Path(__file__).resolve().parents[2]
FILLER = (
    "The committee met on a grey morning to discuss the harvest, the state of the roads and the price "
    "of bread in the valley villages, and as usual nobody agreed on anything of consequence. "
)


def workload(i: int, chars: int) -> tuple[dict[str, Any], str]:
    """Input with a fact of its own (``answer`` must come back), planted at a depth that varies."""
    word = f"zephyr{i}quartz"
    fact = f"Agent {i} uses the code word {word}."
    filler = (FILLER * (chars // len(FILLER) + 1))[:chars]
    cut = filler.rfind(" ", 0, int(len(filler) * ((i % 7) + 1) / 8)) + 1
    document = filler[:cut] + "\n\n" + fact + "\n\n" + filler[cut:]
    return {"question": f"What code word does agent {i} use?", "document": document}, word


def load_graph(name: str) -> Any:
    """The module-level ``graph`` exactly as the server imports it (path from ``langgraph.json``)."""
    spec = served_config(REPO_ROOT / "langgraph.json")["graphs"][name]
    path, _, attribute = spec.rpartition(":")
    module_spec = importlib.util.spec_from_file_location(f"bench_served_{name.replace('-', '_')}", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return getattr(module, attribute)


async def timed(coroutine: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await coroutine
    return time.perf_counter() - started, result


async def batch(make: Any, n: int, chars: int) -> tuple[float, list[float], int]:
    """``n`` runs at once: batch wall time, per-run latencies, and how many answered correctly."""
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(timed(make(*workload(i, chars))) for i in range(n)))
    wall = time.perf_counter() - started
    correct = sum(
        1
        for i, (_, raw) in enumerate(outcomes)
        if workload(i, chars)[1] in GraphOutput.model_validate(raw).answer
    )
    return wall, [seconds for seconds, _ in outcomes], correct


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def user_tokens(users: int) -> dict[str, str]:
    """A bearer token per user for the server's ``LONGGRAPH_AUTH_TOKENS`` (none: auth without tokens,
    loopback clients only)."""
    return {f"user{u}": secrets.token_hex(16) for u in range(users)}


async def measure(
    args: argparse.Namespace, context: dict[str, Any], server_url: str, tokens: dict[str, str]
) -> dict[str, object]:
    graph = load_graph(args.graph)
    headers: list[dict[str, str] | None] = [{"Authorization": f"Bearer {token}"} for token in tokens.values()]
    clients = [get_client(url=server_url, timeout=600, headers=h) for h in headers or [None]]
    turn = itertools.count()

    def in_process(graph_input: dict[str, Any], _word: str) -> Any:
        return graph.ainvoke(graph_input, context=context)

    def served(graph_input: dict[str, Any], _word: str) -> Any:  # the users take turns
        client = clients[next(turn) % len(clients)]
        return client.runs.wait(None, args.graph, input=graph_input, context=context)

    # Warm both paths (imports, tokenizer, connection pools, the server's graph load).
    await in_process(*workload(0, args.chars))
    await served(*workload(0, args.chars))

    single: dict[str, list[float]] = {"in_process": [], "server": []}
    for _ in range(args.repeats):
        for name, call in (("in_process", in_process), ("server", served)):
            seconds, _ = await timed(call(*workload(1, args.chars)))
            single[name].append(seconds)

    concurrent: dict[str, dict[str, Any]] = {}
    for name, call in (("in_process", in_process), ("server", served)):
        wall, latencies, correct = await batch(call, args.runs, args.chars)
        concurrent[name] = {"wall": wall, "latencies": latencies, "correct": correct}

    one_in, one_server = spread(single["in_process"]), spread(single["server"])
    figures: dict[str, object] = {
        "graph": args.graph,
        "stub latency per call": f"{args.latency:.3f}s",
        "document chars": args.chars,
        "auth": f"bearer tokens, {len(tokens)} users taking turns" if tokens else "no tokens (loopback)",
        "one run, in process": one_in.format(),
        "one run, through the server": one_server.format(),
        "server overhead per run (median difference)": f"{one_server.median - one_in.median:.3f}s",
    }
    for name, label in (("in_process", "in process"), ("server", "through the server")):
        result = concurrent[name]
        latencies = result["latencies"]
        figures[f"{args.runs} concurrent runs, {label}: wall"] = f"{result['wall']:.3f}s"
        figures[f"{args.runs} concurrent runs, {label}: per-run latency"] = (
            f"mean {statistics.fmean(latencies):.3f}s, p50 {_percentile(latencies, 0.5):.3f}s, "
            f"p95 {_percentile(latencies, 0.95):.3f}s"
        )
        figures[f"{args.runs} concurrent runs, {label}: correct answers"] = f"{result['correct']}/{args.runs}"
    figures["concurrent overhead per run (batch wall difference / runs)"] = (
        f"{(concurrent['server']['wall'] - concurrent['in_process']['wall']) / args.runs:.3f}s"
    )
    figures["load average"] = load_average()
    return figures


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m longgraph.evals.bench.server_load", description=__doc__)
    parser.add_argument("--graph", default="mapreduce", help="a graph name from langgraph.json")
    parser.add_argument("--runs", type=int, default=50, help="concurrent runs")
    parser.add_argument("--latency", type=float, default=0.2, help="stub seconds per call")
    parser.add_argument("--chars", type=int, default=30_000, help="document size (about 8 chunks at 2048)")
    parser.add_argument("--repeats", type=int, default=5, help="single-run measurements per side")
    parser.add_argument("--users", type=int, default=2, help="users with their own bearer token (0: none)")
    parser.add_argument("--strict-blocking", action="store_true", help="keep langgraph dev's BlockBuster")
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    args = _parser().parse_args(argv)
    tokens = user_tokens(args.users)
    with (
        run_stub_in_subprocess(StubConfig(latency_s=args.latency)) as stub,
        tempfile.TemporaryDirectory(prefix="longgraph-server-bench-") as workdir,
        run_langgraph_dev(
            Path(workdir),
            n_jobs_per_worker=args.runs,
            allow_blocking=not args.strict_blocking,
            env={
                "LONGGRAPH_AUTH_TOKENS": ",".join(f"{user}:{token}" for user, token in tokens.items()),
                "LONGGRAPH_ALLOWED_ENDPOINTS": stub.base_url,  # a served run may name only these
                "LONGGRAPH_ALLOWED_MODELS": STUB_SETTINGS["model"],  # and only the model its runs name
                "LONGGRAPH_MAX_CONCURRENCY": "64",  # and may not raise the operator's load limit
            },
        ) as server,
    ):
        context = stub_settings(stub.base_url, max_concurrency=64)
        figures = asyncio.run(measure(args, context, server.url, tokens))
    print_figures(f"{args.graph}: in process vs through langgraph dev, stub latency {args.latency}s", figures)
    return figures


if __name__ == "__main__":
    main()
