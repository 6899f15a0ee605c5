"""What a laptop user of the embedded model sees: each run's answer and the checks' verdict on it.

``python -m longgraph.evals.bench.laptop_verdicts [--strategies mapreduce,segment-plus] [--chars 64000]``

A code ("The secret code of the archive is 753159.") is planted at three depths of Paul Graham essays
(~16K tokens) and asked for through each strategy on the embedded server (started if need be, left
running as ``longgraph ask`` leaves it). The embedded models cannot verify (``verify_answers`` "auto"
is off for them), so an answer the words alone cannot confirm is ``unconfirmed``: with
``on_unconfirmed`` "show" (the default) the user still gets it, flagged, with its quote. Prints one line
per run (strategy, depth, verdict, whether the code is in the answer, the answer) and the counts; with
``--out FILE`` one JSON record per run. No assertions: figures to read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from longgraph.evals.bench import print_figures

FACT = "The secret code of the archive is 753159."
QUESTION = "What is the secret code of the archive?"
CODE = "753159"
DEPTHS = (0.2, 0.5, 0.8)


def measure(strategies: list[str], chars: int) -> list[dict[str, Any]]:
    """One record per (strategy, depth): the answer, its verdict and why, calls and seconds."""
    from longgraph.api import aask
    from longgraph.embedded import ensure_running
    from longgraph.evals.corpora import load_paul_graham_text

    server, _ = ensure_running()
    records = []
    for strategy in strategies:
        for depth in DEPTHS:
            text = load_paul_graham_text()
            filler = (text * (chars // len(text) + 1))[:chars]
            cut = filler.rfind(" ", 0, int(len(filler) * depth)) + 1
            document = f"{filler[:cut]}\n\n{FACT}\n\n{filler[cut:]}"
            started = time.perf_counter()
            result = asyncio.run(
                aask(QUESTION, document, strategy=strategy, start_embedded=False, base_url=server.base_url,
                     model=server.model, tokenizer=str(server.tokenizer_path), temperature=0.0)
            )  # fmt: skip
            records.append(
                {
                    "model": server.model,
                    "strategy": strategy,
                    "depth": depth,
                    "answer": result.answer,
                    "verdict": result.verdict,
                    "verdict_reason": result.verdict_reason,
                    "found": CODE in result.answer,
                    "calls": result.stats.llm_calls,
                    "seconds": round(time.perf_counter() - started, 1),
                }
            )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategies", default="mapreduce,segment-plus", help="comma-separated")
    parser.add_argument("--chars", type=int, default=64_000, help="length of the essays around the code")
    parser.add_argument("--out", type=Path, default=None, help="write one JSON record per run here")
    args = parser.parse_args()
    records = measure(args.strategies.split(","), args.chars)
    for r in records:
        answer = " ".join(r["answer"].split())[:100]
        print(
            f"{r['strategy']:>14} depth {r['depth']:.1f}: {r['verdict']}, code shown {r['found']}: {answer}"
        )
    if args.out is not None:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    print_figures(
        f"laptop verdicts ({records[0]['model'] if records else 'no run'})",
        {
            "runs": len(records),
            "code shown": sum(r["found"] for r in records),
            "supported": sum(r["verdict"] == "supported" for r in records),
            "unconfirmed, shown": sum(r["verdict"] == "unconfirmed" and r["found"] for r in records),
            "no information": sum(r["answer"].startswith("[NO INFORMATION") for r in records),
        },
    )


if __name__ == "__main__":
    main()
