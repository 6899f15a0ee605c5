"""The grounding check: which model answers are evidence, what they are worth, and what survives."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from longgraph.graphs.mapreduce import build_graph
from longgraph.nodes.answer_support import judge_answer, modified_phrases, named_by_its_modifier
from longgraph.nodes.grounding import (
    READING_RULES,
    Measured,
    ground_read,
    names_spelt_as_in_the_chunk,
    says_something_new,
    stated_in_the_chunk,
    why_not_evidence,
)
from longgraph.nodes.lexical import codes_in, content_stems, question_words, sentence_spans, stem
from longgraph.nodes.passages import bears_strongly, best_passage, may_bear_strongly, worth_rereading
from longgraph.nodes.support import Span, Support, confidence_of, support_in_notes
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn, Evidence, GraphOutput
from longgraph.state.notes import ChunkRead, Note, NoteDraft
from longgraph.state.outputs import NO_INFORMATION
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.testing.oracle import extract_question_and_text
from longgraph.tests.conftest import FACT, QUESTION, does_not_stand, own_answer, planted

DOC = (
    "The harbour opened in 1911. It was built by the Kestrel company.\n\n"
    "The secret code that opens the old lighthouse vault in Port Averell is 7319-KESTREL. "
    "Nobody has used it since the storm."
)
CODE_Q = "What is the secret code that opens the old lighthouse vault in Port Averell?"


def _chunk(documents: Sequence[DocumentIn], chunk_id: int = 0) -> Chunk:
    parts = [ChunkPart(doc_index=i, title=d.title, start=0, end=len(d.text)) for i, d in enumerate(documents)]
    return Chunk(id=chunk_id, parts=parts, tokens=100, text="")


def _ground(draft: NoteDraft, documents: Sequence[DocumentIn] | None = None, question: str = CODE_Q):  # type: ignore[no-untyped-def]
    docs = list(documents or [DocumentIn(text=DOC)])
    return ground_read(ChunkRead(chunk_id=0, draft=draft), _chunk(docs), docs, question)


def test_a_verbatim_answer_sentence_is_evidence_with_full_confidence() -> None:
    sentence = "The secret code that opens the old lighthouse vault in Port Averell is 7319-KESTREL."
    outcome, note = _ground(NoteDraft(answer=sentence))
    assert outcome.fate == "noted" and note is not None
    assert note.confidence == 5.0 and outcome.support == 1.0 and outcome.relevance == 1.0
    quote = note.verified_quotes[0]
    assert DOC[quote.start : quote.end] == sentence


@pytest.mark.parametrize(
    "answer",
    [
        "the SECRET code that opens the old   lighthouse vault in port averell is 7319 kestrel",  # case, spaces, dash
        "7319-KESTREL",  # the value alone
        "It is 7319-Kestrel.",
    ],
)
def test_drift_in_case_whitespace_and_punctuation_is_tolerated(answer: str) -> None:
    outcome, note = _ground(NoteDraft(answer=answer))
    assert outcome.fate == "noted", outcome.reason
    assert note is not None and "7319-KESTREL" in DOC[note.quotes[0].start : note.quotes[0].end]


def test_a_chunks_worded_answer_is_evidence_and_a_worded_invention_is_not() -> None:
    """The map stage reads a chunk's answer as the final stage does (``nodes/answer_wording.py``): the
    frame's and explanation's words are no part of the value ("text", "states": 1 of 3 new words held)."""
    question = "In which year did the harbour open?"
    outcome, note = _ground(NoteDraft(answer="1911 — as the text states."), question=question)
    assert outcome.fate == "noted" and note is not None, outcome.reason
    outcome, note = _ground(NoteDraft(answer="The answer is 1912, as the text states."), question=question)
    assert note is None and outcome.fate == "unsupported"


def test_a_restated_question_is_not_evidence() -> None:
    outcome, note = _ground(
        NoteDraft(
            answer="The secret code that opens the old lighthouse vault in Port Averell is the secret code."
        )
    )
    assert note is None and outcome.fate == "unsupported"
    assert outcome.reason and "restates the question" in outcome.reason


def test_a_hallucinated_value_is_not_evidence() -> None:
    outcome, note = _ground(NoteDraft(answer="The code is 4242-FALCON.", model_confidence=5.0))
    assert note is None and outcome.fate == "unsupported"
    assert outcome.reason and "not in the chunk" in outcome.reason and "falcon" in outcome.reason
    assert outcome.model_confidence == 5.0 and outcome.confidence == 0.0  # the model's say-so cannot lift it


REPORTS = (
    "Praexkaerk Textiles reported total revenue of 433.1 million dollars for fiscal year 2023. "
    "Its looms run day and night.\n\n"
    "Denfur Foods reported total revenue of 855.7 million dollars for fiscal year 2023. "
    "Its bakeries opened in 1990."
)
REVENUE_Q = "What total revenue did Denfur Foods report for fiscal year 2023?"


@pytest.mark.parametrize("answer", ["23.1 million dollars", "85.7 million dollars", "855 million dollars"])
def test_an_answer_whose_number_is_not_in_the_chunk_is_not_evidence(answer: str) -> None:
    """Measured with SmolLM2 on the loong-synth spotlight: "23.1 million dollars" read from a chunk
    saying 433.1 passed on "million dollars" (2 of 3 new words) and became the final answer."""
    outcome, note = _ground(
        NoteDraft(answer=answer),
        [DocumentIn(text=REPORTS[:88])],
        "What total revenue did Denfur Foods report?",
    )
    assert note is None and outcome.fate == "unsupported"
    assert outcome.reason and "not in the chunk" in outcome.reason and answer.split()[0] in outcome.reason


@pytest.mark.parametrize(
    "answer", ["$85.1 million", "23.1 million dollars", "The total revenue was 855 million."]
)
def test_a_wrong_number_keeps_the_sentence_it_paraphrases_without_the_number(answer: str) -> None:
    """Measured with SmolLM2 on loong-synth: the chunk holding Denfur's "855.7 million dollars" answered
    "$85.1 million" on both readings, and the run answered with another company's revenue."""
    outcome, note = _ground(
        NoteDraft(answer=answer, model_confidence=5.0), [DocumentIn(text=REPORTS)], REVENUE_Q
    )
    assert outcome.fate == "noted" and outcome.value_dropped and note is not None
    assert outcome.reason and "not in the chunk" in outcome.reason and "value dropped" in outcome.reason
    assert note.answer == "" and [q.text for q in note.verified_quotes] == [
        "Denfur Foods reported total revenue of 855.7 million dollars for fiscal year 2023."
    ]
    assert note.confidence == confidence_of(1.0, 1.0, 5.0) == 5.0 and outcome.support == 1.0
    assert worth_rereading(outcome, 1.0, question_words(REVENUE_Q))  # a second reading may give the value


@pytest.mark.parametrize("answer", ["2018-09-23T14:57:56.783Z", "1918-10-23", "2023FedEx85"])
def test_a_bare_wrong_value_keeps_the_sentence_naming_what_the_question_names(answer: str) -> None:
    """Measured with SmolLM2-135M: asked "When was the Oskzen bridge opened?", the holder chunk answered
    an ISO timestamp on both readings; only look-alike bridges' dates were left as notes. A bare value
    has no words to find its sentence by; the question's names do, when one sentence holds them all."""
    bridges = (
        "The Varlen bridge was opened on 12 January 1948. The Oskzen bridge was opened on 23 October 1918."
    )
    docs = [DocumentIn(text=bridges)] if "Fed" not in answer else [DocumentIn(text=REPORTS)]
    question = "When was the Oskzen bridge opened?" if "Fed" not in answer else REVENUE_Q
    outcome, note = _ground(NoteDraft(answer=answer), docs, question)
    assert outcome.fate == "noted" and outcome.value_dropped and note is not None and note.answer == ""
    [quote] = note.verified_quotes
    assert quote.text.startswith("The Oskzen bridge" if "Fed" not in answer else "Denfur Foods")
    # A question that names nothing gives a bare value no sentence to keep.
    outcome, note = _ground(NoteDraft(answer=answer), docs, "When was the bridge opened?")
    assert note is None and not outcome.value_dropped


def test_a_bare_wrong_value_of_a_paraphrased_question_keeps_the_sentence_naming_its_entity() -> None:
    """Measured with SmolLM2-135M on a dev paraphrase: asked "On what date did the Cormis college
    begin?", the holder chunk answered "2007-08-22" on every reading of "Founded on January 17, 1679, the
    Cormis university is the oldest in the province." The sentence shares only the name with the
    question (2 of its 5 weighted words), but names all the question names: it is kept, without the
    wrong value. A sentence naming another college is not."""
    text = (
        "Founded on March 2, 1702, the Velmis university is the second oldest. "
        "Founded on January 17, 1679, the Cormis university is the oldest in the province."
    )
    outcome, note = _ground(
        NoteDraft(answer="2007-08-22"), [DocumentIn(text=text)], "On what date did the Cormis college begin?"
    )
    assert outcome.fate == "noted" and outcome.value_dropped and note is not None and note.answer == ""
    [quote] = note.verified_quotes
    assert "Cormis" in quote.text and "Velmis" not in quote.text
    outcome, note = _ground(
        NoteDraft(answer="2007-08-22"), [DocumentIn(text=text)], "On what date did the Dorvane college begin?"
    )
    assert note is None and not outcome.value_dropped


def test_a_wrong_number_keeps_no_sentence_that_does_not_bear_strongly_on_the_question() -> None:
    """Another company's sentence shares 3 of the question's 7 weighted words: below half, nothing is kept;
    nor is a sentence holding no number, nor one that lacks the answer's other words, nor anything for an
    answer with no word but its number (measured: SmolLM2 wrote "2023FedExFedEx…")."""
    other_only = [DocumentIn(text=REPORTS[:88])]
    for answer, docs in [
        ("85.1 million dollars", other_only),
        (
            "85.1 million dollars",
            [DocumentIn(text="Denfur Foods reported total revenue for fiscal year 2023.")],
        ),
        ("85.1 kilograms of flour", [DocumentIn(text=REPORTS)]),
        ("2023FedEx85", other_only),  # a garbled token, and no sentence naming Denfur Foods
    ]:
        outcome, note = _ground(NoteDraft(answer=answer), docs, "What total revenue did Denfur Foods report?")
        assert note is None and outcome.fate == "unsupported" and not outcome.value_dropped, answer


def test_the_right_number_is_evidence_in_its_own_sentence() -> None:
    outcome, note = _ground(NoteDraft(answer="855.7 million dollars"), [DocumentIn(text=REPORTS)], REVENUE_Q)
    assert outcome.fate == "noted" and note is not None and outcome.relevance == 1.0
    assert REPORTS[note.quotes[0].start : note.quotes[0].end].startswith("Denfur Foods reported")


ORCHARD = "Taxes rose that year. The Relsar orchard has 24,328 apple trees. The harvest was late."
ORCHARD_Q = "How many apple trees does the Relsar orchard have?"


@pytest.mark.parametrize("answer", ["24328", "24,328", "The Relsar orchard has 24328 apple trees."])
def test_a_number_is_the_same_with_or_without_thousands_separators(answer: str) -> None:
    """Measured with SmolLM2-135M: asked for "24,328 apple trees" it answered "24328" on every reading,
    and the check, which split the text's number at its comma, found the answer in no chunk."""
    outcome, note = _ground(NoteDraft(answer=answer), [DocumentIn(text=ORCHARD)], ORCHARD_Q)
    assert outcome.fate == "noted" and note is not None
    assert ORCHARD[note.quotes[0].start : note.quotes[0].end] == "The Relsar orchard has 24,328 apple trees."


@pytest.mark.parametrize("answer", ["24,329", "2,4328", "24 328", "328"])
def test_a_different_number_or_a_part_of_one_is_not_the_separated_number(answer: str) -> None:
    """Not the text's number: the model's value is dropped (the sentence naming the orchard stays as a
    quote, step 5 of the grounding check)."""
    outcome, note = _ground(NoteDraft(answer=answer), [DocumentIn(text=ORCHARD)], ORCHARD_Q)
    assert outcome.value_dropped and outcome.reason and "not in the chunk" in outcome.reason
    assert note is not None and note.answer == "" and "24328" not in str(note.model_dump())


@pytest.mark.parametrize("question", ["Who had 44,021?", "Who had 44021?"])
def test_the_cheap_bound_finds_a_number_however_its_thousands_are_written(question: str) -> None:
    for text in ("The Arden fleet carried 44,021 crates.", "The Arden fleet carried 44021 crates."):
        documents = [DocumentIn(text=text)]
        wanted = question_words(question)
        found = best_passage(_chunk(documents), documents, wanted)
        assert found is not None and bears_strongly(found[1], wanted)
        assert may_bear_strongly(_chunk(documents), documents, wanted), (question, text)


def test_thousands_separators_make_one_word_only_in_whole_groups() -> None:
    from longgraph.nodes.lexical import words_of

    assert words_of("24,328 and 1,234,567.89 and 10,000, then") == [
        "24328",
        "and",
        "1234567.89",
        "and",
        "10000",
        "then",
    ]
    assert words_of("1,2,3 and 12,34 and 1,2345") == ["1", "2", "3", "and", "12", "34", "and", "1", "2345"]


def test_a_sentence_about_another_name_bears_less_on_the_question() -> None:
    """Another company's revenue sentence shares every word of the question but its name: the names
    count twice, so its note ranks below the named company's and earns that chunk a second reading."""
    other, note = _ground(NoteDraft(answer="433.1 million dollars"), [DocumentIn(text=REPORTS)], REVENUE_Q)
    right, _ = _ground(NoteDraft(answer="855.7 million dollars"), [DocumentIn(text=REPORTS)], REVENUE_Q)
    assert other.fate == "noted" and note is not None  # still evidence (comparisons need it), ranked lower
    assert other.relevance == pytest.approx(6 / 10) and right.relevance == 1.0
    assert (other.confidence or 0) < (right.confidence or 0)
    docs = [DocumentIn(text=REPORTS)]
    found = best_passage(_chunk(docs), docs, question_words(REVENUE_Q))
    assert found is not None and found[1] == 1.0  # the named sentence, with a neighbour either side
    assert "Denfur Foods reported" in REPORTS[found[0].start : found[0].end]
    assert worth_rereading(other, found[1], question_words(REVENUE_Q))


def test_question_names_are_its_capitalised_words_inside_a_sentence() -> None:
    words = question_words("Who is the chief executive officer of Denfur Foods in Port Vekla?")
    assert words.named == {"denfur", "food", "port", "vekla"}
    assert question_words("What is the secret password?").named == frozenset()
    assert question_words("Which is older?\nA. Denfur\nB. Kagaerkgos").named == frozenset()


def test_a_verbatim_sentence_about_something_else_is_a_note_the_final_answer_weighs() -> None:
    """No word-overlap floor: copied text that shares nothing with the question is still a verbatim
    note, with the low confidence its relevance gives; whether it answers is the final answer's check."""
    outcome, note = _ground(NoteDraft(answer="Nobody has used it since the storm."))
    assert note is not None and outcome.fate == "noted" and note.confidence < 2.0
    assert (outcome.relevance or 0.0) < 0.2


def test_no_information_is_decided_on_the_answer() -> None:
    for answer in (NO_INFORMATION, "NONE", "No relevant information."):
        outcome, note = _ground(NoteDraft(answer=answer, no_information=True))
        assert outcome.fate == "no_information" and note is None


def test_cjk_quotes_and_answers() -> None:
    docs = [DocumentIn(title="b", text="前文。秘密的配料是烟熏李子。后文很长。")]
    outcome, note = _ground(NoteDraft(answer="配料是烟熏李子"), docs, question="秘密的配料是什么？")
    assert outcome.fate == "noted" and note is not None
    assert docs[0].text[note.quotes[0].start : note.quotes[0].end] == "秘密的配料是烟熏李子。"
    bad, none = _ground(NoteDraft(answer="配料是苹果"), docs, question="秘密的配料是什么？")
    assert none is None and bad.fate == "unsupported"


def test_segment_quotes_are_located_and_an_invented_quote_is_flagged() -> None:
    sentence = "The secret code that opens the old lighthouse vault in Port Averell is 7319-KESTREL."
    outcome, note = _ground(NoteDraft(quotes=[sentence.upper(), "Invented sentence about falcons."]))
    assert outcome.fate == "noted" and note is not None
    assert [q.verified for q in note.quotes].count(True) == 1 and [q.verified for q in note.quotes].count(
        False
    ) == 1
    nothing, none = _ground(NoteDraft(quotes=["Invented sentence about falcons."]))
    assert none is None and nothing.reason and "none of its 1 quote(s)" in nothing.reason


def test_the_confidence_formula() -> None:
    assert confidence_of(1.0, 1.0, None) == 5.0
    assert confidence_of(1.0, 0.0, None) == 1.25
    assert confidence_of(0.5, 1.0, None) == 2.5
    assert confidence_of(1.0, 1.0, 0.0) == 2.5  # a model that says 0 halves it
    assert confidence_of(1.0, 1.0, 5.0) == 5.0


def test_support_in_notes_keeps_the_quotes_that_support_a_combined_answer() -> None:
    quote = Evidence(chunk_id=3, doc_index=0, title="", start=10, end=60, text=FACT, verified=True)
    other = Evidence(
        chunk_id=4, doc_index=0, title="", start=90, end=120, text="Olga lives in Kyiv.", verified=True
    )
    notes = [Note(sources=[3], quotes=[quote]), Note(sources=[4], quotes=[other])]
    support, kept = support_in_notes("smoked plums", notes, QUESTION)
    assert support.support == 1.0 and kept == [quote]
    wrong, none = support_in_notes("pickled cabbage", notes, QUESTION)
    assert wrong.support == 0.0 and none == []


def _stage(messages: Sequence[Mapping[str, Any]]) -> str:
    user = str(messages[-1]["content"])
    if "Answer the question from the evidence" in user:
        return "reduce"
    return "collapse" if "Copy the evidence sentence" in user else "map"


def test_a_hallucinating_model_cannot_pass_its_value_off_as_supported() -> None:
    # Every chunk without the fact answers a confident wrong value; the reduce even picks it.
    def liar(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        _, text = extract_question_and_text(messages)
        stage = _stage(messages)
        if stage == "map" and FACT not in " ".join(text.split()):
            return json.dumps(
                {"answer": "The secret ingredient of Grandma Olga's borscht is pickled cabbage."}
            )
        if stage == "reduce":
            return json.dumps({"answer": "pickled cabbage"})
        return oracle_responder(messages, extras)

    graph = build_graph(FakeProvider(ScriptedChatModel(responder=liar)))
    context = {
        "context_window": 2048,
        "max_output_tokens": 256,
        "base_url": "http://fake.invalid/v1",
        "model": "x",
    }
    out = GraphOutput.model_validate(
        graph.invoke({"question": QUESTION, "document": planted(60_000)}, context=context)
    )
    # The reduce's wrong value is withheld, not replaced: the user sees NO INFORMATION, the model's
    # answer first among the candidates with why, and the one grounded note's answer among them.
    assert does_not_stand(out), out.answer
    assert own_answer(out) == "pickled cabbage", out
    assert any("smoked plums" in c.answer for c in out.candidates if c.chunk_id is not None), out.candidates
    unsupported = [c for c in out.chunks if c.status == "unsupported"]
    assert len(unsupported) == len(out.chunks) - 1
    assert all(c.reason and "cabbage" in c.reason for c in unsupported)


def test_no_verified_note_says_so_and_lists_the_candidates() -> None:
    def liar(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        return json.dumps({"answer": "The secret ingredient of Grandma Olga's borscht is pickled cabbage."})

    graph = build_graph(FakeProvider(ScriptedChatModel(responder=liar)))
    context = {
        "context_window": 2048,
        "max_output_tokens": 256,
        "base_url": "http://fake.invalid/v1",
        "model": "x",
    }
    out = GraphOutput.model_validate(
        graph.invoke(
            {"question": QUESTION, "document": planted(30_000, fact="Nothing here.")}, context=context
        )
    )
    assert out.answer == NO_INFORMATION and out.supported is False
    assert "no verified note answers" in out.rationale
    assert out.candidates and all("cabbage" in c.answer for c in out.candidates)
    assert "reduce" not in out.stats.calls_by_stage  # nothing to reduce: no call


def test_citations_survive_three_collapse_rounds() -> None:
    """A run forced through three collapse rounds still cites the exact span of the planted fact."""
    document = "\n\n".join(
        planted(1_200, at=0.5)
        if i == 17
        else planted(1_200, fact="Grandma Olga's borscht is red and famous.")
        for i in range(40)
    )

    def long_winded(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        # The oracle's answers (paper protocol), with a long rationale: notes overflow round after round.
        answer = json.loads(oracle_responder(messages, extras))
        if "rationale" in answer and "extracted_information" in answer:
            answer["rationale"] = "because " * 20
        return json.dumps(answer)

    context = {
        "context_window": 1024, "max_output_tokens": 160, "base_url": "http://fake.invalid/v1", "model": "x",
        "chunk_size": 300, "max_collapse_rounds": 8, "prompt_variant": "paper",
    }  # fmt: skip
    graph = build_graph(FakeProvider(ScriptedChatModel(responder=long_winded)))
    out = GraphOutput.model_validate(
        graph.invoke({"question": QUESTION, "document": document}, context=context)
    )
    assert out.stats.collapse_rounds >= 3, out.stats
    assert "smoked plums" in out.answer and out.supported
    span = out.evidence[0]
    assert document[span.start : span.end] == FACT and span.verified


def test_an_inflected_restatement_of_the_question_is_no_answer() -> None:
    """Measured on SQuAD with SmolLM2: asked "How many intercollegiate sports does Harvard compete in
    NCAA division I", the reduce answered "Harvard competes in NCAA division I"; "competes" and
    "compete" must share a stem, or the restatement passes as an answer the evidence supports."""
    question = "How many intercollegiate sports does Harvard compete in NCAA division I"
    quote = Evidence(
        chunk_id=0, doc_index=0, title="", start=0, end=80, verified=True, confidence=4.0,
        text="The Harvard Crimson competes in 42 intercollegiate sports in the NCAA Division I Ivy League.",
    )  # fmt: skip
    note = Note(sources=[0], answer=quote.text, quotes=[quote], confidence=4.0)
    support, quotes = support_in_notes("Harvard competes in NCAA division I", [note], question)
    assert support.support == 0.0 and quotes == []
    support, quotes = support_in_notes("42 intercollegiate sports", [note], question)
    assert support.support == 1.0 and quotes == [quote]


@pytest.mark.parametrize(
    "question",
    [
        QUESTION,
        "How many stories did the founders of startups tell investors in 2023?",
        "Which companies carried the most money, and why did Denfur Foods fail?",
        "What did Paul Graham say about programming languages like Lisp?",
        "Was the 855.7 figure stopped by the committee?",
        "Did 21,855 founders or 1855 tell 44,021 stories?",
    ],
)
def test_the_cheap_bound_never_rules_out_a_chunk_the_sentence_analysis_would_reread(question: str) -> None:
    """``may_bear_strongly`` is what saves grounding's CPU; it must never skip a chunk whose best passage
    bears strongly on the question (then a second reading would be lost), over the essays' chunks."""
    from longgraph.nodes.chunking import split_into_chunks
    from longgraph.tokenizer import get_tokenizer

    text = (
        planted(200_000)
        + "\n\nDenfur Foods carried 855.7 million in stories; the committee stopped it."
        + "\n\nThe 21855 founders told 44,021 stories in 1,855 days."
        + "\n\n東京のLispプログラマー: founders_of startups told 1855.7 stories."  # mixed scripts, an underscore
    )
    documents = [DocumentIn(text=text)]
    chunks = split_into_chunks(documents, 300, get_tokenizer(None))
    wanted = question_words(question)
    ruled_out = kept = 0
    for chunk in chunks:
        found = best_passage(chunk, documents, wanted)
        strong = found is not None and bears_strongly(found[1], wanted)
        if may_bear_strongly(chunk, documents, wanted):
            kept += 1
        else:
            ruled_out += 1
            assert not strong, f"chunk {chunk.id} ruled out, yet its passage bears strongly"
    assert ruled_out > 0 and kept > 0  # the bound does some work, and lets the relevant chunks through


# The reading rules as a table: each row a draft of one kind, the rule it must fail ("" = evidence), and
# the reason the chunk's outcome gives. Rows cover every rule of READING_RULES, both ways.
READING_TABLE: list[tuple[str, NoteDraft, Callable[[Measured], str] | None, str]] = [
    ("verbatim", NoteDraft(answer="The code is 7319-KESTREL."), None, ""),
    ("the value alone", NoteDraft(answer="7319-KESTREL"), None, ""),
    (
        "one grounded statement of two",
        NoteDraft(answer="It was made in 1650 by monks. The code is 7319-KESTREL."),
        None,
        "",
    ),
    (
        "a note of quotes",
        NoteDraft(
            quotes=["The secret code that opens the old lighthouse vault in Port Averell is 7319-KESTREL."]
        ),
        None,
        "",
    ),
    (
        "the question restated",
        NoteDraft(answer="The secret code opens the old lighthouse vault in Port Averell."),
        says_something_new,
        "its answer restates the question (no new word)",
    ),
    ("a value not in the text", NoteDraft(answer="The code is 4411-FALCON."), stated_in_the_chunk, "falcon"),
    ("a wrong number", NoteDraft(answer="The code is 7318-FALCON."), stated_in_the_chunk, "7318"),
    (
        "a name misspelt",  # most of its words in the text: the misspelt one is another name
        NoteDraft(answer="It was built by the Kestral company."),
        names_spelt_as_in_the_chunk,
        "'Kestral', near the text's 'kestrel'",
    ),
    # A code with one letter changed is another code, as a number with one digit changed is another
    # number (its pieces alone: "7319" in the text, "KESTRAL" near "KESTREL").
    ("a code misspelt", NoteDraft(answer="The code is 7319-KESTRAL."), stated_in_the_chunk, "kestral"),
]


@pytest.mark.parametrize(
    ("case", "draft", "failed", "reason"), READING_TABLE, ids=[r[0] for r in READING_TABLE]
)
def test_reading_rules_table(
    case: str, draft: NoteDraft, failed: Callable[[Measured], str] | None, reason: str
) -> None:
    outcome, note = _ground(draft)
    if failed is None:
        assert outcome.fate == "noted" and note is not None, (case, outcome.reason)
        return
    assert failed in READING_RULES
    assert outcome.fate == "unsupported" and note is None, (case, outcome.fate)
    assert outcome.reason is not None and reason.casefold() in outcome.reason.casefold(), outcome.reason
    # the reason is the rule's own (its fixed wording), not another rule's
    assert RULE_WORDING[failed] in outcome.reason
    assert not any(w in outcome.reason for r, w in RULE_WORDING.items() if r is not failed)


RULE_WORDING: dict[Callable[[Measured], str], str] = {
    says_something_new: "restates the question",
    stated_in_the_chunk: "is not in the chunk",
    names_spelt_as_in_the_chunk: "misspells a name of the chunk",
}


def test_each_reading_rule_passes_what_the_others_reject() -> None:
    """The rules are independent: a measurement failing one passes the others."""
    grounded = Measured("7319", Support(None, 1.0, 1.0, frozenset({"7319"})), True)
    assert why_not_evidence(grounded) == ""
    restated = Measured("the code", Support(None, 1.0, 1.0, frozenset()), True)
    absent = Measured("4411", Support(None, 0.4, 1.0, frozenset({"4411"})), True)
    quotes_only = Measured("", Support(None, 1.0, 1.0, frozenset()), False)
    odile = Span(0, "", 0, 40, frozenset({"mayor", "odil", "zenwexsar"}))
    misspelt = Measured("Odeil Zenwexsar", Support(odile, 0.5, 1.0, frozenset({"odeil", "zenwexsar"})), True)
    assert [rule.__name__ for rule in READING_RULES if rule(misspelt)] == ["names_spelt_as_in_the_chunk"]
    assert [rule.__name__ for rule in READING_RULES if rule(restated)] == ["says_something_new"]
    assert [rule.__name__ for rule in READING_RULES if rule(absent)] == ["stated_in_the_chunk"]
    assert why_not_evidence(quotes_only) == ""  # quotes alone state nothing of their own to restate


GOALS_DOC = (
    "The Harriers scored 4 goals in the final. The weather was cold all day.\n\n"
    "Nobody expected a crowd that large.\n\n"
    "The Wolves scored 6 goals in the final. The stands were full."
)
GOALS_Q = "How many goals did the Harriers and the Wolves score in the final?"


def test_each_statement_of_a_claim_that_stands_is_quoted() -> None:
    """A reader that gathers every sentence bearing on the question writes them one after another; each
    is evidence, not only the best of them (a count over them lost the second)."""
    claim = "The Harriers scored 4 goals in the final. The Wolves scored 6 goals in the final."
    outcome, note = _ground(NoteDraft(answer=claim), [DocumentIn(text=GOALS_DOC)], GOALS_Q)
    assert outcome.fate == "noted" and note is not None
    quoted = {GOALS_DOC[q.start : q.end] for q in note.verified_quotes}
    assert quoted == {"The Harriers scored 4 goals in the final.", "The Wolves scored 6 goals in the final."}
    # A statement that does not stand is not quoted.
    invented = "The Harriers scored 4 goals in the final. The Eagles scored 9 goals in the final."
    _, note = _ground(NoteDraft(answer=invented), [DocumentIn(text=GOALS_DOC)], GOALS_Q)
    assert note is not None
    assert {GOALS_DOC[q.start : q.end] for q in note.verified_quotes} == {
        "The Harriers scored 4 goals in the final."
    }


def test_a_quote_stitched_from_sentences_apart_is_each_sentence_located() -> None:
    from longgraph.nodes.provenance import locate_quotes

    docs = [DocumentIn(text=GOALS_DOC)]
    stitched = "The Harriers scored 4 goals in the final. The Wolves scored 6 goals in the final."
    harriers, wolves = locate_quotes([stitched], _chunk(docs), docs)
    assert harriers.verified and GOALS_DOC[harriers.start : harriers.end] == stitched.split(". ")[0] + "."
    assert (
        wolves.verified and GOALS_DOC[wolves.start : wolves.end] == "The Wolves scored 6 goals in the final."
    )
    # An invented sentence among them stays unverified; the real one is still found.
    real, invented = locate_quotes(
        ["The Wolves scored 6 goals in the final. The Eagles won."], _chunk(docs), docs
    )
    assert real.verified and not invented.verified and invented.text == "The Eagles won."
    # One sentence not in the text is one unverified quote, as before.
    (alone,) = locate_quotes(["The Eagles scored 9 goals."], _chunk(docs), docs)
    assert not alone.verified


def test_words_about_the_text_itself_are_not_question_words() -> None:
    """No sentence of a text says "the text gives": they only dilute how much of the question a sentence
    shares (the ferry's departure sentence shared 1 of 6 words, under the 0.2 a note needs)."""
    asked = question_words("For how many ferries does the text give the departure time?")
    assert "text" not in asked and stem("give") not in asked and {stem("ferry"), stem("departure")} <= asked
    assert "text" in question_words("How long is the text of the Magna Carta?")
    assert stem("textile") in question_words("Who owns the textile mill at Varnholm?")
    assert question_words("What do the documents say about the Quirel guild?") == question_words(
        "What about the Quirel guild?"
    )
    assert question_words("According to the passage, who founded the Quirel guild?") == question_words(
        "Who founded the Quirel guild?"
    )


OPTICIANS_Q = (
    "Which of the opticians Nevvarul, Lental, Haltalbren, Marlen, Ganvinath and Relwexhal has the highest lens"
    " thickness?"
)


def test_names_listed_as_a_choice_count_as_one_name_held_by_any_of_them() -> None:
    """Each sentence gives one of the listed opticians: counted one by one, the six names outweighed every
    other word (3 of 16, 0.19) and a right answer over those sentences was silenced everywhere."""
    wanted = question_words(OPTICIANS_Q)
    assert [sorted(c) for c in wanted.choices] == [
        ["nevvarul"],
        ["lental"],
        ["haltalbren"],
        ["marlen"],
        ["ganvinath"],
        ["relwexhal"],
    ]
    one = frozenset(content_stems("The Lental optician grinds lenses 3.4 millimetres thick."))
    assert wanted.share(one) == pytest.approx(4 / wanted.weight) and wanted.share(one) >= 0.2
    assert wanted.names_all(one) and bears_strongly(wanted.share(one), wanted, named=wanted.names_all(one))
    unlisted = frozenset(content_stems("The Corath optician grinds lenses 3.4 millimetres thick."))
    assert wanted.share(unlisted) == pytest.approx(2 / wanted.weight) and not wanted.names_all(unlisted)
    docs = [
        DocumentIn(text="Filler about the weather. The Lental optician grinds lenses 3.4 millimetres thick.")
    ]
    outcome, note = _ground(NoteDraft(answer="3.4 millimetres"), docs, OPTICIANS_Q)
    assert outcome.fate == "noted" and note is not None, outcome.reason


def test_a_listed_name_of_several_words_is_held_only_whole() -> None:
    wanted = question_words("Did Denfur Foods or Vekla Corp report more revenue in 2023?")
    assert sorted(sorted(c) for c in wanted.choices) == [["corp", "vekla"], ["denfur", "food"]]
    assert wanted.names_all(content_stems("In 2023 Denfur Foods reported revenue of 855.7 million."))
    assert not wanted.names_all(content_stems("In 2023 Ostra Foods reported revenue of 433.1 million."))


def test_names_not_listed_are_no_choice() -> None:
    assert question_words(REVENUE_Q).choices == ()
    assert question_words("Who is the chief executive officer of Denfur Foods in Port Vekla?").choices == ()
    wanted = question_words("What is the population of the town of Vekla?")
    assert wanted.choices == () and wanted.weight == len(wanted) + len(wanted.named)


def test_a_choice_worked_out_rests_on_the_sentences_naming_what_it_chooses_among() -> None:
    """PECAN's choice among three foundations, worked out over their sentences, was refused for a
    passage that shares only "grant" with the question ("An amnesty granted …": another modifier of the
    question's noun) once that passage counted as bearing on it (scripted capable reader, dev)."""
    question = "Which of the foundations Pevrel, Ullennev and Halqui has the highest grant?"
    facts = [
        "The Pevrel foundation received a grant of $2,578,416.",
        "The Ullennev foundation received a grant of $4,007,281.",
        "The Halqui foundation received a grant of $2,467,354.",
        "An amnesty granted in 1573 pardoned the perpetrators.",
    ]
    notes = [
        Note(sources=[i], quotes=[Evidence(chunk_id=i, doc_index=0, title="", start=100 * i,
                                           end=100 * i + len(f), text=f, verified=True)])
        for i, f in enumerate(facts)
    ]  # fmt: skip
    judged = judge_answer("Ullennev", notes, question)
    assert judged.kind == "derived", judged
    assert all("amnesty" not in q.text for q in judged.quotes)
    assert judge_answer("Ullennev", notes[:2] + notes[3:], question).kind == "none"  # Halqui's unread


PARAPHRASED_Q = (
    "What number of baked clay slabs did the Trismar kiln yard make for the fresh school building?"
)
TILES_DOC = "The weather held all week. The Trismar tile works fired 4,915 tiles for the new schoolhouse. Then it rained."


def test_a_sentence_naming_what_the_question_names_bears_on_it_asked_in_other_words() -> None:
    """The paraphrased question shares the entity's name alone with its sentence (0.17 of its weighted
    words): the scripted capable reader's right answer was silenced in every strategy."""
    outcome, note = _ground(NoteDraft(answer="4,915"), [DocumentIn(text=TILES_DOC)], PARAPHRASED_Q)
    assert outcome.fate == "noted" and note is not None, outcome.reason
    assert (outcome.relevance or 0) < 0.2
    quoted = NoteDraft(quotes=["The Trismar tile works fired 4,915 tiles for the new schoolhouse."])
    assert _ground(quoted, [DocumentIn(text=TILES_DOC)], PARAPHRASED_Q)[0].fate == "noted"  # Segment+'s
    # Another name's sentence in the same words is a note, but its words do not confirm the answer.
    other = [DocumentIn(text=TILES_DOC.replace("Trismar", "Varnev"))]
    outcome, note = _ground(NoteDraft(answer="4,915"), other, PARAPHRASED_Q)
    assert note is not None
    judged = judge_answer("4,915", [note], PARAPHRASED_Q)
    assert judged.kind == "none" or judged.unconfirmed, judged


def test_another_fact_about_the_named_thing_is_left_to_a_verifier() -> None:
    """Grounding lets a sentence about the asked thing through however it words the rest; the final
    answer's words do not confirm another fact about it (``verify_answers`` decides)."""
    doc = "The weather held all week. The Trismar tile works employs 120 potters. Then it rained."
    outcome, note = _ground(NoteDraft(answer="120"), [DocumentIn(text=doc)], PARAPHRASED_Q)
    assert outcome.fate == "noted" and note is not None
    judged = judge_answer("120", [note], PARAPHRASED_Q)
    assert judged.kind == "none" or judged.unconfirmed, judged


def test_a_code_with_a_letter_changed_is_another_code() -> None:
    """PECAN's "SJ-5738-H" for the text's "QJ-5738-H" stood, marked supported: read as pieces, its one
    content word was the number (dev, SmolLM2-135M). The same code written with spaces still stands."""
    doc = [DocumentIn(text="The weather held. The Athmisath vault opens to the code QJ-5738-H. It rained.")]
    question = "Which code opens the Athmisath vault?"
    outcome, note = _ground(NoteDraft(answer="SJ-5738-H"), doc, question)
    assert "not in the chunk (not found: sj-5738-h)" in (outcome.reason or ""), outcome.reason
    assert note is None or (not note.answer and all("QJ-5738-H" in q.text for q in note.quotes))
    for right in ("QJ-5738-H", "qj-5738-h.", "QJ 5738 H"):
        assert _ground(NoteDraft(answer=right), doc, question)[0].fate == "noted", right
    assert codes_in("K12/B3, W512.C and H6-KY; not 1990-2000, well-known, 380.4C or 3.14") == {
        "k12/b3",
        "w512.c",
        "h6-ky",
    }


def test_a_sentence_naming_the_asked_thing_by_its_modifier_bears_on_a_paraphrased_question() -> None:
    """The capable reader, dev seed 11: "Which wallpaper covers the walls of the teal sitting room?" of
    "The teal parlour is papered with gilded lilies." shares one word of six (0.17): the modifier is the
    question's name for its entity, as a capitalised name is, and the note stands for the final answer's
    checks (here the verifier) to weigh. An essay's "teal" that names nothing ("in teal and grey") does
    not."""
    question = "Which wallpaper covers the walls of the teal sitting room?"
    parlour = [
        DocumentIn(
            text="The old house stood empty. The teal parlour is papered with gilded lilies. Then rain."
        )
    ]
    outcome, note = _ground(NoteDraft(answer="gilded lilies"), parlour, question)
    assert outcome.fate == "noted" and note is not None, outcome.reason
    # Under the relevance a note needs, by its words alone:
    assert outcome.relevance is not None and outcome.relevance < 0.2
    painted = [
        DocumentIn(
            text="The old house stood empty. Painted in teal and grey, it had gilded lilies. Then rain."
        )
    ]
    outcome, note = _ground(NoteDraft(answer="gilded lilies"), painted, question)
    assert note is not None  # a verbatim note; its words do not confirm the answer
    judged = judge_answer("gilded lilies", [note], question)
    assert judged.kind == "none" or judged.unconfirmed, judged
    assert named_by_its_modifier(question, "The teal parlour is papered with gilded lilies.")
    assert not named_by_its_modifier(
        "Which wallpaper covers the Velcor sitting room?", "The teal parlour is papered."
    )
    # The words about the text itself name nothing (session 60's clog-makers' list: the embedder's entity
    # was "the text give, the notched mark").
    listed = "For which clog-makers' shops does the text give the notched mark?"
    assert modified_phrases(listed) == ["the notched mark"]
    assert not named_by_its_modifier(listed, "As the text says, the text gives no answer.")


def test_an_unquoted_value_keeps_every_sentence_that_states_it_not_only_the_most_relevant() -> None:
    """SQuAD: "352" for "How many votes in total does the Council have?" is in "… 260 of the 352 votes"
    (which names the Council) and in "In total there are 352 votes …" (the answer's sentence). Which
    one the model read is not known: the note keeps both, so a later reader is shown the one it needs."""
    text = (
        "The Council decides by a qualified majority: 260 of the 352 votes. "
        "Some filler follows here. In total there are 352 votes, but most acts need consensus. "
        "The Council decides by a qualified majority: 260 of the 352 votes."
    )
    outcome, note = _ground(
        NoteDraft(answer="352"), [DocumentIn(text=text)], "How many votes in total does the Council have?"
    )
    assert outcome.fate == "noted" and note is not None, outcome.reason
    quoted = [q.text for q in note.quotes]
    assert "In total there are 352 votes, but most acts need consensus." in quoted
    assert sum("260 of the 352 votes" in q for q in quoted) == 1, quoted  # a repeated line is kept once


def test_a_period_before_a_lower_case_word_ends_no_sentence() -> None:
    text = "Harvard's alumni include eight U.S. presidents, e.g. two Adamses. Yahoo! users stay. Next; one"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Harvard's alumni include eight U.S. presidents, e.g. two Adamses.",
        "Yahoo! users stay.",
        "Next;",
        "one",
    ]
