"""The chunker: paragraphs, sentences, whitespace, hard splits, offsets, rebalancing, documents."""

from __future__ import annotations

import pytest

from longgraph.errors import ConfigurationError
from longgraph.nodes.chunking import chunk_bodies, part_spans, split_into_chunks
from longgraph.nodes.retrieval import pieces_of
from longgraph.nodes.truncate import chunk_offset_to_document
from longgraph.state.contract import Chunk, DocumentIn
from longgraph.tokenizer import get_tokenizer

TOK = get_tokenizer(None)


def _para(i: int, sentences: int = 5) -> str:
    return " ".join(
        f"Paragraph {i} sentence {j} talks about topic {i * 7 + j} in some detail." for j in range(sentences)
    )


def _covered(chunks: list[Chunk], doc_index: int, text: str) -> str:
    return "".join(text[p.start : p.end] for c in chunks for p in c.parts if p.doc_index == doc_index)


def _nonspace(text: str) -> str:
    return "".join(text.split())


def test_whole_paragraphs_fill_chunks_and_respect_budget() -> None:
    text = "\n\n".join(_para(i) for i in range(60))
    chunks = split_into_chunks([DocumentIn(text=text)], 300, TOK)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.tokens <= 300
        assert TOK.count(chunk.text) <= 300 * 1.03
        # a chunk boundary never cuts a paragraph: each chunk starts at a paragraph start
        assert text[chunk.start : chunk.start + 10].startswith("Paragraph")
    assert _nonspace(_covered(chunks, 0, text)) == _nonspace(text)


def test_offsets_point_into_the_original_text() -> None:
    text = "Intro line.\n\n" + "\n\n".join(_para(i) for i in range(20))
    for chunk in split_into_chunks([DocumentIn(text=text)], 200, TOK):
        for part in chunk.parts:
            assert text[part.start : part.end] in chunk.text


@pytest.mark.parametrize(
    "text",
    [
        " ".join(f"Sentence number {i} is here." for i in range(400)),
        "".join(f"这是第{i}个句子。" for i in range(600)),
    ],
    ids=["latin", "cjk"],
)
def test_long_paragraph_splits_at_sentences(text: str) -> None:
    chunks = split_into_chunks([DocumentIn(text=text)], 150, TOK)
    assert len(chunks) > 2
    for chunk in chunks[:-1]:
        assert chunk.text.rstrip()[-1] in ".。", chunk.text[-20:]
        assert chunk.tokens <= 150
    assert _nonspace(_covered(chunks, 0, text)) == _nonspace(text)


def test_sentence_longer_than_budget_splits_at_whitespace() -> None:
    text = " ".join(f"word{i}" for i in range(3000))  # one sentence, no punctuation
    chunks = split_into_chunks([DocumentIn(text=text)], 200, TOK)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.tokens <= 200
        assert not chunk.text.startswith(" ") and " word" in chunk.text
        assert chunk.text.split()[0].startswith("word")  # never cut inside a word
    assert _nonspace(_covered(chunks, 0, text)) == _nonspace(text)


def test_run_without_whitespace_is_hard_split_and_fast() -> None:
    text = "x" * 5_000_000  # a 5M-character line with no punctuation and no spaces
    chunks = split_into_chunks([DocumentIn(text=text)], 4000, TOK)
    assert sum(p.end - p.start for c in chunks for p in c.parts) == len(text)
    assert all(c.tokens <= 4000 for c in chunks)


def test_small_last_chunk_is_rebalanced() -> None:
    text = "\n\n".join(_para(i, sentences=2) for i in range(21))
    budget = TOK.count("\n\n".join(_para(i, sentences=2) for i in range(20))) + 30
    chunks = split_into_chunks([DocumentIn(text=text)], budget, TOK)
    assert len(chunks) == 2
    assert min(c.tokens for c in chunks) >= budget // 3  # not one full chunk and a crumb


def test_documents_keep_titles_and_boundaries_and_small_ones_share_chunks() -> None:
    docs = [DocumentIn(title=f"doc-{i}", text=f"Document {i} says the value is {i * 3}.") for i in range(200)]
    chunks = split_into_chunks(docs, 500, TOK)
    assert len(chunks) < 20
    seen = [p.doc_index for c in chunks for p in c.parts]
    assert seen == list(range(200))  # every document, once, in order
    for chunk in chunks:
        for part in chunk.parts:
            assert f"[Document: doc-{part.doc_index}]" in chunk.text
            assert part.start == 0 and part.end == len(docs[part.doc_index].text)


def test_budget_too_small_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="too small"):
        split_into_chunks([DocumentIn(text="some text")], 4, TOK)


def test_a_chunks_bodies_leave_its_title_labels_out_and_its_pieces_too() -> None:
    """Embedded in short pieces, a chunk's title label glued to its first paragraph diluted it: a fact
    opening a chunk scored below the same fact elsewhere, and PECAN's search never reached it."""
    tokenizer = get_tokenizer(None)
    documents = [
        DocumentIn(title="Ledger", text="The Athathlo company owes 1,438,425 marks."),
        DocumentIn(title="", text="Untitled notes."),
        DocumentIn(title="Essays", text="Companies fail. " * 3),
    ]
    chunk = split_into_chunks(documents, 200, tokenizer)[0]
    assert chunk.text.startswith("[Document: Ledger]\n") and len(chunk.parts) == 3
    assert chunk_bodies(chunk) == [d.text.strip() for d in documents]
    texts, owners = pieces_of([chunk], 16, tokenizer)
    assert texts[0] == "The Athathlo company owes 1,438,425 marks." and set(owners) == {0}
    assert not any("[Document:" in t for t in texts)
    for part, (start, end) in zip(chunk.parts, part_spans(chunk), strict=True):
        assert chunk_offset_to_document(chunk, start) == (part.doc_index, part.title, part.start)
        assert chunk.text[start:end] == documents[part.doc_index].text[part.start : part.end]
    by_hand = Chunk(id=0, parts=[], tokens=2, text="[Document: X]\nhand made")
    assert chunk_bodies(by_hand) == [by_hand.text]
