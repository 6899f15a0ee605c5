"""The whole mapreduce run against the floor for the server: each chunk sent once with a plain question.

``python -m longgraph.evals.bench.grounded_speed [--tokens 64000] [--chunk-size 1500] [--repeats 2]``

The floor: the same chunks (the one chunker, the same size), each sent once to the same server with a
plain one-line prompt ("Text: … Question: … Answer from the text in a few words. If the text does not
say, answer NONE."), the same output budget, temperature and requests in flight. No run that reads
every chunk can be cheaper. ``ratio = graph seconds ÷ plain seconds``; the grounded-answers issue
targets at most 1.5 on a 64K-token haystack. Both sides also report completion tokens per read call
and whether the answer holds the planted fact.

Each side reads its own haystack (same size, another seed of the needle builder) so vLLM's prefix
cache cannot hand one side the other's work; the sides alternate which goes first across repeats.
Before measuring, the benchmark waits for a quiet machine and an idle server (``--max-load``).
``--variants compact,paper`` also times the paper's protocol side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import time
from dataclasses import dataclass
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
from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.data.needle import build_needle
from longgraph.evals.metrics import needle_match
from longgraph.nodes.chunking import split_into_chunks
from longgraph.state.contract import DocumentIn
from longgraph.tokenizer import get_tokenizer

PLAIN = "Text: {text}\n\nQuestion: {question}\nAnswer from the text in a few words. If the text does not say, answer NONE."
_QUEUE = re.compile(r"^vllm:num_requests_(running|waiting)\{[^}]*\}\s+([0-9.eE+-]+)", re.MULTILINE)


@dataclass
class Side:
    seconds: float
    calls: int
    completion_per_call: float
    correct: bool


def _documents(instance: EvalInstance) -> list[DocumentIn]:
    return [d if isinstance(d, DocumentIn) else DocumentIn.model_validate(d) for d in instance.documents]


async def plain_pass(
    server: ServerInfo, instance: EvalInstance, *, chunk_size: int, max_tokens: int, concurrency: int
) -> Side:
    """Every chunk once, plain prompt, ``concurrency`` in flight."""
    chunks = split_into_chunks(_documents(instance), chunk_size, get_tokenizer(str(server.tokenizer_path)))
    limit = asyncio.Semaphore(concurrency)
    answers: list[str] = []
    completion = 0

    async def one(client: httpx.AsyncClient, text: str) -> None:
        nonlocal completion
        body = {
            "model": server.model,
            "temperature": 0.0,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": PLAIN.format(text=text, question=instance.question)}],
        }
        async with limit:
            response = await client.post(f"{server.base_url}/chat/completions", json=body)
        response.raise_for_status()
        data = response.json()
        answers.append(str(data["choices"][0]["message"]["content"]))
        completion += int(data["usage"]["completion_tokens"])

    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=900.0) as client:
        await asyncio.gather(*(one(client, c.text) for c in chunks))
    seconds = time.perf_counter() - started
    correct = any(needle_match(a, instance.gold_answers) for a in answers)
    return Side(seconds, len(chunks), completion / len(chunks), correct)


async def graph_run(
    server: ServerInfo,
    instance: EvalInstance,
    *,
    variant: str,
    chunk_size: int,
    max_tokens: int,
    concurrency: int,
) -> Side:
    started = time.perf_counter()
    result = await aask(
        instance.question,
        documents=instance.documents,
        strategy="mapreduce",
        start_embedded=False,
        base_url=server.base_url,
        model=server.model,
        tokenizer=str(server.tokenizer_path),
        chunk_size=chunk_size,
        max_output_tokens=max_tokens,
        max_concurrency=concurrency,
        temperature=0.0,
        request_timeout=900.0,
        prompt_variant=variant,
    )
    seconds = time.perf_counter() - started
    stats = result.stats
    per_call = stats.completion_per_call("map") or 0.0
    return Side(seconds, stats.llm_calls, per_call, bool(needle_match(result.answer, instance.gold_answers)))


def _server_busy(server: ServerInfo) -> float:
    try:
        text = httpx.get(server.base_url.removesuffix("/v1") + "/metrics", timeout=5).text
    except httpx.HTTPError:
        return 0.0
    return sum(float(v) for _, v in _QUEUE.findall(text))


async def main_async(args: argparse.Namespace) -> None:
    server = find_running()
    started_here = server is None
    if server is None:
        server, _ = ensure_running()
    try:
        seen = wait_for_quiet(args.max_load, args.max_wait_s, busy=lambda: _server_busy(server))
        seed = args.seed if args.seed is not None else int(time.time()) % 100_000
        tokenizer = get_tokenizer(str(server.tokenizer_path))
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
        results: dict[str, list[Side]] = {"plain": [], **{v: [] for v in variants}}
        for repeat in range(args.repeats):
            order = ["plain", *variants] if repeat % 2 == 0 else [*variants, "plain"]
            for k, side in enumerate(order):
                instance = build_needle(
                    target_tokens=args.tokens,
                    n=1,
                    seed=seed + 10 * repeat + k,
                    depth=args.depth,
                    tokenizer=tokenizer,
                )[0]
                common: dict[str, Any] = {
                    "chunk_size": args.chunk_size,
                    "max_tokens": args.max_output_tokens,
                    "concurrency": args.concurrency,
                }
                if side == "plain":
                    results[side].append(await plain_pass(server, instance, **common))
                else:
                    results[side].append(await graph_run(server, instance, variant=side, **common))
        plain = spread([s.seconds for s in results["plain"]])
        figures: dict[str, object] = {
            "haystack_tokens": args.tokens,
            "chunk_size": args.chunk_size,
            "concurrency": args.concurrency,
            "max_output_tokens": args.max_output_tokens,
            **seen,
            "plain_seconds": plain.format(),
            "plain_calls": results["plain"][0].calls,
            "plain_completion_tokens_per_call": f"{spread([s.completion_per_call for s in results['plain']]).median:.1f}",
            "plain_found_the_fact": f"{sum(s.correct for s in results['plain'])}/{args.repeats}",
        }
        for variant in variants:
            runs = results[variant]
            ratios = [g.seconds / p.seconds for g, p in zip(runs, results["plain"], strict=True)]
            figures.update(
                {
                    f"graph_{variant}_seconds": spread([s.seconds for s in runs]).format(),
                    f"graph_{variant}_calls": runs[0].calls,
                    f"graph_{variant}_completion_tokens_per_map_call": f"{spread([s.completion_per_call for s in runs]).median:.1f}",
                    f"graph_{variant}_answered_correctly": f"{sum(s.correct for s in runs)}/{args.repeats}",
                    f"ratio_{variant}_graph_over_plain": spread(ratios).format(unit="", digits=2),
                }
            )
        figures["load_average_at_end"] = load_average()
        print_figures("mapreduce (grounded) vs each chunk once with a plain prompt, embedded vLLM", figures)
    finally:
        if started_here:
            stop_server()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tokens", type=int, default=64_000)
    parser.add_argument("--chunk-size", type=int, default=1500)
    parser.add_argument("--max-output-tokens", type=int, default=160)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--depth", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--variants", default="compact")
    parser.add_argument("--seed", type=int, default=None)
    add_quiet_options(parser)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
