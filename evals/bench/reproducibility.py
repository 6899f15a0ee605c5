"""Reproducibility: the same question on the same document, no result cache, temperature 0, asked again.

``python -m longgraph.evals.bench.reproducibility [--docs 6] [--repeats 3] [--concurrency 16 1]``

Why: a reader expects a rerun to give the same answer, and every published figure here is one run. On
the embedded vLLM a rerun of the general suite agreed in 43 of 48 answers. The suspect is
the server's batching: requests in flight together are computed as one batch, and in bfloat16 another
batch can flip a greedy token. This benchmark asks each question ``--repeats`` times with each
``max_concurrency`` in ``--concurrency``, side by side in one run, and prints for each how many
documents got the same final answer every time, how many got the same output from every chunk's
reading (the finer test: an unused chunk's note can change without changing the answer), the same
among the runs after the first (which find their prompts in vLLM's prefix cache, as the first may
not), and the wall time. Documents are the general suite's dev split (one fact, look-alikes, paraphrase; essays and
SQuAD filler), so nothing of the held-out split is looked at.

The embedded server is reused if one runs, otherwise started (``--stub`` measures the stub instead,
which is deterministic by construction: a check of the benchmark itself).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from longgraph.api import aask
from longgraph.evals.bench import bench_endpoint, endpoint_label, load_average, print_figures
from longgraph.evals.data.general import build_general

KINDS = ("one", "distractors", "paraphrase")


async def readings(
    question: str, text: str, strategy: str, settings: dict[str, Any]
) -> tuple[str, tuple[str, ...]]:
    """The final answer and every chunk's reading (fate and answer) of one fresh run."""
    answer = await aask(question, text, strategy=strategy, start_embedded=False, cache_path="", **settings)
    chunks = tuple(f"{c.status}:{c.answer or ''}" for c in answer.chunks)
    return answer.answer, chunks


async def measure(
    instances: Sequence[Any], *, repeats: int, strategy: str, settings: dict[str, Any]
) -> dict[str, object]:
    same_answer = same_chunks = same_warm = 0
    started = time.perf_counter()
    for instance in instances:
        text = instance.documents[0]["text"]
        runs = [await readings(instance.question, text, strategy, settings) for _ in range(repeats)]
        same_answer += len({answer for answer, _ in runs}) == 1
        same_chunks += len({chunks for _, chunks in runs}) == 1
        same_warm += len({chunks for _, chunks in runs[1:]}) == 1
    return {
        "same answer every run (documents)": f"{same_answer}/{len(instances)}",
        "same reading of every chunk every run (documents)": f"{same_chunks}/{len(instances)}",
        "same reading of every chunk after the first run (documents)": f"{same_warm}/{len(instances)}",
        "wall s": round(time.perf_counter() - started, 1),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--docs", type=int, default=6, help="documents (split over one, distractors, paraphrase)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 1], help="max_concurrency values")
    parser.add_argument("--strategy", default="mapreduce")
    parser.add_argument("--tokens", type=int, default=8_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--stub", action="store_true", help="measure the stub instead of the embedded vLLM")
    args = parser.parse_args(argv)
    per_kind = max(1, -(-args.docs // len(KINDS)))
    instances = build_general(target_tokens=args.tokens, n=per_kind, seed=args.seed, split="dev", kinds=KINDS)
    instances = instances[: args.docs]
    with ExitStack() as stack:
        endpoint, _ = bench_endpoint(stack, embedded=not args.stub, latency=0.0)
        for concurrency in args.concurrency:
            settings = {**endpoint, "max_concurrency": concurrency, "temperature": 0.0}
            figures = asyncio.run(
                measure(instances, repeats=args.repeats, strategy=args.strategy, settings=settings)
            )
            print_figures(
                f"reproducibility, {args.strategy}, max_concurrency {concurrency}",
                {
                    "endpoint": endpoint_label(embedded=not args.stub, latency=0.0),
                    "documents x repeats": f"{len(instances)} x {args.repeats}",
                    **figures,
                    "load average": load_average(),
                },
            )


if __name__ == "__main__":
    main()
