"""Pyramid-Align over a corpus against the stub: throughput of ``synth`` / the server's saturating load.

``python -m longgraph.evals.bench.pyramid_throughput [--documents 100] [--latency 0.1] [--concurrency 32]``
``python -m longgraph.evals.bench.pyramid_throughput --embedded --documents 20 --chars 6000 --out DIR``

Runs ``longgraph.synth`` over ``--documents`` essays (real text, one record each) against the stub
answering in ``--latency`` seconds with its oracle, capturing every request; then replays exactly those
requests with a bare async HTTP client, all of them available at once, at the same concurrency — the
most the server can be kept busy with this work. The ratio of the two wall times is how close one shared
concurrency budget across documents comes to saturating the server (each document's stages depend on
each other; the documents do not). Also printed: calls and tokens per record, wall time per document.

``--embedded`` runs the same corpus on the embedded vLLM server (SmolLM2) instead, with a 2,048-token
window (short documents, a two-level pyramid), and ``--out DIR`` keeps the dataset, its progress file and
its card; ``--no-replay`` skips the saturating replay (on the CPU server it costs as long again).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from longgraph.evals.bench import bench_endpoint, run_and_print
from longgraph.evals.bench.mapreduce_stub import RecordingProvider, replay_wall
from longgraph.evals.bench.saturation import (
    SMALL_WINDOW_RUN,
    add_load_options,
    essay_slices,
    saturation_figures,
)
from longgraph.state.pyramid import Record
from longgraph.synth import Source, asynth


def corpus(documents: int, chars: int) -> list[Source]:
    """``documents`` distinct texts of ``chars`` characters: consecutive slices of the installed Paul
    Graham essays (spread over the whole corpus)."""
    return [Source(name=f"essay-{i}", text=text) for i, text in enumerate(essay_slices(documents, chars))]


def run(
    documents: int,
    chars: int,
    latency: float,
    concurrency: int,
    *,
    embedded: bool = False,
    out_dir: Path | None = None,
    replay: bool = True,
) -> dict[str, object]:
    sources = corpus(documents, chars)
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pyramid-bench-")))
        endpoint, _ = bench_endpoint(stack, embedded=embedded, latency=latency)
        provider = RecordingProvider()
        out = (out_dir or scratch) / "data.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        summary = asyncio.run(
            asynth(
                sources,
                out,
                llm=provider,
                max_concurrency=concurrency,
                **SMALL_WINDOW_RUN,
                **endpoint,
            )
        )
        synth_seconds = time.perf_counter() - started
        records = [Record.model_validate_json(line) for line in out.read_text().splitlines() if line.strip()]
        calls = provider.calls
        bare_seconds = replay_wall(str(endpoint["base_url"]), calls, concurrency) if replay else math.nan
    per_record_calls = [r.calls for r in records]
    return {
        "documents": documents,
        "records written / filtered / failed": f"{summary.written} / {sum(summary.filtered.values())} / {len(summary.failed)}",
        **saturation_figures(
            what="synth",
            requests=calls,
            concurrency=concurrency,
            latency=latency,
            embedded=embedded,
            wall_s=synth_seconds,
            bare_s=bare_seconds,
        ),
        "synth wall time per document, corpus / documents (s)": round(synth_seconds / documents, 2),
        "calls per record: mean (min-max)": f"{statistics.mean(per_record_calls):.1f} ({min(per_record_calls)}-{max(per_record_calls)})"
        if records
        else "-",
        "prompt / completion tokens per record (mean)": f"{statistics.mean(r.prompt_tokens for r in records):.0f} / "
        f"{statistics.mean(r.completion_tokens for r in records):.0f}"
        if records
        else "-",
        "calls / prompt tokens / completion tokens per document, every outcome (mean)": (
            f"{summary.calls / documents:.1f} / {summary.prompt_tokens / documents:.0f} / "
            f"{summary.completion_tokens / documents:.0f}"
        ),
        "filtered, by reason": "; ".join(f"{why}: {n}" for why, n in sorted(summary.filtered.items())) or "-",
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
    parser.add_argument(
        "--out", dest="out_dir", type=Path, default=None, help="keep the dataset and its card here"
    )
    add_load_options(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    title = "Pyramid-Align: synth over a corpus / saturating load"
    return run_and_print(title, run, **vars(_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
