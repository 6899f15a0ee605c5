"""The verdict on the model's own answer: ``supported``, ``unconfirmed`` (shown flagged by default, or
withheld under ``on_unconfirmed`` "withhold") or ``refuted`` (always withheld); never a rewrite. And how
the CLI prints it: an unconfirmed answer marked, with the quote it rests on."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from longgraph.cli.verdict import UNCONFIRMED_MARK, shown_answer, verdict_lines
from longgraph.errors import ConfigurationError
from longgraph.nodes.checks import Checked
from longgraph.nodes.finalize import settle
from longgraph.state.context import Context, UnconfirmedSetting
from longgraph.state.contract import GraphOutput
from longgraph.state.outputs import NO_INFORMATION
from longgraph.tests.conftest import verified_notes

QUESTION = "How many people live in Quiganqui?"
FACT = "The town of Quiganqui has a population of 234,394 residents."


ASKED_IN_ITS_WORDS = "What is the population of the town of Quiganqui?"
PARAPHRASE = "Quiganqui has 234,394 residents."
"""Its words stand in the quote, but not as one stretch of it: the words alone cannot confirm it."""


async def says_stated(answer: str, quotes: Any) -> Checked:
    """A verifier that reads every claim as stated."""
    return Checked("supported", "the verification call reads its claims against the quotes: 'x' stated")


def _settle(
    answer: str, on_unconfirmed: UnconfirmedSetting = "show", question: str = QUESTION, verify: Any = None
) -> dict[str, Any]:
    """Settled with ``verify`` (None: no verifier, what the words alone make of ``answer``)."""
    notes = verified_notes(FACT)
    state = {"question": question, "answer": answer}
    run = settle(state, notes, [], verify, on_unconfirmed=on_unconfirmed)
    return dict(asyncio.run(run).output)


def test_an_answer_the_words_cannot_confirm_is_shown_as_given_flagged_with_its_quote() -> None:
    """A paraphrase of the quote: without a verifier the answer is unconfirmed, and by default the user
    gets it as the model gave it, not NO INFORMATION."""
    output = _settle(PARAPHRASE)
    assert output["answer"] == PARAPHRASE and output["verdict"] == "unconfirmed", output
    assert output["supported"] is False and output["confidence"] is None
    assert "nothing verifies it here" in output["verdict_reason"], output["verdict_reason"]
    assert [e.text for e in output["evidence"]] == [FACT]
    assert not any(c["chunk_id"] is None for c in output["candidates"])  # not listed twice


def test_withhold_answers_no_information_with_the_models_answer_first_among_the_candidates() -> None:
    output = _settle(PARAPHRASE, "withhold")
    assert output["answer"] == NO_INFORMATION and output["verdict"] == "unconfirmed", output
    assert output["candidates"][0]["answer"] == PARAPHRASE and output["candidates"][0]["chunk_id"] is None
    assert output["evidence"] == [] and output["supported"] is False


@pytest.mark.parametrize("setting", ["show", "withhold"])
def test_a_refuted_answer_is_withheld_whatever_the_setting(setting: UnconfirmedSetting) -> None:
    """A number no quote holds and no arithmetic over the quotes gives is refuted, not merely unconfirmed."""
    output = _settle("The town of Quiganqui has a population of 881,002 residents.", setting)
    assert output["answer"] == NO_INFORMATION and output["verdict"] == "refuted", output
    assert output["candidates"][0]["answer"].startswith("The town of Quiganqui has a population of 881,002")
    assert "contradict" in output["verdict_reason"]


def test_words_in_a_quote_ground_an_answer_but_only_the_verification_call_supports_it() -> None:
    """ "234,394" is a stretch of the quote: grounded, shown unconfirmed without a verifier (a look-alike's
    value would be a stretch of its sentence too); supported once the call reads it as stated, as a
    stretch of a quote ("extractive"); a paraphrase the call confirms is "derived"."""
    alone = _settle("234,394")
    assert alone["verdict"] == "unconfirmed" and "does not show that it answers" in alone["verdict_reason"]
    output = _settle("234,394", verify=says_stated)
    assert output["answer"] == "234,394" and output["verdict"] == "supported" and output["supported"] is True
    assert output["verdict_reason"] and output["support"] == "extractive", output
    paraphrase = _settle(PARAPHRASE, verify=says_stated)
    assert paraphrase["verdict"] == "supported" and paraphrase["support"] == "derived", paraphrase


def test_the_setting_takes_show_or_withhold_only() -> None:
    assert Context().on_unconfirmed == "show"
    assert Context(on_unconfirmed="withhold").on_unconfirmed == "withhold"
    with pytest.raises(ConfigurationError, match="on_unconfirmed"):
        Context(on_unconfirmed="hide")  # type: ignore[arg-type]


def test_the_cli_marks_an_unconfirmed_answer_and_says_why_on_stderr() -> None:
    shown = GraphOutput.model_validate({**_settle(PARAPHRASE), "strategy": "mapreduce"})
    printed = shown_answer(shown)
    assert printed.splitlines()[0] == f"{UNCONFIRMED_MARK} {PARAPHRASE}"
    assert FACT in printed.splitlines()[1], printed
    assert verdict_lines(shown) == [f"unconfirmed: {shown.verdict_reason}"]
    withheld = GraphOutput.model_validate(_settle(PARAPHRASE, "withhold"))
    assert shown_answer(withheld) == NO_INFORMATION
    assert verdict_lines(withheld)[0].startswith(f"unconfirmed, withheld: the model answered '{PARAPHRASE}'")
    supported = GraphOutput.model_validate(
        _settle("234,394", question=ASKED_IN_ITS_WORDS, verify=says_stated)
    )
    assert shown_answer(supported) == "234,394" and verdict_lines(supported) == []


def test_an_unconfirmed_answer_in_words_of_its_own_only_is_withheld_not_shown() -> None:
    """Nothing of "I could not find that in the text provided." stands in a quote: it shows nothing the
    model found, so even under "show" it is withheld (NO INFORMATION, listed first among candidates)."""
    apology = "I could not find that in the text provided."
    output = _settle(apology)
    assert output["answer"] == NO_INFORMATION and output["verdict"] == "unconfirmed", output
    assert (
        output["candidates"][0]["answer"] == apology and "none of its own words" in output["verdict_reason"]
    )


def test_an_answer_that_goes_on_with_a_number_no_quote_gives_is_refuted() -> None:
    """The first sentence stands; the answer as given goes on with a number the notes refute (a small
    model's run-on, "... The text concludes with 4208246."): refuted, withheld, never shown."""
    run_on = "The town of Quiganqui has a population of 234,394 residents. The text concludes with 4208246."
    output = _settle(run_on, question=ASKED_IN_ITS_WORDS)
    assert output["answer"] == NO_INFORMATION and output["verdict"] == "refuted", output
    assert "its number(s) 4208246 are in none" in output["verdict_reason"], output
