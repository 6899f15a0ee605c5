"""The answer inside a model's wording of it (``nodes/answer_wording.py``): frames and hedges set aside,
explanations cut off, a choice read as the option it names; each reading held to every rule a bare
answer is, so a wrong value stands no more for being worded."""

from __future__ import annotations

import pytest

from longgraph.nodes.answer_wording import (
    answer_readings,
    before_explanation,
    chosen_option,
    judge_wording,
    unframed,
)
from longgraph.nodes.lexical import content_stems, doing_of, question_words, stem
from longgraph.state.contract import Evidence
from longgraph.state.notes import Note

CHOICE_Q = "Which of the Harriers, the Wolves and the Eagles scored the most goals in the final?"
GOALS = (
    "The Harriers scored 4 goals in the final. The Wolves scored 6 goals in the final. "
    "The Eagles scored 7 goals in the final."
)
VAULTS = "The Pevcor vault opens to 4412. The Lenmar vault opens to 9031."
VAULT_Q = "To what number does the Pevcor vault open?"


def notes_of(text: str) -> list[Note]:
    quote = Evidence(chunk_id=0, title="", doc_index=0, start=0, end=len(text), text=text, verified=True)
    return [Note(sources=[0], quotes=[quote])]


@pytest.mark.parametrize(
    ("worded", "answer"),
    [
        ("The answer is No.", "No."),
        ("Answer: 17", "17"),
        ("According to the text, the answer is 17.", "17."),
        ("Based on the document, Lental.", "Lental."),
        ("The text says that the vault opens to 4412.", "the vault opens to 4412."),
        ("Probably 4412.", "4412."),
        ("I think it is 4412.", "it is 4412."),
        ("Most likely, Lental.", "Lental."),
        ("4412", "4412"),
        ("The answer is", "The answer is"),  # a frame with nothing after it is all there is
        ("Answers vary by season.", "Answers vary by season."),  # a word, not a frame
        # Markdown emphasis sets the answer off, and is no word of it; a bullet, arithmetic and
        # underscores are not emphasis.
        ("Based on the text, the answer is **234,394**.", "234,394."),
        ("- **Lolotris**\n- **Varbrenath**", "- Lolotris\n- Varbrenath"),
        ("*Lental* (8.6 metres)", "Lental (8.6 metres)"),
        ("The mark is `4NZ517`.", "The mark is 4NZ517."),
        ("* one item", "* one item"),
        ("2*3*4", "2*3*4"),
        ("__init__", "__init__"),
    ],
)
def test_a_frame_or_hedge_is_set_aside(worded: str, answer: str) -> None:
    assert unframed(worded) == answer


@pytest.mark.parametrize(
    ("worded", "answer"),
    [
        ("17. The text says: The Harriers scored 4 goals.", "17"),
        ("Lental (8.6 metres).", "Lental"),
        ("4412 — as the text states.", "4412"),
        ("4412, because the text says so.", "4412"),
        ("No, since the Wolves scored more.", "No"),
        ("The Eagles", "The Eagles"),
    ],
)
def test_an_explanation_after_the_answer_is_cut_off(worded: str, answer: str) -> None:
    assert before_explanation(worded, VAULT_Q) == answer


def test_a_why_questions_answer_is_its_explanation() -> None:
    assert before_explanation("Closed because of the flood.", "Why did the mill close?") == (
        "Closed because of the flood."
    )


def test_a_choice_is_read_as_the_one_option_it_names() -> None:
    assert chosen_option("The Eagles scored 7 goals in the final.", CHOICE_Q) == "The Eagles"
    assert chosen_option("Eagles, with 7 goals.", CHOICE_Q) == "Eagles"
    # Two options named, or a question that offers no choice: no option to read.
    assert chosen_option("The Eagles beat the Wolves.", CHOICE_Q) == ""
    assert chosen_option("The Eagles", "Did the Harriers score more goals than the Eagles?") == ""


def test_the_readings_come_whole_first_each_once() -> None:
    readings = answer_readings("The answer is The Eagles (7 goals).", CHOICE_Q)
    assert readings == ["The answer is The Eagles (7 goals).", "The Eagles (7 goals).", "The Eagles"]


@pytest.mark.parametrize(
    "worded",
    ["The answer is 4412.", "Probably 4412.", "4412. The text says: The Pevcor vault opens to 4412."],
)
def test_a_worded_right_answer_stands_as_its_value(worded: str) -> None:
    answer, judged = judge_wording(worded, notes_of(VAULTS), VAULT_Q)
    assert judged.kind == "extractive", judged.why
    assert answer.rstrip(".") == "4412"


@pytest.mark.parametrize(
    "worded",
    [
        "The answer is 9031.",  # the look-alike's value
        "Probably 9031.",
        "9031. The text says: The Lenmar vault opens to 9031.",
        "The answer is 5120.",  # in no note
    ],
)
def test_a_worded_wrong_answer_stands_no_more_than_a_bare_one(worded: str) -> None:
    _, judged = judge_wording(worded, notes_of(VAULTS), VAULT_Q)
    assert judged.kind == "none"


def test_a_wrong_choice_worded_as_its_fact_does_not_stand() -> None:
    right, judged = judge_wording("The Eagles scored 7 goals in the final.", notes_of(GOALS), CHOICE_Q)
    assert judged.kind != "none" and right == "The Eagles", judged.why
    _, wrong = judge_wording("The Wolves scored 6 goals in the final.", notes_of(GOALS), CHOICE_Q)
    assert wrong.kind == "none"


@pytest.mark.parametrize(
    ("doer", "does"),
    [
        ("composer", "composed"),
        ("founder", "founded"),
        ("governor", "governed"),
        ("preacher", "preached"),
        ("glazier", "glazed"),
    ],
)
def test_a_doer_is_borne_on_by_what_it_does(doer: str, does: str) -> None:
    """A list over the composers of anthems shares no word with "The anthem of Sarsar was composed by
    …" but what the composer does."""
    assert stem(does) in doing_of(stem(doer))
    wanted = question_words(f"For which countries does the text give the {doer}?")
    assert wanted.share(content_stems(f"The anthem of Sarsar was {does} by Ilka Oskmissar.")) > 0


@pytest.mark.parametrize("word", ["tower", "owner", "water", "river", "country"])
def test_a_word_too_short_to_tell_from_a_verb_names_no_doing(word: str) -> None:
    assert doing_of(stem(word)) == frozenset()


def test_an_option_named_with_the_names_that_place_it_is_read_as_that_option() -> None:
    """Session 57's held-out split: "Which of the officials of Wendlecombe Chancellor, …, Provost and
    Archivist has the highest lancers?" answered "The Provost of Wendlecombe leads 58 lancers." was
    silent in every strategy (mended on dev's Harrowby template)."""
    question = (
        "Which of the officials of Harrowby Duke, Abbess, Warden and Bailiff has the highest falconers?"
    )
    kept = (12, 30, 44, 9)
    text = " ".join(
        f"The {title} of Harrowby keeps {n} falconers."
        for title, n in zip(("Duke", "Abbess", "Warden", "Bailiff"), kept, strict=True)
    )
    right, judged = judge_wording("The Warden of Harrowby keeps 44 falconers.", notes_of(text), question)
    assert judged.kind == "derived" and right == "The Warden of Harrowby", judged.why
    _, wrong = judge_wording("The Abbess of Harrowby keeps 30 falconers.", notes_of(text), question)
    assert wrong.kind == "none"
