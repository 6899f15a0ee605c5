"""One call over the selected text: the answer stage of the single-pass baselines (truncate, RAG).

Shared by ``truncate`` and the RAG baselines: they differ only in which text they select. The answer
goes through the one structured path as the answer alone (:class:`DirectAnswer`): standard decoding,
as the papers' baselines do it, with the answer instructions of the other strategies so every
strategy is asked for the same kind of answer. (A rationale before the answer was tried:
SmolLM2-135M filled it until its output budget ran out on a 7K-token prompt and never reached the
answer.) The shown chunks are reported ``used`` (with why they were shown), the others ``filtered``
by the selecting stage; the result comes from the one ``finalize``, ungrounded (a baseline is
measured as the papers measure it).

An answer that cannot be parsed after the bounded retries is never replaced by the raw text. Its
failure is the failure of every chunk it read, so, as for any strategy, the run raises
:class:`~longgraph.errors.TooManyFailures` unless ``max_failed_fraction`` is 1; then the answer is NO
INFORMATION and the shown chunks are reported ``failed`` with the reason and the raw output.
"""

from __future__ import annotations

from longgraph.errors import TooManyFailures
from longgraph.nodes.kit import RunKit
from longgraph.nodes.runtime import report_progress
from longgraph.state.baseline import BaselineState, ShownChunk
from longgraph.state.notes import ChunkOutcome, Note
from longgraph.state.outputs import NO_INFORMATION, answer_of

PROMPTS = "baseline"
STAGE = "answer"


def shown_text(shown: list[ShownChunk]) -> str:
    """What the model reads: the selected chunks in document order, a blank line between them."""
    return "\n\n".join(s.text for s in shown)


async def answer_once(state: BaselineState, kit: RunKit) -> BaselineState:
    """Ask the question of the selected text in one call."""
    shown: list[ShownChunk] = state.get("shown") or []
    result = await kit.call(
        PROMPTS, STAGE, text=shown_text(shown), question=state["question"], work="the answer call"
    )
    report_progress(STAGE, total=1)
    if result.value is not None:
        return {
            "answer": answer_of(result.value),
            "rationale": "",
            "usage": result.usage,
            "outcomes": [ChunkOutcome(chunk_id=s.chunk_id, fate="noted", reason=s.note) for s in shown],
            "notes": [Note(sources=[s.chunk_id for s in shown])] if shown else [],
        }
    if shown and kit.context.max_failed_fraction < 1.0:
        # Every chunk the call read failed: as for any strategy whose failed share exceeds the limit.
        raise TooManyFailures(
            f"the one answer call failed ({len(shown)} of {len(shown)} shown chunks): {result.error}"
        )
    return {
        "answer": NO_INFORMATION,
        "rationale": f"the answer could not be parsed: {result.error}",
        "usage": result.usage,
        "decisions": [f"the answer call was unparseable ({result.error}); answered NO INFORMATION"],
        "outcomes": [
            ChunkOutcome(chunk_id=s.chunk_id, fate="failed", reason=result.error, raw_output=result.raw)
            for s in shown
        ],
    }
