"""PECAN's costs: build once, ask many (paper Table A4), the server's prefix cache, and attention reading.

``python -m longgraph.evals.bench.pecan_costs [--tokens 16000] [--strategy pecan-no-attention] [--oracle]
[--attention-tokens 7500]``

1. **Amortised cost per question.** One needle haystack, eight questions (the planted one and the other
   built-in needles' questions, answered NO INFORMATION): the graph is built by the first and found in
   the cache by the rest (``longgraph.aask_many``). Printed: the build's and each question's calls,
   prompt tokens and seconds, and the average per question for 1, 2, 4 and 8 questions per document,
   ``(build + Σ first n questions) / n`` — the paper's Table A4 in calls and tokens instead of TFLOPs.
2. **Prefix cache.** vLLM's ``/metrics`` counters (``prefix_cache_queries``/``hits``,
   ``prompt_tokens_cached``) read before and after the questions (the search turns): the hit rate over
   that span and the prompt tokens the cache saved. Against the embedded server only.
3. **Attention reading** (``--attention-tokens``): one batch prompt of that many tokens with twelve
   points, read by ``nodes/attention.py`` in a fresh process, in float32 and in the precision "auto"
   picks here (``attention_precision``), side by side: seconds, peak RSS, their ratio, and whether
   each point's strongest member and three strongest members are the same.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from typing import Any

import numpy as np

from longgraph.evals.bench import load_average, prefix_cache_counters, print_figures
from longgraph.evals.data.needle import NEEDLES, build_needle
from longgraph.nodes.attention import normalise_rows


async def amortised(
    tokens: int, strategy: str, settings: dict[str, Any], base_url: str | None
) -> dict[str, Any]:
    from longgraph.api import aask_many

    instance = build_needle(target_tokens=tokens, n=1, seed=3, depth=0.5)[0]
    unanswerable = [
        "What is the name of the ship moored in the harbour of Port Averell?",
        "Which colour is the door of the Velmont Observatory?",
    ]
    questions = [
        instance.question,
        *[n.question for n in NEEDLES if n.question != instance.question],
        *unanswerable,
    ][:8]
    started = time.perf_counter()
    before = prefix_cache_counters(base_url) if base_url else {}
    results = await aask_many(questions, documents=instance.documents, strategy=strategy, **settings)
    after = prefix_cache_counters(base_url) if base_url else {}
    wall = time.perf_counter() - started
    build = results[0].stats.build
    assert build is not None
    per_question = []
    for result in results:
        own = result.stats.llm_calls - (result.stats.build.llm_calls if result.stats.build else 0)
        own_tokens = result.stats.prompt_tokens - (
            result.stats.build.prompt_tokens if result.stats.build else 0
        )
        seconds = result.stats.seconds - (result.stats.build_seconds or 0.0)
        per_question.append({"calls": own, "prompt_tokens": own_tokens, "seconds": round(seconds, 2)})
    figures: dict[str, Any] = {
        "strategy": strategy,
        "document_tokens": instance.actual_tokens,
        "wall_seconds": round(wall, 1),
        "build": {
            "calls": build.llm_calls,
            "prompt_tokens": build.prompt_tokens,
            "seconds": results[0].stats.build_seconds,
        },
        "questions": per_question,
        "first_answer": results[0].answer[:120],
        "gold": instance.gold_answers,
        "edges": (results[0].stats.structure or {}).get("edges"),
    }
    for n in (1, 2, 4, 8):
        chosen = per_question[:n]
        figures[f"per_question_at_{n}"] = {
            key: round((figures["build"][key] + sum(q[key] for q in chosen)) / n, 1)
            for key in ("calls", "prompt_tokens", "seconds")
        }
    if before and after:
        queries = after["prefix_cache_queries_total"] - before["prefix_cache_queries_total"]
        hits = after["prefix_cache_hits_total"] - before["prefix_cache_hits_total"]
        figures["prefix_cache"] = {
            "hit_rate": round(hits / queries, 3) if queries else None,
            "prompt_tokens_cached": after["prompt_tokens_cached_total"]
            - before["prompt_tokens_cached_total"],
            "note": "over the build and the eight questions' search turns",
        }
    return figures


_ATTENTION_PROBE = """
import json, sys, time
from longgraph.evals.bench import peak_rss_mb
from longgraph.embedded.common import model_dir
from longgraph.nodes.attention import attention_reader, spans_in
from longgraph.evals.data.needle import build_needle
from longgraph.tokenizer import get_tokenizer
target = int(sys.argv[1])
folder = str(model_dir())
reader = attention_reader(folder, sys.argv[2])
text = build_needle(target_tokens=target, n=1, seed=5, depth=0.5)[0].documents[0]["text"]
members = [" ".join(text[i:i + 1200].split()) for i in range(0, len(text), 1200)]
while len(reader.tokenizer("\\n".join(members))["input_ids"]) > target:
    members.pop()
points = [f"Summary point {i}: " + members[i * len(members) // 12][:160] for i in range(12)]
messages = [("user", "Summary the following information.\\n" + "\\n".join(members))]
answer = "\\n".join("* " + p for p in points)
full = reader.chat_text(messages, answer=answer)
started = time.perf_counter()
reading = reader.read(full, spans_in(full, ["* " + p for p in points], len(full) - len(answer)), spans_in(full, members))
print(json.dumps({"precision": reader.precision, "tokens": reading.tokens,
                  "seconds": round(time.perf_counter() - started, 1), "weights": reading.weights.tolist(),
                  "members": len(members), "points": len(points),
                  "peak_rss_mb": round(peak_rss_mb())}))
"""


def attention_batch(tokens: int, precision: str = "auto") -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _ATTENTION_PROBE, str(tokens), precision],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if done.returncode != 0:
        return {"error": done.stderr[-800:]}
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def attention_precisions(tokens: int) -> dict[str, Any]:
    """One batch read in float32 and in the precision "auto" picks here, side by side: seconds each, their
    ratio, and whether each point's strongest and three strongest members agree."""
    runs = {p: attention_batch(tokens, p) for p in ("float32", "auto")}
    if any("error" in r for r in runs.values()):
        return {"attention_batch": runs}
    exact, fast = (normalise_rows(np.asarray(runs[p].pop("weights"))) for p in ("float32", "auto"))
    top3 = [
        len(set(np.argsort(-a)[:3]) & set(np.argsort(-b)[:3])) / 3 for a, b in zip(exact, fast, strict=True)
    ]
    return {
        "attention_batch_float32": runs["float32"],
        "attention_batch_auto": runs["auto"],
        "attention_float32_over_auto_seconds": round(
            runs["float32"]["seconds"] / max(0.1, runs["auto"]["seconds"]), 2
        ),
        "attention_same_strongest_member": float(np.mean(exact.argmax(axis=1) == fast.argmax(axis=1))),
        "attention_same_top3_members": round(float(np.mean(top3)), 3),
        "attention_max_weight_difference_normalised": round(float(np.abs(exact - fast).max()), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=16_000)
    parser.add_argument("--strategy", default="pecan-no-attention")
    parser.add_argument(
        "--oracle", action="store_true", help="the stub's oracle instead of the embedded server"
    )
    parser.add_argument("--attention-tokens", type=int, default=0, help="also time one attention batch")
    args = parser.parse_args()
    figures: dict[str, Any] = {"load_average": load_average()}
    settings: dict[str, Any] = {"temperature": 0.0, "max_output_tokens": 160, "max_concurrency": 8}
    if args.oracle:
        from longgraph.testing.stub_server import StubConfig, run_stub_in_thread

        with run_stub_in_thread(StubConfig(model="stub")) as stub:
            settings.update(base_url=stub.base_url, model="stub", context_window=8192)
            figures["amortised"] = asyncio.run(amortised(args.tokens, args.strategy, settings, None))
    else:
        from longgraph.embedded import ensure_running

        info, _ = ensure_running()
        settings.update(base_url=info.base_url, model=info.model, tokenizer=str(info.tokenizer_path))
        figures["amortised"] = asyncio.run(amortised(args.tokens, args.strategy, settings, info.base_url))
    if args.attention_tokens:
        figures.update(attention_precisions(args.attention_tokens))
    figures["load_average_after"] = load_average()
    print_figures(f"pecan costs ({args.strategy}, {'oracle' if args.oracle else 'embedded server'})", figures)


if __name__ == "__main__":
    main()
