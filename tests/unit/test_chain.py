"""Following a chain (``nodes/chain.py``) with a reader that reads only what names the question's entity.

Such a reader (the embedded 135M model at its best) copies "The Quirel guild was founded by Ilka
Lenhal" for "In which town was the founder of the Quirel guild born?", and nothing from the chunk that
says where Ilka Lenhal was born: it names no Quirel. The run must ask who the founder is, then where
Ilka Lenhal was born, and say so; and it must stay silent (without a call) when no sentence names the
entity, and silent when the only sentence naming it does not say who its founder is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from longgraph.nodes.answer_support import Judged, capitalised_runs, chain_links, judge_answer, states_role
from longgraph.nodes.chain import first_step, link_to_follow
from longgraph.nodes.lexical import content_stems, names_in, stem
from longgraph.state.contract import Evidence, GraphOutput
from longgraph.state.notes import Note
from longgraph.strategies import build_strategy
from longgraph.testing.answers import build_completion_content
from longgraph.testing.capable import READING_SCHEMAS, schema_name
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.testing.oracle import NO_INFORMATION, extract_question_and_text
from longgraph.tests.conftest import does_not_stand, spread, why_not
from longgraph.tests.unit.test_capable_reader import SETTINGS

STRATEGIES = ["mapreduce", "segment-plus", "tom", "pecan"]
QUESTION = "In which town was the founder of the Quirel guild born?"
CHAIN = ("The Quirel guild was founded by Ilka Lenhal.", "Ilka Lenhal was born in the town of Ulqui.")
SILENT = {**SETTINGS, "verify_answers": "off"}


def literal_responder(facts: Sequence[str]) -> Any:
    """A reader that copies a planted fact only when the fact names every name the question gives
    (no chains, no reasoning), and reports NO INFORMATION otherwise; structure-building stages get the
    oracle's answers."""

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        name = schema_name(extras)
        if name not in READING_SCHEMAS:
            return oracle_responder(messages, extras)
        question, text = extract_question_and_text(list(messages))
        flat = " ".join(text.split())
        names = names_in(question)
        seen = [f for f in facts if f in flat and names and names <= content_stems(f)]
        said = (seen[0], seen[0]) if seen else (NO_INFORMATION, None)
        return build_completion_content({"messages": list(messages), **extras}, said=said)[0]

    return respond


def _asked(model: ScriptedChatModel) -> set[str]:
    """The questions the model's calls asked."""
    return {extract_question_and_text(list(c["messages"]))[0] for c in model.calls}


def run(strategy: str, question: str, facts: Sequence[str]) -> tuple[GraphOutput, ScriptedChatModel]:
    model = ScriptedChatModel(responder=literal_responder(facts))
    graph = build_strategy(strategy, FakeProvider(model))
    raw = asyncio.run(graph.ainvoke({"question": question, "document": spread(tuple(facts))}, context=SILENT))
    return GraphOutput.model_validate(raw), model


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_chain_no_reading_could_answer_is_followed_to_its_end(strategy: str) -> None:
    result, _ = run(strategy, QUESTION, CHAIN)
    assert "Ulqui" in result.answer, (result.answer, result.stats.notes)
    assert result.supported is True and result.support == "derived"
    quoted = " ".join(e.text for e in result.evidence if e.verified)
    assert "founded by Ilka Lenhal" in quoted and "born in the town of Ulqui" in quoted, quoted
    assert any("followed the chain" in n for n in result.stats.notes), result.stats.notes
    assert result.stats.calls_by_stage.get("chain", 0) >= 2, result.stats.calls_by_stage
    used = {c.id for c in result.chunks if c.status == "used"}
    assert len(used) >= 2, result.chunks


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_bridge_said_in_an_apposition_is_followed(strategy: str) -> None:
    """ "The warden of the Ostrel marsh, Bram Lolo, rebuilt the dykes" says who the warden is by setting
    the name beside the role between commas; the run asks where Bram Lolo was born."""
    question = "In which town was the warden of the Ostrel marsh born?"
    facts = (
        "The warden of the Ostrel marsh, Bram Lolo, rebuilt the dykes.",
        "Bram Lolo was born in the town of Tallo.",
    )
    result, _ = run(strategy, question, facts)
    assert "Tallo" in result.answer and result.supported is True, (result.answer, result.stats.notes)
    assert any("followed the chain" in n for n in result.stats.notes), result.stats.notes


@pytest.mark.parametrize("strategy", ["mapreduce", "tom"])
def test_an_absent_entity_costs_no_chain_call(strategy: str) -> None:
    result, _ = run(strategy, QUESTION.replace("Quirel", "Zandor"), CHAIN)
    assert does_not_stand(result)
    assert "chain" not in result.stats.calls_by_stage, result.stats.calls_by_stage
    assert any("no passage names the Zandor guild" in n for n in result.stats.notes), result.stats.notes


def test_a_look_alike_entity_is_not_a_link() -> None:
    facts = ("The Quirol guild was founded by Ilka Lenhal.", CHAIN[1])
    result, _ = run("mapreduce", QUESTION, facts)
    assert does_not_stand(result), result.answer


def test_a_sentence_that_names_the_entity_but_not_the_role_is_no_bridge() -> None:
    """ "The Quirel guild stands beside the house of Ilka Lenhal" names the guild and a person, but not
    who founded it: following it would answer where a neighbour was born, marked supported."""
    facts = ("The Quirel guild stands beside the house of Ilka Lenhal.", CHAIN[1])
    result, model = run("mapreduce", QUESTION, facts)
    assert does_not_stand(result), result.answer
    assert any("does not say 'founder'" in n for n in result.stats.notes), result.stats.notes
    asked = [extract_question_and_text(list(c["messages"]))[0] for c in model.calls]
    assert not any("Ilka Lenhal born" in q for q in asked), asked


def test_which_questions_name_a_chain() -> None:
    (link,) = chain_links(QUESTION)
    assert (link.phrase, link.role, link.entity) == (
        "the founder of the Quirel guild",
        "founder",
        "the Quirel guild",
    )
    assert link_to_follow(QUESTION) == link
    assert first_step(link) == "What is the name of the founder of the Quirel guild?"
    assert link.asked_through(QUESTION, "Ilka Lenhal") == "In which town was Ilka Lenhal born?"
    boat = "What is the name of the boat sailed by the owner of the Corlotris mill?"
    assert link_to_follow(boat) is not None and link_to_follow(boat).role == "owner"  # type: ignore[union-attr]
    # Nothing is asked of the linked entity: the question is one step.
    assert link_to_follow("What is the population of Varnholm?") is None
    assert link_to_follow("What is the name of the founder of the Quirel guild?") is None
    assert link_to_follow("How many goals did the Harriers score?") is None


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_entity_named_with_a_plural_possessive_is_a_link(strategy: str) -> None:
    """Session 51's test split: "the headmistress of the Wexlen girls' school" was read as ending at
    "girls", a possessive like "Grandma Olga's borscht", so no link was found and no strategy followed
    the chain (every one silent with the embedded model; all four right after)."""
    question = "In which city did the headmistress of the Wexlen girls' school train as a teacher?"
    (link,) = chain_links(question)
    assert (link.role, link.entity) == ("headmistress", "the Wexlen girls' school")
    assert first_step(link) == "What is the name of the headmistress of the Wexlen girls' school?"
    assert chain_links("What is the secret ingredient of Grandma Olga's borscht?") == []
    facts = (
        "Leocadia Brenvin runs the Wexlen girls' school as its headmistress.",
        "Leocadia Brenvin trained as a teacher in the city of Vartris.",
    )
    result, _ = run(strategy, question, facts)
    assert "Vartris" in result.answer and result.supported is True, (result.answer, result.stats.notes)


def test_a_chains_first_step_is_no_answer_when_the_entity_is_named_by_two_nouns() -> None:
    """Session 51's second test split, the scripted capable reader: "The Halwex coaching inn is kept by
    Ilka Athvinsar." stood as the answer to where the innkeeper grew up, in every strategy, because the
    question's parse ends the entity at "coaching" and "inn", held by the sentence, was read as asked."""
    question = "In which county did the innkeeper of the Halwex coaching inn grow up?"
    bridge = "The Halwex coaching inn is kept by Ilka Athvinsar."
    judged = judge_answer(bridge, [_note(bridge)], question)
    assert "county" in judged.unconfirmed and "grow" in judged.unconfirmed, judged
    chain = [_note(bridge), _note("Ilka Athvinsar grew up in the county of Talbren.", 100)]
    assert judge_answer("Talbren", chain, question).kind == "extractive"


def test_the_verb_a_question_ends_on_is_not_read_as_the_entitys_word() -> None:
    """ "On what date did the Athtal lock gate burst?" over "The Athtal lock gate burst on …": the
    sentence continues the name as the question does, with the verb. Read as the gate's own word, it left
    "date" the only word asked, and the words could not confirm the right sentence (session 51's third
    test split, dev since). Asked with "is", the same continuation is the entity's ("coaching inn")."""
    from longgraph.nodes.answer_support import continued_names

    sentence = "The Athtal lock gate burst on 8 September 1656."
    assert "burst" not in continued_names("On what date did the Athtal lock gate burst?", [sentence])
    judged = judge_answer(
        "8 September 1656", [_note(sentence)], "On what date did the Athtal lock gate burst?"
    )
    assert judged.kind == "extractive" and not judged.unconfirmed, judged
    inn = "The Halwex coaching inn is kept by Ilka Athvinsar."
    assert "inn" in continued_names("Who keeps the Halwex coaching inn?", [inn])
    assert "inn" in continued_names(
        "In which county did the innkeeper of the Halwex coaching inn grow up?", [inn]
    )


def _note(text: str, start: int = 0) -> Note:
    return Note(
        sources=[0],
        quotes=[
            Evidence(
                chunk_id=0,
                doc_index=0,
                title="",
                start=start,
                end=start + len(text),
                text=text,
                verified=True,
            )
        ],
    )


POTTER = "What is the name of the parrot kept by the chief potter of the Wexlen workshop?"
POTTER_CHAIN = (
    "The chief potter of the Wexlen workshop is Leocadia Brenvin.",
    "Leocadia Brenvin keeps a parrot named Vartris.",
)


def test_a_role_with_a_word_before_it_names_a_chain() -> None:
    """Session 42's test split (potter-parrot): "the chief potter of the Wexlen workshop" was no link
    (a word between the article and the role), so no chain was followed and Segment+ and ToM answered
    NO INFORMATION."""
    (link,) = chain_links(POTTER)
    assert (link.phrase, link.role, link.entity) == (
        "the chief potter of the Wexlen workshop",
        "potter",
        "the Wexlen workshop",
    )
    assert (
        link.asked_through(POTTER, "Leocadia Brenvin")
        == "What is the name of the parrot kept by Leocadia Brenvin?"
    )
    result, _ = run("segment-plus", POTTER, POTTER_CHAIN)
    assert "Vartris" in result.answer and result.support == "derived", (result.answer, result.stats.notes)


GLAZIER = "In which village was the glazier of the windows of the Pevhal chapel born?"
GLAZIER_CHAIN = (
    "The windows of the Pevhal chapel were glazed by Ilka Lenhal.",
    "Ilka Lenhal was born in the village of Vintalath.",
)


def test_a_nested_role_is_followed_through_the_holder_the_question_asks_about() -> None:
    """Session 45's held-out split (glazier-village, 8 of 8 NO INFORMATION): the chain asked "What is
    the name of the windows of the Pevhal chapel?", the innermost role, and found no bridge. The role
    the question asks something of is the glazier; a role of whom only the name is asked is not."""
    link = link_to_follow(GLAZIER)
    assert link is not None and (link.role, link.entity) == ("glazier", "the windows of the Pevhal chapel")
    assert link.asked_through(GLAZIER, "Ilka Lenhal") == "In which village was Ilka Lenhal born?"
    clock = link_to_follow(
        "What was the name of the apprentice of the maker of the clock of the Vinrel tower?"
    )
    assert clock is not None and clock.phrase == "the maker of the clock of the Vinrel tower"
    for strategy in ("mapreduce", "segment-plus"):
        result, _ = run(strategy, GLAZIER, GLAZIER_CHAIN)
        assert "Vintalath" in result.answer and result.support == "derived", (
            result.answer,
            result.stats.notes,
        )


def test_a_name_given_by_called_answers_what_was_the_name_of_the_chains_next_role() -> None:
    """Dev, clockmaker-apprentice (8K, embedded model): the bridge was found, and the second step's
    answer, "Marit Athoskthim took on an apprentice called Ganquitris", was read as naming her and
    nothing asked of her ("name" is given by "called"); a horse called so is still another thing."""
    question = "What was the name of the apprentice of Marit Athoskthim?"

    def judged(sentence: str) -> Judged:
        quote = Evidence(
            chunk_id=0, title="", doc_index=0, start=0, end=len(sentence), text=sentence, verified=True
        )
        return judge_answer("Ganquitris", [Note(sources=[0], quotes=[quote])], question)

    named = judged("Marit Athoskthim took on an apprentice named Ganquitris.")
    assert named.kind == "extractive" and not named.unconfirmed, named
    # "called" gives a name in another word: the words leave it to the verification call.
    right = judged("Marit Athoskthim took on an apprentice called Ganquitris.")
    assert right.kind == "extractive" and "(name)" in right.unconfirmed, right
    assert judged("Marit Athoskthim owns a horse called Ganquitris.").unconfirmed


def test_a_role_is_said_by_its_word_family_only() -> None:
    def says(role: str, sentence: str) -> bool:
        return states_role(role, frozenset(content_stems(sentence)))

    assert says("founder", "The guild was founded by Ilka Lenhal.")
    assert says("owner", "The mill is owned by Marit Varmestal.")
    assert says("commander", "The lightship is commanded by Bram Lolo.")
    assert says("steward", "The steward of the manor is Odile Marul.")
    assert not says("founder", "The guild stands beside the house of Ilka Lenhal.")
    assert not says("carver", "The car of the fountain is red.")
    assert says("leader", "The choir is led by Petra Wexvin.")
    assert says("builder", "The tower was built by Bram Lolo.")
    assert says("writer", "The letter was written by Odile Marul.")
    assert not says("architect", "The library was designed by Bram Lolo.")
    assert not says("leader", "The choir sang with Petra Wexvin.")
    assert says("glazier", "The windows were glazed by Ilka Lenhal.")  # "-ier" of "glaze"
    assert not says("glazier", "The windows were washed by Ilka Lenhal.")


def test_names_are_read_as_spelled() -> None:
    assert capitalised_runs("The Quirel guild was founded by Ilka Lenhal of Vosk.") == [
        "Quirel",
        "Ilka Lenhal of Vosk",
    ]


def test_the_dry_run_bounds_a_chain_and_the_run_stays_within_it() -> None:
    from longgraph.api import aask

    text = spread(CHAIN)
    model = ScriptedChatModel(responder=literal_responder(CHAIN))
    provider = FakeProvider(model)
    estimate = asyncio.run(
        aask(QUESTION, text, strategy="mapreduce", llm=provider, dry_run=True, start_embedded=False, **SILENT)
    )
    chain = [s for s in estimate.stages if s.stage == "chain"]
    assert len(chain) == 1 and chain[0].calls == 8, estimate.stages  # 2 steps x 2 passages x 2 stretches
    result = asyncio.run(
        aask(QUESTION, text, strategy="mapreduce", llm=provider, start_embedded=False, **SILENT)
    )
    assert "Ulqui" in result.answer and 2 <= result.stats.calls_by_stage["chain"] <= chain[0].calls
    assert len(model.calls) <= estimate.calls_at_most
    plain = asyncio.run(
        aask(
            "Who founded the Quirel guild?",
            text,
            strategy="mapreduce",
            llm=provider,
            dry_run=True,
            start_embedded=False,
            **SILENT,
        )
    )
    assert not [s for s in plain.stages if s.stage == "chain"]


def test_a_role_in_other_words_stands_on_a_verifying_models_yes_only() -> None:
    """ "designed by" states who the architect is in words a lexical check cannot tie to "architect":
    a model that verifies is asked, and its yes lets the chain go on; without one the run stays silent."""
    import re

    question = "In which port did the architect of the Pevhal library grow up?"
    facts = ("The Pevhal library was designed by Ilka Lenhal.", "Ilka Lenhal grew up in the port of Vosk.")
    reader = literal_responder(facts)

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        if schema_name(extras) != "AnswerCheck":
            return reader(messages, extras)
        proposed = re.search(r"^Proposed answer:\s*(.*)$", str(messages[-1]["content"]), re.MULTILINE)
        content = str(messages[-1]["content"])
        asked_who = "name of the architect" in content  # the chain's first step, not the question
        right = proposed is not None and (
            "Vosk" in proposed.group(1) or (asked_who and "Ilka" in proposed.group(1))
        )
        said = ("yes", "it states it") if right else (NO_INFORMATION, None)
        return build_completion_content({"messages": list(messages), **extras}, said=said)[0]

    text = spread(facts)
    for setting, expected in (("on", True), ("off", False)):
        model = ScriptedChatModel(responder=respond)
        graph = build_strategy("mapreduce", FakeProvider(model))
        raw = asyncio.run(
            graph.ainvoke(
                {"question": question, "document": text}, context={**SETTINGS, "verify_answers": setting}
            )
        )
        result = GraphOutput.model_validate(raw)
        if expected:
            assert "Vosk" in result.answer and result.support == "derived", (
                result.answer,
                result.stats.notes,
            )
            checks = [c for c in model.calls if "Proposed answer:" in str(c["messages"][-1]["content"])]
            assert checks and result.stats.calls_by_stage.get("verify", 0) == len(checks)  # every one counted
        else:
            assert does_not_stand(result), result.answer
            assert any("does not say 'architect'" in n for n in result.stats.notes), result.stats.notes


def test_the_answers_own_sentence_is_no_bridge() -> None:
    """ "Who painted the portrait of the Duke of Osterlin?" names the portrait through the Duke, but the
    sentence naming a person beside the portrait is the answer's own (it says "painted"); one that only
    mentions the portrait ("shows") does not say who or what the portrait is. Neither is followed."""
    question = "Who painted the portrait of the Duke of Osterlin?"
    assert link_to_follow(question) is not None
    for first in (
        "The portrait of the Duke of Osterlin was painted by Bram Lolo.",
        "The portrait of the Duke of Osterlin shows Bram Lolo.",
    ):
        facts = (first, "Bram Lolo was painted by Odile Marul.")

        reader = literal_responder(facts)

        def silent_on_the_question(
            messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any], reader: Any = reader
        ) -> str:
            asked, _ = extract_question_and_text(list(messages))
            if asked == question and schema_name(extras) in READING_SCHEMAS:  # the first pass misses it
                return build_completion_content(
                    {"messages": list(messages), **extras}, said=(NO_INFORMATION, None)
                )[0]
            return str(reader(messages, extras))

        model = ScriptedChatModel(responder=silent_on_the_question)
        graph = build_strategy("mapreduce", FakeProvider(model))
        raw = asyncio.run(graph.ainvoke({"question": question, "document": spread(facts)}, context=SILENT))
        result = GraphOutput.model_validate(raw)
        assert does_not_stand(result), (first, result.answer)
        assert not any("followed the chain" in n for n in result.stats.notes), result.stats.notes
        assert any("no bridge" in n for n in result.stats.notes), result.stats.notes  # it was tried


def test_who_a_sentence_says_the_linked_entity_is() -> None:
    from longgraph.nodes.answer_support import says_who

    (steward,) = chain_links("What is the name of the falcon trained by the steward of the Zen manor?")
    assert says_who(steward, "The steward of the Zen manor is Ysolde Lenvar.", "Ysolde Lenvar")
    assert says_who(steward, "Ysolde Lenvar is the steward of the Zen manor.", "Ysolde Lenvar")
    assert not says_who(steward, "The steward of the Zen manor greeted Ysolde Lenvar.", "Ysolde Lenvar")
    # An apposition says it, either way round; a list does not.
    assert says_who(steward, "The steward of the Zen manor, Ysolde Lenvar, rode out.", "Ysolde Lenvar")
    assert says_who(steward, "Ysolde Lenvar, the steward of the Zen manor, rode out.", "Ysolde Lenvar")
    assert says_who(steward, "They were met by the steward of the Zen manor, Ysolde Lenvar.", "Ysolde Lenvar")
    # The apposition may say what the holder is before the name, as "is" may ("is a man named …").
    named = "The steward of the Zen manor, a woman named Ysolde Lenvar, rode out."
    assert says_who(steward, named, "Ysolde Lenvar")
    assert not says_who(
        steward, "The steward of the Zen manor, a friend of Ysolde Lenvar, rode out.", "Ysolde Lenvar"
    )
    for listed in (
        "The steward of the Zen manor, Ysolde Lenvar and Bram Lolo rode out.",
        "The steward of the Zen manor, Ysolde Lenvar, and Bram Lolo rode out.",
        "Ysolde Lenvar, the steward of the Zen manor and Bram Lolo rode out.",
        "The steward of the Zen manor, a man named Ysolde Lenvar and Bram Lolo rode out.",
    ):
        assert not says_who(steward, listed, "Ysolde Lenvar"), listed
    (founder,) = chain_links(QUESTION)
    assert says_who(founder, "The Quirel guild was founded by Ilka Lenhal.", "Ilka Lenhal")


def test_a_bridge_the_words_say_needs_no_reading() -> None:
    """Session 52's first test split, SmolLM2-135M: asked "What is the name of the steward of the Pevhal
    manor?" over "Ilka Lenhal serves as steward of the Pevhal manor.", it answered "Lena Lenhal", which
    grounding refuses, in every strategy. The sentence says who the steward is: the bridge is taken from
    it with no call, and only the question about Ilka Lenhal is read."""
    question = "In which valley was the steward of the Pevhal manor born?"
    facts = (
        "Ilka Lenhal serves as steward of the Pevhal manor.",
        "Ilka Lenhal was born in the valley of Vintalath.",
    )
    result, model = run("mapreduce", question, facts)
    assert "Vintalath" in result.answer and result.support == "derived", (result.answer, result.stats.notes)
    asked = _asked(model)
    assert "What is the name of the steward of the Pevhal manor?" not in asked, asked
    assert "In which valley was Ilka Lenhal born?" in asked, asked
    bridged = [c for c in result.chunks if c.reason and "in the text's own words" in c.reason]
    assert len(bridged) == 1, [c.reason for c in result.chunks]


def test_a_sentence_giving_the_role_as_a_title_or_by_serves_as_says_who_holds_it() -> None:
    """Session 52's held-out chains: "… with the ferryman Casimir Lensartris" names "Travellers" too (a
    sentence starts with a capital), and "Ilka Lenhal serves as steward of …" says "is" in other words.
    Both were silent: two new names, or no word saying the role outside the entity's phrase."""
    from longgraph.nodes.answer_support import holder_among, says_who

    (ferryman,) = chain_links("By which lake did the ferryman of the Quibren priory grow up?")
    sentence = "Travellers cross to the Quibren priory with the ferryman Casimir Lensartris."
    assert holder_among(ferryman, sentence, ["Travellers", "Casimir Lensartris"]) == ["Casimir Lensartris"]
    assert says_who(ferryman, sentence, "Casimir Lensartris")
    # One capitalised word opening the sentence may be any word: "Meals" is no name beside the cook's.
    (cook,) = chain_links("In which village was the cook of the Pevhal workhouse born?")
    meals = "Meals at the Pevhal workhouse are cooked by Ilka Lenhal."
    assert holder_among(cook, meals, ["Meals", "Ilka Lenhal"]) == ["Ilka Lenhal"]
    assert says_who(cook, meals, "Ilka Lenhal")
    # Two names given the title, or none: the sentence does not single one out.
    both = "The ferryman Bram Lolo and the ferryman Casimir Lensartris cross to the Quibren priory."
    assert holder_among(ferryman, both, ["Bram Lolo", "Casimir Lensartris"]) == [
        "Bram Lolo",
        "Casimir Lensartris",
    ]
    (steward,) = chain_links("In which valley was the steward of the Pevhal manor born?")
    assert says_who(steward, "Ilka Lenhal serves as steward of the Pevhal manor.", "Ilka Lenhal")
    assert says_who(steward, "Ilka Lenhal acted as the steward of the Pevhal manor.", "Ilka Lenhal")
    assert not says_who(steward, "Ilka Lenhal dined with the steward of the Pevhal manor.", "Ilka Lenhal")
    assert not says_who(steward, "Ilka Lenhal serves the steward of the Pevhal manor.", "Ilka Lenhal")
    # Session 55's held-out chain: "took over as", and the verbs like it, say who holds the role too.
    for said in (
        "took over as quartermaster of the Pevhal manor last spring",
        "became the steward of the Pevhal manor",
        "stepped in as steward of the Pevhal manor",
        "was appointed steward of the Pevhal manor",
    ):
        role = said.split(" of ")[0].split()[-1]
        (link,) = chain_links(f"In which valley was the {role} of the Pevhal manor born?")
        assert says_who(link, f"Ilka Lenhal {said}.", "Ilka Lenhal"), said
    assert not says_who(steward, "Ilka Lenhal took over from the steward of the Pevhal manor.", "Ilka Lenhal")
    assert not says_who(
        steward, "Ilka Lenhal became a friend of the steward of the Pevhal manor.", "Ilka Lenhal"
    )
    assert not says_who(
        steward, "Ilka Lenhal was named after the steward of the Pevhal manor.", "Ilka Lenhal"
    )


def test_a_person_put_in_a_post_is_its_holder_beside_another_capitalised_word() -> None:
    """Session 59's held-out chain: "Ilka Lenhal was sworn in as reeve of the Pevhal township at
    Michaelmas." gives two new capitalised words, and no verb the words knew tied either to the role:
    no bridge, silent in every strategy with the embedded model, and twice with the capable reader."""
    from longgraph.nodes.answer_support import holder_among, says_who

    (reeve,) = chain_links("On which islets was the reeve of the Pevhal township raised?")
    sworn = "Ilka Lenhal was sworn in as reeve of the Pevhal township at Michaelmas."
    assert holder_among(reeve, sworn, ["Ilka Lenhal", "Michaelmas"]) == ["Ilka Lenhal"]
    for said in (
        "was installed as",
        "has been hired as",
        "was taken on as",
        "was re-elected",
        "was ordained",
    ):
        sentence = f"At Michaelmas Ilka Lenhal {said} reeve of the Pevhal township."
        assert says_who(reeve, sentence, "Ilka Lenhal"), said
        assert holder_among(reeve, sentence, ["At Michaelmas", "Ilka Lenhal"]) == ["Ilka Lenhal"], said
    # Put in a post, not the post's holder: "replaced as", "dismissed as", "sworn at".
    for said in ("was replaced as", "was dismissed as", "was sworn at by"):
        assert not says_who(reeve, f"Ilka Lenhal {said} the reeve of the Pevhal township.", "Ilka Lenhal"), (
            said
        )


@pytest.mark.parametrize(
    "facts",
    [
        ("Travellers cross to the Quibren priory with the ferryman Casimir Lensartris.",
         "Casimir Lensartris grew up by the lake of Pevmar."),
        ("Each Sunday the ferryman Casimir Lensartris rows to the Quibren priory.",
         "Casimir Lensartris grew up by the lake of Pevmar."),
        ("Boats to the Quibren priory are rowed by the ferryman Casimir Lensartris.",
         "Casimir Lensartris grew up by the lake of Pevmar."),
        ("Pilgrims reach the Quibren priory on a raft poled by Casimir Lensartris, its ferryman.",
         "Casimir Lensartris grew up by the lake of Pevmar."),
    ],
)  # fmt: skip
def test_a_chain_through_a_role_given_as_a_title_is_followed(facts: tuple[str, str]) -> None:
    result, _ = run("mapreduce", "By which lake did the ferryman of the Quibren priory grow up?", facts)
    assert "Pevmar" in result.answer and result.supported, (result.answer, result.stats.notes)


def test_an_entity_of_several_nouns_is_replaced_whole() -> None:
    """The question reads "the keeper of the Lencor toll" (one noun after a name); the sentence naming
    the entity says "the Lencor toll bridge", so the question asked about the keeper leaves no
    "bridge" behind."""
    question = "What is the name of the dog owned by the keeper of the Lencor toll bridge?"
    facts = (
        "The Lencor toll bridge is kept by Leocadia Dordorsar.",
        "Leocadia Dordorsar owns a dog named Varpev.",
    )
    result, model = run("mapreduce", question, facts)
    assert "Varpev" in result.answer and result.support == "derived", (result.answer, result.stats.notes)
    asked = _asked(model)
    assert "What is the name of the dog owned by Leocadia Dordorsar?" in asked, asked


def test_a_role_word_inside_the_entitys_name_does_not_say_the_role() -> None:
    """ "The Dortal garden is tended by Anselm Lozenlen": "garden" is the entity's own word, not
    "gardener" said of anyone; "tended" is another word for it, which the words cannot tie."""
    from longgraph.nodes.answer_support import says_who

    (gardener,) = chain_links("In which town was the gardener of the Dortal garden born?")
    assert not says_who(gardener, "The Dortal garden is tended by Anselm Lozenlen.", "Anselm Lozenlen")
    assert says_who(
        gardener, "The Dortal garden is kept by its gardener, Anselm Lozenlen.", "Anselm Lozenlen"
    )


@pytest.mark.parametrize(
    ("fact", "stands"),
    [
        ("The lighthouse at Halbren is kept by a woman named Petra Reltallo.", True),
        ("The lighthouse at Halbren was painted by a woman named Petra Reltallo.", False),
        ("The lighthouse at Halbrin is kept by a woman named Petra Reltallo.", False),
    ],
)
def test_a_sentence_that_says_who_holds_the_asked_role_confirms_the_answer(fact: str, stands: bool) -> None:
    """Asked "What is the name of the keeper of the Halbren lighthouse?", the sentence naming the
    lighthouse, "kept" and one person confirms that person without a verifier (the words say the role);
    "painted ... named" does not (its "named" once passed for the question's "name": a wrong answer
    marked supported), and a look-alike lighthouse is not the one asked about."""
    question = "What is the name of the keeper of the Halbren lighthouse?"

    def reader(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        if schema_name(extras) not in READING_SCHEMAS:
            return oracle_responder(messages, extras)
        _, text = extract_question_and_text(list(messages))
        said = (fact, fact) if fact in " ".join(text.split()) else (NO_INFORMATION, None)
        return build_completion_content({"messages": list(messages), **extras}, said=said)[0]

    graph = build_strategy("mapreduce", FakeProvider(ScriptedChatModel(responder=reader)))
    raw = asyncio.run(graph.ainvoke({"question": question, "document": spread((fact,))}, context=SILENT))
    result = GraphOutput.model_validate(raw)
    if stands:
        assert "Petra Reltallo" in result.answer and result.supported is True, (
            result.answer,
            result.stats.notes,
        )
    else:
        assert does_not_stand(result), result.answer
        if "painted" in fact:  # the look-alike is refused earlier, by the binding rules
            assert "do not say who the keeper of the Halbren lighthouse is" in why_not(result), why_not(
                result
            )


def test_a_bridge_is_asked_what_the_question_asks_even_where_those_words_are_common() -> None:
    """Over SQuAD paragraphs "city" and "live" are common, so they were dropped from what the question
    asks of its entity, which left nothing to ask: the bridge "The Wexlen chronicle was translated by
    Leocadia Brenvin" stood for "In which city did the translator of the Wexlen chronicle live?"."""
    from longgraph.nodes.answer_support import Rarity, judge_answer
    from longgraph.state.contract import Evidence
    from longgraph.state.notes import Note

    question = "In which city did the translator of the Wexlen chronicle live?"
    bridge = "The Wexlen chronicle was translated by Leocadia Brenvin."
    filler = [f"People live in the city of Town{i} and many more live in another city." for i in range(60)]
    rarity = Rarity.of([*filler, bridge], question)
    assert {"city", stem("live")} <= rarity.common(frozenset(content_stems(question)))  # stems
    quote = Evidence(
        chunk_id=3,
        doc_index=0,
        title="",
        start=0,
        end=len(bridge),
        text=bridge,
        verified=True,
        confidence=4.0,
    )
    note = Note(sources=[3], answer=bridge, quotes=[quote], confidence=4.0)
    judged = judge_answer(bridge, [note], question, rarity=rarity)
    assert judged.kind == "none" or judged.unconfirmed, judged
