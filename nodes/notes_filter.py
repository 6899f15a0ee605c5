"""The Segment+ filter: the model labels each note Keep or Remove, so noise never reaches the merge.

Per Segment+ §3.2 notes with empty evidence, or that say there is no information, are removed; here
that part is done without a call by the grounding stage, which runs first for every strategy (a note
without a verified quote is reported ``no_information`` or ``unsupported``). Every remaining note is
labelled by the model (``FilterDecision``), one call per note, in parallel. The paper keeps redundant
notes, so the prompt removes only notes with nothing useful. A label that cannot be read after the
bounded retries keeps the note: dropping it could drop the answer, keeping it costs tokens.

Removed notes' chunks are reported ``filtered`` with the reason. The "no filter" ablation simply
leaves this stage out of the wiring.

Wiring: ``route_filter`` sends one ``filter_note`` per note (or answers ``"done"``), then
``gather_filter``.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.types import Overwrite, Send

from longgraph.nodes.kit import RunKit
from longgraph.nodes.render import render_note, source_label
from longgraph.nodes.runtime import report_progress
from longgraph.state.segment_plus import FilterOutcome, SegmentPlusState
from longgraph.state.tasks import NoteTask

LABELLED_REMOVE = "the filter labelled its note Remove (no useful information for the question)"


def route_filter(state: SegmentPlusState) -> list[Send] | Literal["done"]:
    """One filter call per note, or on to the next stage when there is none."""
    notes = state.get("notes") or []
    if not notes:
        return "done"
    return [
        Send("filter_note", NoteTask(index=i, note=n, question=state["question"], total=len(notes)))
        for i, n in enumerate(notes)
    ]


async def filter_note(task: NoteTask, kit: RunKit, *, prompts: str, stage: str = "filter") -> dict[str, Any]:
    """Label one note Keep or Remove."""
    note = task["note"]
    result = await kit.call(
        prompts, stage, text=render_note(note, kit.prompts(prompts).labels), question=task["question"],
        work=f"filter of the note from {source_label(note.sources)}",
    )  # fmt: skip
    report_progress(stage, total=task["total"])
    decision = getattr(result.value, "decision", "Keep")
    outcome = FilterOutcome(
        index=task["index"], keep=result.value is None or decision == "Keep", error=result.error
    )
    return {"judged": [outcome], "usage": result.usage}


async def gather_filter(state: SegmentPlusState, kit: RunKit) -> dict[str, Any]:
    """Keep the Keep-labelled notes in document order; report the removed ones' chunks."""
    notes = state.get("notes") or []
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
        "notes": kept,
        "judged": Overwrite([]),
        "filtered": [(source, LABELLED_REMOVE) for n in removed for source in n.sources],
        "decisions": decisions,
    }
