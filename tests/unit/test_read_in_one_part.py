"""An extractive answer is read in one part of the text; one that joins sentences of several parts was
put together, and goes to the verification call (``answer_support.read_in_one_part``).

Found with the reference reader on real HotpotQA questions (dev): for "Were Jeff Martin and Kyle
Patrick both in The Click Five?", a reader that had not seen every fact copied the two sentences it had
seen, one per chunk, and the copy stood as ``extractive`` and supported; the gold is "no".
"""

from __future__ import annotations

import asyncio

from longgraph.nodes.answer_support import judge_answer
from longgraph.nodes.finalize import settle
from longgraph.tests.conftest import does_not_stand, verified_notes

QUESTION = "Were Jeff Martin and Kyle Patrick both in The Click Five?"
MARTIN = (
    "Jeff Martin is a Canadian guitarist and singer-songwriter best known for fronting the rock "
    "band The Tea Party."
)
PATRICK = "Kyle Patrick Dickherber is an American singer-songwriter, best known as the lead singer of The Click Five."


def test_an_answer_joining_two_parts_sentences_is_left_to_the_verification_call() -> None:
    judged = judge_answer(f"{MARTIN} {PATRICK}", verified_notes(MARTIN, PATRICK), QUESTION)
    assert judged.kind == "extractive" and "joins sentences of 2 parts" in judged.unconfirmed, judged


def test_without_a_verifier_the_joined_copy_is_withheld_not_supported() -> None:
    notes = verified_notes(MARTIN, PATRICK)
    output = asyncio.run(
        settle({"question": QUESTION, "answer": f"{MARTIN} {PATRICK}"}, notes, [], None)
    ).output
    assert does_not_stand(output), output


def test_an_answer_read_in_one_part_is_not_held_to_it() -> None:
    question = "Who is the lead singer of The Click Five?"
    judged = judge_answer("Kyle Patrick Dickherber", verified_notes(MARTIN, PATRICK), question)
    assert judged.kind == "extractive" and "joins sentences" not in judged.unconfirmed, judged
    # Two sentences of one part are one reading of it.
    one = verified_notes(f"{MARTIN} {PATRICK}")
    judged = judge_answer(f"{MARTIN} {PATRICK}", one, QUESTION)
    assert "joins sentences" not in judged.unconfirmed, judged


def test_an_answer_reworded_from_its_sentence_is_left_to_the_verification_call() -> None:
    """SQuAD v2's unanswerable "How far is New Paltz from New York?": the embedded model answered with
    the paragraph's words restitched, and the words alone let it stand as extractive."""
    sentence = (
        "Huguenot immigrants formed three societies; one in the city of New York, another 21 miles north of "
        "New York in a town which they named New Rochelle, and a third further upstate in New Paltz."
    )
    question = "How far is New Paltz from New York?"
    reworded = "New Paltz is 21 miles north of New York in a town named New Rochelle."
    judged = judge_answer(reworded, verified_notes(sentence), question)
    assert judged.kind == "none" or "not written so in any quote" in judged.unconfirmed, judged
    # As the text writes it (case, spacing and the question's own words aside), it is read there.
    judged = judge_answer(
        "21 MILES  north of New York", verified_notes(sentence), "How far north of New York?"
    )
    assert "not written so" not in judged.unconfirmed, judged
