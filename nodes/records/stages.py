"""The records path's stages: plan the question, extract each chunk's records, check and compute.

``plan_records`` asks one call (``prompts/records.toml: plan``) for a :class:`RecordPlan`, or takes the
caller's (the input's ``plan``: a plan that cannot be carried out is refused); a plan that does not
parse, does not aggregate or cannot be carried out (``RecordPlan.problems``) keeps the question on its
strategy's own path with the reason in ``plan_problem``.
``extract_records`` reads one chunk (``extract``) for the plan's fields. ``compute_records`` checks every
row against its chunk, reconciles, computes in code (``nodes/records/compute.py``) and accounts for
every chunk: records used, no records, records dropped (each reason), or the call failed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Literal

from langgraph.types import Send
from pydantic import ValidationError

from longgraph.errors import ConfigurationError, InputError, validation_problems
from longgraph.nodes.chunking import check_budget, halves
from longgraph.nodes.kit import RunKit
from longgraph.nodes.prepare import chunk_budget, refuse_oversized
from longgraph.nodes.records.check import check_row, reconcile
from longgraph.nodes.records.compute import compute, fold
from longgraph.nodes.runtime import report_progress
from longgraph.state.contract import Chunk, DocumentIn, parse_input
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkFate, ChunkOutcome
from longgraph.state.records import (
    MAX_RECORD_ROWS,
    ChunkRecords,
    Record,
    RecordPlan,
    RecordsPiece,
    RecordsRead,
)
from longgraph.state.tasks import RecordsTask
from longgraph.state.usage import Usage

PROMPTS = "records"
MAX_SPLIT_DEPTH = 6
"""A chunk whose records do not fit one answer is cut in two at most this deep (64 pieces)."""
CUT_SHARE = 0.9
"""An answer that takes this share of the output budget may have been cut off by it (a tolerant parse
of a cut answer keeps the rows before the cut: the rest would be lost in silence)."""
FIELDS_RESERVE = 96
"""Tokens a chunk leaves for the plan's fields, which the extract call's question ends with (at most
four names of 40 characters and their types)."""


async def plan_records(state: RunState, kit: RunKit, *, always: bool = False) -> RunState:
    """The plan to follow (the input's ``plan``, or asked for), or why there is none (``plan_problem``).

    Without ``always``, a run whose ``plan_records`` setting is off (a model measured unable to plan:
    ``longgraph/embedded/catalog.py``) is not planned and keeps its strategy's path, without a call."""
    given = state.get("plan")
    graph_input = parse_input(
        {k: state.get(k) for k in ("question", "document", "documents") if state.get(k) is not None}
    )
    # What the chunk node would refuse is refused before any call: the size, a window too small for
    # the prompts with this question, a title taking half a chunk.
    documents = graph_input.as_documents()
    refuse_oversized(graph_input.question, documents, kit.context.max_input_chars)
    if given is None and not always and kit.context.plan_records == "off":
        return {"record_plan": None, "plan_problem": None}
    try:
        kit.budget(PROMPTS, "plan", graph_input.question)
        budget, _ = chunk_budget(graph_input, kit, prompts=PROMPTS, stage="extract")
        await asyncio.to_thread(check_budget, documents, budget - FIELDS_RESERVE, kit.tokenizer)
    except ConfigurationError as exc:
        if given is not None or always:
            raise
        # A window too small for the records prompts: the strategy's own path may still fit (its chunk
        # node refuses what does not), so the question goes there, said so, without a plan call.
        return {"record_plan": None, "plan_problem": f"no records plan in this window ({exc})"}
    usage = None
    if given is None:
        question = graph_input.question
        result = await kit.call(PROMPTS, "plan", text="", question=question, work="the records plan")
        usage = result.usage
        report_progress("plan", total=1)
        if result.value is None:
            problem = f"the plan did not parse ({result.error})"
            return {"record_plan": None, "plan_problem": problem, "usage": usage}
        raw: Any = result.value.model_dump()
    else:
        raw = given
    try:
        plan = RecordPlan.model_validate(raw)
    except ValidationError as exc:
        if given is not None:
            raise InputError(f"invalid plan: {validation_problems(exc)}") from exc
        return {"record_plan": None, "plan_problem": f"the plan is not a plan ({validation_problems(exc)})"}
    problems = plan.problems()
    if problems and given is not None and plan.aggregates:
        raise InputError(f"the given plan cannot be carried out: {'; '.join(problems)}")
    out: RunState = (
        {"record_plan": None, "plan_problem": "; ".join(problems)}
        if problems
        else {"record_plan": plan.model_dump(), "plan_problem": None}
    )
    if usage is not None:
        out["usage"] = usage
    return out


def route_plan(state: RunState) -> Literal["records", "otherwise"]:
    """The records path under a plan; the strategy's own path without one."""
    return "otherwise" if state.get("record_plan") is None else "records"


def each_chunk_records(state: RunState) -> list[Send]:
    """Every chunk to ``extract_records``, the question ending with the plan's fields."""
    chunks = state["input_chunks"]
    fields = _fields(RecordPlan.model_validate(state["record_plan"]))
    asked = f"{state['question']}\nRecord fields, in this order: {fields}"
    return [Send("extract_records", RecordsTask(chunk=c, question=asked, total=len(chunks))) for c in chunks]


def _fields(plan: RecordPlan) -> str:
    return ", ".join(f"{f.name} ({f.type})" for f in plan.fields)


async def extract_records(task: RecordsTask, kit: RunKit) -> RunState:
    """One chunk's records for the plan's fields. An answer that may be cut short (as long as the output
    budget allows, or as many rows as the schema allows) is not taken as the chunk's records: the
    chunk is cut in two and each half read (``nodes/chunking.halves``), at most
    :data:`MAX_SPLIT_DEPTH` times over; a piece still too full keeps the rows it gave."""
    chunk = task["chunk"]
    usage, read = await _extract(kit, chunk, task["question"], 0)
    report_progress("extract", total=task["total"])
    return {"record_reads": [read], "usage": usage}


async def _extract(kit: RunKit, chunk: Chunk, question: str, depth: int) -> tuple[Usage, RecordsRead]:
    result = await kit.call(
        PROMPTS, "extract", text=chunk.text, question=question, work=f"records of chunk {chunk.id}",
        record_unanswered=True,
    )  # fmt: skip
    rows = result.value.records if isinstance(result.value, ChunkRecords) else None
    full = bool(result.raw) and kit.tokenizer.count(result.raw) >= CUT_SHARE * kit.context.max_output_tokens
    full = full or (rows is not None and len(rows) >= MAX_RECORD_ROWS)
    split = halves(chunk) if full and depth < MAX_SPLIT_DEPTH else None
    if split is None:
        if rows is not None:
            piece = RecordsPiece(parts=chunk.parts, rows=rows)
            return result.usage, RecordsRead(chunk_id=chunk.id, pieces=[piece], raw=result.raw)
        why = result.error or "no records"
        if full:
            why = f"its records did not fit the output budget ({kit.context.max_output_tokens} tokens): {why}"
        return result.usage, RecordsRead(chunk_id=chunk.id, error=why, raw=result.raw)
    (left_usage, left), (right_usage, right) = await asyncio.gather(
        *(_extract(kit, half, question, depth + 1) for half in split)
    )
    merged = RecordsRead(
        chunk_id=chunk.id,
        pieces=[*left.pieces, *right.pieces],
        error=left.error or right.error,
        raw=left.raw if left.error else right.raw,
        splits=1 + left.splits + right.splits,
    )
    return result.usage + left_usage + right_usage, merged


def _documents(state: RunState) -> list[DocumentIn]:
    given = {k: state.get(k) for k in ("question", "document", "documents") if state.get(k) is not None}
    return parse_input(given).as_documents()


async def compute_records(state: RunState, kit: RunKit) -> RunState:
    """Check, reconcile and compute; one outcome per chunk."""
    plan = RecordPlan.model_validate(state["record_plan"])
    chunks: Sequence[Chunk] = state.get("input_chunks") or []
    by_id = {c.id: c for c in chunks}
    documents = _documents(state)
    checked: list[Record] = []
    outcomes: list[ChunkOutcome] = []
    filtered: list[tuple[int, str]] = []
    for read in sorted(state.get("record_reads") or [], key=lambda r: r.chunk_id):
        chunk = by_id[read.chunk_id]
        if read.error is not None and not read.pieces:
            outcomes.append(
                ChunkOutcome(chunk_id=chunk.id, fate="failed", reason=read.error, raw_output=read.raw)
            )
            continue
        kept: list[Record] = []
        dropped: list[str] = []
        rows = [row for piece in read.pieces for row in piece.rows]
        for piece in read.pieces:
            span = Chunk(id=chunk.id, parts=piece.parts, tokens=0, text="")
            quoted: dict[str, int] = {}
            for row in piece.rows:
                nth = quoted.get(fold(row.quote), 0)
                quoted[fold(row.quote)] = nth + 1
                record = check_row(row, plan, span, documents, nth)
                if isinstance(record, Record):
                    kept.append(record)
                else:
                    dropped.append(record)
        checked.extend(kept)
        extracted = "\n".join(row.quote for row in rows)[:2000] or None
        if not rows:
            fate: ChunkFate = "failed" if read.error is not None else "no_information"
            outcomes.append(
                ChunkOutcome(
                    chunk_id=chunk.id, fate=fate, reason=read.error or "no record", raw_output=read.raw
                )
            )
        elif not kept:
            why = f"every record dropped: {'; '.join(str(d) for d in dropped[:3])}"
            outcomes.append(
                ChunkOutcome(chunk_id=chunk.id, fate="unsupported", reason=why, extracted=extracted)
            )
        else:
            why = f"{len(kept)} record(s)" + (
                f"; dropped {len(dropped)}: {'; '.join(map(str, dropped[:3]))}" if dropped else ""
            )
            if read.error is not None:  # part of the chunk was read, part failed: said, never hidden
                why += f"; a piece of it failed: {read.error}"
            outcomes.append(ChunkOutcome(chunk_id=chunk.id, fate="noted", reason=why, extracted=extracted))
    records, conflicts = reconcile(plan, checked)
    computation = compute(plan, records)
    computation.conflicts = conflicts
    used_chunks = {r.chunk_id for r in computation.used} | {c for r in computation.used for c in r.also}
    for outcome in outcomes:
        if outcome.fate == "noted" and outcome.chunk_id not in used_chunks:
            filtered.append((outcome.chunk_id, "its records take no part in the computed answer"))
    return {"computation": computation.model_dump(), "outcomes": outcomes, "filtered": filtered}
