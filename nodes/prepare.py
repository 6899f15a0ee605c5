"""The chunk stage: validate the input, size the chunks to the window, split the documents."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from longgraph.errors import ConfigurationError, InputError
from longgraph.nodes.chunking import chunks_once
from longgraph.nodes.kit import RunKit
from longgraph.nodes.read import start_reading
from longgraph.nodes.runtime import loop_outlives_node, report_progress
from longgraph.state.contract import Chunk, DocumentIn, GraphInput, parse_input
from longgraph.state.graph_state import RunState

ReadEarly = Literal["never", "always"]
"""Whether the chunk node starts each chunk's reading itself (``nodes/early_calls.py``): "always" when
the next node reads every chunk with the question."""


def refuse_oversized(question: str, documents: Sequence[DocumentIn], limit: int | None) -> None:
    """An :class:`InputError` for an input over ``max_input_chars``, before it is counted or read."""
    if limit is None:
        return
    size = len(question) + sum(len(doc.title) + len(doc.text) for doc in documents)
    if size > limit:
        raise InputError(
            f"the input holds {size:,} characters; at most {limit:,} are read per run (max_input_chars)"
        )


LARGE_INPUT_CHARS = 1_000_000
"""An input this long or longer is prepared in one of the process's slots for large inputs: its
counting and splitting hold a core and the interpreter's lock for seconds, which the process's other
runs share. Shorter inputs never wait for one. (``evals/results/served-isolation/``: the slot shortens
a flood of large inputs and its worst moments for other users; it changes their median little.)"""
LARGE_INPUT_SLOTS_ENV = "LONGGRAPH_LARGE_INPUT_SLOTS"
"""How many large inputs one process prepares at once (the operator's; default 1, 0: no limit)."""
_SLOTS: list[threading.BoundedSemaphore | None] = []
_SLOTS_LOCK = threading.Lock()


def _large_slots() -> threading.BoundedSemaphore | None:
    """The process's slots for large inputs (made on first use, from :data:`LARGE_INPUT_SLOTS_ENV`)."""
    with _SLOTS_LOCK:
        if not _SLOTS:
            raw = os.environ.get(LARGE_INPUT_SLOTS_ENV, "1").strip()
            if not raw.isdigit():
                raise ConfigurationError(
                    f"{LARGE_INPUT_SLOTS_ENV} is a whole number, 0 for no limit (got {raw[:20]!r})"
                )
            _SLOTS.append(threading.BoundedSemaphore(int(raw)) if int(raw) else None)
        return _SLOTS[0]


@contextlib.contextmanager
def _large_input_slot(chars: int, deadline: float | None, timeout: float | None) -> Iterator[None]:
    """A slot for large inputs, for an input of ``chars`` characters (none needed below
    :data:`LARGE_INPUT_CHARS`); an :class:`InputError` when none is free before ``deadline``."""
    slots = _large_slots() if chars >= LARGE_INPUT_CHARS else None
    if slots is None:
        yield
        return
    wait = None if deadline is None else max(0.0, deadline - time.monotonic())
    acquired = slots.acquire() if wait is None else slots.acquire(timeout=wait)
    if not acquired:
        raise InputError(
            f"the input ({chars:,} characters) was not prepared within prepare_timeout_s ({timeout:g} s): "
            "the server was preparing other large inputs all that time; retry later or ask about a shorter text"
        )
    try:
        yield
    finally:
        slots.release()


def _past(deadline: float | None, timeout: float | None, done: int, total: int) -> None:
    """An :class:`InputError` once ``deadline`` has passed, saying how far the chunking got."""
    if deadline is not None and time.monotonic() > deadline:
        raise InputError(
            f"the input was not prepared within prepare_timeout_s ({timeout:g} s): {done:,} of {total:,} "
            "characters chunked; ask about a shorter text, or allow more time where the server lets you"
        )


def chunk_budget(
    graph_input: GraphInput, kit: RunKit, *, prompts: str, stage: str, own_size: int | None = None
) -> tuple[int, list[str]]:
    """The chunk size: ``chunk_size`` when set and it fits, else what the window leaves. ``own_size``: the
    strategy's own block size (ToM's, PECAN's), which a model profile's chunk size does not replace."""
    fits = kit.budget(prompts, stage, graph_input.question)
    requested = kit.context.chunk_size
    if requested is None:
        return fits, []
    if kit.context.profile:
        if own_size is not None and own_size <= requested:
            return min(requested, fits), []
        said = f"chunk_size {requested}: the setting measured for {kit.context.profile} (set chunk_size to choose another)"
        return min(requested, fits), [said]
    if requested > fits:
        return fits, [
            f"chunk_size {requested} does not fit the {kit.window}-token window with the prompt and output: "
            f"used {fits}"
        ]
    return requested, []


def chunk_documents_blocking(
    state: RunState,
    kit: RunKit,
    *,
    prompts: str,
    stage: str,
    size: int | None = None,
    also_fits: tuple[str, ...] = (),
    reserve: int = 0,
    on_chunk: Callable[[Chunk, str], None] | None = None,
) -> RunState:
    """``input_chunks``, ``started_at``, the validated ``question`` and any ``decisions``.

    ``on_chunk(chunk, question)`` is told of each chunk as soon as it is final. With
    ``prepare_timeout_s`` the preparation stops with an :class:`InputError` once that many seconds have
    passed, checked between chunks and while waiting for a large-input slot."""
    started = time.time()
    timeout = kit.context.prepare_timeout_s
    deadline = None if timeout is None else time.monotonic() + timeout
    graph_input = parse_input(
        {k: state.get(k) for k in ("question", "document", "documents") if state.get(k) is not None}
    )
    documents = graph_input.as_documents()  # parse_input refused an input with no text at all
    refuse_oversized(graph_input.question, documents, kit.context.max_input_chars)
    budget, decisions = chunk_budget(graph_input, kit, prompts=prompts, stage=stage, own_size=size)
    for later in also_fits:  # stages that show a chunk's text with the question: refuse now, before any call
        budget = min(budget, kit.budget(prompts, later, graph_input.question) - reserve)
    decisions += [
        f"document {i} ({doc.title or 'untitled'}) has no text: nothing to read"
        for i, doc in enumerate(documents)
        if not doc.text.strip()
    ]
    if size is not None and size < budget:
        budget = size
    chunks: list[Chunk] = []
    total = sum(len(doc.text) for doc in documents)
    done = 0
    with _large_input_slot(total, deadline, timeout):
        for chunk in chunks_once(documents, budget, kit.tokenizer):
            _past(deadline, timeout, done, total)
            chunks.append(chunk)
            done += len(chunk.text)
            if on_chunk is not None:
                on_chunk(chunk, graph_input.question)
    report_progress(
        "chunk", total=len(chunks), advance=len(chunks), message=f"{len(chunks)} chunks of ≤{budget} tokens"
    )
    return {
        "input_chunks": chunks,
        "started_at": started,
        "decisions": decisions,
        "question": graph_input.question,
    }


async def chunk_input(
    state: RunState,
    kit: RunKit,
    *,
    prompts: str = "mapreduce",
    stage: str = "map",
    size: str | None = None,
    also_fits: tuple[str, ...] = (),
    reserve: int = 0,
    read_early: ReadEarly = "never",
) -> RunState:
    """The chunk node: chunks sized for ``stage`` of the ``prompts`` set, or by the ``size`` setting
    (e.g. ``segment_size`` for Segment+) when that is smaller; ``also_fits`` names later stages that
    show a chunk's text with the question and ``reserve`` tokens more, so the chunk fits them too (ToM
    parses without the question, then shows a leaf with its title, keywords and summary).

    Runs in a worker thread: tokenizing millions of tokens would stall a LangGraph server's event
    loop, which ``langgraph dev`` refuses as a blocking call. With ``read_early``, each chunk's
    ``stage`` call leaves as soon as the chunk is final, while later chunks are still being counted;
    the read node then joins it (measured on 1.28M tokens: the first call leaves ~0.4 s earlier).
    """
    limit = int(getattr(kit.context, size)) if size else None
    loop = asyncio.get_running_loop()
    started: list[asyncio.Task[Any]] = []
    stopped = False

    def start(chunk: Chunk, question: str) -> None:  # on the loop
        if not stopped:
            started.append(start_reading(kit, chunk, question, prompts=prompts, stage=stage))

    def on_chunk(chunk: Chunk, question: str) -> None:  # in the worker thread
        loop.call_soon_threadsafe(start, chunk, question)

    reads = read_early != "never" and kit.context.read_while_chunking and loop_outlives_node()
    try:
        chunked = await asyncio.to_thread(
            chunk_documents_blocking,
            state,
            kit,
            prompts=prompts,
            stage=stage,
            size=limit,
            also_fits=also_fits,
            reserve=reserve,
            on_chunk=on_chunk if reads else None,
        )
    except BaseException:
        stopped = True
        kit.early_calls.cancel(started)  # this run's only: a batch's runs share the kit
        raise
    return chunked
