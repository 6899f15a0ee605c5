"""What the result cache (on by default) costs a run, on a fast disk and on a slow one.

``python -m longgraph.evals.bench.result_cache [--tokens 1280000] [--latency 0.1] [--repeats 3]
[--fsync-ms 0]``

One mapreduce question on a needle document against the stub, three ways, alternating per repeat:
without a cache; with a new cache file (every call a miss, then its answer written); and asked again
on that file (every call a hit); the run without a cache goes first, between and last in turn.
Printed: wall medians, the cost of the cache over no cache, and how
many commits stored the run's answers (each commit is one ``fsync``).

``--fsync-ms N`` makes every ``fsync`` of the process take N ms longer, as on a spinning disk or a
network filesystem (a home directory on NFS, where ``~/.cache/longgraph`` lives): the benchmark
builds a small ``LD_PRELOAD`` library with the C compiler (``cc``) and runs itself again under it.
Linux only; without a compiler it says so and stops.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from longgraph.api import aask
from longgraph.cache import ResultCache, open_cache
from longgraph.evals.bench import load_average, print_figures, spread
from longgraph.evals.bench.mapreduce_stub import build_workload, graph_settings
from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess

_SLOW_FSYNC_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
static void slow(void) {
  const char *v = getenv("LONGGRAPH_BENCH_FSYNC_MS");
  long ms = v ? atol(v) : 0;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  if (ms > 0) nanosleep(&ts, NULL);
}
int fsync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fsync"); slow(); return real(fd); }
int fdatasync(int fd) { static int (*real)(int); if (!real) real = dlsym(RTLD_NEXT, "fdatasync"); slow(); return real(fd); }
"""
_MODES = ("no cache", "cache, all misses", "cache, all hits")
_MODULE = __spec__.name if __spec__ is not None else __name__  # run as ``-m``, ``__name__`` is "__main__"


def _rerun_with_slow_fsync(argv: Sequence[str], fsync_ms: int) -> int:
    """Build the ``fsync`` delay library and run this benchmark again under it; its exit status."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None or not sys.platform.startswith("linux"):
        raise SystemExit("--fsync-ms needs Linux and a C compiler (cc) to build its LD_PRELOAD library")
    with tempfile.TemporaryDirectory(prefix="longgraph-slow-fsync-") as folder:
        source, library = Path(folder) / "slow_fsync.c", Path(folder) / "slow_fsync.so"
        source.write_text(_SLOW_FSYNC_C)
        subprocess.run(
            [compiler, "-shared", "-fPIC", "-O2", "-o", str(library), str(source), "-ldl"], check=True
        )
        env = {**os.environ, "LD_PRELOAD": str(library), "LONGGRAPH_BENCH_FSYNC_MS": str(fsync_ms)}
        return subprocess.run([sys.executable, "-m", _MODULE, *argv], env=env, check=False).returncode


def _the_runs_cache(path: Path) -> ResultCache:
    """The cache object the runs on ``path`` will use (one per file per process)."""
    cache = open_cache(str(path))
    if cache is None:
        raise ValueError("a cache needs a path")
    return cache


@contextmanager
def _statements_of(cache: ResultCache) -> Iterator[list[str]]:
    """The SQL statements the cache's connection runs inside the block."""
    statements: list[str] = []
    cache._use(lambda db: db.set_trace_callback(statements.append))
    try:
        yield statements
    finally:
        cache._use(lambda db: db.set_trace_callback(None))


def measure(args: argparse.Namespace, workdir: Path) -> dict[str, object]:
    workload = build_workload(args.tokens)
    walls: dict[str, list[float]] = {mode: [] for mode in _MODES}
    commits: list[int] = []
    stored = 0
    with run_stub_in_subprocess(StubConfig(latency_s=args.latency)) as stub:
        settings = graph_settings(stub.base_url, args.concurrency)
        asyncio.run(aask(workload.question, documents=workload.documents, **settings))  # warm
        for repeat in range(args.repeats):
            cache = _the_runs_cache(workdir / f"results-{repeat}.sqlite")
            order = list(_MODES[1:])
            order.insert(repeat % 3, _MODES[0])  # no cache first, between and last: no order effect
            for mode in order:
                cache_path = "" if mode == "no cache" else str(cache.path)
                with _statements_of(cache) as statements:
                    started = time.perf_counter()
                    asyncio.run(
                        aask(
                            workload.question, documents=workload.documents, **settings, cache_path=cache_path
                        )
                    )
                    walls[mode].append(time.perf_counter() - started)
                if mode == "cache, all misses":
                    commits.append(sum(1 for s in statements if s.startswith("COMMIT")))
                    stored = len(cache)
    medians = {mode: statistics.median(values) for mode, values in walls.items()}
    figures: dict[str, object] = {
        "input_tokens": workload.tokens,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "extra_ms_per_fsync": args.fsync_ms,
        "repeats": args.repeats,
    }
    for mode in _MODES:
        figures[f"wall, {mode}"] = spread(walls[mode]).format()
    figures["cost of misses over no cache"] = f"{medians[_MODES[1]] - medians[_MODES[0]]:+.3f}s"
    figures["answers in the file after a run (equal chunks share one)"] = stored
    figures["commits storing them"] = spread(commits).format(unit="", digits=0)
    figures["load average"] = load_average()
    return figures


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m longgraph.evals.bench.result_cache", description=__doc__)
    parser.add_argument("--tokens", type=int, default=1_280_000)
    parser.add_argument("--latency", type=float, default=0.1, help="stub seconds per answer")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--fsync-ms", type=int, default=0, help="extra milliseconds per fsync (Linux, needs cc)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    """Run the benchmark, print its figures and return them (re-run under the fsync delay if asked)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(arguments)
    if args.fsync_ms > 0 and os.environ.get("LONGGRAPH_BENCH_FSYNC_MS") != str(args.fsync_ms):
        status = _rerun_with_slow_fsync(arguments, args.fsync_ms)
        if status:
            raise SystemExit(status)
        return {}
    with tempfile.TemporaryDirectory(prefix="longgraph-cache-bench-") as workdir:
        figures = measure(args, Path(workdir))
    print_figures("result cache: no cache vs misses vs hits (mapreduce, stub model)", figures)
    return figures


if __name__ == "__main__":
    main()
