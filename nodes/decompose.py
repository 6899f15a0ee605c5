"""Plan a question over several documents: what to ask each one, and how to combine the answers.

One call (``prompts/plan.toml``, stage ``decompose``) reads the question and the documents'
titles and gives a :class:`~longgraph.state.plan.QuestionPlan`; a caller may give one instead (input
key ``plan``), and ``decompose=False`` turns planning off. A plan is only taken when it can be carried
out: a per-document question that names its document, a known combination, labels the question itself
gives, a range the question states, a chain start the question names, and a per-document question
drawn from the question's own words (measured: SmolLM2-135M copied the prompt's examples — "How many
hours does the battery of {document} last?" for a question about a company's city — in 7 of 7
aggregation questions; such plans are refused). Otherwise the run reads every
chunk with the question as asked, as before, and ``stats.notes`` says why.

A taken plan gives every chunk its own question (``chunk_questions``: the per-document question with
the chunk's document named), so the read stage asks it and the grounding stage checks each answer
against it; chunks holding several small documents are split so that each document is asked about
alone. A single document is never planned (there is nothing to combine).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import ValidationError

from longgraph.errors import InputError, validation_problems
from longgraph.nodes.aggregate import named_document
from longgraph.nodes.chunking import split_into_chunks, title_label
from longgraph.nodes.derivation import numbers_in
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import content_stems, stem, words_of
from longgraph.nodes.provenance import documents_of
from longgraph.nodes.runtime import report_progress
from longgraph.state.contract import Chunk, DocumentIn
from longgraph.state.graph_state import RunState
from longgraph.state.plan import DOCUMENT, QuestionPlan

PROMPTS = "plan"
STAGE = "decompose"
MAX_TITLES_SHOWN = 12


def document_titles(documents: Sequence[DocumentIn]) -> list[str]:
    """How the plan names each document: its title, else "document N"."""
    return [doc.title.strip() or f"document {i + 1}" for i, doc in enumerate(documents)]


def plan_problem(plan: QuestionPlan, question: str, titles: Sequence[str]) -> str | None:
    """Why ``plan`` cannot be carried out for ``question`` (None: it can)."""
    if not plan.decomposes:
        return "the plan asks nothing per document (one place answers the question)"
    if DOCUMENT not in plan.per_document_question:
        return f"the per-document question does not name its document ({DOCUMENT}): {plan.per_document_question!r}"
    own = content_stems(plan.per_document_question.replace(DOCUMENT, " "))
    if not own or len(own & content_stems(question)) * 2 < len(own):
        return (
            f"the per-document question is not about the question's subject: {plan.per_document_question!r}"
        )
    if plan.combine == "between" and len(numbers_in(question)) < 2:
        return "a range was planned but the question gives no two numbers"
    if plan.combine == "chain" and named_document(question, titles) is None:
        return "a chain was planned but the question names none of the documents to start from"
    if plan.combine == "group" and plan.labels:
        asked = {stem(w) for w in words_of(question)}
        foreign = [label for label in plan.labels if not {stem(w) for w in words_of(label)} <= asked]
        if foreign:
            return f"group labels not in the question: {', '.join(foreign)}"
    return None


def per_document_chunks(chunks: Sequence[Chunk], documents: Sequence[DocumentIn]) -> list[Chunk]:
    """The chunks with each several-document chunk split into one chunk per document (renumbered)."""
    out: list[Chunk] = []
    for chunk in chunks:
        if len({p.doc_index for p in chunk.parts}) == 1:
            out.append(chunk.model_copy(update={"id": len(out)}))
            continue
        for part in chunk.parts:
            text = title_label(part.title) + documents[part.doc_index].text[part.start : part.end]
            share = round(
                chunk.tokens * (part.end - part.start) / max(1, sum(p.end - p.start for p in chunk.parts))
            )
            out.append(Chunk(id=len(out), parts=[part], tokens=share, text=text))
    return out


def never_planned(documents: int, kit: RunKit, *, given: object) -> bool:
    """Whether every chunk is asked the question as is, whatever the model says (no plan is made)."""
    return documents < 2 or (not kit.context.decompose and not given)


async def plan_question(state: RunState, kit: RunKit, *, prompts: str, stage: str) -> RunState:
    """``plan``, ``chunk_questions`` and ``document_titles`` when a plan is taken; else nothing new.

    ``prompts``/``stage``: the read stage the per-document questions go to (their chunks must fit it).
    """
    documents = documents_of(state)
    if never_planned(len(documents), kit, given=state.get("plan")):
        return {}
    question = state["question"]
    titles = document_titles(documents)
    decisions: list[str] = []
    given = state.get("plan")
    if given:
        try:
            plan = QuestionPlan.model_validate(given)
        except ValidationError as exc:
            raise InputError(f"invalid plan: {validation_problems(exc)}") from exc
        usage = None
    else:
        shown = "; ".join(titles[:MAX_TITLES_SHOWN]) + (
            f"; and {len(titles) - MAX_TITLES_SHOWN} more" if len(titles) > MAX_TITLES_SHOWN else ""
        )
        result = await kit.call(PROMPTS, STAGE, text=shown, question=question, work="planning the question")
        report_progress(STAGE, total=1)
        usage = result.usage
        if result.value is None:
            return {
                "usage": usage,
                "decisions": [
                    f"the question could not be planned ({result.error}): every chunk was asked it as is"
                ],
            }
        plan = QuestionPlan.model_validate(result.value.model_dump())
    problem = plan_problem(plan, question, titles)
    if problem is not None:
        if given:
            raise InputError(f"the given plan cannot be carried out: {problem}")
        decisions.append(f"no per-document plan ({problem}): every chunk was asked the question as is")
        skipped: RunState = {"decisions": decisions}
        if usage:
            skipped["usage"] = usage
        return skipped
    questions_by_doc = [plan.question_for(title) for title in titles]
    room = min(kit.budget(prompts, stage, q) for q in set(questions_by_doc))
    chunks = list(state.get("input_chunks") or [])
    if max(c.tokens for c in chunks) > room:  # a per-document question longer than the question
        chunks = await asyncio.to_thread(split_into_chunks, documents, room, kit.tokenizer)
        decisions.append(f"re-chunked to {room} tokens a chunk: the per-document questions are longer")
    chunks = per_document_chunks(chunks, documents)
    questions = [questions_by_doc[c.doc_index] for c in chunks]
    decisions.append(
        f"planned ({'given' if given else 'by the model'}): asked each of {len(documents)} documents "
        f"{plan.per_document_question!r}, then combined the answers in code ({plan.combine})"
    )
    update: RunState = {
        "plan": plan.model_dump(),
        "input_chunks": chunks,
        "chunk_questions": questions,
        "document_titles": titles,
        "decisions": decisions,
    }
    if usage:
        update["usage"] = usage
    return update
