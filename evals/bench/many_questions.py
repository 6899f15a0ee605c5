"""Many questions, one document: what a later question costs once the server's prefix cache holds the
document's chunks.

``python -m longgraph.evals.bench.many_questions [--tokens 32000] [--questions 10] [--out FILE]``

Ten facts are planted in ~32K tokens of Paul Graham essays and asked for one after another through
``mapreduce`` on the embedded vLLM server (started for the bench if none is running, and stopped after
it; prefix caching is the server's own setting, recorded), the result cache off, under both prompt
layouts in one run (``prompt_layout``): ``question_first`` (the question before and after each chunk)
and ``shared_prefix`` (instructions, chunk, then the question: every question's call on a chunk shares
the chunk's prefix). Under each layout question 1 is asked again last: the floor, where the whole
prompt is found in the cache and decoding is what is left.

Per question: wall seconds, prompt tokens, and the share of prompt tokens the server found in its
prefix cache (``vllm:prefix_cache_hits`` over ``vllm:prefix_cache_queries`` from ``/metrics``, the
difference across the question). Prints, for the ``shared_prefix`` layout,
``later_over_first: <median over questions 2-N of wall time over question 1's>`` and
``floor_over_first: <question 1 again over question 1>``, then the same for ``question_first``. Figures
to read side by side, no assertions; ``--out`` writes one JSON record per question.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

from longgraph.evals.bench import print_figures

LAYOUTS = ("question_first", "shared_prefix")
PLACES = ("Ardwick", "Belmere", "Corran", "Dunholt", "Elsby", "Farrow", "Gillam", "Harlow", "Ivel", "Jesmond")
"""One made-up town per question: each fact and question names its own."""
_METRIC = re.compile(r"^(vllm:prefix_cache_(?:hits|queries)(?:_total)?)(?:\{[^}]*\})?\s+([0-9.eE+-]+)$", re.M)


def planted(tokens: int, count: int) -> tuple[str, list[tuple[str, str]]]:
    """A document of about ``tokens`` tokens of essays with ``count`` facts spread through it, and the
    (question, answer) of each."""
    from longgraph.evals.corpora import load_paul_graham_text

    text = load_paul_graham_text()
    chars = tokens * 4
    filler = (text * (chars // len(text) + 1))[:chars]
    asked = [
        (f"The harbour master of {place} keeps a ledger with the number {4100 + 37 * i}.",
         f"What number is in the ledger of the harbour master of {place}?", str(4100 + 37 * i))
        for i, place in enumerate(PLACES[:count])
    ]  # fmt: skip
    pieces, start = [], 0
    for i, (fact, _, _) in enumerate(asked):
        cut = filler.rfind(" ", 0, int(len(filler) * (i + 0.5) / count)) + 1
        pieces += [filler[start:cut], f"\n\n{fact}\n\n"]
        start = cut
    pieces.append(filler[start:])
    return "".join(pieces), [(question, answer) for _, question, answer in asked]


def prefix_counters(base_url: str) -> tuple[float, float]:
    """(hits, queries) of the server's prefix cache, in tokens, summed over label sets."""
    root = base_url.rstrip("/").removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/metrics", timeout=10) as response:
        body = response.read().decode("utf-8", "replace")
    totals = {"hits": 0.0, "queries": 0.0}
    for name, value in _METRIC.findall(body):
        totals["hits" if "hits" in name else "queries"] += float(value)
    return totals["hits"], totals["queries"]


def measure(tokens: int, count: int, out: Path | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One record per (layout, question), question 1 asked again last, each printed (and appended to
    ``out``) as it is measured; and the server's facts."""
    from longgraph.api import aask
    from longgraph.embedded import ensure_running, stop_server

    server, started = ensure_running()
    facts = {"model": server.model, "prefix_caching": server.prefix_caching, "dtype": server.dtype}
    if out is not None:
        out.write_text("", encoding="utf-8")
    try:
        document, asked = planted(tokens, count)
        records: list[dict[str, Any]] = []
        for layout in LAYOUTS:
            for index, (question, answer) in [*enumerate(asked), (0, asked[0])]:
                hits, queries = prefix_counters(server.base_url)
                began = time.perf_counter()
                result = asyncio.run(
                    aask(question, document, strategy="mapreduce", start_embedded=False,
                         base_url=server.base_url, model=server.model, tokenizer=str(server.tokenizer_path),
                         temperature=0.0, prompt_layout=layout, cache_path=None)
                )  # fmt: skip
                seconds = time.perf_counter() - began
                hits_after, queries_after = prefix_counters(server.base_url)
                queried = queries_after - queries
                records.append(
                    {
                        "layout": layout,
                        "question": index + 1,
                        "again": len([r for r in records if r["layout"] == layout]) == count,
                        "seconds": round(seconds, 2),
                        "prompt_tokens": result.stats.prompt_tokens,
                        "calls": result.stats.llm_calls,
                        "prefix_hit_rate": round((hits_after - hits) / queried, 3) if queried else None,
                        "right": answer in result.answer,
                        "answer": result.answer[:200],
                    }
                )
                shown(records[-1])
                if out is not None:
                    with out.open("a", encoding="utf-8") as sink:
                        sink.write(json.dumps({**facts, **records[-1]}) + "\n")
        return records, facts
    finally:
        if started:
            stop_server()


def shown(record: dict[str, Any]) -> None:
    """One question's line: layout, question, seconds, prompt tokens, prefix hits, whether right."""
    label = "1 again" if record["again"] else str(record["question"])
    print(
        f"{record['layout']:>14} q{label:<8} {record['seconds']:7.1f} s  {record['prompt_tokens']:>7,} prompt "
        f"tokens  prefix hits {record['prefix_hit_rate']}  right {record['right']}",
        flush=True,
    )


def ratios(records: list[dict[str, Any]], layout: str) -> dict[str, float]:
    """``later_over_first`` and ``floor_over_first`` of one layout's records."""
    runs = [r for r in records if r["layout"] == layout]
    first = next(r for r in runs if r["question"] == 1 and not r["again"])["seconds"]
    later = [r["seconds"] / first for r in runs if r["question"] > 1]
    again = next(r for r in runs if r["again"])["seconds"]
    return {
        "later_over_first": round(statistics.median(later), 3),
        "floor_over_first": round(again / first, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=32_000, help="length of the document")
    parser.add_argument("--questions", type=int, default=10, choices=range(2, len(PLACES) + 1))
    parser.add_argument("--out", type=Path, default=None, help="write one JSON record per question here")
    args = parser.parse_args()
    records, facts = measure(args.tokens, args.questions, args.out)
    for layout in reversed(LAYOUTS):  # the shared prefix first: its figures are the bench's
        figures = ratios(records, layout)
        if layout == "shared_prefix":
            print(f"later_over_first: {figures['later_over_first']}")
            print(f"floor_over_first: {figures['floor_over_first']}")
        print_figures(
            f"many questions, {layout} ({facts['model']}, prefix caching {facts['prefix_caching']})", figures
        )


if __name__ == "__main__":
    main()
