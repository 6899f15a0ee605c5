"""Token counts from a process of its own, so that a busy event loop cannot starve the chunker.

Why: tiktoken lets go of the GIL for every text it encodes and must take it back afterwards. Beside a
thread that keeps the GIL busy (the event loop taking a map round's answers, the grounding of earlier
chunks, other runs on a server), each taking back waits for that thread's switch interval. Measured
with ``evals/bench/chunker.py --beside-busy-loop``: chunking 1.28M tokens (20,016 encode calls) took
0.7 s alone and 102 s beside a thread running Python. A worker process counts a whole batch of texts
per round trip, so the chunker waits on a pipe once per batch, without the GIL, and the counting runs
on another core.

Contract:

* the counts are the tokenizer's own: the worker loads the same tokenizer by name
  (:func:`longgraph.tokenizer.get_tokenizer`) and calls the same ``count_batch``;
* only cl100k_base goes to the worker: a model's own ``tokenizer.json`` already counts a batch in one
  call that lets go of the GIL once, and any other tokenizer (a test's fake) is not one the worker
  could load;
* nothing waits for the worker to start: until it has loaded its vocabulary (about 0.2 s) batches are
  counted in the calling thread, so the first chunk is as early as without it;
* a worker that cannot start, dies, answers wrongly or takes longer than :data:`REPLY_TIMEOUT_S` is
  stopped and not used again in this process; the batch is counted in the calling thread and the
  reason logged once: a run never fails for the worker;
* the worker is a plain ``python -c`` subprocess reading its own pipe, not ``multiprocessing``, which
  would import the user's ``__main__`` again in the child; it exits when this process closes the pipe
  (at exit, or when it dies).
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, TypeVar

from longgraph.tokenizer import DEFAULT_ENCODING, TiktokenTokenizer, Tokenizer, get_tokenizer

log = logging.getLogger(__name__)

MIN_INPUT_CHARS = 1_000_000
"""Inputs shorter than this are counted in the calling thread: a few hundred encode calls cost less
than starting a process, and the vocabulary load would not be over before the chunking is."""
REPLY_TIMEOUT_S = 30.0
"""A batch is at most ``_MAX_BATCH_CHARS`` of the chunker (64K characters, milliseconds of counting)."""
_READY = b"R"
_HEADER = struct.Struct("<Q")


def _write_frame(stream: IO[bytes], payload: bytes) -> None:
    """One frame, whole: a pipe opened unbuffered may take part of a write."""
    view = memoryview(_HEADER.pack(len(payload)) + payload)
    while view:
        written = stream.write(view)
        view = view[written:]
    stream.flush()


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        piece = stream.read(size - len(data))
        if not piece:
            raise EOFError("the pipe closed")
        data += piece
    return bytes(data)


def serve(name: str) -> None:
    """The worker's loop: load the tokenizer, say so, then answer each batch with its counts until the
    pipe closes. Frames are a little-endian length and a pickle (the pipe is this process's own)."""
    tokenizer = get_tokenizer(name)
    tokenizer.count("ready")
    out, source = sys.stdout.buffer, sys.stdin.buffer
    out.write(_READY)
    out.flush()
    while True:
        try:
            (size,) = _HEADER.unpack(_read_exactly(source, _HEADER.size))
            texts: list[str] = pickle.loads(_read_exactly(source, size))
        except EOFError:
            return
        _write_frame(out, pickle.dumps(tokenizer.count_batch(texts), protocol=pickle.HIGHEST_PROTOCOL))


class _Worker:
    """One worker process and the lock that gives it one batch at a time."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.ready = False
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"from longgraph.count_worker import serve; serve({name!r})"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,  # unbuffered: ``select`` on the pipe then sees every byte not yet read
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

    def is_ready(self) -> bool:
        """Whether the worker has loaded its vocabulary (never blocks)."""
        if not self.ready:
            stdout = self.process.stdout
            assert stdout is not None
            readable, _, _ = select.select([stdout], [], [], 0)
            if readable:
                if stdout.read(1) != _READY:
                    raise RuntimeError("the count worker did not start")
                self.ready = True
        return self.ready

    def send(self, texts: Sequence[str]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        _write_frame(stdin, pickle.dumps(list(texts), protocol=pickle.HIGHEST_PROTOCOL))

    def receive(self, expected: int) -> list[int]:
        """The counts of the oldest batch sent and not yet received (``expected`` texts)."""
        stdout = self.process.stdout
        assert stdout is not None
        readable, _, _ = select.select([stdout], [], [], REPLY_TIMEOUT_S)
        if not readable:
            raise TimeoutError(f"no counts within {REPLY_TIMEOUT_S:.0f} s")
        (size,) = _HEADER.unpack(_read_exactly(stdout, _HEADER.size))
        counts = pickle.loads(_read_exactly(stdout, size))
        if not isinstance(counts, list) or len(counts) != expected:
            raise RuntimeError("the count worker answered another batch")
        return [int(n) for n in counts]

    def count(self, texts: Sequence[str]) -> list[int]:
        self.send(texts)
        return self.receive(len(texts))

    def stop(self) -> None:
        try:
            if self.process.stdin is not None:
                self.process.stdin.close()
            self.process.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()


_WORKERS: dict[str, _Worker] = {}
_BROKEN: set[str] = set()
_STARTING = threading.Lock()


def _worker_for(name: str) -> _Worker | None:
    if name in _BROKEN:
        return None
    with _STARTING:
        worker = _WORKERS.get(name)
        if worker is None:
            try:
                worker = _WORKERS[name] = _Worker(name)
            except OSError as exc:
                _give_up(name, f"could not start: {exc}")
                return None
    return worker


def _give_up(name: str, why: str) -> None:
    log.warning("token count worker for %s stopped (%s): counting in the chunker's thread", name, why)
    _BROKEN.add(name)
    worker = _WORKERS.pop(name, None)
    if worker is not None:
        worker.stop()


@atexit.register
def _stop_all() -> None:
    for worker in list(_WORKERS.values()):
        worker.stop()
    _WORKERS.clear()


_WORKER_FAILURES = (OSError, EOFError, TimeoutError, RuntimeError, pickle.UnpicklingError, struct.error)
_IN_FLIGHT = 2
"""Batches sent and not yet read: one being counted, one queued behind it."""

T = TypeVar("T")


class CountedElsewhere:
    """A :class:`~longgraph.tokenizer.Tokenizer` whose batches are counted by a worker process once it is
    ready (see the module docstring); everything else is the wrapped tokenizer's."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer
        self._worker = _worker_for(tokenizer.name)
        self.batches_elsewhere = 0
        """How many batches the worker counted (for tests and the benchmark)."""

    @property
    def name(self) -> str:
        return self._tokenizer.name

    def wait_until_ready(self, timeout_s: float) -> bool:
        """Block until the worker has loaded its vocabulary (a benchmark's warm start); False when it
        did not within ``timeout_s`` or cannot be used."""
        deadline = time.monotonic() + timeout_s
        while self._worker is not None and self._ready_worker() is None:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return self._worker is not None

    def count(self, text: str) -> int:
        return self._tokenizer.count(text)

    def _ready_worker(self) -> _Worker | None:
        """The worker, when it is usable now (started, vocabulary loaded, not given up)."""
        worker = self._worker
        if worker is None or worker.name in _BROKEN:
            return None
        try:
            return worker if worker.is_ready() else None
        except (OSError, RuntimeError) as exc:
            self._give_up(worker, exc)
            return None

    def _give_up(self, worker: _Worker, exc: BaseException) -> None:
        self._worker = None
        _give_up(worker.name, f"{type(exc).__name__}: {exc}")

    def _let_go(self, held: _Worker, exc: BaseException) -> None:
        """A held worker failed: given up, and its lock released."""
        self._give_up(held, exc)
        held.lock.release()

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """The counts of ``texts``: from the worker when it is ready and free (another thread's
        chunker, or this one's :meth:`count_ahead`, may hold it), else counted here."""
        worker = self._ready_worker()
        if worker is None or not worker.lock.acquire(blocking=False):
            return self._tokenizer.count_batch(texts)
        try:
            counts = worker.count(texts)
        except _WORKER_FAILURES as exc:
            self._give_up(worker, exc)
            return self._tokenizer.count_batch(texts)
        finally:
            worker.lock.release()
        self.batches_elsewhere += 1
        return counts

    def count_ahead(
        self, items: Iterable[T], texts_of: Callable[[T], Sequence[str]]
    ) -> Iterator[tuple[T, list[int]]]:
        """Each item with the counts of its texts, in order, the next batch sent to the worker before
        the previous one's counts are read: the worker counts one batch while the caller prepares the
        next (the chunker's regex and slicing), so the two overlap instead of taking turns.

        Items before the worker is ready are counted here. The worker is held until the items run out
        or the caller stops early (a batch sent and not read is read then, so the pipe stays in step);
        a failure counts the batches in flight here, in order, and the rest too."""
        pending: deque[tuple[T, Sequence[str]]] = deque()
        worker: _Worker | None = None
        try:
            for item in items:
                texts = texts_of(item)
                if worker is None:
                    worker = self._ready_worker()
                    if worker is not None and not worker.lock.acquire(blocking=False):
                        worker = None  # another chunker has it
                if worker is None:
                    yield item, self._tokenizer.count_batch(texts)
                    continue
                try:
                    pending.append((item, texts))  # before sending: a failed send is counted here
                    worker.send(texts)
                    while len(pending) > _IN_FLIGHT:
                        done, done_texts = pending[0]
                        counts = worker.receive(len(done_texts))
                        pending.popleft()
                        self.batches_elsewhere += 1
                        yield done, counts
                except _WORKER_FAILURES as exc:
                    self._let_go(worker, exc)
                    worker = None
                    while pending:
                        done, done_texts = pending.popleft()
                        yield done, self._tokenizer.count_batch(done_texts)
            while pending and worker is not None:
                done, done_texts = pending[0]
                try:
                    counts = worker.receive(len(done_texts))
                except _WORKER_FAILURES as exc:
                    self._let_go(worker, exc)
                    worker = None
                    break
                pending.popleft()
                self.batches_elsewhere += 1
                yield done, counts
            while pending:
                done, done_texts = pending.popleft()
                yield done, self._tokenizer.count_batch(done_texts)
        finally:
            if worker is not None:
                try:
                    for _, done_texts in pending:  # stopped early: read what was sent
                        worker.receive(len(done_texts))
                except _WORKER_FAILURES as exc:
                    self._give_up(worker, exc)
                worker.lock.release()

    def encode(self, text: str) -> list[int]:
        return self._tokenizer.encode(text)

    def token_starts(self, text: str) -> list[int]:
        return self._tokenizer.token_starts(text)


def count_ahead(
    tokenizer: Tokenizer, items: Iterable[T], texts_of: Callable[[T], Sequence[str]]
) -> Iterator[tuple[T, list[int]]]:
    """Each item with the counts of its texts: :meth:`CountedElsewhere.count_ahead` for a worker's
    counter, else one ``count_batch`` per item."""
    if isinstance(tokenizer, CountedElsewhere):
        return tokenizer.count_ahead(items, texts_of)
    return ((item, tokenizer.count_batch(texts_of(item))) for item in items)


def counter_for(tokenizer: Tokenizer, input_chars: int) -> Tokenizer:
    """The tokenizer the chunker should count with: ``tokenizer`` itself, or for a long input counted
    with cl100k_base, the same counts from a worker process (:class:`CountedElsewhere`)."""
    if input_chars < MIN_INPUT_CHARS or not isinstance(tokenizer, TiktokenTokenizer):
        return tokenizer
    if tokenizer.name != DEFAULT_ENCODING:
        return tokenizer
    return CountedElsewhere(tokenizer)
