"""The Segment+ filter: label each note Keep or Remove so noise never reaches the merge and answer.

Per Segment+ §3.2: notes with empty evidence (or, for a free-text note, no text) are removed without
asking the model, which is both what the paper says and a call saved per empty segment; every other
note is labelled by the model (``FilterDecision``), one call per note, in parallel. The paper keeps
redundant notes, so the prompt removes only notes with nothing useful. A label that cannot be read
after the bounded retries keeps the note: dropping it could drop the answer, keeping it costs tokens.

Removed notes' segments are reported ``filtered`` with the reason. Reads ``candidates``, writes
``merge_notes``; :func:`skip_filter` is the "no filter" ablation (every note goes on).

Wiring: ``screen_notes -(route_filter)-> filter_note ∥ -> gather_filter``; ``route_filter`` answers
``"done"`` when nothing is left to label (map it to the next stage with the edge's path map).
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.types import Overwrite, Send

from longgraph.llm import LLMProvider, call_structured
from longgraph.nodes.runtime import ContextRuntime, report_progress
from longgraph.nodes.segment_notes import render_note, source_label
from longgraph.prompts import prompts_for
from longgraph.state.outputs import FilterDecision
from longgraph.state.segment_plus import EvidenceNote, FilterOutcome, FilterTask

PROMPTS = "segment_plus"
EMPTY_EVIDENCE = "its note quoted no evidence (removed by the filter without a model call)"
EMPTY_NOTE = "its note was empty (removed by the filter without a model call)"
LABELLED_REMOVE = "the filter labelled its note Remove (no useful information for the question)"


def is_empty(note: EvidenceNote) -> bool:
    """No evidence (structured note) or no text (free-text note): nothing the answer could use."""
    return not note.quotes if note.structured else not note.reasoning.strip()


async def screen_notes(state: dict[str, Any], runtime: ContextRuntime) -> dict[str, Any]:
    """Remove empty notes without asking; the rest wait for the model's label."""
    candidates: list[EvidenceNote] = state.get("candidates") or []
    empty = [n for n in candidates if is_empty(n)]
    return {
        "candidates": [n for n in candidates if not is_empty(n)],
        "filtered": [
            (source, EMPTY_EVIDENCE if n.structured else EMPTY_NOTE) for n in empty for source in n.sources
        ],
    }


def route_filter(state: dict[str, Any]) -> list[Send] | Literal["done"]:
    """One filter call per remaining note, or on to the next stage when none is left."""
    notes: list[EvidenceNote] = state.get("candidates") or []
    if not notes:
        return "done"
    return [
        Send("filter_note", FilterTask(index=i, note=n, question=state["question"], total=len(notes)))
        for i, n in enumerate(notes)
    ]


async def filter_note(task: FilterTask, runtime: ContextRuntime, *, llm: LLMProvider) -> dict[str, Any]:
    """Label one note Keep or Remove."""
    context = runtime.context
    note = task["note"]
    result = await call_structured(
        llm(context), prompts_for(PROMPTS, context.prompt_variant), "filter", task=context.task, schema=FilterDecision,
        variables={"context": render_note(note), "question": task["question"]},
        parse_retries=context.parse_retries, work=f"filter of the note from {source_label(note.sources)}",
    )  # fmt: skip
    report_progress("filter", total=task["total"])
    keep = result.value is None or result.value.decision == "Keep"
    outcome = FilterOutcome(index=task["index"], keep=keep, error=result.error)
    return {"judged": [outcome], "usage": result.usage.as_dict()}


async def gather_filter(state: dict[str, Any], runtime: ContextRuntime) -> dict[str, Any]:
    """Keep the Keep-labelled notes in document order; report the removed ones' segments."""
    notes: list[EvidenceNote] = state.get("candidates") or []
    labels = {j.index: j for j in state.get("judged") or []}
    kept, removed, decisions = [], [], []
    for i, note in enumerate(notes):
        label = labels.get(i)
        if label is not None and not label.keep:
            removed.append(note)
            continue
        kept.append(note)
        if label is not None and label.error:
            decisions.append(
                f"the filter label of the note from {source_label(note.sources)} was unparseable "
                f"({label.error}); kept the note"
            )
    return {
        "merge_notes": kept,
        "candidates": [],
        "judged": Overwrite([]),
        "filtered": [(source, LABELLED_REMOVE) for n in removed for source in n.sources],
        "decisions": decisions,
    }


async def skip_filter(state: dict[str, Any], runtime: ContextRuntime) -> dict[str, Any]:
    """The "no filter" ablation: every note, empty ones included, goes on to the merge."""
    return {"merge_notes": list(state.get("candidates") or []), "candidates": []}
