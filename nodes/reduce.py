"""The reduce stage: one answer from the (collapsed) notes, conflicts resolved by confidence."""

from __future__ import annotations

from typing import Any

from longgraph.llm import LLMProvider, call_structured
from longgraph.nodes.notes import join_notes
from longgraph.nodes.runtime import ContextRuntime, report_progress
from longgraph.prompts import prompts_for
from longgraph.state.mapreduce import Note
from longgraph.state.outputs import ReduceOutput


async def reduce_notes(
    state: dict[str, Any], runtime: ContextRuntime, *, llm: LLMProvider, strategy: str = "mapreduce"
) -> dict[str, Any]:
    """Ask for Rationale and Answer over all notes.

    If the answer cannot be parsed after the bounded retries, the most confident note's answer is
    returned instead and the result says so in ``stats.notes``: raw model text is never the answer.
    """
    context = runtime.context
    notes: list[Note] = state["notes"]
    result = await call_structured(
        llm(context), prompts_for(strategy, context.prompt_variant), "reduce", task=context.task, schema=ReduceOutput,
        variables={"context": join_notes(notes), "question": state["question"]}, parse_retries=context.parse_retries,
        work="the reduce stage",
    )  # fmt: skip
    report_progress("reduce", total=1)
    if result.value is not None:
        return {
            "answer": result.value.answer.strip(),
            "rationale": result.value.rationale.strip(),
            "usage": result.usage.as_dict(),
        }
    best = max(notes, key=lambda n: n.output.confidence_score)
    return {
        "answer": best.output.answer.strip(),
        "rationale": best.output.rationale.strip(),
        "usage": result.usage.as_dict(),
        "decisions": [
            f"the reduce answer was unparseable ({result.error}); answered with the most confident note"
        ],
    }
