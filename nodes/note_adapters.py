"""Adapters between LLM×MapReduce notes and Segment+ notes, so one strategy can use the other's stage.

``mapreduce-segment-merge`` runs LLM×MapReduce with the Segment+ merge in place of its collapse. The
two note shapes differ: a map output has Extracted Information, Rationale, Answer and a Confidence
Score; a Segment+ note has Evidence (verbatim quotes) and Reasoning. Going in
(:func:`map_notes_to_merge`): the Extracted Information becomes the note's one quote (located in the
chunk like any Segment+ quote; a paraphrase is simply unverified), the Rationale its reasoning, and the
Answer and Confidence ride along unchanged (shown to the merge model, kept for the reduce stage).
Coming out (:func:`merge_notes_to_map`): a note that was never merged gets its own fields back (its
Extracted Information being its kept quotes); a merged note gets its quotes as Extracted Information,
its merged reasoning, which the merge prompt asks to address the query in 1–2 sentences, as its
Answer, and the highest confidence of the notes it merged (its verbatim evidence still contains what
that note relied on). If the adapted notes exceed the reduce prompt (the renderings differ
slightly), the highest-confidence notes that fit are kept, as the mapreduce collapse does.
"""

from __future__ import annotations

from typing import Any, Literal

from longgraph.endpoint import resolve_tokenizer_spec
from longgraph.nodes.budget import text_budget
from longgraph.nodes.collapse import keep_best_fitting
from longgraph.nodes.notes import make_notes
from longgraph.nodes.provenance import documents_of, has_words, locate_quotes
from longgraph.nodes.runtime import ContextRuntime
from longgraph.nodes.segment_notes import measured, quote_line, source_label
from longgraph.prompts import prompts_for
from longgraph.state.contract import Evidence
from longgraph.state.mapreduce import Note
from longgraph.state.outputs import MapOutput, ReduceOutput
from longgraph.state.segment_plus import EvidenceNote
from longgraph.tokenizer import get_tokenizer


async def map_notes_to_merge(state: dict[str, Any], runtime: ContextRuntime) -> dict[str, Any]:
    """Adapter in: the informative map notes (``notes``) as Segment+ notes (``merge_notes``)."""
    notes: list[Note] = state.get("notes") or []
    chunks = {c.id: c for c in state.get("input_chunks") or []}
    documents = documents_of(state)
    converted = []
    for note in notes:
        extracted = note.output.extracted_information.strip()
        quotes: list[Evidence] = []
        if has_words(extracted):
            located = [locate_quotes([extracted], chunks[s], documents)[0] for s in note.sources]
            quotes = [next((q for q in located if q.verified), located[0])]
        converted.append(
            EvidenceNote(
                sources=list(note.sources), quotes=quotes, reasoning=note.output.rationale,
                answer=note.output.answer, confidence=note.output.confidence_score,
            )
        )  # fmt: skip
    tokenizer = get_tokenizer(resolve_tokenizer_spec(runtime.context))
    return {
        "merge_notes": measured(converted, tokenizer),
        "collapse_round": 0,
        "previous_tokens": None,
        "merge_batches": [],
    }


def route_after_merge(state: dict[str, Any]) -> Literal["reduce", "finalize"]:
    """Reduce the adapted notes, or finalize (NO INFORMATION) when none is left."""
    return "reduce" if state.get("notes") else "finalize"


def _as_map_output(note: EvidenceNote) -> MapOutput:
    extracted = "\n".join(quote_line(q) for q in note.quotes) or "None"
    confidence = note.confidence if note.confidence is not None else 0.0
    if note.answer:  # never merged: its own fields (its quotes possibly trimmed)
        return MapOutput(
            extracted_information=extracted, rationale=note.reasoning, answer=note.answer,
            confidence_score=confidence,
        )  # fmt: skip
    return MapOutput(
        extracted_information=extracted,
        rationale=f"Merged from {source_label(note.sources)}: quotes kept verbatim, reasoning merged.",
        answer=note.reasoning,
        confidence_score=confidence,
    )


async def merge_notes_to_map(
    state: dict[str, Any], runtime: ContextRuntime, *, strategy: str = "mapreduce"
) -> dict[str, Any]:
    """Adapter out: the merged Segment+ notes back as map notes (``notes``) for the reduce stage."""
    context = runtime.context
    merged: list[EvidenceNote] = state.get("merge_notes") or []
    if not merged:
        return {"notes": []}
    tokenizer = get_tokenizer(resolve_tokenizer_spec(context))
    notes = make_notes([(n.sources, _as_map_output(n)) for n in merged], tokenizer)
    budget = text_budget(
        prompts_for(strategy, context.prompt_variant), "reduce", context=context, question=state["question"], schema=ReduceOutput,
        tokenizer=tokenizer,
    )  # fmt: skip
    if sum(n.tokens for n in notes) <= budget:
        return {"notes": notes}
    kept, dropped = keep_best_fitting(notes, budget)
    reason = (
        "the merged notes, rendered for the reduce prompt, did not fit it: kept the highest-confidence ones"
    )
    return {
        "notes": kept,
        "decisions": [f"{reason}; set aside {len(dropped)}"],
        "filtered": [(source, reason) for note in dropped for source in note.sources],
    }
