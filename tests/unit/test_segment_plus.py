"""The Segment+ graph, its ablations and the swapped-stage mapreduce graph, with injected fakes (no HTTP)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from langchain_core.language_models import BaseChatModel
from numpy.typing import NDArray

from longgraph.graphs.segment_plus import build_graph
from longgraph.nodes.checks import locate_quotes
from longgraph.nodes.notes_filter import LABELLED_REMOVE
from longgraph.state.context import Context
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn, GraphOutput
from longgraph.state.outputs import NO_INFORMATION
from longgraph.strategies import build_strategy
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel, oracle_responder
from longgraph.testing.oracle import extract_question_and_text, oracle_answer
from longgraph.tests.conftest import FACT, FAKE_SETTINGS, QUESTION, planted
from longgraph.tokenizer import get_tokenizer

SMALL = {**FAKE_SETTINGS, "prompt_variant": "paper"}  # the scripted responders key on the paper's prompts
ANY_RELEVANCE = {"min_note_strength": 0.0}
"""For tests of merging many notes: quotes of ordinary sentences count as evidence and are all kept."""
Responder = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], str]


class BundledEmbedder(FakeProvider):
    """A scripted model with the real bundled embedder, whose readings the thresholds were measured on."""

    async def embed(self, texts: Sequence[str], context: Context) -> NDArray[np.float32]:
        from longgraph.embeddings import embed_texts

        return await embed_texts(texts, context)


def _run(
    model: BaseChatModel,
    document: str,
    *,
    strategy: str = "segment-plus",
    question: str = QUESTION,
    **settings: Any,
) -> GraphOutput:
    graph = build_strategy(strategy, FakeProvider(model))
    out = GraphOutput.model_validate(
        graph.invoke({"question": question, "document": document}, context={**SMALL, **settings})
    )
    assert [c.id for c in out.chunks] == list(range(len(out.chunks)))  # every chunk accounted for
    assert all(c.reason for c in out.chunks if c.status in ("filtered", "failed"))
    return out


def _stage(messages: Sequence[Mapping[str, Any]]) -> str:
    user = str(messages[-1]["content"])
    for marker, stage in (
        ("The segment begins as follows:", "gather"),
        ("The note begins as follows:", "filter"),
        ("your task is to merge the Reasoning sections", "merge"),
        ("Answer the question based on the given notes", "answer"),
        ("Information from chunks:", "reduce"),
    ):
        if marker in user:
            return stage
    return "map"


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if len(s.split()) >= 4]


def scripted(
    *,
    evidence: Callable[[str], list[str]],
    reasoning: Callable[[str], str] = lambda text: "This segment bears on the question.",
    keep: Callable[[str], bool] = lambda note: True,
    merged: str = "The notes agree.",
) -> Responder:
    """A model whose notes, labels and merges the test decides; the answer comes from the oracle."""

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        stage = _stage(messages)
        _, text = extract_question_and_text(messages)
        if stage == "gather":
            return json.dumps({"evidence": evidence(text), "reasoning": reasoning(text)})
        if stage == "filter":
            return json.dumps({"decision": "Keep" if keep(text) else "Remove"})
        if stage == "merge":
            return json.dumps({"reasoning": merged})
        return oracle_responder(messages, extras)

    return respond


def _fact_or(default: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    return lambda text: [FACT] if FACT in " ".join(text.split()) else default(text)


def _prompts_fit(model: ScriptedChatModel) -> bool:
    tokenizer = get_tokenizer(None)
    limit = 2048 - 256  # SMALL's window minus its output tokens
    return all(sum(tokenizer.count(str(m["content"])) for m in c["messages"]) <= limit for c in model.calls)


def test_finds_the_planted_fact_and_points_at_it_in_the_document() -> None:
    document = planted(60_000)
    model = ScriptedChatModel()
    out = _run(model, document)
    assert "smoked plums" in out.answer
    # Confidence comes from the evidence now (the quote holds every question word): 5 of 5.
    assert out.strategy == "segment-plus" and out.verdict in ("supported", "unconfirmed")
    quote = out.evidence[0]
    assert quote.verified and document[quote.start : quote.end] == FACT
    used = [c for c in out.chunks if c.status == "used"]
    assert [c.id for c in used] == [quote.chunk_id]
    # Notes without evidence are no-information notes, set aside by grounding before the filter.
    assert {c.status for c in out.chunks if c.id != quote.chunk_id} == {"no_information"}
    # empty notes never reach the model's filter: one filter call, for the one note with evidence
    assert out.stats.calls_by_stage == {"plan": 1, "gather": len(out.chunks), "filter": 1, "answer": 1}
    assert out.stats.llm_calls == len(model.calls)


def test_segments_are_segment_size_tokens() -> None:
    out = _run(ScriptedChatModel(), planted(60_000), context_window=8192, segment_size=1000)
    assert max(c.tokens for c in out.chunks) <= 1000 < sum(c.tokens for c in out.chunks) / 2
    assert "smoked plums" in out.answer


def test_quotes_tolerate_case_and_whitespace_and_a_hallucinated_quote_is_flagged() -> None:
    document = planted(60_000)
    invented = "Grandma Olga keeps the recipe in a blue tin."
    sloppy = "  the SECRET ingredient of grandma   olga's borscht\nis smoked plums. "
    model = ScriptedChatModel(
        responder=scripted(evidence=lambda text: [sloppy, invented] if FACT in " ".join(text.split()) else [])
    )
    out = _run(model, document)
    assert "smoked plums" in out.answer
    found = [e for e in out.evidence if e.verified]
    flagged = [e for e in out.evidence if not e.verified]
    assert len(found) == 1 and document[found[0].start : found[0].end] == FACT
    assert len(flagged) == 1 and flagged[0].text == invented  # kept, not silently dropped
    chunk = next(c for c in out.chunks if c.id == flagged[0].chunk_id)
    assert (flagged[0].start, flagged[0].end) == (chunk.parts[0].start, chunk.parts[-1].end)
    assert any("could not be found in their chunk" in n for n in out.stats.notes)


def test_provenance_handles_elisions_cjk_and_multiple_documents() -> None:
    docs = [
        DocumentIn(title="a", text="Nothing here."),
        DocumentIn(title="b", text="前文。秘密的配料是烟熏李子。Then: alpha, beta; gamma."),
    ]
    parts = [ChunkPart(doc_index=i, title=d.title, start=0, end=len(d.text)) for i, d in enumerate(docs)]
    chunk = Chunk(id=3, parts=parts, tokens=20, text="")
    cjk, elided, missing = locate_quotes(["配料是烟熏李子。", "Then ... gamma", "delta"], chunk, docs)
    text = docs[1].text
    # A located quote is evidence over the whole sentences of the document it lies in.
    assert (cjk.doc_index, cjk.title, text[cjk.start : cjk.end]) == (1, "b", "秘密的配料是烟熏李子。")
    assert cjk.text == "秘密的配料是烟熏李子。"
    assert text[elided.start : elided.end] == "Then: alpha, beta; gamma." and elided.verified
    assert not missing.verified and missing.chunk_id == 3


def test_filter_removes_empty_notes_without_a_call_and_remove_labelled_ones() -> None:
    decoy = "Grandma Olga's neighbour grows plums in his garden."
    document = planted(30_000, fact=decoy) + "\n\n" + planted(30_000)

    def evidence(text: str) -> list[str]:
        flat = " ".join(text.split())
        return [s for s in (FACT, decoy) if s in flat]

    model = ScriptedChatModel(responder=scripted(evidence=evidence, keep=lambda note: decoy not in note))
    out = _run(model, document)
    assert "smoked plums" in out.answer
    reasons = [c.reason for c in out.chunks if c.status == "filtered"]
    assert reasons.count(LABELLED_REMOVE) == 1
    assert sum(c.status == "no_information" for c in out.chunks) == len(out.chunks) - 2
    assert out.stats.calls_by_stage["filter"] == 2  # only the two notes with evidence were asked
    assert all(decoy not in e.text for e in out.evidence)


def test_merge_batches_concatenate_evidence_verbatim_and_merge_reasoning() -> None:
    document = planted(60_000)
    model = ScriptedChatModel(
        responder=scripted(
            evidence=_fact_or(lambda text: _sentences(text)[:1]), reasoning=lambda text: "detail " * 100
        )
    )
    out = _run(model, document, **ANY_RELEVANCE)
    assert "smoked plums" in out.answer
    assert out.stats.collapse_rounds >= 1 and out.stats.calls_by_stage["merge"] >= 1
    assert all(c.status == "used" for c in out.chunks)
    # Evidence is the quotes of the notes that support the answer, the supporting quote first.
    assert all(e.verified for e in out.evidence)
    assert document[out.evidence[0].start : out.evidence[0].end] == FACT
    merges = [c for c in model.calls if _stage(c["messages"]) == "merge"]
    assert "1. " + FACT in "\n".join(str(c["messages"][-1]["content"]) for c in merges)
    assert _prompts_fit(model)


def test_merge_loop_is_bounded_when_merges_do_not_shrink() -> None:
    model = ScriptedChatModel(
        responder=scripted(
            evidence=_fact_or(lambda text: _sentences(text)[:1]),
            reasoning=lambda text: "detail " * 150,
            merged="longer " * 900,
        )
    )
    out = _run(model, planted(60_000), **ANY_RELEVANCE)
    assert out.stats.collapse_rounds <= Context().max_collapse_rounds
    assert any("could not shrink" in n for n in out.stats.notes), out.stats.notes
    assert "smoked plums" in out.answer  # the notes' verbatim evidence survives the fallback
    assert _prompts_fit(model)


def test_evidence_overflow_keeps_the_best_quotes_and_reports_what_was_trimmed() -> None:
    document = planted(60_000)
    model = ScriptedChatModel(responder=scripted(evidence=_sentences, reasoning=lambda text: "Relevant."))
    out = _run(model, document, **ANY_RELEVANCE)
    assert "smoked plums" in out.answer
    assert any(n.startswith("evidence overflow") for n in out.stats.notes), out.stats.notes
    trimmed = [c for c in out.chunks if c.status == "filtered"]
    assert trimmed and all("evidence overflow" in (c.reason or "") for c in trimmed)
    fact = next(e for e in out.evidence if FACT in e.text)
    assert fact.verified and FACT in document[fact.start : fact.end]
    assert _prompts_fit(model)


def test_no_evidence_anywhere_answers_no_information_without_merge_or_answer_calls() -> None:
    out = _run(ScriptedChatModel(), planted(30_000, fact="Nothing to see here."))
    assert out.answer == NO_INFORMATION and out.evidence == [] and out.supported is False
    assert set(out.stats.calls_by_stage) == {"plan", "gather"}  # the plan: a single fact, Segment+'s path
    assert all(c.status == "no_information" for c in out.chunks)


@pytest.mark.parametrize(
    ("strategy", "stages"),
    [
        ("segment-plus-no-filter", {"plan", "gather", "answer"}),
        ("segment-plus-no-structure", {"plan", "gather_text", "filter", "answer"}),
        ("segment-plus-plain", {"plan", "gather_text", "answer"}),
        ("mapreduce-segment-merge", {"plan", "map", "reduce"}),
    ],
)
def test_variants_run(strategy: str, stages: set[str]) -> None:
    out = _run(ScriptedChatModel(), planted(40_000), strategy=strategy)
    assert "smoked plums" in out.answer and out.strategy == strategy
    assert set(out.stats.calls_by_stage) == stages
    assert out.evidence


def test_free_text_notes_merge_as_free_text() -> None:
    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        user = str(messages[-1]["content"])
        _, text = extract_question_and_text(messages)
        if "The segment begins as follows:" in user:
            found, _ = oracle_answer(QUESTION, text)  # else a long note of the segment's own sentences
            return json.dumps({"note": found or " ".join(_sentences(text)[:12])})
        if "Merge these notes into one shorter note" in user:
            found, _ = oracle_answer(QUESTION, text)
            return json.dumps({"note": found or "Nothing relevant."})
        return oracle_responder(messages, extras)

    document = planted(60_000)
    out = _run(ScriptedChatModel(responder=respond), document, strategy="segment-plus-plain", **ANY_RELEVANCE)
    assert "smoked plums" in out.answer
    assert out.stats.calls_by_stage.get("merge_text", 0) >= 1 and out.stats.collapse_rounds >= 1
    # Free text quotes nothing; grounding found the sentences that support the note in its segment.
    assert FACT in document[out.evidence[0].start : out.evidence[0].end]


def test_mapreduce_with_the_segment_plus_merge_as_its_collapse_stage() -> None:
    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        stage = _stage(messages)
        _, text = extract_question_and_text(messages)
        if stage == "merge":
            return json.dumps({"reasoning": "Every chunk says smoked plums."})
        if stage == "reduce":
            return json.dumps({"rationale": "all agree", "answer": "smoked plums"})
        first = _sentences(text)[0]
        return json.dumps(
            {
                "extracted_information": first,
                "rationale": "r " * 80,
                "answer": "smoked plums",
                "confidence_score": 3,
            }
        )

    model = ScriptedChatModel(responder=respond)
    # Every chunk holds the fact, so every map answer is grounded and the notes overflow the window.
    document = "\n\n".join(planted(1_500) for _ in range(40))
    out = _run(model, document, strategy="mapreduce-segment-merge")
    assert out.answer == "smoked plums" and out.strategy == "mapreduce-segment-merge"
    assert out.stats.calls_by_stage.get("merge", 0) >= 1 and "collapse" not in out.stats.calls_by_stage
    assert out.stats.collapse_rounds >= 1
    assert all(c.status == "used" for c in out.chunks)
    reduce_prompt = next(
        str(c["messages"][-1]["content"]) for c in model.calls if _stage(c["messages"]) == "reduce"
    )
    assert re.search(r"Information from chunks \d+-\d+:", reduce_prompt)  # the reduce stage saw merged notes
    assert _prompts_fit(model)


def test_the_graph_builds_with_defaults() -> None:
    assert set(build_graph().get_graph().nodes) >= {
        "segment",
        "take_note",
        "filter_note",
        "merge_batch",
        "answer",
    }


def test_text_mode_notes_follow_the_labelled_protocol() -> None:
    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        assert "response_format" not in extras
        stage = _stage(messages)
        _, text = extract_question_and_text(messages)
        if stage == "gather":
            if FACT in " ".join(text.split()):
                return f"**Evidence:**\n1. {FACT}\n**Reasoning:** The segment names the ingredient."
            return "Evidence: none\nReasoning: Nothing relevant."
        if stage == "filter":
            return "Decision: Keep"
        return "Rationale: quoted directly.\nAnswer: smoked plums"

    model = ScriptedChatModel(responder=respond)
    out = _run(model, planted(30_000), structured_output="text")
    assert out.answer == "smoked plums"
    assert "Please follow this format:\nEvidence:\nReasoning:" in model.calls[1]["messages"][-1]["content"]
    assert [e.verified for e in out.evidence] == [True]


DAM, LOOK_ALIKE_DAM = "The Pevcor dam stands 41.1 metres tall.", "The Wexul dam stands 77.6 metres tall."


def _dam_run(keep: Callable[[str], bool]) -> GraphOutput:
    """ "What is the height of the Pevcor barrage?" over the Pevcor dam's sentence and a look-alike's,
    each note labelled by ``keep``. The sentence shares only the name with the question (dam for
    barrage, tall for height): the words cannot tell it from another thing named Pevcor, so the bundled
    embedder confirms it, as with SmolLM2."""
    document = planted(30_000, fact=LOOK_ALIKE_DAM) + "\n\n" + planted(30_000, fact=DAM)

    def evidence(text: str) -> list[str]:
        flat = " ".join(text.split())
        return [s for s in (DAM, LOOK_ALIKE_DAM) if s in flat]

    model = ScriptedChatModel(responder=scripted(evidence=evidence, keep=keep))
    graph = build_strategy("segment-plus", BundledEmbedder(model))
    context = {**SMALL, **ANY_RELEVANCE, "verify_answers": "embedding"}
    question = "What is the height of the Pevcor barrage?"
    return GraphOutput.model_validate(
        graph.invoke({"question": question, "document": document}, context=context)
    )
