"""Decision (a): a quote counts only where it is a verbatim span of its chunk.

A quote is looked for word by word in the original text of each part of its chunk (words as
:mod:`.words` reads them: case, Unicode width, whitespace and punctuation between words do not
matter; an ellipsis may skip text). Found, it becomes :class:`Evidence` over the whole sentences of
the document it lies in (exact character offsets, the document's own characters as its text), so
what later stages show a reader is the text's sentence, not the model's rendering of it. A quote
that is not in the chunk whole but strings together sentences that are is one piece of evidence per
sentence. Anything else stays visible, flagged ``verified=False``, and never counts.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from longgraph.nodes.checks.words import WORD, sentence_spans, word_form, words_of
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn, Evidence, parse_input

_ELLIPSIS = re.compile(r"\s*(?:\.\s*\.\s*\.|…|\[\s*(?:\.\.\.|…)\s*\])\s*")


@dataclass(frozen=True)
class Indexed:
    """The words of a text joined by single spaces, with where each starts and ends in the text."""

    padded: str
    offsets: list[int]
    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, text: str, base: int = 0) -> Indexed:
        words, offsets, starts, ends, cursor = [], [], [], [], 0
        for match in WORD.finditer(text):
            word = word_form(match.group())
            words.append(word)
            offsets.append(cursor)
            cursor += len(word) + 1
            starts.append(base + match.start())
            ends.append(base + match.end())
        return cls(f" {' '.join(words)} ", offsets, starts, ends)


def find_span(quote: str, words: Indexed) -> tuple[int, int] | None:
    """Where ``quote``'s words (its pieces between ellipses, in order) first stand in ``words``: the
    offsets of its first word's start and last word's end, or None."""
    fragments = [f for f in (words_of(piece) for piece in _ELLIPSIS.split(quote)) if f]
    if not fragments or not words.offsets:
        return None
    cursor, start, end = 0, -1, -1
    for fragment in fragments:
        if cursor >= len(words.offsets):
            return None
        found = words.padded.find(f" {' '.join(fragment)} ", words.offsets[cursor])
        if found < 0:
            return None
        first = bisect.bisect_left(words.offsets, found)
        last = first + len(fragment) - 1
        start = words.starts[first] if start < 0 else start
        end, cursor = words.ends[last], last + 1
    return start, end


def _sentences_around(text: str, base: int, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` widened to the whole sentences of ``text`` (at offset ``base``) it touches."""
    spans = [(a + base, b + base) for a, b in sentence_spans(text)]
    touching = [(a, b) for a, b in spans if a < end and b > start]
    return (min(start, touching[0][0]), max(end, touching[-1][1])) if touching else (start, end)


def locate_quotes(quotes: Iterable[str], chunk: Chunk, documents: Sequence[DocumentIn]) -> list[Evidence]:
    """One :class:`Evidence` per quote (per sentence of a quote found only sentence by sentence): the
    whole sentences of the document that hold it, verified, or the quote as written over its chunk,
    ``verified=False``. Quotes without a word are not evidence and give nothing."""
    parts = [p for p in chunk.parts if p.doc_index < len(documents)]
    indexed = [
        (p, documents[p.doc_index].text, Indexed.of(documents[p.doc_index].text[p.start : p.end], p.start))
        for p in parts
    ]

    def located(quote: str) -> Evidence | None:
        for part, text, words in indexed:
            span = find_span(quote, words)
            if span is not None:
                return _evidence(
                    chunk, part, text, *_sentences_around(text[part.start : part.end], part.start, *span)
                )
        return None

    def unverified(quote: str) -> Evidence:
        return Evidence(
            chunk_id=chunk.id,
            doc_index=chunk.doc_index,
            title=chunk.title,
            start=chunk.start,
            end=chunk.end,
            text=quote,
            verified=False,
        )

    found: list[Evidence] = []
    for quote in (q.strip() for q in quotes):
        if WORD.search(quote) is None:
            continue
        whole = located(quote)
        pieces = [quote[a:b] for a, b in sentence_spans(quote)] if whole is None else []
        if whole is not None or len(pieces) < 2:
            found.append(whole or unverified(quote))
        else:
            found += [located(piece) or unverified(piece) for piece in pieces]
    return dedupe_quotes(found)


def chunk_sentences(chunk: Chunk, documents: Sequence[DocumentIn]) -> Iterator[Evidence]:
    """Every sentence of ``chunk``, in order, as verified evidence over the document's own characters."""
    for part in (p for p in chunk.parts if p.doc_index < len(documents)):
        text = documents[part.doc_index].text
        for start, end in sentence_spans(text, part.start, part.end):
            yield _evidence(chunk, part, text, start, end)


def _evidence(chunk: Chunk, part: ChunkPart, text: str, start: int, end: int) -> Evidence:
    return Evidence(
        chunk_id=chunk.id,
        doc_index=part.doc_index,
        title=part.title,
        start=start,
        end=end,
        text=text[start:end],
        verified=True,
    )


def dedupe_quotes(quotes: Iterable[Evidence]) -> list[Evidence]:
    """``quotes`` in order, each once: a verified one by where it is, an unverified one by its text."""
    kept: dict[tuple[object, ...], Evidence] = {}
    for q in quotes:
        kept.setdefault((q.doc_index, q.start, q.end) if q.verified else (q.chunk_id, q.text), q)
    return list(kept.values())


def documents_of(state: Mapping[str, Any]) -> list[DocumentIn]:
    """The run's input documents (chunk offsets index into their original texts)."""
    raw = {k: state.get(k) for k in ("question", "document", "documents") if state.get(k) is not None}
    return parse_input(raw).as_documents()
