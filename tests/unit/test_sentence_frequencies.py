"""How common a question's words are in a document: the fast count is the plain one, on real text.

:func:`sentence_frequencies` finds only the pieces of text holding what every form of a stem holds
(:func:`held_by_every_form`) instead of stemming every word; these tests hold it to the plain count
(every content word of every sentence stemmed) on human-written SQuAD paragraphs and questions, and
hold the stemmer to the promise the search rests on, over every word of those paragraphs.
"""

from __future__ import annotations

import itertools

import pytest

from longgraph.evals.corpora import load_paul_graham_text, load_squad
from longgraph.nodes.lexical import (
    is_content,
    question_words,
    sentence_frequencies,
    sentence_spans,
    stem,
    words_of,
)
from longgraph.nodes.word_forms import held_by_every_form


def plain_count(texts: list[str], wanted: frozenset[str]) -> tuple[dict[str, int], int]:
    """Every content word of every sentence stemmed: what the fast count must equal."""
    counts = dict.fromkeys(wanted, 0)
    sentences = 0
    for text in texts:
        for start, end in sentence_spans(text):
            sentences += 1
            for key in {stem(w) for w in words_of(text[start:end]) if is_content(w)} & counts.keys():
                counts[key] += 1
    return counts, sentences


def test_every_form_of_a_stem_holds_one_of_its_search_strings() -> None:
    vocabulary = {w for p in load_squad() for w in words_of(p.context)}
    vocabulary |= set(words_of(load_paul_graham_text()))
    vocabulary |= {
        "men",
        "teeth",
        "criteria",
        "led",
        "held",
        "fishermen",
        "herbaria",
        "metres",
        "harbours",
        "24,328",
        "running",
    }
    assert len(vocabulary) > 20_000  # a real vocabulary, not a handful
    missed = [
        w
        for w in (words_of(v)[0] for v in vocabulary if words_of(v))
        if is_content(w) and not any(seed in w for seed in held_by_every_form(stem(w)))
    ]
    assert missed == []


def test_the_fast_count_is_the_plain_count_on_squad_paragraphs_and_their_questions() -> None:
    compared = 0
    for _, group in itertools.groupby(load_squad()[:300], key=lambda p: p.article_index):
        paragraphs = list(group)
        texts = [p.context for p in paragraphs]
        for question in (q.question for p in paragraphs for q in p.questions[:1]):
            wanted = frozenset(question_words(question))
            assert sentence_frequencies(texts, wanted) == plain_count(texts, wanted), question
            compared += 1
    assert compared > 250


@pytest.mark.parametrize(
    ("text", "question"),
    [
        (
            "The Straße had 24,328 trees. Its teeth were white. The tooth ached.",
            "How many trees on the Strasse?",
        ),
        (
            "Fishermen met. A fisherman left! The metres and the meter; harbours.",
            "Which fisherman measured the harbour in meters?",
        ),
        ("東京の人口。東京は大きい。Tokyo is big.", "東京の人口は?"),
        (
            "The 1,000 geese flew. A goose stayed. QJ-5738-H was the code.",
            "Where did the goose with code QJ-5738-H go in 1000?",
        ),
        ("", "Anything?"),
    ],
)
def test_the_fast_count_is_the_plain_count_on_hard_words(text: str, question: str) -> None:
    wanted = frozenset(question_words(question))
    texts = [text, text.upper(), f"  {text}\n\n{text}  "]
    assert sentence_frequencies(texts, wanted) == plain_count(texts, wanted)


def test_a_word_in_several_pieces_of_one_sentence_counts_that_sentence_once() -> None:
    counts, sentences = sentence_frequencies(
        ["Tree, trees and treeing. No tree here? A tree."], {stem("tree")}
    )
    assert (counts, sentences) == ({stem("tree"): 3}, 3)
