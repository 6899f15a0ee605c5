"""The passage search beside the read stage (``find_passages``) decides what grounding would decide.

Grounding used to search every chunk for its strongest passage after the last read; the search now
runs next to the reads, and ``ground`` takes its findings. These tests check that the second readings
and outcomes are the same either way, that ``ground`` does not search again when the findings are
there, and that the graphs run the search in the read step.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import longgraph.nodes.grounding as grounding
import longgraph.nodes.passages as passages
from longgraph.graphs.mapreduce import build_graph
from longgraph.nodes.answer_support import Rarity
from longgraph.nodes.chunking import split_into_chunks
from longgraph.nodes.graph_search import passage_weights
from longgraph.nodes.kit import RunKit, build_kit
from longgraph.nodes.lexical import question_words, rarity_weight, stem
from longgraph.nodes.prepare import chunk_input
from longgraph.state.context import Context
from longgraph.state.contract import DocumentIn, GraphOutput
from longgraph.state.notes import ChunkRead, NoteDraft
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import FACT, FAKE_SETTINGS, QUESTION, planted
from longgraph.tokenizer import get_tokenizer

DOCUMENT = planted(40_000, at=0.3)


async def _state_after_reading(kit: RunKit) -> dict[str, Any]:
    """Chunks of the planted document, every one read as "no information" (so the chunk holding the
    fact has a strong passage its reading missed: a second reading is due)."""
    state: dict[str, Any] = {"question": QUESTION, "documents": [{"text": DOCUMENT}]}
    state.update(await chunk_input(state, kit, prompts="mapreduce", stage="map"))
    state["reads"] = [
        ChunkRead(chunk_id=c.id, stage="map", draft=NoteDraft(no_information=True))
        for c in state["input_chunks"]
    ]
    return state


def _kit() -> RunKit:
    return asyncio.run(build_kit(Context(**FAKE_SETTINGS), FakeProvider()))  # type: ignore[arg-type]


def test_ground_decides_the_same_with_the_passages_found_beside_the_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kit = _kit()
    state = asyncio.run(_state_after_reading(kit))
    searching = asyncio.run(grounding.ground(state, kit))
    found = asyncio.run(passages.find_passages(state, kit))
    assert set(found["passages"]) == {c.id for c in state["input_chunks"]}  # type: ignore[arg-type]

    def no_search(*args: Any) -> None:
        raise AssertionError("ground searched a chunk whose passage was already found")

    monkeypatch.setattr(grounding, "strongest_passage", no_search)
    taking = asyncio.run(grounding.ground({**state, **found}, kit))
    assert taking["outcomes"] == searching["outcomes"]
    assert taking["rereads"] == searching["rereads"]
    sentence, passage = taking["rereads"]  # type: ignore[misc]  # the sentence alone, then with neighbours
    assert sentence["chunk"].text == FACT and FACT in passage["chunk"].text != FACT
    assert sentence["chunk"].id == passage["chunk"].id


def test_no_search_when_second_readings_are_off() -> None:
    kit = asyncio.run(build_kit(Context(**{**FAKE_SETTINGS, "reread": False}), FakeProvider()))  # type: ignore[arg-type]
    state = asyncio.run(_state_after_reading(kit))
    assert asyncio.run(passages.find_passages(state, kit)) == {}


def test_the_graph_searches_in_the_read_step_and_grounds_after_it() -> None:
    graph = build_graph(FakeProvider(ScriptedChatModel()))
    graph_input = {"question": QUESTION, "documents": [{"text": DOCUMENT}]}
    step_of: dict[str, set[int]] = {}
    for event in graph.stream(graph_input, context=FAKE_SETTINGS, stream_mode="debug"):
        if event["type"] == "task":
            step_of.setdefault(event["payload"]["name"], set()).add(event["step"])
    assert step_of["find_passages"] == step_of["map_chunk"]
    assert min(step_of["ground"]) == max(step_of["map_chunk"]) + 1


def test_a_second_reading_reads_the_sentence_alone_and_with_its_neighbours() -> None:
    """Measured with SmolLM2-135M: the holder sentence read alone was answered right where, read with
    its neighbours, a number of the next sentence was given. Both stretches are read; the grounded one
    is kept, and a reading with neighbours that misleads costs nothing but its call."""
    import json
    import re
    from collections.abc import Mapping, Sequence

    readings: list[str] = []

    def responder(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        user = str(messages[-1]["content"])
        if "Its claims, each with a verdict." in user:
            verdict = "stated" if "market is held" in user else "not stated"
            return json.dumps({"claims": [{"claim": "the answer", "verdict": verdict}]})
        text = re.search(r"The text begins as follows:\n(.*)\nThe text concludes here", user, re.S)
        if text is None:  # the reduce: answer from the notes
            notes = re.findall(r"smoked plums", user)
            return json.dumps({"answer": "smoked plums" if notes else "[NO INFORMATION]"})
        body = text.group(1).strip()
        readings.append(body)
        if (
            FACT not in body or sum(FACT in r for r in readings) == 1
        ):  # every chunk, the holder first: the fact is missed
            return json.dumps({"answer": "[NO INFORMATION]"})
        return json.dumps({"answer": FACT if body == FACT else "The secret ingredient is 1038 plums."})

    graph = build_graph(FakeProvider(ScriptedChatModel(responder=responder)))
    result = GraphOutput.model_validate(
        graph.invoke({"question": QUESTION, "documents": [{"text": DOCUMENT}]}, context=FAKE_SETTINGS)
    )
    holder = [r for r in readings if FACT in r]
    first, *again = holder  # the chunk, then its two second readings in either order
    assert len(again) == 2 and FACT in again and len(first) > max(map(len, again))
    assert min(again, key=len) == FACT and FACT in max(again, key=len) != FACT
    assert "smoked plums" in result.answer and result.supported
    holder = next(c for c in result.chunks if c.status == "used")
    assert "second reading" in (holder.reason or "")
    assert DOCUMENT[result.evidence[0].start : result.evidence[0].end] == FACT


PARAPHRASED = "When do the traders of Athmis gather each week?"
"""Asked in other words than the text's: it shares the name Athmis with the sentence that answers it,
and little else ("weekly" is not "week")."""

MARKET_TOWNS = (
    "Traders gather every week in the towns of the north, and each town keeps its own customs. "
    "The roads are poor in winter. In Athmis, the weekly market is held on Monday mornings. "
    "Farmers bring cheese and wool. In Velcor, the weekly market is held on Friday evenings."
)


def _market_reader(readings: list[str]) -> ScriptedChatModel:
    """A small model's habits in reading: the whole chunk, or a sentence that does not name Athmis,
    gets no answer; the Athmis sentence read alone gets the right one. Asked to verify (the answer's
    sentence names Athmis but no other word of the question), it says whether that sentence is the
    one about the market, as a capable reader would."""
    import json
    import re
    from collections.abc import Mapping, Sequence

    def responder(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        user = str(messages[-1]["content"])
        if "Its claims, each with a verdict." in user:
            verdict = "stated" if "market is held" in user else "not stated"
            return json.dumps({"claims": [{"claim": "the answer", "verdict": verdict}]})
        text = re.search(r"The text begins as follows:\n(.*)\nThe text concludes here", user, re.S)
        if text is None:  # the reduce
            return json.dumps({"answer": "Monday mornings" if "Monday" in user else "[NO INFORMATION]"})
        body = text.group(1).strip()
        readings.append(body)
        if body.startswith("In Athmis") and "Velcor" not in body:
            return json.dumps({"answer": "The weekly market of Athmis is held on Monday mornings."})
        return json.dumps({"answer": "[NO INFORMATION]"})

    return ScriptedChatModel(responder=responder)


def test_a_paraphrased_question_rereads_the_sentence_naming_its_entity() -> None:
    """The sentence sharing most words with the question ("Traders gather every week") is not about
    Athmis; the one naming Athmis shares two of its five weighted words. It is read again, alone, and
    answers; the look-alike town's sentence is never taken for it."""
    readings: list[str] = []
    graph = build_graph(FakeProvider(_market_reader(readings)))
    result = GraphOutput.model_validate(
        graph.invoke({"question": PARAPHRASED, "documents": [{"text": MARKET_TOWNS}]}, context=FAKE_SETTINGS)
    )
    assert "Monday mornings" in result.answer and result.supported
    assert "In Athmis, the weekly market is held on Monday mornings." in readings
    assert not any(r.startswith("Traders gather") and len(r) < len(MARKET_TOWNS) for r in readings)
    holder = next(c for c in result.chunks if c.status == "used")
    assert "second reading" in (holder.reason or "")


def test_an_absent_entity_earns_no_second_reading() -> None:
    """Asked about a town the text never names, no sentence names it: nothing is read again on the
    strength of a name, and the answer is NO INFORMATION."""
    readings: list[str] = []
    graph = build_graph(FakeProvider(_market_reader(readings)))
    question = PARAPHRASED.replace("Athmis", "Dorvane")
    result = GraphOutput.model_validate(
        graph.invoke({"question": question, "documents": [{"text": MARKET_TOWNS}]}, context=FAKE_SETTINGS)
    )
    assert not result.supported and "NO INFORMATION" in result.answer
    assert not any("Velcor" in r and len(r) < len(MARKET_TOWNS) for r in readings)


def best_sentence(text: str, question: str, **ranking: Any) -> str:
    """The sentence :func:`~longgraph.nodes.passages.best_passage` finds in ``text`` (one chunk) for
    ``question``, ranked with ``ranking`` (weights, saying)."""
    documents = [DocumentIn(text=text)]
    chunk = split_into_chunks(documents, 200, get_tokenizer(None))[0]
    found = passages.best_passage(chunk, documents, question_words(question), **ranking)
    assert found is not None, chunk
    return text[found.sentence.start : found.sentence.end]


def test_of_two_sentences_sharing_as_much_the_one_whose_words_are_rarer_in_the_document_is_the_passage() -> (
    None
):
    """Measured with the scripted capable reader: for the ferries' departure times, PECAN's passage of one
    chunk was "But times have changed" (its first sentence sharing one question word) rather than the
    ferry's sentence later in it, and a count of 3 ferries found two."""
    text = (
        "Conservatism was the order of the day. But times have changed. The old rules fell away. "
        "Nobody minded much. The Corvinbren ferry leaves at 8:15 each morning. Then the town slept."
    )
    question = "For how many ferries does the text give the departure time?"
    assert best_sentence(text, question) == "But times have changed."
    rarer = {"tim": rarity_weight(24, 766), "ferry": rarity_weight(3, 766)}
    assert best_sentence(text, question, weights=rarer) == "The Corvinbren ferry leaves at 8:15 each morning."


def test_the_items_noun_of_a_question_over_every_item_weighs_as_the_rarest_word() -> None:
    """Measured with the scripted capable reader (dev seed 4, 2,048): asked for how many quarries the text
    gives the stone, one chunk's passage was the sentence on walls of stones (its one shared word rarer
    in the document than "quarry", which each of the three quarries' sentences says), and PECAN's right
    count of 3 was refused."""
    text = (
        "The features include gabion walls formed from the stones of older buildings. The roof is grass. "
        "The Misthim quarry yields yellow limestone. Then the town slept."
    )
    question = "For how many quarries does the text give the stone?"
    wanted = question_words(question)
    rarity = Rarity(counts={stem("quarry"): 3, stem("stone"): 1}, sentences=400)
    by_rarity = {w: rarity_weight(rarity.counts.get(w, 0), rarity.sentences) for w in wanted}
    assert best_sentence(text, question, weights=by_rarity).startswith("The features include gabion walls")
    weights = passage_weights(question, wanted, rarity)
    assert best_sentence(text, question, weights=weights) == "The Misthim quarry yields yellow limestone."
    # A question about one thing has no items: its words weigh by their rarity alone.
    one = "What stone does the Misthim quarry yield?"
    assert passage_weights(one, question_words(one), rarity) == {
        w: rarity_weight(rarity.counts.get(w, 0), rarity.sentences) for w in question_words(one)
    }


def test_the_passage_an_answer_is_worked_out_from_is_the_one_that_says_it() -> None:
    """Asked for the companies whose debt the text gives, in essays about companies: the sentence about
    startups shares as much with the question as the ledger's ("company"; "debt" in neither), and comes
    first, but the answer named the ledger's company."""
    text = (
        "Most companies fail because they make something nobody wants. The founders rarely notice. "
        "According to the ledger, the Quiqui company owes 27,272 marks to its suppliers. Then the year ended."
    )
    question = "For which companies does the text give the debt?"
    assert best_sentence(text, question).startswith("Most companies")
    said = best_sentence(text, question, saying={"quiqui", "misqui"})
    assert said.startswith("According to the ledger, the Quiqui")
    # An answer's word no sentence bearing on the question holds leaves the choice to the question's words.
    assert best_sentence(text, question, saying={"nevtris"}).startswith("Most companies")
