"""The Segment+ merge: batches of notes, in order, merged until they fit the final stage's window.

Per Segment+ §3.2: notes keep their segment order and are split into batches under the merge
prompt's token budget (``group_in_order``, the same grouping LLM×MapReduce's collapse uses); in each
batch the Evidence parts are concatenated verbatim and the model merges the Reasoning parts into one
or two sentences (``MergedReasoning``), so each batch yields one note of the same structure. Repeat
until the notes fit the final prompt. Free-text notes (the "no structure" ablation) are merged whole
by the model (``FreeTextNote``). A batch of one note passes through without a call.

What the paper leaves open, decided here:

* **Evidence overflow.** Concatenation never shrinks evidence, so when the quotes of all notes exceed
  ``EVIDENCE_SHARE`` (3/4) of the smaller of the merge and final budgets, no number of merge rounds
  can make them fit. The overflow is handled before merging, once: exact duplicate quotes are dropped
  (lossless), then the lowest-value quotes (unverified first, then those sharing fewest words with the
  question; ``nodes/segment_notes.py``) until the rest fit the share. The reasoning of every note is
  kept, so what a trimmed quote said still reaches the merge through its note's reasoning. The
  remaining quarter leaves room for the reasoning parts, so merging can converge. ``stats.notes``
  says how many quotes were dropped from which segments; a segment that lost all its quotes is
  reported ``filtered`` with the reason. Quotes that are kept are split across batches by the
  ordinary grouping (a batch never exceeds the merge budget).
* **Bounded loop.** At most ``max_collapse_rounds`` rounds; a round that would not shrink the notes
  (every batch holds one note) or that did not shrink them stops the loop. Then the most valuable
  notes that fit are kept in document order; a note that does not fit whole is kept without its
  reasoning when its quotes alone fit; the rest are set aside and their segments reported
  ``filtered`` with the reason. It never loops until ``recursion_limit``.
* **Unreadable merge.** If the merged reasoning cannot be parsed after the bounded retries, the
  batch's reasoning parts are joined instead (nothing lost; the stall check bounds the cost).

Wiring: ``plan_merge -(route_merge)-> merge_batch ∥ -> gather_merge -> plan_merge``; ``route_merge``
answers ``"done"`` (fits: go to the final stage) or ``"empty"`` (no note left); map them with the
edge's path map. The final stage is named by ``final_prompts``/``final_stage`` so any graph can put
this merge in front of its own answer stage.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.types import Overwrite, Send

from longgraph.endpoint import resolve_tokenizer_spec
from longgraph.llm import LLMProvider, call_structured
from longgraph.nodes.budget import text_budget
from longgraph.nodes.collapse import group_in_order
from longgraph.nodes.runtime import ContextRuntime, report_progress
from longgraph.nodes.segment_notes import (
    evidence_tokens,
    fit_notes,
    join_notes,
    measured,
    merge_into_one,
    source_label,
    total_tokens,
    trim_evidence,
)
from longgraph.prompts import prompts_for
from longgraph.state.outputs import FreeTextNote, MergedReasoning, ReduceOutput
from longgraph.state.segment_plus import EvidenceNote, MergedBatch, MergeTask
from longgraph.tokenizer import get_tokenizer

PROMPTS = "segment_plus"
EVIDENCE_SHARE = 0.75
"""Share of the window verbatim evidence may take; the rest is for reasoning parts and note headers."""


def _segments(ids: list[int] | set[int]) -> str:
    shown = sorted(ids)
    return ", ".join(map(str, shown[:20])) + ("…" if len(shown) > 20 else "")


async def plan_merge(
    state: dict[str, Any],
    runtime: ContextRuntime,
    *,
    final_prompts: str = PROMPTS,
    final_stage: str = "answer",
) -> dict[str, Any]:
    """Decide: go on to the final stage, merge another round (and how to batch), or fall back."""
    context = runtime.context
    notes: list[EvidenceNote] = state.get("merge_notes") or []
    if not notes:
        return {"merge_batches": []}
    tokenizer = get_tokenizer(resolve_tokenizer_spec(context))
    question = state["question"]
    final_budget = text_budget(
        prompts_for(final_prompts, context.prompt_variant), final_stage, context=context, question=question, schema=ReduceOutput,
        tokenizer=tokenizer,
    )  # fmt: skip
    if total_tokens(notes) <= final_budget:
        return {"merge_batches": []}
    structured = notes[0].structured
    merge_budget = text_budget(
        prompts_for(PROMPTS, context.prompt_variant), "merge" if structured else "merge_text", context=context, question=question,
        schema=MergedReasoning if structured else FreeTextNote, tokenizer=tokenizer,
    )  # fmt: skip
    decisions: list[str] = []
    filtered: list[tuple[int, str]] = []
    cap = int(min(final_budget, merge_budget) * EVIDENCE_SHARE)
    evidence = evidence_tokens(notes, tokenizer)
    if evidence > cap:
        notes, dropped, duplicates = trim_evidence(notes, cap, question, tokenizer)
        remaining = {q.chunk_id for n in notes for q in n.quotes}
        emptied = {q.chunk_id for q in dropped} - remaining
        decisions.append(
            f"evidence overflow: the quotes of {len(notes)} notes take {evidence} tokens, more than the "
            f"{cap} the window leaves for verbatim evidence (merging never shrinks it): dropped "
            f"{duplicates} duplicate quote(s) and the {len(dropped)} lowest-value quote(s) (unverified "
            f"first, then fewest question words) from segments {_segments({q.chunk_id for q in dropped})}; "
            "their notes' reasoning was kept"
        )
        reason = (
            "evidence overflow: all its quoted sentences were trimmed to fit the window "
            "(its reasoning still went into the merge)"
        )
        filtered += [(source, reason) for source in sorted(emptied)]
        if total_tokens(notes) <= final_budget:
            return {"merge_notes": notes, "merge_batches": [], "decisions": decisions, "filtered": filtered}
    total = total_tokens(notes)
    batches = group_in_order(notes, merge_budget)
    round_no = state.get("collapse_round", 0)
    previous = state.get("previous_tokens")
    stalled = len(batches) == len(notes) or (previous is not None and total >= previous)
    if not stalled and round_no < context.max_collapse_rounds:
        return {"merge_notes": notes, "merge_batches": batches, "decisions": decisions, "filtered": filtered}
    why = (
        f"merge stopped after {round_no} round(s) (limit {context.max_collapse_rounds})"
        if not stalled
        else f"merge round {round_no + 1} could not shrink {len(notes)} notes ({total} tokens)"
    )
    kept, stripped, aside = fit_notes(notes, final_budget, question, tokenizer)
    decisions.append(
        f"{why}: kept the {len(kept)} most valuable notes that fit the final prompt"
        + (f" ({len(stripped)} of them without their reasoning)" if stripped else "")
        + f"; set aside {len(aside)}"
    )
    reason = f"{why}: its note was set aside to fit the window"
    filtered += [(source, reason) for note in aside for source in note.sources]
    return {"merge_notes": kept, "merge_batches": [], "decisions": decisions, "filtered": filtered}


def route_merge(state: dict[str, Any]) -> list[Send] | Literal["done", "empty"]:
    """After planning: no note left, merge batches in parallel, or done (the notes fit)."""
    if not state.get("merge_notes"):
        return "empty"
    batches: list[list[EvidenceNote]] = state.get("merge_batches") or []
    if not batches:
        return "done"
    round_no = state.get("collapse_round", 0) + 1
    return [
        Send(
            "merge_batch",
            MergeTask(index=i, notes=b, question=state["question"], round=round_no, total=len(batches)),
        )
        for i, b in enumerate(batches)
    ]


async def merge_batch(task: MergeTask, runtime: ContextRuntime, *, llm: LLMProvider) -> dict[str, Any]:
    """Merge one batch into one note: evidence concatenated verbatim, reasoning merged by the model."""
    notes = task["notes"]
    if len(notes) == 1:
        return {"merged": [MergedBatch(index=task["index"], note=notes[0])]}
    context = runtime.context
    common: dict[str, Any] = {
        "task": context.task,
        "variables": {"context": join_notes(notes), "question": task["question"]},
        "parse_retries": context.parse_retries,
        "work": f"merge of batch {task['index']} in round {task['round']}",
    }
    client, prompts = llm(context), prompts_for(PROMPTS, context.prompt_variant)
    if notes[0].structured:
        merged = await call_structured(client, prompts, "merge", schema=MergedReasoning, **common)
        reasoning, error, usage = (
            (merged.value.reasoning if merged.value else None),
            merged.error,
            merged.usage,
        )
    else:
        text = await call_structured(client, prompts, "merge_text", schema=FreeTextNote, **common)
        reasoning, error, usage = (text.value.note if text.value else None), text.error, text.usage
    report_progress("merge", total=task["total"], message=f"round {task['round']}")
    if reasoning is None:
        reasoning = "\n".join(n.reasoning.strip() for n in notes if n.reasoning.strip())
    batch = MergedBatch(index=task["index"], note=merge_into_one(notes, reasoning.strip()), error=error)
    return {"merged": [batch], "usage": usage.as_dict()}


async def gather_merge(state: dict[str, Any], runtime: ContextRuntime) -> dict[str, Any]:
    """Replace the notes by this round's merged notes, in document order."""
    batches = sorted(state.get("merged") or [], key=lambda b: b.index)
    tokenizer = get_tokenizer(resolve_tokenizer_spec(runtime.context))
    decisions = [
        f"the merge of {source_label(b.note.sources)} was unparseable ({b.error}); joined its reasoning parts"
        for b in batches
        if b.error
    ]
    return {
        "merge_notes": measured([b.note for b in batches], tokenizer),
        "previous_tokens": total_tokens(state.get("merge_notes") or []),
        "merged": Overwrite([]),
        "merge_batches": [],
        "collapse_round": state.get("collapse_round", 0) + 1,
        "decisions": decisions,
    }
