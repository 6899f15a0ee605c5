"""Speed of the one chunker on a 1.28M-token document, next to the speed of the tokenizer alone.

``python -m longgraph.evals.bench.chunker [--tokens 1280000] [--repeats 5]``

Chunking now runs while the first map calls are in flight (the chunk node starts each chunk's call as
soon as the chunk is final), so its CPU competes with the calls' (the stub benchmark shows its end as
``chunked_at`` and the first call as ``first_call_at``). The chunker must count every piece it
packs, so the tokenizer's own speed is its floor; both are printed, measured in the same process:

* ``tokenizer_whole_text``: one ``encode`` of the whole document (a single thread);
* ``tokenizer_count_batch_paragraphs``: ``count_batch`` over the document's paragraph spans, the way
  the chunker counts (one thread: sharding over the cores saved 0.03 s of wall time for 0.19 s more CPU);
* ``split_into_chunks``: the chunker itself, with the map-stage budget that ``context_window=8192``
  and the default prompts leave (what a default run uses);
* ``beside_busy_loop_*``: the chunker in a worker thread (as the chunk node runs it) while the main
  thread runs Python for a share of each millisecond (an event loop that busy), counting in that thread
  or in the count worker process (``longgraph/count_worker.py``). Each tokenizer call lets go of the GIL
  and must take it back, which beside a busy thread waits for its switch interval; a run that does not
  finish within ``--busy-limit`` seconds is reported as the chunks it reached.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable, Sequence

from longgraph import count_worker
from longgraph.evals.bench import (
    DEFAULT_MAX_LOAD,
    DEFAULT_MAX_WAIT_S,
    add_quiet_options,
    load_average,
    run_and_print,
    spread,
    wait_for_quiet,
)
from longgraph.nodes.budget import text_budget
from longgraph.nodes.chunking import _PARAGRAPH_BREAK, _spans, iter_chunks, split_into_chunks
from longgraph.prompts import prompts_for
from longgraph.state.context import Context
from longgraph.state.contract import DocumentIn
from longgraph.state.outputs import SCHEMAS
from longgraph.tokenizer import Tokenizer, get_tokenizer

DEFAULT_TOKENS = 1_280_000
CONTEXT_WINDOW = 8192
TARGET_S = 1.0


def default_budget(question: str, tokenizer: Tokenizer, context_window: int = CONTEXT_WINDOW) -> int:
    """The chunk budget a default run with ``context_window`` uses for the map stage."""
    context = Context(context_window=context_window, base_url="http://unused.invalid/v1", model="unused")
    prompts = prompts_for("mapreduce", context.prompt_variant)
    return text_budget(
        prompts,
        "map",
        context=context,
        question=question,
        schema=SCHEMAS[prompts.stage("map").schema],
        tokenizer=tokenizer,
    )


def _timed(fn: Callable[[], object], repeats: int) -> list[float]:
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def run_benchmark(
    *,
    tokens: int,
    repeats: int,
    max_load: float = DEFAULT_MAX_LOAD,
    max_wait_s: float = DEFAULT_MAX_WAIT_S,
    busy_limit_s: float = 0.0,
) -> dict[str, object]:
    """Everything the module prints, as an ordered mapping of figure name to formatted value."""
    from longgraph.evals.data.needle import build_needle

    instance = build_needle(target_tokens=tokens, n=1, seed=0)[0]
    documents = [DocumentIn(title=d["title"], text=d["text"]) for d in instance.documents]
    text = documents[0].text
    tokenizer = get_tokenizer(None)
    budget = default_budget(instance.question, tokenizer)
    paragraphs = [text[s:e] for s, e in _spans(text, 0, len(text), _PARAGRAPH_BREAK)]
    figures: dict[str, object] = {
        "input_tokens": instance.actual_tokens,
        "input_chars": len(text),
        "paragraphs": len(paragraphs),
        "budget_tokens": budget,
    }
    figures.update(wait_for_quiet(max_load, max_wait_s))
    chunks = split_into_chunks(documents, budget, tokenizer)  # warm-up (and the chunk count)
    # Interleave the three measurements so a neighbour's burst of load hits all of them alike.
    whole: list[float] = []
    batch: list[float] = []
    chunking: list[float] = []
    for _ in range(repeats):
        whole += _timed(lambda: tokenizer.count(text), 1)
        batch += _timed(lambda: tokenizer.count_batch(paragraphs), 1)
        chunking += _timed(lambda: split_into_chunks(documents, budget, tokenizer), 1)
    n = instance.actual_tokens
    figures.update(
        {
            "chunks": len(chunks),
            "chunk_tokens_max": max(c.tokens for c in chunks),
            "split_into_chunks": spread(chunking).format(),
            "split_into_chunks_target": f"< {TARGET_S} s",
            "chunker_tokens_per_s": _rate(n, chunking),
            "tokenizer_whole_text": spread(whole).format(),
            "tokenizer_whole_text_tokens_per_s": _rate(n, whole),
            "tokenizer_count_batch_paragraphs": spread(batch).format(),
            "tokenizer_count_batch_tokens_per_s": _rate(n, batch),
            "chunker_over_count_batch": f"{spread(chunking).median / spread(batch).median:.2f}x",
        }
    )
    if busy_limit_s > 0:
        figures.update(_beside_busy_loops(documents, budget, tokenizer, busy_limit_s))
    figures["load_average_after"] = load_average()
    return figures


def chunk_beside_busy_loop(
    documents: Sequence[DocumentIn], budget: int, tokenizer: Tokenizer, *, busy: float, limit_s: float
) -> str:
    """Wall time of chunking in a thread while this thread is busy ``busy`` of every millisecond."""
    reached: list[int] = []
    done: list[float] = []
    started = time.perf_counter()

    def chunk() -> None:
        for _ in iter_chunks(documents, budget, tokenizer):
            reached.append(1)
            if time.perf_counter() - started > limit_s:
                return
        done.append(time.perf_counter() - started)

    thread = threading.Thread(target=chunk, name="bench-chunker")
    thread.start()
    while thread.is_alive():
        until = time.perf_counter() + 0.001 * busy
        while time.perf_counter() < until:
            pass
        time.sleep(0.001 * (1 - busy))
    thread.join()
    return f"{done[0]:.2f}s" if done else f"> {limit_s:.0f}s ({len(reached)} chunks by then)"


def _beside_busy_loops(
    documents: Sequence[DocumentIn], budget: int, tokenizer: Tokenizer, limit_s: float
) -> dict[str, str]:
    figures: dict[str, str] = {}
    for busy in (0.5, 1.0):
        count_worker._BROKEN.add(tokenizer.name)  # the chunker's thread counts
        figures[f"beside_busy_loop_{busy:.0%}_in_thread"] = chunk_beside_busy_loop(
            documents, budget, tokenizer, busy=busy, limit_s=limit_s
        )
        count_worker._BROKEN.discard(tokenizer.name)
        elsewhere = count_worker.CountedElsewhere(tokenizer)
        elsewhere.wait_until_ready(timeout_s=60)
        figures[f"beside_busy_loop_{busy:.0%}_count_worker"] = chunk_beside_busy_loop(
            documents, budget, elsewhere, busy=busy, limit_s=limit_s
        )
    return figures


def _rate(tokens: int, seconds: Sequence[float]) -> str:
    return f"{tokens / spread(seconds).median / 1e6:.2f}M"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m longgraph.evals.bench.chunker", description=__doc__)
    parser.add_argument("--tokens", type=int, default=DEFAULT_TOKENS, help="input size in cl100k tokens")
    add_quiet_options(parser)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each measurement")
    parser.add_argument(
        "--busy-limit",
        dest="busy_limit_s",
        type=float,
        default=30.0,
        help="seconds each chunking beside a busy loop may take (0: skip those figures)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    """Run the benchmark, print its figures and return them."""
    return run_and_print("chunker on the needle document", run_benchmark, **vars(_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
