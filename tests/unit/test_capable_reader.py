"""The answer layer against a capable reader (``longgraph/testing/capable.py``), through every strategy:
its counts, sums, verdicts, comparisons, lists, chains and paraphrases come back as it gave them, marked
supported and how ("extractive" or "derived"); and against readers that bind a value to the wrong entity
or invent one for an absent entity, the result is the right entity's note or NO INFORMATION, never the
wrong value marked supported.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from longgraph.state.contract import Evidence, GraphOutput
from longgraph.state.notes import Note
from longgraph.state.outputs import NO_INFORMATION, is_no_information
from longgraph.strategies import build_strategy
from longgraph.testing.capable import SETTINGS, STYLES, Scenario, Style, capable_responder
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.tests.conftest import (
    does_not_stand,
    own_answer,
    spread,
    why_not,
)

STRATEGIES = ["mapreduce", "segment-plus", "mapreduce-segment-merge", "tom", "pecan"]

GOALS = (
    "The Harriers scored 4 goals in the final.",
    "The Wolves scored 6 goals in the final.",
    "The Eagles scored 7 goals in the final.",
)
SCENARIOS = [
    Scenario("sum", "How many goals did the Harriers, the Wolves and the Eagles score in total in the final?", GOALS, "17"),
    Scenario("count", "How many teams scored in the final?", GOALS, "3", accepted=("three",)),
    Scenario("yes-no", "Did the Harriers score more goals than the Wolves in the final?", GOALS[:2], "No"),
    Scenario("comparison", "Which team scored the most goals in the final?", GOALS, "The Eagles"),
    Scenario("list", "Which teams scored in the final?", GOALS, "The Harriers, the Wolves and the Eagles"),
    Scenario(
        "two-hop", "In which town was the founder of Acme Works born?",
        ("Acme Works was founded by Pell Darrow.", "Pell Darrow was born in the town of Ostrava."), "Ostrava",
    ),
    Scenario("choice", "Which of the Harriers, the Wolves and the Eagles scored the most goals in the final?", GOALS, "The Eagles"),
    Scenario(
        "paraphrase", "When did the lighthouse begin operating?",
        ("The keeper of the lighthouse first lit its lamp on 3 May 1871.",), "3 May 1871",
    ),
    # Its sentence names Quiganqui and nothing else the question asks: only the verification call confirms it.
    Scenario(
        "named-paraphrase", "How many people live in Quiganqui?",
        ("The town of Quiganqui has a population of 234,394 residents.",), "234,394",
    ),
    Scenario(  # a degree ("the lowest ebb") for a kind ("the neap ebb"): asked in other words
        "degree-paraphrase", "How far below the lowest ebb does the Vartris slipway reach?",
        ("The Vartris slipway reaches 4.6 metres below the neap ebb.",), "4.6",
    ),
]  # fmt: skip


def run(strategy: str, question: str, text: str, responder: Any) -> GraphOutput:
    graph = build_strategy(strategy, FakeProvider(ScriptedChatModel(responder=responder)))
    raw = asyncio.run(graph.ainvoke({"question": question, "document": text}, context=dict(SETTINGS)))
    return GraphOutput.model_validate(raw)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_capable_readers_answer_comes_back(strategy: str, scenario: Scenario, style: Style) -> None:
    """However it words it: the conclusion alone, as a sentence, or followed by the facts it used. It is
    supported, but for a sentence copied from the text: no verification call can confirm a copy (every
    claim of it is stated), so it comes back shown, unconfirmed, with its quote."""
    result = run(strategy, scenario.question, spread(scenario.facts), capable_responder(scenario, style))
    assert scenario.right(result.answer), (result.answer, result.stats.notes)
    if result.verdict == "unconfirmed":
        assert "copied from the text" in result.verdict_reason and result.supported is False
        assert any(" ".join(result.answer.split()).rstrip(".") in e.text for e in result.evidence)
    else:
        assert result.supported is True and result.support in ("extractive", "derived"), result.support
    assert result.evidence and all(e.verified for e in result.evidence[:1])


def test_an_answer_the_words_cannot_confirm_stands_on_the_verification_call_and_only_then() -> None:
    """ "Did the Harriers score more goals than the Wolves?" answered "No": no word of it stands in a
    quote, so the words cannot confirm it. A capable reader's verification call confirms it (one call,
    said in the notes); a model that cannot verify ("off", the embedded model's profile) gets NO
    INFORMATION with the answer as a candidate (it shows nothing found in the text); a verifier that
    says no, the same."""
    scenario = next(s for s in SCENARIOS if s.name == "yes-no")
    text = spread(scenario.facts)
    model = ScriptedChatModel(responder=capable_responder(scenario))
    graph = build_strategy("mapreduce", FakeProvider(model))
    raw = asyncio.run(
        graph.ainvoke({"question": scenario.question, "document": text}, context=dict(SETTINGS))
    )
    result = GraphOutput.model_validate(raw)
    assert scenario.right(result.answer) and result.supported, result
    checks = [c for c in model.calls if "Proposed answer:" in str(c["messages"][-1]["content"])]
    assert len(checks) == 1 and result.stats.calls_by_stage.get("verify") == 1, result.stats.calls_by_stage
    assert any("stated" in n for n in result.stats.notes), result.stats.notes

    graph = build_strategy(
        "mapreduce", FakeProvider(ScriptedChatModel(responder=capable_responder(scenario)))
    )
    off = {**SETTINGS, "verify_answers": "off"}
    silent = GraphOutput.model_validate(
        asyncio.run(graph.ainvoke({"question": scenario.question, "document": text}, context=off))
    )
    assert does_not_stand(silent), silent.answer
    assert "nothing verifies it here" in why_not(silent), why_not(silent)
    assert own_answer(silent) == result.answer, silent

    doubting = Scenario("doubt", scenario.question, scenario.facts, "some other figure")
    reader = capable_responder(scenario)
    verifier = capable_responder(doubting)

    def respond(messages: Any, extras: Any) -> str:
        schema = (extras.get("response_format") or {}).get("json_schema", {}).get("name")
        return (verifier if schema == "AnswerCheck" else reader)(messages, extras)

    refused = run("mapreduce", scenario.question, text, respond)
    assert does_not_stand(refused) and "' not stated" in why_not(refused), refused


def test_a_reduce_that_wanders_is_withheld_and_never_replaced_by_a_note() -> None:
    """The reduce answers in words of its own that nothing confirms ("Nobody counts them"); the one note
    that held the answer is not put in its place: the result is NO INFORMATION with the reduce's answer
    as the first candidate (why it was withheld) and the note's answer after it."""
    scenario = next(s for s in SCENARIOS if s.name == "named-paraphrase")
    text = spread(scenario.facts)
    reader = capable_responder(scenario)
    wanders = capable_responder(Scenario("wander", scenario.question, scenario.facts, "Nobody counts them"))

    def respond(messages: Any, extras: Any) -> str:
        schema = (extras.get("response_format") or {}).get("json_schema", {}).get("name")
        return (wanders if schema in ("ReduceOutput", "DirectAnswer") else reader)(messages, extras)

    result = run("mapreduce", scenario.question, text, respond)
    assert does_not_stand(result), (result.answer, result.rationale)
    assert result.stats.calls_by_stage.get("verify") == 1, result.stats.calls_by_stage
    assert own_answer(result) == "Nobody counts them", result
    assert any(scenario.right(c.answer) for c in result.candidates if c.chunk_id is not None), (
        result.candidates
    )


def test_a_computed_total_is_marked_derived_and_cites_every_note_it_adds() -> None:
    sum_scenario = SCENARIOS[0]
    result = run("mapreduce", sum_scenario.question, spread(GOALS), capable_responder(sum_scenario))
    assert result.answer == "17" and result.support == "derived"
    cited = " ".join(e.text for e in result.evidence)
    assert all(fact.split(" scored")[0] in cited for fact in GOALS)
    assert any("the answer was verified" in n for n in result.stats.notes), result.stats.notes


def confused(answer: str, truth: str | None = None) -> Any:
    """A reader that reads each chunk as the oracle does, then concludes ``answer`` whatever it read;
    asked to verify, it says yes only to an answer stating ``truth`` (its conclusion was a slip, its
    verification honest; None: it confirms nothing)."""
    from longgraph.testing.answers import build_completion_content

    def respond(messages: Any, extras: Any) -> str:
        name = (extras.get("response_format") or {}).get("json_schema", {}).get("name")
        body = {"messages": messages, **extras}
        if name in ("DirectAnswer", "ReduceOutput"):
            return build_completion_content(body, said=(answer, answer))[0]
        if name == "AnswerCheck":
            proposed = str(messages[-1]["content"]).split("Proposed answer:", 1)[-1].split("\n", 1)[0]
            right = truth is not None and truth in proposed
            return build_completion_content(
                body, said=("yes", "stated") if right else (NO_INFORMATION, None)
            )[0]
        return oracle_responder(messages, extras)

    return respond


@pytest.mark.parametrize("strategy", ["mapreduce", "segment-plus"])
def test_a_value_bound_to_the_wrong_entity_is_not_the_answer(strategy: str) -> None:
    """Asked for the Wolves' goals, the reader answers with the Harriers' (a sentence of the text, so the
    words pass): the answer is the Wolves' value, or does not stand (NO INFORMATION, or the reader's own
    answer flagged unconfirmed): the Harriers' value is never marked supported."""
    question = "How many goals did the Wolves score in the final?"
    result = run(strategy, question, spread(GOALS[:2]), confused(GOALS[0], truth="6"))
    if "Harriers" in result.answer or "4 goals" in result.answer:
        assert does_not_stand(result) and own_answer(result) == GOALS[0], result
    else:
        assert "6" in result.answer or is_no_information(result.answer)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_absent_entity_gets_no_information(strategy: str) -> None:
    """The Falcons are in no sentence; the look-alikes are. A reader that binds a look-alike's value to
    the Falcons, and one that copies the look-alikes' sentences, both end in NO INFORMATION with
    candidates."""
    question = "How many goals did the Falcons score in the final?"
    for responder in (
        confused("The Falcons scored 6 goals in the final."),
        capable_responder(Scenario("absent", question, GOALS, NO_INFORMATION)),
    ):
        result = run(strategy, question, spread(GOALS), responder)
        assert does_not_stand(result), (result.answer, result.stats.notes)
        assert result.supported is False and result.support == "none"


def test_a_number_from_nowhere_is_not_derived() -> None:
    """A total the notes cannot give (4 + 6 + 7 is not 19) is refused, not passed off as reasoning."""
    wrong = Scenario("sum", SCENARIOS[0].question, GOALS, "19")
    result = run("mapreduce", wrong.question, spread(GOALS), capable_responder(wrong))
    assert result.answer != "19" and result.support != "derived"


RESERVOIRS = ("The scarlet reservoir is 62.3 percent full.", "The cobalt reservoir is 86.6 percent full.")
HORSES = ("The Abbess of Varnholm owns 593 horses.", "The Harbourmaster of Varnholm owns 292 horses.")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    ("question", "facts", "bound_wrongly"),
    [
        ("How full is the saffron reservoir?", RESERVOIRS, "The saffron reservoir is 62.3 percent full."),
        ("How many horses does the Provost of Varnholm own?", HORSES, "The Provost of Varnholm owns 593 horses."),
    ],
    ids=["adjective", "title"],
)  # fmt: skip
def test_an_absent_entity_named_by_an_adjective_or_a_title_gets_no_information(
    strategy: str, question: str, facts: tuple[str, ...], bound_wrongly: str
) -> None:
    """The look-alikes share the noun ("reservoir") or the place ("Varnholm") with the asked entity, not
    the word that names it ("saffron", "Provost"): neither a reader that binds a look-alike's value to
    the asked entity nor one that copies a look-alike's sentence gets a supported answer."""
    for responder in (
        confused(bound_wrongly),
        confused(facts[0]),
        capable_responder(Scenario("absent", question, facts, NO_INFORMATION)),
    ):
        result = run(strategy, question, spread(facts), responder)
        assert does_not_stand(result), (result.answer, result.stats.notes)
        assert result.supported is False and result.support == "none"


def _quote(text: str, start: int = 0) -> Note:
    evidence = Evidence(
        chunk_id=0, doc_index=0, title="", start=start, end=start + len(text), text=text, verified=True
    )
    return Note(sources=[0], quotes=[evidence])


VAULTS = tuple(
    f"The access code for the {name} vault is {code}."
    for name, code in (("Tristal", "QW-5361-F"), ("Talganqui", "KJ-7938-F"), ("Sarsar", "ZV-7401-F"), ("Vinul", "QJ-6103-H"))
)  # fmt: skip


FAMILIES = [
    "The favourite dish of the Dordorpev family is barley soup with smoked eel.",
    "The favourite dish of the Nevmislen family is roasted chestnuts with honey.",
    "The favourite dish of the Talthimnev family is pickled quince on rye.",
    "The favourite dish of the Ullen family is plum dumplings with poppy seed.",
]


ABBEYS_BUILT = [
    "The Thimmar abbey was built in 1215.",
    "The Taldornev abbey was built in 1165.",
    "The Vartristhim abbey was built in 1711.",
]


FILL_LEVELS = [
    f"The {colour} reservoir is {full} percent full."
    for colour, full in (
        ("amber", "93.2"),
        ("saffron", "44.6"),
        ("teal", "26.4"),
        ("scarlet", "43.6"),
        ("silver", "52.8"),
        ("violet", "16.4"),
    )
]


CREWS = [
    "The Brenathath fishermen land their catch at Varcor.",
    "The Nevcorpev fishermen land their catch at Sarmisbren.",
    "The Ulsar fishermen land their catch at Trismartris.",
    "The Lenmarul fishermen land their catch at Sartrismar.",
    "The Zenwexcor fishermen land their catch at Zenqui.",
]


ABBEYS = (
    "The Lovar abbey was built in the year 1430.",
    "The Ganthimwex abbey was built in the year 1512.",
    "The Trisathzen abbey was built in the year 1388.",
)
OIL = "In the year 1973 Saudi Arabia cut its oil output."


REGIMENTS = (
    "The saffron regiment is commanded by Ysolde Zensarlo.",
    "The silver regiment is commanded by Casimir Osktris.",
)
ORCHARDS = ("The Relsar orchard has 24,328 apple trees.", "The Halwexmis orchard has 37,849 apple trees.")


def test_a_reader_that_adds_a_rivals_value_is_judged_whole_never_cut() -> None:
    """Each chunk's note copies its regiment sentence (both pass grounding: they bear on the question);
    the reduce binds both values in one sentence. The words cannot confirm the whole (it also speaks of
    a rival), so the verification call decides on the whole answer: kept whole on a yes, withheld on a
    no, never cut to the part the words confirm."""
    question = "Who commands the saffron regiment?"
    both = "The saffron regiment is commanded by Ysolde Zensarlo, while the silver regiment is commanded by Casimir Osktris."

    def respond(messages: Any, extras: Any) -> str:
        name = (extras.get("response_format") or {}).get("json_schema", {}).get("name")
        user = str(messages[-1]["content"])
        if name == "ChunkAnswer" and "The text begins" in user:
            said = next((f for f in REGIMENTS if f in user), NO_INFORMATION)
            return json.dumps({"answer": said})
        return confused(both, truth=truth)(messages, extras)

    truth: str | None = "Ysolde Zensarlo"
    result = run("mapreduce", question, spread(REGIMENTS), respond)
    assert result.answer == both and result.supported, (result.answer, result.stats.notes)
    assert any("the answer was verified" in n for n in result.stats.notes), result.stats.notes
    truth = None
    result = run("mapreduce", question, spread(REGIMENTS), respond)
    assert does_not_stand(result) and own_answer(result) == both, result


TOWNS = (
    "The town of Lolotris has a population of 845,878 residents.",
    "The town of Athgan has a population of 199,055 residents.",
)


FOUNDATIONS = (
    "The Lolotris foundation received a grant of $245,000.",
    "The Ganvin foundation received a grant of $1,200,500.",
    "The Athgan foundation received a grant of $98,000.",
)


GATE_FILLER = [f"The market of the valley number {i} sold grain and wool to the traders." for i in range(12)]
GATE = "The warden of the Ostrel toll gate is Mira Tolvane."
HORSE = "Mira Tolvane rides a grey horse called Dunmore."


GRANTS = [
    "The Lolotris foundation received a grant of $120,000.",
    "The Varbrenath foundation received a grant of $85,500.",
    "The Athgan foundation received a grant of $40,250.",
]


CARGO = [
    "The ochre ship carries 3,400 crates of tea.",
    "The teal ship carries 2,100 crates of tea.",
]
FLOOD = [
    "The great flood reached Alton in the spring.",
    "The great flood reached Barby a day later.",
    "The great flood reached Corwen last of all.",
]


PEN_NAMES = [
    "The poet from Lovar wrote under the pen name Osktal.",
    "The poet from Ganthimwex wrote under the pen name Relcor.",
    "The poet from Trisathzen wrote under the pen name Vinmis.",
]


LINES = [
    "The teal telegraph line is listed in the registry as TL50.B7.",
    "The silver telegraph line is listed in the registry as TL30.C8.",
    "The ivory telegraph line is listed in the registry as TL12.A4.",
]
