"""Gathering map results, and the bounded collapse loop that brings them under the window.

Per LLM×MapReduce §3: results whose Answer is NO INFORMATION are disregarded; if the rest exceeds
``L`` they are grouped in order, each group filled until the next note would overflow, and each group
is collapsed (in parallel) into one note of the same four-field structure; repeat until they fit.

What the paper leaves open, decided here: the loop is bounded by ``max_collapse_rounds``, and a round
that would not shrink the notes (every group holds a single note) or that did not shrink them ends the
loop with a documented fallback instead of spinning: the highest-confidence notes that fit the reduce
prompt are kept in document order, and the chunks behind the others are reported as ``filtered`` with
the reason. A group whose collapse answer cannot be parsed keeps its highest-confidence input note.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, TypeVar

from langgraph.types import Overwrite, Send

from longgraph.endpoint import resolve_tokenizer_spec
from longgraph.errors import TooManyFailures
from longgraph.llm import LLMProvider, call_structured
from longgraph.nodes.budget import text_budget
from longgraph.nodes.notes import join_notes, make_notes
from longgraph.nodes.runtime import ContextRuntime, report_progress
from longgraph.prompts import prompts_for
from longgraph.state.mapreduce import CollapsedGroup, CollapseTask, Note
from longgraph.state.outputs import MapOutput, ReduceOutput
from longgraph.tokenizer import get_tokenizer


async def gather_map(
    state: dict[str, Any], runtime: ContextRuntime, *, strategy: str = "mapreduce"
) -> dict[str, Any]:
    """Order map outcomes by chunk, check the failure budget, keep the notes that carry information."""
    mapped = sorted(state.get("mapped") or [], key=lambda m: m.chunk_id)
    failed = [m for m in mapped if m.output is None]
    if mapped and len(failed) / len(mapped) > runtime.context.max_failed_fraction:
        ids = ", ".join(str(m.chunk_id) for m in failed[:20])
        raise TooManyFailures(
            f"{len(failed)} of {len(mapped)} chunks failed in the map stage (chunks {ids}"
            f"{'…' if len(failed) > 20 else ''}); first error: {failed[0].error}"
        )
    tokenizer = get_tokenizer(resolve_tokenizer_spec(runtime.context))
    informative = [
        ([m.chunk_id], m.output) for m in mapped if m.output is not None and m.output.has_information
    ]
    return {
        "notes": make_notes(informative, tokenizer),
        "collapse_round": 0,
        "previous_tokens": None,
        "groups": [],
    }


class _Measured(Protocol):
    @property
    def tokens(self) -> int: ...


MeasuredT = TypeVar("MeasuredT", bound=_Measured)


def group_in_order(notes: Sequence[MeasuredT], budget: int) -> list[list[MeasuredT]]:
    """Consecutive groups, each filled until the next note would exceed ``budget`` tokens.

    Generic over anything with a ``tokens`` count: the Segment+ merge batches its notes with it too.
    """
    groups: list[list[MeasuredT]] = []
    used = 0
    for note in notes:
        if groups and used + note.tokens <= budget:
            groups[-1].append(note)
            used += note.tokens
        else:
            groups.append([note])
            used = note.tokens
    return groups


def keep_best_fitting(notes: Sequence[Note], budget: int) -> tuple[list[Note], list[Note]]:
    """The highest-confidence notes that fit ``budget``, in document order; and the rest."""
    ranked = sorted(range(len(notes)), key=lambda i: (-notes[i].output.confidence_score, i))
    kept: set[int] = set()
    used = 0
    for i in ranked:
        if used + notes[i].tokens <= budget:
            kept.add(i)
            used += notes[i].tokens
    return [n for i, n in enumerate(notes) if i in kept], [n for i, n in enumerate(notes) if i not in kept]


async def plan_reduction(
    state: dict[str, Any], runtime: ContextRuntime, *, strategy: str = "mapreduce"
) -> dict[str, Any]:
    """Decide: reduce now, collapse another round (and how to group), or fall back."""
    context = runtime.context
    notes: list[Note] = state.get("notes") or []
    if not notes:
        return {"groups": []}
    prompts = prompts_for(strategy, context.prompt_variant)
    tokenizer = get_tokenizer(resolve_tokenizer_spec(context))
    question = state["question"]
    reduce_budget = text_budget(
        prompts, "reduce", context=context, question=question, schema=ReduceOutput, tokenizer=tokenizer
    )
    total = sum(n.tokens for n in notes)
    if total <= reduce_budget:
        return {"groups": []}
    collapse_budget = text_budget(
        prompts, "collapse", context=context, question=question, schema=MapOutput, tokenizer=tokenizer
    )
    groups = group_in_order(notes, collapse_budget)
    round_no = state.get("collapse_round", 0)
    previous = state.get("previous_tokens")
    stalled = len(groups) == len(notes) or (previous is not None and total >= previous)
    if not stalled and round_no < context.max_collapse_rounds:
        return {"groups": groups}
    why = (
        f"collapse stopped after {round_no} round(s) (limit {context.max_collapse_rounds})"
        if not stalled
        else f"collapse round {round_no + 1} could not shrink {len(notes)} notes ({total} tokens)"
    )
    kept, dropped = keep_best_fitting(notes, reduce_budget)
    reason = f"{why}: kept the {len(kept)} highest-confidence notes that fit the reduce prompt"
    return {
        "notes": kept,
        "groups": [],
        "decisions": [f"{reason}; set aside {len(dropped)}"],
        "filtered": [(source, reason) for note in dropped for source in note.sources],
    }


def route_reduction(state: dict[str, Any]) -> list[Send] | Literal["reduce", "finalize"]:
    """After planning: nothing to reduce, collapse groups in parallel, or reduce."""
    if not state.get("notes"):
        return "finalize"
    groups: list[list[Note]] = state.get("groups") or []
    if not groups:
        return "reduce"
    round_no = state.get("collapse_round", 0) + 1
    return [
        Send(
            "collapse_group",
            CollapseTask(index=i, notes=g, question=state["question"], round=round_no, total=len(groups)),
        )
        for i, g in enumerate(groups)
    ]


async def collapse_group(
    task: CollapseTask, runtime: ContextRuntime, *, llm: LLMProvider, strategy: str = "mapreduce"
) -> dict[str, Any]:
    """Collapse one group of notes into one note of the same structure."""
    context = runtime.context
    notes = task["notes"]
    sources = [s for n in notes for s in n.sources]
    result = await call_structured(
        llm(context), prompts_for(strategy, context.prompt_variant), "collapse", task=context.task, schema=MapOutput,
        variables={"context": join_notes(notes), "question": task["question"]}, parse_retries=context.parse_retries,
        work=f"collapse of group {task['index']} in round {task['round']}",
    )  # fmt: skip
    report_progress("collapse", total=task["total"], message=f"round {task['round']}")
    group = CollapsedGroup(index=task["index"], sources=sources, output=result.value, error=result.error)
    if result.value is None:
        best = max(notes, key=lambda n: n.output.confidence_score)
        group.output = best.output
    return {"collapsed": [group], "usage": result.usage.as_dict()}


async def gather_collapse(state: dict[str, Any], runtime: ContextRuntime) -> dict[str, Any]:
    """Replace the notes by this round's collapsed notes, in document order."""
    groups = sorted(state.get("collapsed") or [], key=lambda g: g.index)
    tokenizer = get_tokenizer(resolve_tokenizer_spec(runtime.context))
    decisions = [
        f"collapse of chunks {g.sources[0]}-{g.sources[-1]} was unparseable ({g.error}); kept its most confident note"
        for g in groups
        if g.error
    ]
    items = [(g.sources, g.output) for g in groups if g.output is not None and g.output.has_information]
    emptied = [
        (
            source,
            f"the collapse of its group (round {state.get('collapse_round', 0) + 1}) found no information",
        )
        for g in groups
        if g.output is not None and not g.output.has_information
        for source in g.sources
    ]
    return {
        "filtered": emptied,
        "notes": make_notes(items, tokenizer),
        "previous_tokens": sum(n.tokens for n in state.get("notes") or []),
        "collapsed": Overwrite([]),
        "groups": [],
        "collapse_round": state.get("collapse_round", 0) + 1,
        "decisions": decisions,
    }
