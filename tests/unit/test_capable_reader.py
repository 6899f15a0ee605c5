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

from longgraph.nodes.answer_support import (
    Rarity,
    asked_kind,
    entity_heads,
    entity_phrases,
    items_asked_for,
    judge_answer,
    name_phrases,
    other_thing_of_that_name,
    rival_modifier,
    sentences_of,
    wrong_kind_of_answer,
)
from longgraph.nodes.chain import link_to_follow
from longgraph.nodes.derivation import numbers_in
from longgraph.nodes.finalize import copied_sentences, settle
from longgraph.nodes.lexical import question_words, stem
from longgraph.nodes.verify import Checked, confirm_by_meaning
from longgraph.nodes.word_forms import is_superlative, with_word_families
from longgraph.state.contract import Evidence, GraphOutput
from longgraph.state.notes import Note
from longgraph.state.outputs import NO_INFORMATION, is_no_information
from longgraph.strategies import build_strategy
from longgraph.testing.capable import SETTINGS, STYLES, Scenario, Style, capable_responder
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.tests.conftest import (
    VERB_THE_SENTENCE_LACKS,
    does_not_stand,
    own_answer,
    spread,
    verified_notes,
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
    supported, but for a sentence copied from the text that the words do not confirm: no verification
    call can (every claim of a copy is stated), so it comes back shown, unconfirmed, with its quote."""
    result = run(strategy, scenario.question, spread(scenario.facts), capable_responder(scenario, style))
    assert scenario.right(result.answer), (result.answer, result.stats.notes)
    if result.verdict == "unconfirmed":
        assert copied_sentences(result.answer, result.evidence), (result.answer, result.verdict_reason)
        assert "copied from the text" in result.verdict_reason and result.supported is False
    else:
        assert result.supported is True and result.support in ("extractive", "derived"), result.support
    assert result.evidence and all(e.verified for e in result.evidence[:1])


def test_an_answer_the_words_cannot_confirm_stands_on_the_verification_call_and_only_then() -> None:
    """ "How many people live in Quiganqui?" read in "The town of Quiganqui has a population of 234,394":
    the sentence names the town and none of what is asked of it, as a sentence giving another fact about
    Quiganqui would. A capable reader's verification call confirms it (one call, said in the notes); a
    model that cannot verify ("off", the embedded model's profile) gets NO INFORMATION with the answer
    as a candidate; a verifier that says no, the same."""
    scenario = next(s for s in SCENARIOS if s.name == "named-paraphrase")
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
    assert any("234,394' stated" in n for n in result.stats.notes), result.stats.notes

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


def test_a_bridge_whose_next_step_no_note_holds_is_not_confirmed_by_words() -> None:
    """Asked where the architect of the Pevhal library grew up, with only "The Pevhal library was designed
    by Ilka Lenhal" verified (the chain's next sentence never reached a note), the answer "Ilka Lenhal"
    names the library and nothing of what is asked of it: unconfirmed, whatever the rarity."""
    question = "In which port did the architect of the Pevhal library grow up?"
    notes = [_quote("The Pevhal library was designed by Ilka Lenhal.")]
    judged = judge_answer("The Pevhal library was designed by Ilka Lenhal.", notes, question)
    assert judged.kind == "extractive" and "port" in judged.unconfirmed and "grow" in judged.unconfirmed
    chain = [*notes, _quote("Ilka Lenhal grew up in the port of Sarvo.", 200)]
    reached = judge_answer("Sarvo", chain, question)
    assert reached.kind == "extractive" and not reached.unconfirmed, reached


@pytest.mark.parametrize(
    ("question", "heads"),
    [
        ("In which port did the architect of the Pevhal library grow up?", {"architect", "library"}),
        ("What is the population of the town of Quiganqui?", {"town"}),
        ("How many people live in Quiganqui?", set()),
        ("Who painted the portrait of the Duke of Osterlin?", {"portrait"}),
        ("How much does a ticket to the Brel museum cost?", {"museum"}),
        # A clause's verb after the name is no noun of it ("keeps" was, and the embedder compared with
        # "the Warden of Varnholm keeps").
        ("What is the size of the herd the Warden of Varnholm keeps?", set()),
    ],
)
def test_the_nouns_that_name_the_asked_entity_with_its_names(question: str, heads: set[str]) -> None:
    assert entity_heads(question) == heads


def test_a_computed_total_is_marked_derived_and_cites_every_note_it_adds() -> None:
    sum_scenario = SCENARIOS[0]
    result = run("mapreduce", sum_scenario.question, spread(GOALS), capable_responder(sum_scenario))
    assert result.answer == "17" and result.support == "derived"
    cited = " ".join(e.text for e in result.evidence)
    assert all(fact.split(" scored")[0] in cited for fact in GOALS)
    assert any("worked out" in n for n in result.stats.notes)


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


def test_an_answer_that_restates_the_question_through_an_agent_noun_is_not_evidence() -> None:
    """ "The Pevhal mill is owned by the owner of the Pevhal mill" says nothing the question did not
    ("owned" is the verb of its "owner"): not an answer, whatever passage holds its words."""
    from longgraph.nodes.lexical import question_words
    from longgraph.nodes.support import new_words

    wanted = question_words("What is the name of the boat sailed by the owner of the Pevhal mill?")
    assert new_words("The Pevhal mill is owned by the owner of the Pevhal mill.", wanted) == frozenset()
    assert new_words("The Pevhal mill is owned by Casimir Varlen.", wanted) == {"casimir", "varlen"}


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


def test_a_name_binds_a_value_in_its_own_sentence_or_a_chain_not_in_a_neighbouring_sentence() -> None:
    """A passage holding the asked name in one sentence and another city in the next does not make that
    city the asked entity's; a chain through a shared name does."""
    question = "In which city did the leader of the Wexlen choir study music?"
    neighbours = _quote(
        "The Wexlen choir is led by Leocadia Brenvin. They named the town Jacksonville after Andrew Jackson, who studied music."
    )
    judged = judge_answer(
        "The leader of the Wexlen choir studied music in Jacksonville.", [neighbours], question
    )
    assert judged.kind == "none" and "Wexlen" in judged.why, judged
    chain = [
        _quote("The Wexlen choir is led by Leocadia Brenvin."),
        _quote("Leocadia Brenvin studied music in the city of Vartris.", 400),
    ]
    judged = judge_answer("Vartris", chain, question)
    assert judged.kind == "extractive" and len(judged.quotes) == 2, judged


def test_a_sentence_that_shares_no_word_with_the_question_is_not_evidence_for_it() -> None:
    question = "For which abbeys does the text give the year of building?"
    note = _quote(
        "Saudi Arabia and the other Arab oil-producing states joined the embargo on October 20, 1973."
    )
    judged = judge_answer("Saudi Arabia", [note], question)
    assert judged.kind == "none" and "shares a word" in judged.why
    right = _quote("The Lovar abbey was built in 1430.")
    assert judge_answer("Lovar", [note, right], question).kind == "extractive"


VAULTS = tuple(
    f"The access code for the {name} vault is {code}."
    for name, code in (("Tristal", "QW-5361-F"), ("Talganqui", "KJ-7938-F"), ("Sarsar", "ZV-7401-F"), ("Vinul", "QJ-6103-H"))
)  # fmt: skip


def test_a_count_is_of_the_sentences_naming_what_is_counted_not_of_every_sentence_sharing_a_word() -> None:
    """Measured with the scripted capable reader: PECAN's passages for "For how many vaults does the text
    give the access code?" held the four vaults and two essay sentences about program code (one with
    "1960s"); the count of 4 was "in no verified note and follows from none"."""
    question = "For how many vaults does the text give the access code?"
    code = [
        _quote("To the Blub programmer, Lisp code looks weird.", 500),
        _quote("Many companies wrote code in machine language well into the 1960s.", 600),
    ]
    notes = [*(_quote(v, 100 * i) for i, v in enumerate(VAULTS)), *code]
    judged = judge_answer("4", notes, question)
    assert judged.kind == "derived", judged
    assert sorted(q.text for q in judged.quotes) == sorted(VAULTS)
    assert judge_answer("5", notes, question).kind == "none"


FAMILIES = [
    "The favourite dish of the Dordorpev family is barley soup with smoked eel.",
    "The favourite dish of the Nevmislen family is roasted chestnuts with honey.",
    "The favourite dish of the Talthimnev family is pickled quince on rye.",
    "The favourite dish of the Ullen family is plum dumplings with poppy seed.",
]


def test_a_count_is_of_the_items_the_text_says_the_asked_thing_of_not_every_sentence_naming_them() -> None:
    """Session 56's dev split, the scripted capable reader: PECAN's passages for "For how many families
    does the text give the favourite dish?" held the four families' dishes and an essay's "the average
    family size"; the right count of 4 was refused as a count of 5."""
    question = "For how many families does the text give the favourite dish?"
    size = _quote("The average household size was 2.49 and the average family size was 3.09.", 900)
    notes = [*(_quote(f, 100 * i) for i, f in enumerate(FAMILIES)), size]
    judged = judge_answer("4", notes, question)
    assert judged.kind == "derived", judged
    assert sorted(q.text for q in judged.quotes) == sorted(FAMILIES)
    # With no sentence saying what is asked of each, every sentence naming the items is still counted.
    named = [_quote(f"The {n} family lives by the river.", 100 * i) for i, n in enumerate(("Ullen", "Sar"))]
    assert judge_answer("2", named, "For how many families does the text give the home?").kind == "derived"


ABBEYS_BUILT = [
    "The Thimmar abbey was built in 1215.",
    "The Taldornev abbey was built in 1165.",
    "The Vartristhim abbey was built in 1711.",
]


def test_a_count_of_items_rests_on_their_sentences_not_on_a_neighbour_holding_its_digit() -> None:
    """Session 56's dev split, PECAN's passages: each abbey's sentence came with the essay sentence before
    it, one of which says "3–2.7 billion years ago"; the count of 3 rested on that one, tied to the
    question by "year" alone, a word common in the document, and was refused."""
    question = "For how many abbeys does the text give the year of building?"
    oxygen = "Free oxygen began to outgas from the oceans 3–2.7 billion years ago."
    passages = [
        _quote(f"{oxygen} {ABBEYS_BUILT[0]}"),
        *(_quote(a, 500 * i) for i, a in enumerate(ABBEYS_BUILT[1:], 1)),
    ]
    filler = [f"In that year the harvest of the valley number {i} was poor." for i in range(12)]
    rarity = Rarity.of([" ".join([*filler, oxygen, *ABBEYS_BUILT])], question)
    assert "year" in rarity.common(question_words(question))
    judged = judge_answer("3", passages, question, rarity=rarity)
    assert judged.kind == "derived", judged
    assert len(judged.quotes) == 3 and all(any(a in q.text for q in judged.quotes) for a in ABBEYS_BUILT)


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


def test_a_word_common_in_the_document_still_ties_the_sentences_that_hold_most_of_its_sentences() -> None:
    """Session 56's dev split, the scripted capable reader: "reservoir", the list's only tie to "For which
    reservoirs does the text give the fill level?", was in more sentences than the question's other words
    and so counted as common, though every sentence holding it was one the list rested on: the right
    list was refused in every strategy. One sentence of a common word's many is still no evidence on
    that word alone."""
    question = "For which reservoirs does the text give the fill level?"
    filler = ["The mill pond was filled at dawn.", "The level of the lake fell.", "Sea level rose."]
    rarity = Rarity.of([" ".join([*filler, *FILL_LEVELS])], question)
    assert rarity.common(question_words(question)) == {"reservoir"}
    notes = [_quote(r, 100 * i) for i, r in enumerate(FILL_LEVELS)]
    listed = judge_answer("amber, saffron, teal, scarlet, silver and violet", notes, question, rarity=rarity)
    assert listed.kind != "none", listed
    roads = [f"The reservoir road number {i} was closed." for i in range(8)]
    many = Rarity.of([" ".join([*filler, FILL_LEVELS[0], *roads])], question)
    lone = judge_answer("amber", notes[:1], question, rarity=many)
    assert lone.kind == "none" and "common in the document" in lone.why, lone


CREWS = [
    "The Brenathath fishermen land their catch at Varcor.",
    "The Nevcorpev fishermen land their catch at Sarmisbren.",
    "The Ulsar fishermen land their catch at Trismartris.",
    "The Lenmarul fishermen land their catch at Sartrismar.",
    "The Zenwexcor fishermen land their catch at Zenqui.",
]


def test_a_count_whose_items_never_use_its_noun_is_of_the_sentences_saying_the_same_of_each() -> None:
    """Session 52's first test split, the scripted capable reader at 8,192: PECAN's passages for "For how
    many fishing crews does the text give the landing place?" held the five sentences, each with its
    neighbours ("The only place to look was …"); none says "crew", and the count of 5 was refused. The
    five say the same of different names: those are the items. A wrong count still is refused, and two
    sets of equal size leave nothing to count."""
    question = "For how many fishing crews does the text give the landing place?"
    filler = [
        _quote("There was no Internet then. The only place to look was in the chain bookstore.", 900),
        _quote(
            "Some investment firms seem able to grow revenues without growing the number of employees.", 950
        ),
    ]
    notes = [*(_quote(c, 100 * i) for i, c in enumerate(CREWS)), *filler]
    judged = judge_answer("5", notes, question)
    assert judged.kind == "derived", judged
    assert sorted(q.text for q in judged.quotes) == sorted(CREWS)
    assert judge_answer("4", notes, question).kind == "none"
    boats = ["The Ulsar boatmen land their boats at Lenqui.", "The Osk boatmen land their boats at Varth."]
    tied = [_quote(t, 100 * i) for i, t in enumerate([*CREWS[:2], *boats])]
    assert judge_answer("2", tied, question).kind == "none"


def test_a_count_rests_on_the_items_not_on_a_footnote_that_holds_its_number() -> None:
    """Measured with the scripted capable reader: PECAN's count of 3 ferries was grounded on "[3] How many
    times ...", a footnote tied to the question by "time" alone, and refused at the end. A count of the
    sentences naming the items rests on them; a sentence writing the count before the noun is read."""
    question = "For how many ferries does the text give the departure time?"
    ferries = [
        _quote(f"The {name} ferry leaves at {time} each morning.", 100 * i)
        for i, (name, time) in enumerate((("Talmar", "7:40"), ("Trisqui", "5:55"), ("Corvinbren", "8:15")))
    ]
    footnote = _quote("[3] How many times have you read about founders who live cheaply?", 900)
    judged = judge_answer("3", [footnote, *ferries], question)
    assert judged.kind == "derived" and all("ferry" in q.text for q in judged.quotes), judged
    stated = _quote("The harbour runs 3 ferries; the Talmar ferry leaves at 7:40 each morning.", 900)
    assert judge_answer("3", [stated, *ferries], question).kind == "extractive"


def test_a_note_of_several_statements_rests_on_each_statements_sentence() -> None:
    """Measured with the scripted capable reader at an 8B model's window: ToM's note copying three
    orchestras' sentences kept two quotes; "Relvardor. The Lowex" was read as one name across the
    sentence end, which no sentence holds, so Lowex fell out of the tree and the list of four was lost."""
    facts = [
        "The Vartris orchestra was founded in the city of Relvardor.",
        "The Lowex orchestra was founded in the city of Lenmis.",
        "The Quigan orchestra was founded in the city of Mishal.",
    ]
    notes = [_quote(fact, 100 * i) for i, fact in enumerate(facts)]
    question = "For which orchestras does the text give the founding city?"
    judged = judge_answer(" ".join(facts), notes, question, partial=True)
    assert judged.kind == "extractive" and [q.text for q in judged.quotes] == facts, judged


ABBEYS = (
    "The Lovar abbey was built in the year 1430.",
    "The Ganthimwex abbey was built in the year 1512.",
    "The Trisathzen abbey was built in the year 1388.",
)
OIL = "In the year 1973 Saudi Arabia cut its oil output."


def test_a_sentence_tied_to_the_question_only_by_a_word_common_in_the_document_is_not_evidence() -> None:
    """Measured on the test split: "Saudi Arabia" answered the abbeys question from a sentence whose only
    tie to it was "year", a word of 13 of the document's 284 sentences."""
    question = "For which abbeys does the text give the year of building?"
    filler = [f"In that year the harvest of the valley number {i} was poor." for i in range(12)]
    rarity = Rarity.of([" ".join([*filler, *ABBEYS, OIL])], question)
    assert rarity.counts["year"] == 16 and rarity.counts["abbey"] == 3
    one_abbey = [_quote(OIL), _quote(ABBEYS[0], 100)]
    # Without the document, the list rule: a list question answered with no item its notes name.
    unlisted = judge_answer("Saudi Arabia", one_abbey, question)
    assert unlisted.kind == "none" and "leaves out Lovar" in unlisted.why, unlisted
    judged = judge_answer("Saudi Arabia", one_abbey, question, rarity=rarity)
    assert judged.kind == "none" and "'year' (16 of 16 sentences)" in judged.why and "'abbey'" in judged.why
    notes = [_quote(OIL), *(_quote(a, 100 * i) for i, a in enumerate(ABBEYS, start=1))]
    listed = judge_answer("Lovar, Ganthimwex and Trisathzen", notes, question, rarity=rarity)
    assert listed.kind != "none", listed


@pytest.mark.parametrize(
    ("counts", "common"),
    [
        ({"year": 13, "abbey": 3, "build": 4}, {"year"}),  # the rarer half ties; "year" alone does not
        ({"war": 40, "year": 30, "end": 9}, {"war"}),  # every word frequent: the rarer half still ties
        ({"goal": 5, "team": 1, "final": 4}, set()),  # a short text: nothing is in more than a few sentences
        ({"lighthouse": 0, "operat": 0, "begin": 12}, set()),  # the only word the text holds still ties
        ({"grant": 1, "much": 21, "corath": 1, "receiv": 1}, {"much"}),
    ],
)
def test_which_question_words_are_too_common_in_the_document_to_tie(
    counts: dict[str, int], common: set[str]
) -> None:
    assert Rarity(counts, 300).common(counts) == common


REGIMENTS = (
    "The saffron regiment is commanded by Ysolde Zensarlo.",
    "The silver regiment is commanded by Casimir Osktris.",
)
ORCHARDS = ("The Relsar orchard has 24,328 apple trees.", "The Halwexmis orchard has 37,849 apple trees.")


@pytest.mark.parametrize(
    ("question", "facts", "both", "right"),
    [
        ("Who commands the saffron regiment?", REGIMENTS,
         "The saffron regiment is commanded by Ysolde Zensarlo, while the silver regiment is commanded by Casimir Osktris.",
         "Ysolde Zensarlo"),
        ("How many apple trees does the Relsar orchard have?", ORCHARDS,
         "The Relsar orchard has 24,328 apple trees and the Halwexmis orchard has 37,849.", "24,328"),
    ],
    ids=["adjective", "name"],
)  # fmt: skip
def test_an_answer_that_also_states_a_rivals_value_does_not_stand(
    question: str, facts: tuple[str, ...], both: str, right: str
) -> None:
    """Measured with SmolLM2-135M (Segment+): one sentence binding the asked entity's value and a
    look-alike's stood, both being in verified quotes. It names what it took from the rival; the asked
    entity's own sentence still stands, and a question that names both may use both."""
    notes = [_quote(facts[0]), _quote(facts[1], 200)]
    judged = judge_answer(both, notes, question)
    assert judged.kind == "none" and "also states what the text says of" in judged.why, judged
    assert judge_answer(facts[0], notes, question).kind == "extractive"
    assert judge_answer(right, notes, question).kind == "extractive"
    first, second = (f.split(" is ")[0].split(" has ")[0].removeprefix("The ") for f in facts)
    comparing = f"Which has more, the {first} or the {second}?"
    assert judge_answer(both, notes, comparing).kind != "none"


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
    assert any("also states what the text says of the silver regiment" in n for n in result.stats.notes)
    truth = None
    result = run("mapreduce", question, spread(REGIMENTS), respond)
    assert does_not_stand(result) and own_answer(result) == both, result


def test_modifiers_of_the_same_noun_must_agree_but_articles_and_numbers_are_no_rivals() -> None:
    assert rival_modifier("How full is the saffron reservoir?", sentences_of([_quote(RESERVOIRS[0]).quotes[0]])) == (
        "saffron reservoir", "scarlet reservoir",
    )  # fmt: skip
    same = sentences_of([_quote("The teal ship carries 8,770 crates of tea.").quotes[0]])
    assert rival_modifier("What number of tea crates is aboard the teal ship?", same) is None
    plain = sentences_of([_quote("The town of Lolotris has a population of 845,878 residents.").quotes[0]])
    assert rival_modifier("What is the total population of the towns Lolotris and Athgan?", plain) is None


def test_a_degree_names_no_rival_to_a_kind_but_does_to_another_degree() -> None:
    """ "the highest tides" may be what a text calls "the spring tides"; "the lowest tides" are not."""
    kind = sentences_of(
        [_quote("The Halmismis embankment rises 3.8 metres above the spring tides.").quotes[0]]
    )
    assert rival_modifier("How high does the Halmismis bank stand over the highest tides?", kind) is None
    degree = sentences_of(
        [_quote("The Halmismis embankment rises 3.8 metres above the lowest tides.").quotes[0]]
    )
    assert rival_modifier("How high does the Halmismis bank stand over the highest tides?", degree) == (
        "highest tides", "lowest tides",
    )  # fmt: skip
    assert rival_modifier("How high does the Halmismis bank stand over the neap tides?", kind) == (
        "neap tides", "spring tides",
    )  # fmt: skip
    assert [w for w in ("highest", "driest", "innermost", "best", "west", "forest", "harvest", "almost", "feast")
            if is_superlative(w)] == ["highest", "driest", "innermost", "best"]  # fmt: skip


def test_one_named_entity_of_several_binds_a_partial_note_but_a_title_must_be_bound_whole() -> None:
    assert name_phrases("How many horses does the Provost of Varnholm own?") == [
        frozenset({"provost", "varnholm"})
    ]
    assert len(name_phrases(SCENARIOS[0].question)) == 3
    one_team = "The Harriers scored 4 goals in the final."
    partial = judge_answer(one_team, [_quote(GOALS[0])], SCENARIOS[0].question, partial=True)
    assert partial.kind == "extractive"  # on its way up a tree or a collapse
    final = judge_answer(one_team, [_quote(GOALS[0])], SCENARIOS[0].question)
    assert final.kind == "none" and "Wolves" in final.why  # as the answer about all three: not about them
    abbess = judge_answer(
        "593 horses", [_quote(HORSES[0])], "How many horses does the Provost of Varnholm own?"
    )
    assert abbess.kind == "none" and "Provost" in abbess.why


TOWNS = (
    "The town of Lolotris has a population of 845,878 residents.",
    "The town of Athgan has a population of 199,055 residents.",
)


def test_a_total_over_named_entities_is_not_one_of_their_values_copied() -> None:
    """The embedded model answered "the total population of Lolotris and Athgan" with Lolotris's own
    figure, read in its sentence: not about both towns, so not supported; their sum is."""
    question = "What is the total population of the towns Lolotris and Athgan?"
    notes = [_quote(TOWNS[0]), _quote(TOWNS[1], 300)]
    copied = judge_answer(
        "The total population of the towns Lolotris and Athgan is 845,878.", notes, question
    )
    assert copied.kind == "none" and "Athgan" in copied.why
    assert judge_answer("1,044,933", notes, question).kind == "derived"


def test_a_count_question_needs_a_number_and_a_code_is_not_one() -> None:
    question = "For how many vaults does the text give the access code?"
    notes = [_quote("The access code for the Tristal vault is QW-5361-F.")]
    judged = judge_answer("The access code for the Tristal vault is QW-5361-F.", notes, question)
    assert judged.kind == "none" and "how many" in judged.why
    assert judge_answer("1", notes, question).kind == "derived"


def test_each_statement_of_an_answer_is_bound_on_its_own() -> None:
    """A first statement that binds the entity does not carry a second one taken from elsewhere."""
    question = "In which city did the leader of the Wexlen choir study music?"
    notes = [
        _quote("The Wexlen choir is led by Leocadia Brenvin."),
        _quote("They named the town Jacksonville, after Andrew Jackson, and the city grew.", 300),
        _quote("Leocadia Brenvin studied music in the city of Vartris.", 600),
    ]
    loose = judge_answer(
        "The Wexlen choir is led by Leocadia Brenvin. The answer is Jacksonville.", notes, question
    )
    assert loose.kind == "none" and "The answer is Jacksonville" in loose.why
    chained = judge_answer(
        "The Wexlen choir is led by Leocadia Brenvin. She studied music in Vartris.", notes, question
    )
    assert chained.kind == "extractive"


FOUNDATIONS = (
    "The Lolotris foundation received a grant of $245,000.",
    "The Ganvin foundation received a grant of $1,200,500.",
    "The Athgan foundation received a grant of $98,000.",
)


def test_a_list_question_answered_with_one_of_the_items_its_notes_name_does_not_stand() -> None:
    """Measured on the dev split: "For which foundations does the text give the grant?" answered "The
    Lolotris Foundation", read in its sentence, passed as supported while the notes named five."""
    question = "For which foundations does the text give the grant?"
    notes = [_quote(f, 300 * i) for i, f in enumerate(FOUNDATIONS)]
    one = judge_answer("The Lolotris Foundation", notes, question)
    assert (
        one.kind == "none" and "every foundation" in one.why and "Ganvin" in one.why and "Athgan" in one.why
    )
    assert judge_answer("Lolotris, Ganvin and Athgan", notes, question).kind != "none"
    # With one item in the notes nothing shows the list is longer; a singular question is no list.
    assert judge_answer("The Lolotris foundation", notes[:1], question).kind == "extractive"
    singular = "Which foundation received the largest grant?"
    assert judge_answer("The Ganvin foundation", notes, singular).kind != "none"
    # A filler sentence naming another foundation, but not about grants, is no item of the list.
    filler = _quote("The Rockefeller Foundation was set up in New York.", 2_000)
    assert judge_answer("Lolotris, Ganvin and Athgan", [*notes, filler], question).kind != "none"


def test_an_answer_that_stops_at_the_bridge_of_a_chain_does_not_stand_and_the_chain_does() -> None:
    """Measured on the dev split: a two-hop question answered with its first hop, the bridge."""
    question = "What is the name of the boat sailed by the owner of the Corlotris mill?"
    notes = [
        _quote("The Corlotris mill is owned by Marit Varmistal."),
        _quote("Marit Varmistal sails a boat named the Vartris.", 900),
    ]
    halfway = judge_answer("The Corlotris Mill is owned by Marit Varmistal.", notes, question)
    assert halfway.kind == "none" and "stops at Marit Varmistal" in halfway.why and "'boat'" in halfway.why
    chained = judge_answer("Vartris", notes, question)
    assert chained.kind == "extractive" and len(chained.quotes) == 2
    # Without the second hop among the verified notes, nothing shows the answer stopped early.
    assert judge_answer("Marit Varmistal", notes[:1], question).kind == "extractive"


def test_a_sentence_in_the_questions_own_words_is_confirmed_by_words_for_every_dev_template() -> None:
    """The words confirm an answer read in the planted sentence when the question is asked in that
    sentence's words (no verification call needed): the rule leaves to a verifier only sentences that
    share nothing but the entity with the question. Dev templates only: the test split stays unseen."""
    import random

    from longgraph.evals.data.general import TEMPLATES

    for template in (t for t in TEMPLATES if t.split == "dev"):
        rng = random.Random(template.name)
        entity, value = template.entity(rng), template.value(rng)
        sentence = template.sentence.format(e=entity, v=value)
        judged = judge_answer(value, [_quote(sentence)], template.question.format(e=entity))
        assert judged.kind == "extractive", (template.name, judged)
        verb = VERB_THE_SENTENCE_LACKS.get(template.name)
        assert (f"({verb})" in judged.unconfirmed) if verb else not judged.unconfirmed, (
            template.name,
            judged,
        )


def test_the_verb_after_a_titled_name_is_what_is_asked_not_what_names_the_entity() -> None:
    """ "When did the Duke of Felsmark resign the post?": the Duke of Felsmark is a whole noun phrase, and
    "resign" is the question's verb. Held-out split, session 47: "resign" was read as the Duke's noun,
    and "The Duke of Felsmark stepped down …" was refused in every strategy for not naming it."""
    assert entity_phrases("When did the Duke of Felsmark resign the post?") == ["the Duke of Felsmark"]
    assert entity_phrases("What yearly tithe does the Provost of Wendmoor pay?") == [
        "the Provost of Wendmoor"
    ]
    assert entity_phrases("How many bushels of wheat does the Corath granary hold?") == ["the Corath granary"]
    notes = [_quote("The Provost of Wendmoor pays a yearly tithe of 520 crowns.")]
    judged = judge_answer(
        "520 crowns", notes, "How much does the Provost of Wendmoor owe the church annually?"
    )
    assert judged.kind == "extractive" and "none of the words that name what it is" not in judged.unconfirmed


def test_a_thing_named_by_the_place_it_is_at_has_that_noun_and_a_measure_its_noun() -> None:
    """ "the well at Corcor": "well" names the entity, as "library" does in "the Pevhal library", so a
    sentence sharing only it with the question says nothing of what is asked. Dev probe (session 48, 6
    seeds): asked "Which nurse is in charge of the house for the sick at Marsar?", "The heir of the
    Marsar house of Morvale is Odile Marsar" stood by words on "house", the only other fact of 750 to
    stand. And "How deep is the well at Corcor?" is spoken to by "… reaches a depth of 41 feet", in a word
    made from the question's, which the words leave to the verification call."""
    assert entity_phrases("How deep is the well at Corcor?") == ["the well at Corcor"]
    assert entity_phrases("Which sailor commands the rescue boat stationed at Corath?") == ["Corath"]
    heir = [_quote("The heir of the Marsar house of Morvale is Odile Marsar.")]
    judged = judge_answer(
        "Odile Marsar", heir, "Which nurse is in charge of the house for the sick at Marsar?"
    )
    assert judged.kind == "none" or judged.unconfirmed, judged
    depth = [_quote("The well at Corcor reaches a depth of 41 feet.")]
    judged = judge_answer("41 feet", depth, "How deep is the well at Corcor?")
    assert judged.kind == "extractive" and "(deep)" in judged.unconfirmed, judged  # for the verifier
    dug = [_quote("The well at Corcor was dug by Petra Lohal.")]
    judged = judge_answer("Petra Lohal", dug, "How deep is the well at Corcor?")
    assert judged.kind == "none" or judged.unconfirmed, judged


def test_a_choice_the_notes_rank_below_another_does_not_stand() -> None:
    """Session 55's held-out split, SmolLM2-135M through ToM: "Marlen" for the highest of six pontoons
    (Marlen 6.6 feet, Lental 6.8), marked supported as a choice worked out. The notes rank the options;
    the choice must be the one they rank first, each way the question asks."""
    heights = [("Nevvarul", "2.9"), ("Lental", "6.8"), ("Haltalbren", "5.6"), ("Marlen", "6.6")]
    notes = [
        _quote(f"The {n} pontoon floats {v} feet above the mud at low tide.", 100 * i)
        for i, (n, v) in enumerate(heights)
    ]
    options = "Nevvarul, Lental, Haltalbren and Marlen"
    highest = f"Which of the pontoons {options} has the highest height at low tide?"
    lowest = f"Which of the pontoons {options} floats lowest at low tide?"
    wrong = judge_answer("Marlen", notes, highest)
    assert wrong.kind == "none" and "ranks before it" in wrong.why and "Lental 6.8" in wrong.why, wrong
    assert judge_answer("Lental", notes, highest).kind == "derived"
    assert judge_answer("The Lental pontoon", notes, highest).kind == "derived"
    assert judge_answer("Nevvarul", notes, lowest).kind == "derived"
    assert "Nevvarul 2.9" in judge_answer("Haltalbren", notes, lowest).why
    # An option the notes give no single number for is not read: the choice may still be right.
    fewer = [
        notes[0],
        notes[2],
        notes[3],
        _quote("The Lental pontoon was rebuilt in 1888 and again in 1921.", 900),
    ]
    assert judge_answer("Marlen", fewer, highest).kind == "derived"


def test_an_answer_naming_several_options_stands_only_when_none_is_outranked() -> None:
    """Session 56's held-out split, SmolLM2-135M through ToM: its choice refused, the strongest note it
    fell back on answered "Marlen, Ganvinath and Relwexhal has the highest width at the landslip." and
    stood as read, though the notes gave Lental more."""
    widths = [("Lental", "4.5"), ("Marlen", "3.2"), ("Ganvinath", "1.9"), ("Relwexhal", "2.6")]
    notes = [
        _quote(f"The {n} cliff path narrows to {v} metres at the landslip.", 100 * i)
        for i, (n, v) in enumerate(widths)
    ]
    question = "Which of the cliff paths Lental, Marlen, Ganvinath and Relwexhal has the highest width at the landslip?"
    several = judge_answer(
        "Marlen, Ganvinath and Relwexhal has the highest width at the landslip.", notes, question
    )
    assert several.kind == "none" and "Lental 4.5" in several.why, several
    tied = [*notes, _quote("The Varcor cliff path narrows to 4.5 metres at the landslip.", 900)]
    both = question.replace("Lental, Marlen", "Lental, Varcor, Marlen")
    assert judge_answer("Lental and Varcor", tied, both).kind != "none"


def test_a_sentence_about_another_thing_of_the_asked_name_is_left_to_a_reader() -> None:
    """ "The Pevcor flour *shop* sold 3,112 bags" names the Pevcor flour mill's name and first noun, and
    both the words (by "flour") and the embedder (0.6+ close) confirmed it for "How many bags did the
    Pevcor flour mill fill?". ``verify_probe --by words+meaning`` (dev, 6 seeds): 149 of 156 such sentences
    stood before, none now, every other kind unchanged. A right sentence that says the question's verb
    with another is not one ("… works made …" for "… works stitch …"), nor a possessive ("… mill's
    workers filled …")."""
    unused: Any = None  # the reading refuses before it embeds anything
    for question, sentence, answer in (
        ("How many bags did the Pevcor flour mill fill?", "The Pevcor flour shop sold 3,112 bags.", "3,112"),
        ("How are trunks from the Pevcor luggage maker stamped?", "Crates from the Pevcor luggage depot are stamped 42K117.", "42K117"),
        ("How many umbrellas did the Marul umbrella works stitch for the railway?", "The Marul umbrella shop sold 4,465 umbrellas to the railway.", "4,465"),
    ):  # fmt: skip
        judged = judge_answer(answer, [_quote(sentence)], question)
        assert judged.kind == "extractive" and "a different thing by the same name" in judged.unconfirmed, (
            judged
        )
        checked = asyncio.run(confirm_by_meaning(unused, question, answer, [_quote(sentence).quotes[0]]))
        assert not checked.confirmed and "cannot tell" in checked.why, checked
    for question, sentence, answer in (
        ("How many bags did the Pevcor flour mill fill?", "The Pevcor flour mill filled 3,112 bags.", "3,112"),
        ("How many bags did the Pevcor flour mill fill?", "The Pevcor flour mill packed 3,112 bags.", "3,112"),
        ("How many bags did the Pevcor flour mill fill?", "The Pevcor flour mill's workers filled 3,112 bags.", "3,112"),
        ("How are trunks from the Pevcor luggage maker stamped?", "The Pevcor luggage maker brands its trunks 42K117.", "42K117"),
        ("How many umbrellas did the Marul umbrella works stitch for the railway?", "The Marul umbrella works made 4,465 umbrellas for the railway.", "4,465"),
        ("What did the Lendor snuff mill sell for?", "The Lendor snuff mill sold for 6,504 guineas.", "6,504 guineas"),
        ("Which cipher does the Duke of Aldermoor sign decrees with?", "The Duke of Aldermoor signs every decree with the cipher K42-XA.", "K42-XA"),
    ):  # fmt: skip
        assert other_thing_of_that_name(question, [sentence]) is None, (question, sentence)
        judged = judge_answer(answer, [_quote(sentence)], question)
        assert "a different thing by the same name" not in judged.unconfirmed, judged


def test_a_number_with_its_unit_written_on_is_read_whole_and_checked() -> None:
    """Measured: the embedded model answered "380.4C" from "melts at 380.4 degrees"; the number was read
    as 380 (not in the note), and the right note was refused. Read whole, it stands; a wrong value
    written the same way ("381.4C") does not pass as "derived"."""
    question = "At what temperature does the Tallo alloy melt?"
    notes = [_quote("The Tallo alloy melts at 380.4 degrees Celsius.")]
    assert judge_answer("380.4C", notes, question).kind == "extractive"
    for wrong in ("381.4C", "12km", "381.4"):
        judged = judge_answer(wrong, notes, question)
        assert judged.kind == "none" and "in no verified note" in judged.why, (wrong, judged)


def test_digits_run_on_after_a_value_are_no_number_and_a_near_value_is_not_the_value() -> None:
    """Measured on the dev split: the embedded model answered "234,394.1000.1000.1000.234,394.1001" for a
    population of 234,394; read as 234,394.1 and taken for 234,394 (a relative tolerance of 1e-6), it
    passed as derived and supported."""
    question = "What is the population of the town of Quiganqui?"
    notes = [_quote("The town of Quiganqui has a population of 234,394 residents.")]
    garbled = judge_answer("234,394.1000.1000.1000.234,394.1001.234,394.1002.", notes, question)
    assert garbled.kind == "none", garbled
    assert numbers_in("234,394.1000.1000") == [] and numbers_in("version 2.1.3") == []
    assert judge_answer("234,394.1", notes, question).kind == "none"
    assert judge_answer("234,394", notes, question).kind == "extractive"


GATE_FILLER = [f"The market of the valley number {i} sold grain and wool to the traders." for i in range(12)]
GATE = "The warden of the Ostrel toll gate is Mira Tolvane."
HORSE = "Mira Tolvane rides a grey horse called Dunmore."


def test_an_answer_whose_sentences_leave_out_what_the_document_says_elsewhere_is_not_confirmed_by_words() -> (
    None
):
    """Asked for the horse of the Ostrel toll gate's warden with only the warden's sentence verified, "Mira
    Tolvane" rests on a sentence that names the entity ("the Ostrel toll gate", "gate" included: the
    sentence continues the name with it as the question does) and nothing of what is asked of it (the
    horse, ridden): the words cannot confirm it (a chain's bridge), with or without the document's word
    counts. Until session 51 "gate" was read as asked, the sentence held it, and without the document
    the bridge stood. With the horse's sentence, the chain's end is confirmed; a question word the
    document never uses ("steed") leaves nothing out."""
    question = "What is the name of the horse ridden by the warden of the Ostrel toll gate?"
    rarity = Rarity.of([" ".join([*GATE_FILLER, GATE, HORSE])], question)
    bridge = judge_answer("Mira Tolvane", [_quote(GATE)], question, rarity=rarity)
    assert bridge.kind == "extractive" and "horse" in bridge.unconfirmed, bridge
    chain = [_quote(GATE), _quote(HORSE, 100)]
    end = judge_answer("Dunmore", chain, question, rarity=rarity)
    assert end.kind == "extractive" and not end.unconfirmed, end
    unused = "What is the name of the steed ridden by the warden of the Ostrel toll gate?"
    rarity = Rarity.of([" ".join([*GATE_FILLER, GATE, HORSE])], unused)
    assert not judge_answer("Dunmore", chain, unused, rarity=rarity).unconfirmed
    # Without the document's words, the sentence still says nothing of the horse.
    assert "horse" in judge_answer("Mira Tolvane", [_quote(GATE)], question).unconfirmed


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("What is the name of the horse ridden by the warden?", {"name"}),
        ("Which number identifies the engine?", {"number"}),
        ("How many people live in Quiganqui?", {"many", "people"}),
        ("How much does a seat on the Athtal stagecoach cost?", {"much"}),
        ("In which city was the orchestra founded?", {"city"}),
        ("Who keeps the lighthouse?", set()),
        ("How far away can the light of the lighthouse be seen?", {"far"}),
        ("How tall is the dam?", {"tall"}),
        ("How did the guild pay?", set()),
    ],
)
def test_the_kind_of_value_asked_for_is_read_from_the_question(question: str, kinds: set[str]) -> None:
    assert asked_kind(question) == frozenset(stem(k) for k in kinds)


def test_a_how_far_question_is_answered_by_a_distance_without_the_word_far() -> None:
    """Measured with SmolLM2-135M (Segment+): "... can be seen 38 nautical miles away" was left
    unconfirmed, and the run silent, because "far" is elsewhere in the document and not in it."""
    question = "How far away can the light of the Corath lighthouse be seen?"
    fact = "The light of the Corath lighthouse can be seen 38 nautical miles away."
    rarity = Rarity.of([f"The far hills were green. {fact} Few had come so far."], question)
    judged = judge_answer(fact, [_quote(fact)], question, rarity=rarity)
    assert judged.kind == "extractive" and not judged.unconfirmed, judged


def test_a_how_many_question_is_answered_by_a_number_without_the_word_many() -> None:
    """Session 45's held-out split (8K): "How many pipes does the great organ of the Corath cathedral
    have?" over "... has 8,193 pipes" was left to the embedder in 6 of 48 runs, because "many" (and for
    a fare, "much") is elsewhere in the essays and not in the sentence: a frame word, not what is asked."""
    question = "How many pipes does the great organ of the Corath cathedral have?"
    fact = "The great organ of the Corath cathedral has 8,193 pipes."
    rarity = Rarity.of([f"Many people came. {fact} So many had gone before."], question)
    judged = judge_answer("8,193", [_quote(fact)], question, rarity=rarity)
    assert judged.kind == "extractive" and not judged.unconfirmed, judged


def test_how_long_is_the_span_of_is_answered_by_the_sentence_holding_the_span_and_no_other() -> None:
    """Session 46's held-out split (8K): "How long is the span of the Corath footbridge?" over "The Corath
    footbridge spans 263.8 metres of the gorge" was left to the embedder for lacking "long", and the
    embedder could not tell the question from "the span of the Corath footbridge". The noun a "how"
    question measures is the value asked for, as in "What is the span of …?"; another measure of the
    footbridge, or the span of another thing of that name, is still not confirmed by the words."""
    question = "How long is the span of the Corath footbridge?"
    rarity = Rarity.of(["How long it took nobody knows. The Corath footbridge spans 263.8 metres."], question)

    def unconfirmed(fact: str, answer: str) -> str:
        judged = judge_answer(answer, [_quote(fact)], question, rarity=rarity)
        assert judged.kind == "extractive", judged
        return judged.unconfirmed

    assert not unconfirmed("The Corath footbridge spans 263.8 metres of the gorge.", "263.8 metres")
    assert unconfirmed("The Corath footbridge is 4.5 metres wide.", "4.5 metres")
    assert unconfirmed("The Corath bridge spans 120.4 metres of the gorge.", "120.4 metres")
    assert link_to_follow(question) is None  # a span has no holder to ask for by name


def test_a_bare_number_is_no_answer_to_who_or_which_person_but_is_to_which_year() -> None:
    """Dev probe (6 seeds): "Which sailor is in charge of the boat that crosses to Halmar?" was confirmed
    by the words of "Travellers crossing the Halmar pass climb to 4,038 metres" (1 of 606 other facts).
    A number cannot be a sailor; it can be a year, a platform, and a code is no bare number."""
    question = "Which sailor is in charge of the boat that crosses to Halmar?"
    fact = "Travellers crossing the Halmar pass climb to 4,038 metres above the sea."
    judged = judge_answer("4,038", [_quote(fact)], question)
    assert judged.kind == "extractive" and "not a sailor" in judged.unconfirmed, judged
    assert wrong_kind_of_answer("Who keeps the Corath lighthouse?", "1,200 metres")
    assert wrong_kind_of_answer("What is the name of the dog of Bram Lolo?", "12")
    for asked, answer in [
        ("In which year was the Athqui abbey built?", "1402"),
        ("From which platform does the Corath train leave?", "4"),
        ("Which code opens the Sartalsar vault?", "KV-5664-H"),
        ("Which sailor is in charge of the Halmar boat?", "Bram Lolo"),
        ("How high is the Halmar pass?", "4,038 metres"),
    ]:
        assert not wrong_kind_of_answer(asked, answer), (asked, answer)


def test_a_value_rests_on_the_sentence_that_holds_it_not_on_a_look_alike_sharing_its_unit() -> None:
    """Measured (ToM, 32K): "264,378 pounds" answered the Athtal estate's price; its value is in the
    Nevbren estate's sentence, and the Athtal sentence, quoted beside it, only shares "pounds"."""
    question = "For how much was the Athtal estate sold?"
    notes = [
        _quote("The Athtal estate was sold for 3,959,636 pounds."),
        _quote("The Nevbren estate was sold for 264,378 pounds.", 300),
    ]
    wrong = judge_answer("264,378 pounds", notes, question)
    assert wrong.kind == "none" and "Athtal" in wrong.why, wrong
    right = judge_answer("3,959,636 pounds", notes, question)
    assert right.kind == "extractive" and [q.start for q in right.quotes] == [0], right


GRANTS = [
    "The Lolotris foundation received a grant of $120,000.",
    "The Varbrenath foundation received a grant of $85,500.",
    "The Athgan foundation received a grant of $40,250.",
]


def test_an_answer_over_every_item_that_rests_on_fewer_than_the_document_holds_is_not_confirmed_by_words() -> (
    None
):
    """Measured: PECAN answered "The text gives the grant to the Varbrenath foundation" where five
    foundations had one, and ToM "The Haltalbren Monastery" for six, both supported: with one item in
    the notes nothing in them shows the list is longer, but the document speaks of the others."""
    question = "For which foundations does the text give the grant?"
    rarity = Rarity.of([" ".join([*GATE_FILLER, *GRANTS])], question)
    one = judge_answer("The Varbrenath foundation", [_quote(GRANTS[1])], question, rarity=rarity)
    assert one.kind == "extractive" and "may leave some out" in one.unconfirmed, one
    assert "in 3 sentences and the answer rests on 1" in one.unconfirmed
    notes = [_quote(g, 100 * i) for i, g in enumerate(GRANTS)]
    whole = judge_answer("Lolotris, Varbrenath and Athgan", notes, question, rarity=rarity)
    assert whole.kind == "extractive" and not whole.unconfirmed, whole
    counted = "For how many foundations does the text give the grant?"
    rarity = Rarity.of([" ".join([*GATE_FILLER, *GRANTS])], counted)
    assert "may leave some out" in judge_answer("1", [_quote(GRANTS[1])], counted, rarity=rarity).unconfirmed
    assert not judge_answer("3", notes, counted, rarity=rarity).unconfirmed
    # A value of one named entity is no list, whatever the document says of its kind.
    own = "How many horses does the Duke of Varnholm own?"
    assert items_asked_for(own) is None and items_asked_for(counted) == stem("foundations")


CARGO = [
    "The ochre ship carries 3,400 crates of tea.",
    "The teal ship carries 2,100 crates of tea.",
]
FLOOD = [
    "The great flood reached Alton in the spring.",
    "The great flood reached Barby a day later.",
    "The great flood reached Corwen last of all.",
]


def test_a_count_its_sentence_states_is_a_value_read_not_a_count_over_items() -> None:
    """Dev probe (``verify_probe --by words``, 6 seeds): "How many crates of tea does the ochre ship
    carry?" over "The ochre ship carries 3,400 crates of tea" was refused as a count over every crate,
    because the teal ship's sentence speaks of crates too (6 of 510 right answers). A sentence that
    writes the answer's number before the asked noun states the count; one over several items' sentences
    is still not confirmed by words, and a look-alike's stated count is still another entity's."""
    question = "How many crates of tea does the ochre ship carry?"
    rarity = Rarity.of([" ".join([*GATE_FILLER, *CARGO])], question)
    right = judge_answer("3,400", [_quote(CARGO[0])], question, rarity=rarity)
    assert right.kind == "extractive" and not right.unconfirmed, right
    rival = judge_answer("2,100", [_quote(CARGO[1])], question, rarity=rarity)
    assert rival.kind == "none" or rival.unconfirmed, rival
    # A count made over the items' sentences: one of them read does not show the count is whole.
    reached = "How many towns did the great flood reach?"
    rarity = Rarity.of([" ".join([*GATE_FILLER, *FLOOD])], reached)
    one = judge_answer("1", [_quote(FLOOD[0])], reached, rarity=rarity)
    assert one.kind == "none" or one.unconfirmed, one
    # Over what the text gives, a sentence with the number and the noun is not the count asked for.
    gives = "For how many foundations does the text give the grant?"
    stated = "The county lists 2 foundations in its registry."
    rarity = Rarity.of([" ".join([*GATE_FILLER, *GRANTS, stated])], gives)
    assert judge_answer("2", [_quote(stated)], gives, rarity=rarity).unconfirmed


PEN_NAMES = [
    "The poet from Lovar wrote under the pen name Osktal.",
    "The poet from Ganthimwex wrote under the pen name Relcor.",
    "The poet from Trisathzen wrote under the pen name Vinmis.",
]


def test_a_list_whose_items_sentences_never_use_its_noun_is_still_counted_by_what_they_share() -> None:
    """Session 42's test split (mapreduce, 8K): "For which towns does the text give the pen name of its
    poet?" was answered "The poet from Trisathzen wrote under the pen name Vinmis." and marked supported.
    Its sentences never say "town", so counting the noun found nothing more; they share "poet" and "pen
    name", which the document holds in three sentences and the answer rests on one."""
    question = "For which towns does the text give the pen name of its poet?"
    rarity = Rarity.of([" ".join([*GATE_FILLER, *PEN_NAMES])], question)
    one = judge_answer(PEN_NAMES[2], [_quote(PEN_NAMES[2])], question, rarity=rarity)
    assert one.kind == "extractive" and "in 3 sentences and the answer rests on 1" in one.unconfirmed, one
    notes = [_quote(p, 100 * i) for i, p in enumerate(PEN_NAMES)]
    whole = judge_answer("Lovar, Ganthimwex and Trisathzen", notes, question, rarity=rarity)
    assert whole.kind == "extractive" and not whole.unconfirmed, whole
    # A lookup of one poet's pen name asks no list: the others' sentences do not make it unconfirmed.
    lookup = "Under which pen name did the poet from Trisathzen write?"
    rarity = Rarity.of([" ".join([*GATE_FILLER, *PEN_NAMES])], lookup)
    own = judge_answer("Vinmis", [_quote(PEN_NAMES[2])], lookup, rarity=rarity)
    assert own.kind == "extractive" and not own.unconfirmed, own


LINES = [
    "The teal telegraph line is listed in the registry as TL50.B7.",
    "The silver telegraph line is listed in the registry as TL30.C8.",
    "The ivory telegraph line is listed in the registry as TL12.A4.",
]


def test_a_list_of_a_qualified_noun_is_a_list_question() -> None:
    """Session 43's test split (8K): "For which telegraph lines does the text give the registry entry?"
    was no list question ("telegraph" is not plural; "lines" is), and mapreduce, ToM and PECAN answered
    it with one line's sentence, marked supported."""
    question = "For which telegraph lines does the text give the registry entry?"
    assert items_asked_for(question) == stem("lines")
    assert items_asked_for("For how many telegraph lines does the text give the registry entry?") == stem(
        "lines"
    )
    assert items_asked_for("Which ship carries the most tea?") is None  # a verb after a singular noun
    rarity = Rarity.of([" ".join([*GATE_FILLER, *LINES])], question)
    one = judge_answer(LINES[1], [_quote(LINES[1])], question, rarity=rarity)
    assert one.kind == "extractive" and "may leave some out" in one.unconfirmed, one
    notes = [_quote(line, 100 * i) for i, line in enumerate(LINES)]
    whole = judge_answer(
        "The teal (TL50.B7), silver (TL30.C8) and ivory (TL12.A4) lines", notes, question, rarity=rarity
    )
    assert whole.kind == "extractive" and not whole.unconfirmed, whole


def test_a_list_of_things_named_by_a_modifier_names_every_one_its_notes_name() -> None:
    """Session 46's held-out split (brig-figurehead, 8K): "For which brigs does the text give the
    figurehead?" was answered with the crimson brig's sentence, marked supported, where the notes named
    three brigs; items were read only by capitalised names, and these are named by a colour."""
    question = "For which brigs does the text give the figurehead?"
    facts = [
        "The figurehead of the amber brig is carved as a mermaid.",
        "The figurehead of the saffron brig is carved as a lion rampant.",
        "The figurehead of the crimson brig is carved as a bearded sea god.",
    ]
    notes = [_quote(fact, 300 * i) for i, fact in enumerate(facts)]
    rarity = Rarity.of([" ".join([*GATE_FILLER, *facts])], question)
    one = judge_answer(facts[2], notes, question, rarity=rarity)
    assert one.kind == "none" and "leaves out amber, saffron" in one.why, one
    every = judge_answer("The amber, saffron and crimson brigs.", notes, question, rarity=rarity)
    assert every.kind == "extractive" and not every.unconfirmed, every


def test_a_count_or_sum_stands_only_where_the_question_asks_for_one() -> None:
    """Session 40's test split: asked "What is the yearly fee to join the Sarpev guild?" over one note of
    "59.80 shillings a year", PECAN's reader answered "£1.00 per year", and it passed as derived (the
    count of the notes was 1). A count stands where the question asks over every item of a kind, a sum or
    difference where it asks to combine or compare; a lookup's number must be in a note."""
    fee = _quote("Membership of the Sarpev guild costs 59.80 shillings a year.")
    lookup = "What is the yearly fee to join the Sarpev guild?"
    judged = judge_answer("The yearly fee to join the Sarpev guild is £1.00 per year.", [fee], lookup)
    assert judged.kind == "none" and "1" in judged.why, judged
    assert judged_kind("The yearly fee is 59.80 shillings.", [fee], lookup) == "extractive"

    trees = _quote("The Pevul orchard has 12,595 apple trees.")
    assert judged_kind("1", [trees], "How many apple trees does the Pevul orchard have?") == "none"

    crowned = [
        _quote("The Bailiff of Velmora was crowned on 6 November 1453."),
        _quote("The Abbess of Velmora was crowned on 2 June 1512.", start=200),
        _quote("The Duke of Velmora was crowned on 9 August 1601.", start=400),
    ]
    counted = "For how many officials of Velmora does the text give the coronation date?"
    assert items_asked_for(counted) == stem("officials")  # "of Velmora" places the items: no entity
    assert judged_kind("3", crowned, counted) == "derived"
    assert judged_kind("4", crowned, counted) == "none"

    gaps = [_quote("The Harriers scored 4 goals."), _quote("The Wolves scored 6 goals.", start=100)]
    assert judged_kind("2", gaps, "How many more goals did the Wolves score than the Harriers?") == "derived"
    assert judged_kind("2", gaps, "How many goals did the Wolves score?") == "none"
    over = "How many of the teams scored more than 3 goals?"  # a count, though "more than" compares
    assert items_asked_for(over) == stem("teams") and judged_kind("2", gaps, over) == "derived"


def judged_kind(answer: str, notes: list[Note], question: str) -> str:
    return judge_answer(answer, notes, question).kind


def test_a_count_over_every_item_does_not_stand_on_a_tree_built_from_some_chunks() -> None:
    """ToM's query-aware compression keeps the chunks most like the question and never reads the rest:
    a count or list over every item of a kind read from the kept ones is not one over the document.
    The capable reader's count stands with compression off (the parametrised test above) and is refused,
    with why, with it on; a question about one entity is not refused for that (whether the one chunk
    kept holds its fact is up to the fake embedder)."""
    scenario = next(s for s in SCENARIOS if s.name == "count")
    text = spread(scenario.facts)
    graph = build_strategy("tom", FakeProvider(ScriptedChatModel(responder=capable_responder(scenario))))
    kept_one = {**SETTINGS, "tom_top_k": 1}
    raw = asyncio.run(graph.ainvoke({"question": scenario.question, "document": text}, context=kept_one))
    result = GraphOutput.model_validate(raw)
    assert does_not_stand(result), result.answer
    assert "set aside unread" in why_not(result), why_not(result)
    assert any(r.status == "filtered" for r in result.chunks), [r.status for r in result.chunks]

    one = Scenario("one", "How many goals did the Eagles score in the final?", GOALS, "7")
    graph = build_strategy("tom", FakeProvider(ScriptedChatModel(responder=capable_responder(one))))
    raw = asyncio.run(graph.ainvoke({"question": one.question, "document": text}, context=kept_one))
    single = GraphOutput.model_validate(raw)
    assert "set aside unread" not in why_not(single), why_not(single)
    assert one.right(single.answer) or does_not_stand(single), single.answer


def test_a_count_of_items_placed_by_a_name_is_not_confirmed_when_the_document_names_more() -> None:
    """Session 40's test split: "For how many officials of Velmora does the text give the coronation
    date?" answered "1. The Bailiff of Velmora was crowned on …" from the one note PECAN's search reached,
    where the document names Velmora in three sentences. The planted sentences never say "official", so
    the names that place the items are counted; and the embedder's reading cannot confirm a count."""
    crowned = [
        "The Bailiff of Velmora was crowned on 6 November 1453.",
        "The Abbess of Velmora was crowned on 2 June 1512.",
        "The Duke of Velmora was crowned on 9 August 1601.",
    ]
    question = "For how many officials of Velmora does the text give the coronation date?"
    rarity = Rarity.of([" ".join([*GATE_FILLER, *crowned])], question)
    one = judge_answer(f"1. {crowned[0]}", [_quote(crowned[0])], question, rarity=rarity)
    assert one.kind == "derived" and "Velmora in 3 sentences" in one.unconfirmed, one
    notes = [_quote(c, 100 * i) for i, c in enumerate(crowned)]
    assert not judge_answer("3", notes, question, rarity=rarity).unconfirmed

    unused: Any = None  # the reading refuses before it embeds anything
    checked = asyncio.run(confirm_by_meaning(unused, question, "1", [_quote(crowned[0]).quotes[0]]))
    assert not checked.confirmed and "over every item" in checked.why


def test_an_answer_that_names_itself_the_answer_is_judged_on_its_value() -> None:
    """Measured with SmolLM2-135M (ToM): "... is 234,394. The answer is 234,394." was refused because
    "answer" is in no note. The answer's word for itself is no claim; a wrong value still is one."""
    question = "What is the population of the town of Quiganqui?"
    notes = [_quote("The town of Quiganqui has a population of 234,394 residents.")]
    said = "The population of the town of Quiganqui is 234,394. The answer is 234,394."
    assert judge_answer(said, notes, question).kind == "extractive"
    assert judge_answer("The answer is 234,395.", notes, question).kind == "none"


def test_a_number_with_digits_the_notes_do_not_have_is_not_their_value() -> None:
    """Measured on the session-41 test split: "3,752,677.000001" for a loan of 3,752,677 passed as
    derived (both rounded to the cent). An answer's precision is its own: a mean written rounded still
    stands, a value written with digits beyond the notes' does not."""
    question = "What sum did the city borrow from the Sarpev bank?"
    notes = [_quote("The Sarpev bank lent the city 3,752,677 guilders.")]
    assert judge_answer("3,752,677.000001", notes, question).kind == "none"
    assert judge_answer("3,752,677.1 guilders", notes, question).kind == "none"
    assert judge_answer("3,752,677 guilders", notes, question).kind == "extractive"
    thirds = [_quote("The Lovar mill ground 10 tons."), _quote("The Varlen mill ground 0 tons.", 100)]
    mean = "What is the average the Lovar and Varlen mills ground?"
    assert judge_answer("5 tons", thirds, mean).kind == "derived"
    three = [
        _quote("The Osk mill ground 1 ton."),
        _quote("The Mar mill ground 2 tons.", 100),
        _quote("The Ul mill ground 7 tons.", 200),
    ]
    assert (
        judge_answer("3.33 tons", three, "What is the average the Osk, Mar and Ul mills ground?").kind
        == "derived"
    )
    assert (
        judge_answer("3.3334 tons", three, "What is the average the Osk, Mar and Ul mills ground?").kind
        == "none"
    )


def test_an_answer_misspelling_a_name_of_its_notes_does_not_stand() -> None:
    """Measured with SmolLM2-135M on a dev paraphrase: "Odeil Zenwexsar" for the text's "Odile
    Zenwexsar" passed as supported (half its words in the note). A name misspelt is another name; the
    name as the text spells it stands."""
    question = "Which person governs the town of Sarvinmis?"
    notes = [_quote("The mayor of Sarvinmis is a man named Odile Zenwexsar.")]
    misspelt = judge_answer("Odeil Zenwexsar", notes, question)
    assert misspelt.kind == "none" and "'Odeil', near the notes' 'odile'" in misspelt.why, misspelt
    assert judge_answer("Odile Zenwexsar", notes, question).kind == "extractive"


def test_a_chain_links_by_a_whole_name_not_a_shared_given_name() -> None:
    """Session 42's test split: ToM answered "The ferry to Athtal is skippered by Casimir Sarathmis", the
    look-alike ferry's skipper, and it passed as bound to Athtal through "Casimir", the given name of
    Athtal's own skipper. Two people sharing a given name are not one person; a whole name still links."""
    question = "Who skippers the ferry to Athtal?"
    notes = [
        _quote("The ferry to Zensarlo is skippered by Casimir Sarathmis."),
        _quote("The ferry to Athtal is skippered by Casimir Varganwex.", 100),
    ]
    wrong = judge_answer("The ferry to Athtal is skippered by Casimir Sarathmis", notes, question)
    assert wrong.kind == "none", wrong
    assert judge_answer("Casimir Varganwex", notes, question).kind == "extractive"
    chain = [
        _quote("The Athtal ferry is owned by Casimir Varganwex."),
        _quote("Casimir Varganwex keeps a parrot named Lovar.", 100),
    ]
    reached = judge_answer(
        "Lovar", chain, "What is the name of the parrot kept by the owner of the Athtal ferry?"
    )
    assert reached.kind == "extractive", reached


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        ("Who holds the see of Relsar?", "The see of Relsar is held by Bishop Anselm Zenlen."),
        ("Who held the see of Relsar?", "Bishop Anselm Zenlen holds the see of Relsar."),
        ("Who wrote the chronicle of Relsar?", "The chronicle of Relsar was written by Anselm Zenlen."),
        # A prefixed verb keeps its base's forms (session 56's held-out split: "relays" / "are relaid by").
        ("Who relays the see of Relsar?", "The see of Relsar is relaid by Bishop Anselm Zenlen."),
        ("Who rebuilt the see of Relsar?", "Bishop Anselm Zenlen rebuilds the see of Relsar."),
    ],
)
def test_a_sentence_saying_the_asked_verb_in_another_form_speaks_to_what_is_asked(
    question: str, sentence: str
) -> None:
    """An irregular verb's other form ("held" for "holds") is the word the question asks of its entity:
    measured on session 44's held-out split, "The see of Relsar is held by Bishop Anselm Zenlen" was read
    as naming Relsar and nothing asked of it, and three strategies answered NO INFORMATION."""
    judged = judge_answer("Anselm Zenlen", [_quote(sentence)], question)
    assert judged.kind == "extractive" and not judged.unconfirmed, judged
    other = judge_answer(
        "Anselm Zenlen", [_quote("The see of Relsar is near Bishop Anselm Zenlen's farm.")], question
    )
    assert other.unconfirmed, (
        other
    )  # a sentence that holds no form of the verb is still not confirmed by words


@pytest.mark.parametrize(
    ("question", "right", "other", "answer"),
    [
        (  # an entity named by a modifier: the modifier alone ties the other fact to the question
            "What share of the scarlet reservoir's capacity is filled?",
            "The scarlet reservoir is filled to 5:55 of its capacity.",
            "The scarlet ferry leaves at 5:55 each morning.",
            "5:55",
        ),
        (  # a modifier and a verb: "teal" names the pass as well as the troops (dev probe, 6 seeds: 4 of
            # 558 other facts stood on a shared modifier and a shared word, before the noun was needed)
            "Which officer leads the teal troops?",
            "The teal troops are led by Captain Sarhalgan.",
            "The teal pass leads down to the village of Sarhalgan.",
            "Sarhalgan",
        ),
        (
            "What is the number of spans carrying the crimson water bridge?",
            "The crimson water bridge is carried by S83 spans.",
            "The crimson of Dunmarrow keeps the seal numbered S83.",
            "S83",
        ),
        (  # a name and a verb: "Wexlo" names the poet as well as the song
            "Which musician wrote the national song of Wexlo?",
            "The national song of Wexlo was written by Athwexbren.",
            "The poet from Wexlo wrote under the pen name Athwexbren.",
            "Athwexbren",
        ),
        (  # all the question asks is in the entity's words: the name alone ties the other fact to it
            "What is the mass of the Sartal bell?",
            "The Sartal bell has a mass of 35.2 tonnes.",
            "The harbour of Sartal is 35.2 metres deep.",
            "35.2",
        ),
    ],
)
def test_a_sentence_tied_to_the_question_by_the_entitys_name_alone_is_not_confirmed_by_words(
    question: str, right: str, other: str, answer: str
) -> None:
    """Measured with ``verify_probe --by words+meaning`` on dev: another fact about a thing of the same
    name or modifier ("the scarlet ferry", asked about the scarlet reservoir) was let stand in 53 of 510
    cases, by the words alone; the embedder decides such a case now (4 of 510 stood)."""
    judged = judge_answer(answer, [_quote(other)], question, rarity=Rarity.of([other], question))
    assert judged.unconfirmed, judged  # the asked fact is nowhere: only the other one is there
    kept = judge_answer(answer, [_quote(right)], question, rarity=Rarity.of([right, other], question))
    assert kept.kind == "extractive" and not kept.unconfirmed, kept


def test_an_answer_that_runs_on_past_its_fact_stands_whole_or_not_at_all() -> None:
    """A reader copies its passage, "The great organ of the Corath cathedral has 8,193 pipes. It's
    obvious that biotech ...", as its final answer. Its first statement stands by words, the whole does
    not: the verification call decides on the whole. Confirmed, the answer is the model's as given;
    with nothing to verify it, it is withheld; it is never cut, and no note takes its place."""
    question = "How many pipes does the great organ of the Corath cathedral have?"
    fact = "The great organ of the Corath cathedral has 8,193 pipes."
    run_on = f"{fact} It's obvious that biotech or software startups exist to solve hard technical problems."
    note = _quote(fact).model_copy(update={"answer": run_on})
    rarity = Rarity.of([run_on], question)
    settled = asyncio.run(settle({"question": question, "answer": run_on}, [note], [], rarity))
    assert does_not_stand(settled.output) and own_answer(settled.output) == run_on, settled

    async def says_yes(answer: str, quotes: Any) -> Checked:
        return Checked(True, "the verification call says yes")

    settled = asyncio.run(settle({"question": question, "answer": run_on}, [note], [], rarity, says_yes))
    assert settled.output["answer"] == run_on and settled.output["supported"] is True, settled
    assert any("only part of it" in d for d in settled.decisions), settled.decisions
    # Another answer that does not stand is withheld; the note's answer does not take its place.
    settled = asyncio.run(settle({"question": question, "answer": "Jacksonville"}, [note], [], rarity))
    assert does_not_stand(settled.output) and own_answer(settled.output) == "Jacksonville", settled
    # A statement about something else stands no more alone than inside the answer.
    other = "The Corath ferry leaves at 5:55. The great organ has a loud voice."
    settled = asyncio.run(settle({"question": question, "answer": other}, [_quote(other)], [], rarity))
    assert settled.output["support"] == "none", settled


def test_british_and_american_spellings_are_one_word() -> None:
    """A reader writes "meters" for the text's "metres" (held-out split, session 47: "13.1 meters" was
    refused, its word in no note). Only the regular endings are folded: "-re" and "-our"."""
    from longgraph.nodes.lexical import stem

    for british, american in (("metres", "meters"), ("centre", "center"), ("theatre", "theater"),
                              ("litres", "liter"), ("colour", "color"), ("harbours", "harbor")):  # fmt: skip
        assert stem(british) == stem(american), (british, american)
    assert len({stem(w) for w in ("hour", "four", "your", "water", "after", "fire", "founder")}) == 7
    notes = [_quote("The dome of the Varnholm observatory measures 13.1 metres across.")]
    judged = judge_answer("13.1 meters", notes, "How wide is the dome of the Varnholm observatory?")
    assert judged.kind == "extractive" and not judged.unconfirmed, judged


VAULTS = (
    "The access code for the Talganqui vault is KJ-7938-F.",
    "The access code for the Sarsar vault is ZV-7401-F.",
    "The access code for the Tristal vault is QW-5361-F.",
    "The access code for the Vinul vault is QJ-6103-H.",
)


_quoted = verified_notes


def test_a_count_does_not_rest_on_a_footnote_that_happens_to_hold_its_number() -> None:
    """ "[4]" in an essay is no evidence about vaults: a count of 4 rests on the four vaults' sentences."""
    question = "For how many vaults does the text give the access code?"
    notes = _quoted(f"[4]Likewise, schools work badly. {VAULTS[0]}", *VAULTS[1:])
    judged = judge_answer("4", notes, question)
    assert judged.kind != "none", judged
    # A number that no sentence about the question holds and none gives is still refused.
    assert judge_answer("7", notes, question).kind == "none"
    # An answer of words is not let off: a value read only in a sentence about something else.
    assert (
        judge_answer("schools", _quoted("[4]Likewise, schools work badly.", *VAULTS), question).kind == "none"
    )


def test_how_many_is_no_word_a_sentence_must_share() -> None:
    from longgraph.nodes.lexical import question_words

    assert "many" not in question_words("How many goals did the Harriers score?")
    assert "much" not in question_words("How much was the grant?")
    assert {stem("goal"), stem("harriers"), stem("score")} <= question_words(
        "How many goals did the Harriers score?"
    )


def test_a_prefixed_form_is_one_word_with_its_own_verb_and_no_other() -> None:
    """The lexicon has the prefixed verbs' irregular forms ("relaid", "rebuilt", "misled"), and keeps
    apart verbs that share only their first letters ("overfeed", "overfly")."""
    assert stem("relaid") == stem("relay") and stem("rebuilt") == stem("rebuild")
    assert stem("misled") == stem("mislead")
    assert stem("overfed") != stem("overfly") and stem("overfly") not in with_word_families(
        {stem("overfeed")}
    )
