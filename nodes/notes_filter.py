"""The Segment+ filter: the model labels each note Keep or Remove, so noise never reaches the merge.

Per Segment+ §3.2 notes with empty evidence, or that say there is no information, are removed; here
that part is done without a call by the grounding stage, which runs first for every strategy (a note
without a verified quote is reported ``no_information`` or ``unsupported``). Every remaining note is
labelled by the model (``FilterDecision``), one call per note, in parallel. The paper keeps redundant
notes, so the prompt removes only notes with nothing useful. A label that cannot be read after the
bounded retries keeps the note: dropping it could drop the answer, keeping it costs tokens.

A Remove label does not drop a note whose evidence is strong (evidence-based confidence of at least
:data:`STRONG_EVIDENCE`: its verified quotes hold most of the question's words). Overrides are said in ``stats.notes``. Measured with the embedded SmolLM2-135M: it labelled the note
quoting a planted fact Keep in 1 of 12 cases and a note quoting an unrelated sentence Keep in 8 of 12
— at that size the label carries no signal, while the evidence check does. A capable model's label
still removes every weakly supported note, as the paper intends.

Removed notes' chunks are reported ``filtered`` with the reason. The "no filter" ablation simply
leaves this stage out of the wiring.

Wiring: ``route_filter`` sends one ``filter_note`` per note (or answers ``"done"``), then
``gather_filter``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from langgraph.types import Send

from longgraph.nodes.kit import RunKit
from longgraph.nodes.render import render_note, source_label
from longgraph.nodes.runtime import report_progress
from longgraph.state.graph_state import cleared
from longgraph.state.segment_plus import FilterOutcome, SegmentPlusState
from longgraph.state.tasks import NoteTask

LABELLED_REMOVE = "the filter labelled its note Remove (no useful information for the question)"
STRONG_EVIDENCE = 3.75
"""Evidence-based confidence (of 5) from which a note is kept whatever the filter's label."""


async def pass_notes(state: SegmentPlusState, kit: RunKit) -> SegmentPlusState:
    """A junction before the filter's fan-out (a node has one router; ``ground`` already has one)."""
    return {}


def filter_each_note(target: str) -> Callable[[SegmentPlusState], list[Send] | Literal["done"]]:
    """A router sending one filter call per note to ``target``, or on to the next stage when there is
    none."""

    def route_filter(state: SegmentPlusState) -> list[Send] | Literal["done"]:
        notes = state.get("notes") or []
        if not notes:
            return "done"
        return [
            Send(target, NoteTask(index=i, note=n, question=state["question"], total=len(notes)))
            for i, n in enumerate(notes)
        ]

    return route_filter


async def filter_note(
    task: NoteTask, kit: RunKit, *, prompts: str, stage: str = "filter"
) -> SegmentPlusState:
    """Label one note Keep or Remove."""
    note = task["note"]
    result = await kit.call(
        prompts,
        stage,
        text=render_note(note, kit.prompts(prompts).labels),
        question=task["question"],
        work=f"filter of the note from {source_label(note.sources)}",
    )
    report_progress(stage, total=task["total"])
    decision = getattr(result.value, "decision", "Keep")
    outcome = FilterOutcome(
        index=task["index"], keep=result.value is None or decision == "Keep", error=result.error
    )
    return {"judged": [outcome], "usage": result.usage}


async def gather_filter(state: SegmentPlusState, kit: RunKit) -> SegmentPlusState:
    """Keep the Keep-labelled notes in document order; report the removed ones' chunks."""
    notes = state.get("notes") or []
    labels = {j.index: j for j in state.get("judged") or []}
    kept, removed, decisions = [], [], []
    overridden = 0
    for i, note in enumerate(notes):
        label = labels.get(i)
        if label is not None and not label.keep:
            if note.confidence < STRONG_EVIDENCE:
                removed.append(note)
                continue
            overridden += 1
        kept.append(note)
        if label is not None and label.error:
            decisions.append(
                f"the filter label of the note from {source_label(note.sources)} was unparseable "
                f"({label.error}); kept the note"
            )
    if overridden:
        decisions.append(
            f"the filter labelled {overridden} note(s) Remove whose quotes hold the answer and most of the "
            f"question's words (evidence-based confidence ≥ {STRONG_EVIDENCE:g}): kept them"
        )
    return {
        "notes": kept,
        "judged": cleared(),
        "filtered": [(source, LABELLED_REMOVE) for n in removed for source in n.sources],
        "decisions": decisions,
    }
