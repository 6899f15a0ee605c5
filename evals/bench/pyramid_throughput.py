"""Pyramid-Align over a corpus against the stub: throughput of ``synth`` / the server's saturating load.

``python -m longgraph.evals.bench.pyramid_throughput [--documents 100] [--latency 0.1] [--concurrency 32]``

Runs ``longgraph.synth`` over ``--documents`` essays (real text, one record each) against the stub
answering in ``--latency`` seconds with its oracle, capturing every request; then replays exactly those
requests with a bare async HTTP client, all of them available at once, at the same concurrency — the
most the server can be kept busy with this work. The ratio of the two wall times is how close one shared
concurrency budget across documents comes to saturating the server (each document's stages depend on
each other; the documents do not). Also printed: calls and tokens per record, wall time per document.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from longgraph.evals.bench import print_figures
from longgraph.evals.bench.mapreduce_stub import RecordingProvider, _replay
from longgraph.evals.corpora import load_paul_graham_text
from longgraph.state.pyramid import Record
from longgraph.synth import Source, asynth
from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess


def corpus(documents: int, chars: int) -> list[Source]:
    """``documents`` distinct texts of ``chars`` characters: consecutive slices of the installed Paul
    Graham essays (spread over the whole corpus)."""
    text = load_paul_graham_text()
    step = max(1, (len(text) - chars) // max(1, documents))
    return [Source(name=f"essay-{i}", text=text[i * step : i * step + chars]) for i in range(documents)]


def run(documents: int, chars: int, latency: float, concurrency: int) -> dict[str, object]:
    sources = corpus(documents, chars)
    with run_stub_in_subprocess(StubConfig(model="stub", latency_s=latency)) as stub, \
            tempfile.TemporaryDirectory(prefix="pyramid-bench-") as scratch:  # fmt: skip
        provider = RecordingProvider()
        out = Path(scratch) / "data.jsonl"
        started = time.perf_counter()
        summary = asyncio.run(asynth(
            sources, out, llm=provider, start_embedded=False, base_url=stub.base_url, model="stub",
            context_window=2048, max_output_tokens=256, temperature=0.0, structured_output="json_schema",
            max_concurrency=concurrency, cache_path=None,
        ))  # fmt: skip
        synth_seconds = time.perf_counter() - started
        records = [Record.model_validate_json(line) for line in out.read_text().splitlines() if line.strip()]
        calls = provider.calls
        started = time.perf_counter()
        asyncio.run(_replay(stub.base_url, [calls], concurrency))
        bare_seconds = time.perf_counter() - started
    per_record_calls = [r.calls for r in records]
    return {
        "documents": documents,
        "records written / filtered / failed": f"{summary.written} / {sum(summary.filtered.values())} / {len(summary.failed)}",
        "requests": len(calls),
        "stub latency (s)": latency,
        "concurrency (shared by all documents)": concurrency,
        "synth wall time (s)": round(synth_seconds, 2),
        "bare client, same requests all at once (s)": round(bare_seconds, 2),
        "throughput / saturating load": round(bare_seconds / synth_seconds, 3),
        "ideal wall time at this concurrency (s)": round(len(calls) * latency / concurrency, 2),
        "calls per record: mean (min-max)": f"{statistics.mean(per_record_calls):.1f} ({min(per_record_calls)}-{max(per_record_calls)})"
        if records
        else "-",
        "prompt / completion tokens per record (mean)": f"{statistics.mean(r.prompt_tokens for r in records):.0f} / "
        f"{statistics.mean(r.completion_tokens for r in records):.0f}"
        if records
        else "-",
        "wall time per document, documents concurrent (s, mean)": round(
            statistics.mean(r.seconds for r in records), 2
        )
        if records
        else "-",
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100)
    parser.add_argument("--chars", type=int, default=8000, help="characters per document")
    parser.add_argument("--latency", type=float, default=0.1, help="the stub's seconds per answer")
    parser.add_argument("--concurrency", type=int, default=32)
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    args = _parser().parse_args(argv)
    figures = run(args.documents, args.chars, args.latency, args.concurrency)
    print_figures("Pyramid-Align: synth over a corpus / saturating load (stub, oracle)", figures)
    return figures


if __name__ == "__main__":
    main()
