"""The combine stages of the reduction loop: LLM×MapReduce's collapse and Segment+'s merge.

Both take one group of notes and give one note (``Combined``) for ``nodes/reduction.py``.

* :func:`collapse_group` (LLM×MapReduce §3): the model reads the group (strongest notes first) and
  writes one note of the same structure: the model's answer as given, carrying the group's verified
  quotes that hold its words (all of them when none does: ``nodes/checks``), with their original
  offsets, so the final evidence points at the source however many rounds a note went through.
  Whether the answer stands is the final verdict's to say, never a combining stage's. An unparseable
  answer keeps the group's strongest note (said in ``stats.notes``). A group the model says holds no
  information yields no note; its chunks are reported ``filtered``.
* :func:`merge_batch` (Segment+ §3.2): quotes are concatenated verbatim, in order; the model merges
  the reasoning parts into one or two sentences. A batch of one note passes through without a call;
  an unreadable merge joins the reasoning parts instead (nothing lost; the loop's stall check
  bounds the cost).
"""

from __future__ import annotations

from typing import Any

from longgraph.llm import StructuredCall
from longgraph.nodes.checks import combined_note, read_question
from longgraph.nodes.kit import RunKit
from longgraph.nodes.reduction import strength
from longgraph.nodes.render import join_notes
from longgraph.nodes.runtime import report_progress
from longgraph.state.graph_state import RunState
from longgraph.state.notes import Note, NoteDraft
from longgraph.state.tasks import Combined, GroupTask


async def _combine_call(
    kit: RunKit, task: GroupTask, *, prompts: str, stage: str, progress: str, what: str
) -> tuple[NoteDraft | None, StructuredCall[Any]]:
    """One combining call over a task's notes, rendered as ``stage`` of ``prompts`` labels them: its
    draft (None when unparseable) and the call. ``progress`` names the stage in progress events;
    ``what`` is one of "group" or "batch" in the call's description."""
    prompt_set = kit.prompts(prompts)
    result = await kit.call(
        prompts,
        stage,
        text=join_notes(task["notes"], prompt_set.labels, prompt_set.stage(stage).notes),
        question=task["question"],
        work=f"{progress} of {what} {task['index']} in round {task['round']}",
    )
    report_progress(progress, total=task["total"], message=f"round {task['round']}")
    value = result.value
    draft = value.note_draft() if value is not None and hasattr(value, "note_draft") else None
    return draft, result


async def collapse_group(task: GroupTask, kit: RunKit, *, prompts: str, stage: str) -> RunState:
    """Collapse one group of notes into one note whose answer its quotes support."""
    notes = task["notes"]
    sources = sorted({s for n in notes for s in n.sources})
    draft, result = await _combine_call(kit, task, prompts=prompts, stage=stage, progress=stage, what="group")
    strongest = max(notes, key=strength)
    if draft is None:
        combined = Combined(
            index=task["index"],
            sources=sources,
            note=strongest,
            error=f"was unparseable ({result.error}); kept its strongest note",
        )
    elif draft.no_information:
        combined = Combined(
            index=task["index"],
            sources=sources,
            emptied=f"the {stage} of its group (round {task['round']}) found no information",
        )
    else:
        note = combined_note(draft, notes, read_question(task["question"]), sources)
        combined = Combined(index=task["index"], sources=sources, note=note)
    return {"combined": [combined], "usage": result.usage}


async def merge_batch(task: GroupTask, kit: RunKit, *, prompts: str, stage: str) -> RunState:
    """Merge one batch into one note: quotes concatenated verbatim, reasoning merged by the model."""
    notes = task["notes"]
    sources = [s for n in notes for s in n.sources]
    if len(notes) == 1:
        return {"combined": [Combined(index=task["index"], sources=sources, note=notes[0])]}
    structured = notes[0].structured
    merge_stage = stage if structured else f"{stage}_text"
    draft, result = await _combine_call(
        kit, task, prompts=prompts, stage=merge_stage, progress=stage, what="batch"
    )
    error = None
    reasoning = draft.reasoning if draft is not None else None
    if reasoning is None:
        reasoning = "\n".join(n.reasoning.strip() for n in notes if n.reasoning.strip())
        error = f"was unparseable ({result.error}): joined its reasoning parts"
    confidences = [n.model_confidence for n in notes if n.model_confidence is not None]
    merged = Note(
        sources=sources,
        quotes=[q for n in notes for q in n.quotes],
        reasoning=reasoning.strip(),
        answer="",
        structured=structured,
        confidence=max(n.confidence for n in notes),
        model_confidence=max(confidences) if confidences else None,
    )
    return {
        "combined": [Combined(index=task["index"], sources=sources, note=merged, error=error)],
        "usage": result.usage,
    }
