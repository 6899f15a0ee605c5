"""The Segment+ filter: the model labels each note Keep or Remove, so noise never reaches the merge.

Per Segment+ §3.2 notes with empty evidence, or that say there is no information, are removed; here
that part is done without a call by the grounding stage, which runs first for every strategy (a note
without a verified quote is reported ``no_information`` or ``unsupported``). Every remaining note is
labelled by the model (``FilterDecision``), one call per note, in parallel. The paper keeps redundant
notes, so the prompt removes only notes with nothing useful. A label that cannot be read after the
bounded retries keeps the note: dropping it could drop the answer, keeping it costs tokens.

A Remove label does not drop a note whose evidence is strong (evidence-based confidence of at least
:data:`STRONG_EVIDENCE`: its verified quote holds the answer and most of the question's words). Nor,
when every note is labelled Remove, does it drop those whose verified quotes name an entity the
question names (all of one name's words: "X" for "the X barrage"): measured with
SmolLM2-135M on paraphrased questions, "The X dam stands 41.1 metres tall", asked "What is the
height of the X barrage?", holds half the question's weighted words, and its label left the run
with no note, silent. The same holds when the notes kept name no asked entity: on a third
test split the one note kept quoted a look-alike's hedges ("the Y topiary garden"), the answer layer
refused it, and the note quoting the Z garden's sentence had been labelled Remove, silent. A
note about a look-alike names no asked entity and stays removed; the answer layer judges what is kept.
Overrides are said in ``stats.notes``. Measured with the embedded SmolLM2-135M: it labelled the note
quoting a planted fact Keep in 1 of 12 cases and a note quoting an unrelated sentence Keep in 8 of 12
— at that size the label carries no signal, while the evidence check does. A capable model's label
still removes every weakly supported note, as the paper intends.

Removed notes' chunks are reported ``filtered`` with the reason. The "no filter" ablation simply
leaves this stage out of the wiring.

Wiring: ``route_filter`` sends one ``filter_note`` per note (or answers ``"done"``), then
``gather_filter``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from langgraph.types import Send

from longgraph.nodes.answer_support import name_phrases
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import content_stems
from longgraph.nodes.render import render_note, source_label
from longgraph.nodes.runtime import report_progress
from longgraph.state.graph_state import cleared
from longgraph.state.notes import Note
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
    phrases = name_phrases(state["question"])
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
    rescued: set[int] = set()
    if not any(names_an_asked_entity(n, phrases) for n in kept):
        rescued = {id(n) for n in removed if names_an_asked_entity(n, phrases)}
    if rescued:
        staying = rescued | {id(k) for k in kept}
        kept = [n for n in notes if id(n) in staying]
        removed = [n for n in removed if id(n) not in rescued]
        decisions.append(
            f"no note the filter kept names what the question asks about; kept the {len(rescued)} labelled "
            "Remove whose verified quotes do"
        )
    return {
        "notes": kept,
        "judged": cleared(),
        "filtered": [(source, LABELLED_REMOVE) for n in removed for source in n.sources],
        "decisions": decisions,
    }


def names_an_asked_entity(note: Note, phrases: Sequence[frozenset[str]]) -> bool:
    """Whether the note's verified quotes hold every word of one of the question's names."""
    stems = frozenset().union(*(content_stems(q.text) for q in note.verified_quotes))
    return any(phrase <= stems for phrase in phrases)
