"""One call over the selected text, and the result of a single-pass baseline.

Shared by ``truncate`` and the RAG baselines: they differ only in which text they select. The answer
goes through the one structured path as the answer alone (:class:`DirectAnswer`): standard decoding, as
the papers' baselines do it, with the answer instructions of the other strategies so every strategy is
asked for the same kind of answer. (A rationale before the answer was tried: SmolLM2-135M filled it
until its output budget ran out on a 7K-token prompt and never reached the answer.) An answer that
cannot be parsed after the bounded retries is never replaced by the raw text. Its failure is the
failure of every chunk it read, so, as for any strategy, the run raises
:class:`~longgraph.errors.TooManyFailures` unless ``max_failed_fraction`` is 1; then the answer is NO
INFORMATION and the shown chunks are reported ``failed`` with the reason and the raw output.
"""

from __future__ import annotations

from typing import Any

from longgraph.errors import TooManyFailures
from longgraph.llm import LLMProvider, call_structured
from longgraph.nodes.finalize import agrees, build_stats
from longgraph.nodes.runtime import ContextRuntime, report_progress
from longgraph.prompts import prompts_for
from longgraph.state.baseline import ShownChunk
from longgraph.state.contract import Chunk, ChunkReport, Evidence
from longgraph.state.outputs import NO_INFORMATION, DirectAnswer, is_no_information

STAGE = "answer"


def shown_text(shown: list[ShownChunk]) -> str:
    """What the model reads: the selected chunks in document order, a blank line between them."""
    return "\n\n".join(s.text for s in shown)


async def answer_once(
    state: dict[str, Any], runtime: ContextRuntime, *, llm: LLMProvider, strategy: str = "baseline"
) -> dict[str, Any]:
    """Ask the question of the selected text in one call."""
    context = runtime.context
    shown: list[ShownChunk] = state.get("shown") or []
    result = await call_structured(
        llm(context), prompts_for(strategy, context.prompt_variant), STAGE, task=context.task, schema=DirectAnswer,
        variables={"context": shown_text(shown), "question": state["question"]},
        parse_retries=context.parse_retries, work="the answer call",
    )  # fmt: skip
    report_progress(STAGE, total=1)
    if result.value is not None:
        return {"answer": result.value.answer.strip(), "rationale": "", "usage": result.usage.as_dict()}
    if shown and context.max_failed_fraction < 1.0:
        # Every chunk the call read failed: as for any strategy whose failed share exceeds the limit.
        raise TooManyFailures(
            f"the one answer call failed ({len(shown)} of {len(shown)} shown chunks): {result.error}"
        )
    return {
        "answer": NO_INFORMATION,
        "rationale": f"the answer could not be parsed: {result.error}",
        "usage": result.usage.as_dict(),
        "decisions": [f"the answer call was unparseable ({result.error}); answered NO INFORMATION"],
        "answer_error": result.error,
        "answer_raw": result.raw,
    }


def single_pass_reports(
    chunks: list[Chunk],
    shown: list[ShownChunk],
    filtered: list[tuple[int, str]],
    *,
    error: str | None = None,
    raw: str | None = None,
) -> list[ChunkReport]:
    """Every chunk once: ``used`` if shown (``failed`` if the one call failed), else ``filtered``."""
    by_id = {s.chunk_id: s for s in shown}
    reasons = dict(filtered)
    reports = []
    for chunk in chunks:
        base: dict[str, Any] = {"id": chunk.id, "parts": chunk.parts, "tokens": chunk.tokens}
        if chunk.id in by_id and error is not None:
            reports.append(ChunkReport(**base, status="failed", reason=error, raw_output=raw))
        elif chunk.id in by_id:
            reports.append(ChunkReport(**base, status="used", reason=by_id[chunk.id].note))
        else:
            reason = reasons.get(chunk.id, "not shown to the model")
            reports.append(ChunkReport(**base, status="filtered", reason=reason))
    return reports


def single_pass_evidence(answer: str, chunks: list[Chunk], shown: list[ShownChunk]) -> list[Evidence]:
    """The shown chunks whose text contains the answer: one call gives no finer provenance."""
    if is_no_information(answer):
        return []
    by_id = {c.id: c for c in chunks}
    return [
        Evidence(
            chunk_id=s.chunk_id,
            doc_index=part.doc_index,
            title=part.title,
            start=part.start,
            end=part.end,
        )
        for s in shown
        if agrees(answer, s.text)
        for part in by_id[s.chunk_id].parts
    ]


async def finalize_single_pass(
    state: dict[str, Any], runtime: ContextRuntime, *, strategy: str
) -> dict[str, Any]:
    """The output contract for a single-pass baseline."""
    chunks: list[Chunk] = state.get("input_chunks") or []
    shown: list[ShownChunk] = state.get("shown") or []
    answer = state.get("answer", NO_INFORMATION)
    if is_no_information(answer):
        answer = NO_INFORMATION
    reports = single_pass_reports(
        chunks,
        shown,
        state.get("filtered") or [],
        error=state.get("answer_error"),
        raw=state.get("answer_raw"),
    )
    return {
        "answer": answer,
        "rationale": state.get("rationale", ""),
        "confidence": None,
        "evidence": single_pass_evidence(answer, chunks, shown),
        "chunks": reports,
        "stats": build_stats(state).model_dump(),
        "strategy": strategy,
    }
