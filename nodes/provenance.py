"""Where a quoted sentence comes from: locate a model's quote in the original document.

Segment+ asks for Evidence "quoted from the segment"; a small model quotes with different case,
collapsed whitespace, straight instead of curly quotes, a dropped comma, or an elision ("A … B").
So a quote is compared to its segment as a sequence of words (letters and digits; each CJK character
is a word of its own, since CJK text has no spaces): case, whitespace and punctuation are ignored,
the word order must match exactly, and an elided quote matches when its fragments occur in order.
The reported span runs from the first to the last matched word of the original text, plus the
closing punctuation the quote itself ends with.

A quote that cannot be found is kept, flagged ``verified=False``, with the span of its whole
segment: it may be a hallucination, and hiding it would hide that.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from longgraph.nodes.lexical import WORD as _WORD
from longgraph.nodes.lexical import sentence_spans, word_form, words_of
from longgraph.state.contract import Chunk, DocumentIn, Evidence, parse_input

_ELLIPSIS = re.compile(r"\s*(?:\.\s*\.\s*\.|…|\[\s*(?:\.\.\.|…)\s*\])\s*")
_TRAILING_PUNCTUATION = re.compile(r"[^\w\s\"'“”‘’]+")


@dataclass(frozen=True)
class _Words:
    """The words of a text, casefolded and joined by single spaces, with their original offsets."""

    padded: str
    """The words joined by single spaces, with a space before the first and after the last."""
    offsets: list[int]
    """Where each word's leading space is in ``padded`` (= the word's start in the joined words)."""
    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, text: str, base: int = 0) -> _Words:
        words, offsets, starts, ends = [], [], [], []
        cursor = 0
        for match in _WORD.finditer(text):
            word = word_form(match.group())
            words.append(word)
            offsets.append(cursor)
            cursor += len(word) + 1
            starts.append(base + match.start())
            ends.append(base + match.end())
        return cls(padded=f" {' '.join(words)} ", offsets=offsets, starts=starts, ends=ends)


def _find(quote: str, haystack: _Words, text: str, base: int) -> tuple[int, int] | None:
    fragments = [words_of(f) for f in _ELLIPSIS.split(quote)]
    fragments = [f for f in fragments if f]
    if not fragments or not haystack.offsets:
        return None
    cursor, start, end = 0, -1, -1
    for fragment in fragments:
        if cursor >= len(haystack.offsets):
            return None
        found = haystack.padded.find(f" {' '.join(fragment)} ", haystack.offsets[cursor])
        if found < 0:
            return None
        first = bisect.bisect_left(haystack.offsets, found)
        last = first + len(fragment) - 1
        if start < 0:
            start = haystack.starts[first]
        end = haystack.ends[last]
        cursor = last + 1
    # Read from the end (the pattern matched on the reversed text): searched forward, a long run of
    # punctuation inside a quote is tried from each of its characters.
    tail = _TRAILING_PUNCTUATION.match(quote.strip().strip("\"'“”‘’").rstrip()[::-1])
    for char in tail.group()[::-1] if tail else "":
        if end - base < len(text) and text[end - base] == char:
            end += 1
        else:
            break
    return start, end


def has_words(quote: str) -> bool:
    """Whether a quote holds any word at all (blank or punctuation-only quotes are not evidence)."""
    return _WORD.search(quote) is not None


def locate_quotes(quotes: Sequence[str], chunk: Chunk, documents: Sequence[DocumentIn]) -> list[Evidence]:
    """One :class:`Evidence` per quote: its exact span in its document, or the segment's, unverified.

    Each part of the chunk (a span of one document) is searched in the original text, in order; the
    first occurrence wins. A quote that is not in the chunk as written but stitches together sentences
    that are, apart ("The Archivist … owns 134 horses. The Abbess … owns 123 horses.", two paragraphs
    apart), is one piece of evidence per sentence, each verified where it is found: a reader that
    gathers every sentence bearing on the question writes them one after the other. Measured with the
    scripted capable reader over the general suite (``evals/bench/capable_general.py``): a count over
    four planted facts lost the second of two sentences a chunk's reader quoted together, and the
    reduce's right count of 4 no longer followed from the notes.
    """
    parts = [
        (part, documents[part.doc_index].text[part.start : part.end])
        for part in chunk.parts
        if part.doc_index < len(documents)
    ]
    indexed = [(part, text, _Words.of(text, part.start)) for part, text in parts]

    def located(quote: str) -> Evidence | None:
        for part, text, words in indexed:
            span = _find(quote, words, text, part.start)
            if span is not None:
                return Evidence(
                    chunk_id=chunk.id,
                    doc_index=part.doc_index,
                    title=part.title,
                    start=span[0],
                    end=span[1],
                    text=quote,
                    verified=True,
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
    for quote in quotes:
        whole = located(quote)
        if whole is not None:
            found.append(whole)
            continue
        sentences = [quote[a:b] for a, b in sentence_spans(quote)]
        if len(sentences) < 2:
            found.append(unverified(quote))
            continue
        found += [located(sentence) or unverified(sentence) for sentence in sentences]
    return found


def documents_of(state: Mapping[str, Any]) -> list[DocumentIn]:
    """The run's input documents (the chunk offsets index into their original texts)."""
    raw = {k: state.get(k) for k in ("question", "document", "documents") if state.get(k) is not None}
    return parse_input(raw).as_documents()
