"""The final stage: one answer from the notes that reached it (LLM×MapReduce's reduce, Segment+'s answer).

The model reads the notes (in the order the prompt file names: the strongest first for the reduce)
and answers. Whether that answer stands is decided in ``finalize``: it must rest on a verified note.
An answer that cannot be parsed after the bounded retries is never replaced by the raw text; the
run then answers from its strongest note and says so in ``stats.notes``.
"""

from __future__ import annotations

from longgraph.nodes.kit import RunKit
from longgraph.nodes.render import join_notes
from longgraph.nodes.runtime import report_progress
from longgraph.state.graph_state import RunState
from longgraph.state.outputs import answer_of, rationale_of


async def answer_from_notes(state: RunState, kit: RunKit, *, prompts: str, stage: str) -> RunState:
    """Ask ``stage`` of the ``prompts`` set for the answer over the notes in ``notes``."""
    prompt_set = kit.prompts(prompts)
    notes = state.get("notes") or []
    result = await kit.call(
        prompts,
        stage,
        text=join_notes(notes, prompt_set.labels, prompt_set.stage(stage).notes),
        question=state["question"],
        work=f"the {stage} stage",
    )
    report_progress(stage, total=1)
    if result.value is None:
        return {
            "answer": "",
            "rationale": "",
            "usage": result.usage,
            "decisions": [f"the {stage} answer was unparseable ({result.error})"],
        }
    return {"answer": answer_of(result.value), "rationale": rationale_of(result.value), "usage": result.usage}
