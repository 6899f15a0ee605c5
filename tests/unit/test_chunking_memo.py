"""The chunks of one document are counted once per process (``nodes/chunking.chunks_once``)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from longgraph.nodes import chunking
from longgraph.state.contract import DocumentIn


class CountingTokenizer:
    """One token per word, and how many texts it was asked to count."""

    name = "words"

    def __init__(self) -> None:
        self.counted = 0

    def count(self, text: str) -> int:
        self.counted += 1
        return len(text.split())

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def encode(self, text: str) -> list[int]:
        return list(range(len(text.split())))

    def token_starts(self, text: str) -> list[int]:
        starts, at = [], 0
        for word in text.split():
            at = text.index(word, at)
            starts.append(at)
            at += len(word)
        return starts


@pytest.fixture(autouse=True)
def empty_memo() -> None:
    chunking.forget_chunks()


def document(words: int, title: str = "") -> DocumentIn:
    return DocumentIn(text=" ".join(f"word{i}." for i in range(words)), title=title)


def test_the_same_document_is_counted_once_and_chunked_the_same() -> None:
    tokenizer = CountingTokenizer()
    first = list(chunking.chunks_once([document(400)], 64, tokenizer))
    counted = tokenizer.counted
    again = list(chunking.chunks_once([document(400)], 64, tokenizer))
    assert counted > 0 and tokenizer.counted == counted
    assert again == first == list(chunking.iter_chunks([document(400)], 64, CountingTokenizer()))


@pytest.mark.parametrize(
    ("documents", "budget", "own_tokenizer"),
    [
        ([document(400)], 80, False),  # another budget
        ([document(401)], 64, False),  # another text
        ([document(400, title="T")], 64, False),  # another title
        ([document(400)], 64, True),  # another tokenizer
    ],
    ids=["budget", "text", "title", "tokenizer"],
)
def test_anything_else_is_counted_anew(documents: list[DocumentIn], budget: int, own_tokenizer: bool) -> None:
    tokenizer = CountingTokenizer()
    list(chunking.chunks_once([document(400)], 64, tokenizer))
    before = tokenizer.counted
    other = CountingTokenizer() if own_tokenizer else tokenizer
    chunks = list(chunking.chunks_once(documents, budget, other))
    assert chunks == list(chunking.iter_chunks(documents, budget, CountingTokenizer()))
    assert (other.counted > 0) if own_tokenizer else (tokenizer.counted > before)


def test_a_chunking_stopped_half_way_is_not_kept() -> None:
    tokenizer = CountingTokenizer()
    stream = chunking.chunks_once([document(400)], 64, tokenizer)
    next(stream)
    stream.close()
    assert not chunking._memo


def test_the_memo_keeps_a_few_recent_documents_within_its_size(monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizer = CountingTokenizer()
    for words in range(100, 110):
        list(chunking.chunks_once([document(words)], 64, tokenizer))
    assert len(chunking._memo) == chunking._MEMO_ENTRIES
    monkeypatch.setattr(chunking, "MEMO_CHARS", 100)
    list(chunking.chunks_once([document(200)], 64, tokenizer))
    before = tokenizer.counted
    list(chunking.chunks_once([document(200)], 64, tokenizer))
    assert tokenizer.counted > before  # too large to keep: counted each time
    assert len(chunking._memo) == chunking._MEMO_ENTRIES
