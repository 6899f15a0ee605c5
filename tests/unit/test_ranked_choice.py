"""A choice among the options a question lists: the model's choice stands when the notes rank it first,
and an answer that does not stand is withheld, never replaced by the option the notes rank first."""

from __future__ import annotations

import asyncio

import pytest

from longgraph.nodes.answer_support import Rarity, judge_answer, listed_options
from longgraph.nodes.finalize import settle
from longgraph.state.notes import Note
from longgraph.state.outputs import NO_INFORMATION
from longgraph.tests.conftest import does_not_stand, own_answer, verified_notes

QUESTION = (
    "Which of the millraces Nevvarul, Lental, Haltalbren, Marlen, Ganvinath and Relwexhal has the highest "
    "depth after the thaw?"
)
DEPTHS = {
    "Nevvarul": 2.1,
    "Lental": 8.6,
    "Haltalbren": 5.6,
    "Marlen": 3.8,
    "Ganvinath": 4.4,
    "Relwexhal": 1.9,
}


def _notes(depths: dict[str, float]) -> list[Note]:
    texts = [
        f"The {name} millrace reaches a depth of {depth} feet after the thaw."
        for name, depth in depths.items()
    ]
    return [n.model_copy(update={"answer": n.quotes[0].text}) for n in verified_notes(*texts, spacing=100)]


def _settle(answer: str, notes: list[Note]) -> dict[str, object]:
    rarity = Rarity.of([q.text for n in notes for q in n.quotes], QUESTION)
    return asyncio.run(settle({"question": QUESTION, "answer": answer}, notes, [], rarity)).output


@pytest.mark.parametrize("given", ["Marlen", "The Haltalbren millrace is the deepest."])
def test_an_answer_that_does_not_stand_is_withheld_not_replaced_by_the_option_ranked_first(
    given: str,
) -> None:
    output = _settle(given, _notes(DEPTHS))
    assert does_not_stand(output), output
    assert own_answer(output) == given, output


def test_a_right_choice_stands_as_the_model_gave_it() -> None:
    output = _settle("The Lental millrace", _notes(DEPTHS))
    assert output["answer"] == "The Lental millrace" and output["support"] == "derived", output


def test_no_answer_stays_no_answer_whatever_the_notes_rank() -> None:
    output = _settle(NO_INFORMATION, _notes(DEPTHS))
    assert does_not_stand(output), output


SHIPS = "Which of the ships amber, scarlet, ivory, ochre, saffron and cobalt has the highest number of tea crates?"


def _ship_notes() -> list[Note]:
    cargo = {"amber": 6761, "scarlet": 512, "ivory": 3000, "ochre": 44, "saffron": 1200, "cobalt": 900}
    return verified_notes(
        *(f"The {c} ship carries {n:,} crates of tea." for c, n in cargo.items()), spacing=100
    )


@pytest.mark.parametrize("answer", ["Silk ship carries 6,761 crates of tea.", "6,761"])
def test_an_answer_to_a_choice_that_names_no_option_does_not_stand(answer: str) -> None:
    """Options named by lowercase modifiers are options too: "Silk ship carries 6,761 crates of tea."
    (the amber ship's sentence with another word for its name; SmolLM2-135M on dev) and a bare number
    name none of the ships offered."""
    judged = judge_answer(answer, _ship_notes(), SHIPS)
    assert judged.kind == "none" and "names none of the options" in judged.why, judged
    assert judge_answer("The amber ship carries 6,761 crates of tea.", _ship_notes(), SHIPS).kind != "none"


def test_a_question_that_lists_names_without_offering_a_choice_needs_no_option_named() -> None:
    question = "What is the total population of the towns Lolotris and Athgan?"
    assert listed_options("Which team scored most?") == []
    assert [sorted(o) for o in listed_options(SHIPS)][:2] == [["amber"], ["scarlet"]]
    notes = _ship_notes()
    assert "names none" not in judge_answer("6,761", notes, question).why


def test_options_named_by_modifiers_are_chosen_and_ranked_as_named_ones_are() -> None:
    """ "amber" for the ships question was refused as restating the question (its one word is the
    question's); a choice is worked out, and the notes rank it: the top option stands, another does
    not, and with every ship valued the top one answers for a model whose answer did not stand."""
    notes = _ship_notes()
    assert judge_answer("The amber ship", notes, SHIPS).kind == "derived"
    refused = judge_answer("scarlet", notes, SHIPS)
    assert refused.kind == "none" and "ranks before it" in refused.why, refused


PEOPLE = "Who won more academy awards, Joseph L. Mankiewicz or Tony Kaye?"
PEOPLE_NOTES = (
    "Joseph L. Mankiewicz was an American film director, screenwriter and producer.",
    "Tony Kaye is an English keyboardist and songwriter.",
)


class Reader:
    """A verification call that records what it was asked and says ``verdict``."""

    def __init__(self, verdict: bool) -> None:
        self.verdict, self.asked = verdict, []  # type: list[str]

    async def __call__(self, answer: str, quotes: object) -> object:
        from longgraph.nodes.verify import Checked
        from longgraph.state.usage import Usage

        self.asked.append(answer)
        return Checked(self.verdict, "the reader says so", Usage(llm_calls=1))


def _settle_with(
    question: str, answer: str, notes: list[Note], reader: Reader | None, *, reads: bool = True
) -> dict[str, object]:
    rarity = Rarity.of([q.text for n in notes for q in n.quotes], question)
    verify = reader  # type: ignore[assignment]
    settled = settle({"question": question, "answer": answer}, notes, [], rarity, verify, reads_answers=reads)
    return asyncio.run(settled).output


@pytest.mark.parametrize(
    ("question", "answer", "texts"),
    [
        (PEOPLE, "Tony Kaye", PEOPLE_NOTES),
        (
            "Are Chess and Cartagena both board games?",
            "yes",
            ("Chess is a two-player strategy board game.", "Cartagena is a German-style board game."),
        ),
    ],
    ids=["choice without numbers", "verdict"],
)
def test_a_choice_or_verdict_the_words_cannot_work_out_needs_a_reader(
    question: str, answer: str, texts: tuple[str, ...]
) -> None:
    """Which option (or verdict) the notes favour is reasoning, not wording: without a reading model
    (none, or only the embedder) it is withheld with the model's answer as the first candidate; a reader
    saying yes lets it stand, no withholds it."""
    notes = verified_notes(*texts, spacing=100)
    for output in (
        _settle_with(question, answer, notes, None),
        _settle_with(question, answer, notes, Reader(True), reads=False),
    ):
        assert does_not_stand(output) and own_answer(output) == answer, output
    reader = Reader(True)
    assert _settle_with(question, answer, notes, reader)["answer"] == answer and reader.asked == [answer]
    assert does_not_stand(_settle_with(question, answer, notes, Reader(False)))


def test_a_choice_code_ranks_first_by_the_notes_numbers_stands_without_a_call() -> None:
    reader = Reader(False)
    output = _settle_with(QUESTION, "The Lental millrace", _notes(DEPTHS), reader)
    assert output["answer"] == "The Lental millrace" and output["support"] == "derived" and reader.asked == []
