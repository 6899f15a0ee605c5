"""What checkpointing a run costs on SQLite and on PostgreSQL, and how fast a failed run resumes.

``python -m longgraph.evals.bench.durable_runs [--chars 1000000] [--window 8192] [--repeats 3]``

One stub model (no latency: only the orchestration and the checkpoints are measured), one PostgreSQL
server started from the distribution's binaries (``longgraph/testing/postgres.py``), and for each of
no checkpoints / a SQLite file / PostgreSQL, alternating, ``--repeats`` times:

- **a full run** (mapreduce), wall seconds;
- **a run that fails** when the endpoint dies after a third of its calls (two calls at a time), then
  **its resume**: wall seconds of the resume and the calls it made (the finished ones are not made
  again);
- the checkpoint database's size after the run (the SQLite file; PostgreSQL's tables).

Figures are printed (medians with spread), never asserted.
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

from longgraph.api import aask
from longgraph.errors import EndpointError
from longgraph.evals.bench import NEEDLE_QUESTION, load_average, planted_haystack, print_figures, spread
from longgraph.testing.postgres import run_postgres
from longgraph.testing.stub_server import StubConfig, StubHandle, run_stub_in_thread

BACKENDS = ("none", "sqlite", "postgres")


def _postgres_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as db:
        row = db.execute(
            "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r'"
        ).fetchone()
    return int(row[0] or 0) if row else 0


def _target(backend: str, workdir: Path, url: str, run: int) -> dict[str, Any]:
    if backend == "sqlite":
        return {"checkpoint_path": workdir / f"run{run}.sqlite", "thread_id": f"bench-{run}"}
    if backend == "postgres":
        return {"checkpoint_url": url, "thread_id": f"bench-{run}"}
    return {}


def measure(args: argparse.Namespace, stub: StubHandle, url: str, workdir: Path) -> dict[str, object]:
    document = planted_haystack(args.chars)
    settings: dict[str, Any] = {
        "base_url": stub.base_url,
        "model": "stub",
        "context_window": args.window,
        "max_output_tokens": 256,
        "temperature": 0.0,
        "structured_output": "json_schema",
        "max_concurrency": 16,
        "max_retries": 0,
        "start_embedded": False,
        "cache_path": "",
    }
    asyncio.run(aask(NEEDLE_QUESTION, document, **settings))  # warm: imports, tokenizer, connection pools
    calls = stub.stats()["requests"]
    full: dict[str, list[float]] = {b: [] for b in BACKENDS}
    resume: dict[str, list[float]] = {b: [] for b in BACKENDS if b != "none"}
    resume_calls: dict[str, list[int]] = {b: [] for b in resume}
    sizes: dict[str, int] = {}
    run = 0
    for _ in range(args.repeats):
        for backend in BACKENDS:
            run += 1
            stub.reset()
            started = time.perf_counter()
            asyncio.run(aask(NEEDLE_QUESTION, document, **settings, **_target(backend, workdir, url, run)))
            full[backend].append(time.perf_counter() - started)
            if backend == "sqlite":
                sizes["sqlite"] = (workdir / f"run{run}.sqlite").stat().st_size
            if backend == "none":
                continue
            run += 1
            target = _target(backend, workdir, url, run)
            stub.reset()
            stub.configure(die_after=calls // 3)
            # The planned failure, two calls at a time: with more, the failures (answered at once) come
            # back before the calls that succeed, whose results are then lost in flight.
            with contextlib.suppress(EndpointError):
                asyncio.run(aask(NEEDLE_QUESTION, document, **{**settings, "max_concurrency": 2}, **target))
            stub.configure(die_after=None)
            stub.reset()
            started = time.perf_counter()
            asyncio.run(aask(NEEDLE_QUESTION, document, **settings, **target))
            resume[backend].append(time.perf_counter() - started)
            resume_calls[backend].append(int(stub.stats()["requests"]))
    sizes["postgres"] = _postgres_bytes(url)
    figures: dict[str, object] = {
        "input": f"{len(document.encode()):,} bytes, window {args.window}, {calls} calls per run, stub without latency",
        "repeats": args.repeats,
    }
    for backend in BACKENDS:
        figures[f"full run, checkpoints {backend}"] = spread(full[backend]).format()
    for backend in resume:
        figures[f"resume after failing at 1/3, {backend}"] = (
            f"{spread(resume[backend]).format()}, calls {sorted(set(resume_calls[backend]))} of {calls}"
        )
    figures["SQLite file after one run"] = (
        f"{sizes['sqlite']:,} bytes ({sizes['sqlite'] / len(document.encode()):.2f}x the input)"
    )
    figures[f"PostgreSQL tables after all {run - args.repeats} checkpointed runs"] = (
        f"{sizes['postgres']:,} bytes"
    )
    figures["load average"] = load_average()
    return figures


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m longgraph.evals.bench.durable_runs", description=__doc__)
    parser.add_argument("--chars", type=int, default=1_000_000, help="document size in characters")
    parser.add_argument("--window", type=int, default=8192, help="context window (sets the chunk count)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--postgres-url", help="a PostgreSQL server to use (default: start one)")
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    args = _parser().parse_args(argv)
    with (
        contextlib.nullcontext(args.postgres_url) if args.postgres_url else run_postgres() as url,
        run_stub_in_thread(StubConfig()) as stub,
        tempfile.TemporaryDirectory(prefix="longgraph-durable-bench-") as workdir,
    ):
        figures = measure(args, stub, url, Path(workdir))
    print_figures("durable runs: no checkpoints vs SQLite vs PostgreSQL (mapreduce, stub model)", figures)
    return figures


if __name__ == "__main__":
    main()
