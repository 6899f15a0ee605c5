"""The grounding stage's fast sentence scans give what their definitions give.

``sentence_spans`` finds sentence ends with a regex that starts on an end character, and
``sentence_bounds`` finds where question words occur instead of analysing every sentence; both were
written for speed (the grounding stage sits between the map round and the reduce call). These tests
compare each with its definition on random text built from the characters that decide the edge cases:
end punctuation before and after the window's start, closing quotes, one-letter abbreviations, blank
lines, CJK, and characters whose casefolding changes length ("ß") or that ``re.IGNORECASE`` treats
as another letter ("ſ", "İ").
"""

from __future__ import annotations

import random
import re

import pytest

from longgraph.nodes.lexical import QuestionWords, question_words, sentence_spans
from longgraph.nodes.passages import _begins_a_word, sentence_bounds

_LOOK_BEHIND_ENDS = re.compile(
    r"(?<=;)[\"'”’)\]]*\s+|(?<=[.!?])(?<![ \t(\[][A-Za-z]\.)[\"'”’)\]]*\s++(?![a-z])"
    r"|(?<=[。！？；])\s*|\n[ \t\r\f\v]*\n\s*"
)
"""The sentence ends by their definition: look-behinds, tried at every position (a period, "!" or "?"
before a lower-case letter ends none)."""


def spans_by_definition(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    stop = len(text) if end is None else end
    pieces, cursor = [], start
    for match in _LOOK_BEHIND_ENDS.finditer(text, start, stop):
        closer = len(match.group()) - len(match.group().lstrip("\"'”’)]"))
        pieces.append((cursor, match.start() + closer))
        cursor = match.end()
    pieces.append((cursor, stop))
    spans = []
    for s, e in pieces:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
    return spans


def bounds_by_definition(text: str, spans: list[tuple[int, int]], wanted: QuestionWords) -> list[float]:
    """Each sentence's share of the question words beginning a word in it, plus one when those hold
    every name the question gives (such a sentence outranks the rest)."""
    bounds = []
    for s, e in spans:
        present = {w for w in wanted if _begins_a_word(text[s:e].casefold(), w)}
        bounds.append(wanted.share(present) + (1.0 if wanted.named and wanted.named <= present else 0.0))
    return bounds


_PIECES = [*"ab v.J.!?;。！？；\n \t\"'”’)](x東", " v. ", "\n \n", ". ", "(A. ", "\r\n\r\n"]
_WORDY = [
    *"CITY happy Years yearly Paul's money ß ſtraße İstanbul question 東京 ",
    "city.",
    "sity",
    "Paul's",
    " paul ",
]


def _random_text(rng: random.Random, pieces: list[str], length: int) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randrange(0, length)))


@pytest.mark.parametrize("seed", range(4))
def test_sentence_spans_match_the_look_behind_definition(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(3000):
        text = _random_text(rng, _PIECES, 40)
        start = rng.randrange(0, len(text) + 1)
        end = rng.randrange(start, len(text) + 1)
        assert sentence_spans(text) == spans_by_definition(text), repr(text)
        assert sentence_spans(text, start, end) == spans_by_definition(text, start, end), (text, start, end)


def test_an_end_just_before_the_window_still_closes_its_first_sentence() -> None:
    text = "It ended;) and then. More"
    start = text.index(";") + 1  # the window opens on the ")" that closes "It ended;"
    assert sentence_spans(text, start) == spans_by_definition(text, start) == [(9, 10), (11, 20), (21, 25)]


@pytest.mark.parametrize(
    "question", ["Which city did Paul visit yearly?", "How happy was the money?", "Straße in İstanbul, 東京?"]
)
def test_sentence_bounds_match_the_sentence_by_sentence_definition(question: str) -> None:
    wanted = question_words(question)
    rng = random.Random(question)
    for _ in range(1500):
        text = _random_text(rng, _PIECES + _WORDY * 3, 60)
        spans = sentence_spans(text)
        assert sentence_bounds(text, spans, wanted) == bounds_by_definition(text, spans, wanted), repr(text)
