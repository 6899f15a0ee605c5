"""A sentence copied from the text is no answer a verification call can confirm
(``nodes/checks/verdict.copied``): every claim of a copy is stated, and its words show only that it is
in the text. A copy is ``unconfirmed``, shown flagged with its quote, and no call is made."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from longgraph.nodes.checks.verdict import copied
from longgraph.nodes.finalize import settle
from longgraph.state.contract import Evidence
from longgraph.tests.conftest import verified_notes

FACT = "Kenan & Kel is an American teen sitcom created by Kim Bass for Nickelodeon."
QUESTION = "Who is the writer for an American teen sitcom created by Kim Bass for Nickelodeon?"


def quotes(*texts: str) -> list[Evidence]:
    return [q for note in verified_notes(*texts) for q in note.quotes]


def test_a_copy_of_the_sentence_that_answers_is_shown_unconfirmed_too() -> None:
    """Even where the copied sentence holds what is asked, its words show only that it is in the text."""
    fact = "The secret code of the archive is 753159."
    notes = verified_notes(fact)
    state = {"question": "What is the secret code of the archive?", "answer": fact}
    output = asyncio.run(settle(state, notes, [], never_called)).output  # type: ignore[arg-type]
    assert output["verdict"] == "unconfirmed" and output["answer"] == fact, output


async def never_called(answer: str, quotes: Sequence[Evidence]) -> Any:
    raise AssertionError("a copied sentence needs no verification call: every claim of it is stated")


def test_a_copy_the_words_do_not_confirm_is_unconfirmed_shown_and_never_sent_to_the_verification_call() -> (
    None
):
    notes = verified_notes("Kenan & Kel\n" + FACT + " It ran for four seasons.")
    state = {"question": QUESTION, "answer": FACT}
    settled = asyncio.run(settle(state, notes, [], never_called))  # type: ignore[arg-type]
    output = settled.output
    assert output["answer"] == FACT and output["verdict"] == "unconfirmed", output
    assert output["supported"] is False and "copied from the text" in output["verdict_reason"], output
    assert [e.text for e in output["evidence"]] == [notes[0].quotes[0].text]


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (FACT, "Kenan & Kel\n" + FACT),  # the title heads its own line
        (FACT.rstrip("."), FACT),  # the full stop left out
        ("  kenan &  KEL is an American teen sitcom created by Kim Bass for Nickelodeon ", FACT),
        (
            f"{FACT} It ran for four seasons.",
            f"{FACT} It ran for four seasons. Its theme was sung by Coolio.",
        ),
        (
            "Dziga Vertov (born David Kaufman; 2 January 1896) was a Soviet director.",
            "Dziga Vertov (born David Kaufman; 2 January 1896) was a Soviet director. He wrote theory.",
        ),
    ],
    ids=["title-line", "no-full-stop", "case-and-spaces", "two-sentences", "semicolon-inside"],
)
def test_whole_sentences_of_the_quotes_are_a_copy(answer: str, text: str) -> None:
    assert copied(answer, quotes(text))


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ("Kenan & Kel", "Kenan & Kel\n" + FACT),  # a title is no sentence
        ("Larry Alphonso Johnson Jr.", "Larry Alphonso Johnson Jr. (born November 19, 1979) is a player."),
        ("Kim Bass", FACT),  # a part of a sentence: the answer in the text's words
        (f"{FACT} Its writer is Kim Bass.", FACT),  # a sentence of the model's own beside the copy
        ("American teen sitcom created by Kim Bass for Nickelodeon.", FACT),  # a sentence's tail
    ],
    ids=["title", "abbreviation", "span", "own-sentence", "tail"],
)
def test_anything_else_is_not(answer: str, text: str) -> None:
    assert copied(answer, quotes(text)) == []


def test_an_unverified_quote_is_not_the_text() -> None:
    unverified = [q.model_copy(update={"verified": False}) for q in quotes(FACT)]
    assert copied(FACT, unverified) == []
