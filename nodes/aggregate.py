"""Combine per-document answers in code: group, order, compare, select a range, follow a chain.

After a decomposed question (``state/plan.py``) has been asked of every document and each answer
grounded, a program does what a small model cannot: each document contributes its strongest verified
note, a number or a label or a link is read from that note's answer, and the answer is computed. Every
document is accounted for: a document that gave no answer, no number, no label or no link is named in
the explanation, and its chunks are reported ``filtered`` with that reason, never dropped in silence.

Reading a value is deliberately literal (reproducible, testable):

* a **number** is the first number of the answer that is neither in the per-document question nor in
  the document's title ("855.7" in "Fiscal 2023: 855.7 million dollars" for "Denfur Foods: annual report
  for fiscal year 2023"); units are taken as the documents give them;
* a **label** is the plan's label whose stem occurs earliest in the answer; without labels, the
  answer's own words (documents answering alike group together);
* a **link** is the other document whose title's words occur, in order, in the answer (the longest);
* a **range** is the first two numbers of the question; a chain **starts** at the document whose title
  the question names (the longest).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from longgraph.nodes.derivation import numbers_in
from longgraph.nodes.finalize import note_answer
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import stem, words_of
from longgraph.nodes.reduction import strength
from longgraph.state.contract import Chunk
from longgraph.state.graph_state import RunState
from longgraph.state.notes import Note
from longgraph.state.plan import NUMBERED, Aggregation, DocumentValue, QuestionPlan


def _contains(words: Sequence[str], phrase: Sequence[str]) -> int | None:
    """Where ``phrase`` occurs in ``words`` as whole words (the first place), else None."""
    width = len(phrase)
    if not width:
        return None
    return next(
        (i for i in range(len(words) - width + 1) if list(words[i : i + width]) == list(phrase)), None
    )


def named_document(text: str, titles: Sequence[str], *, besides: int | None = None) -> int | None:
    """The document whose title ``text`` names (the longest such title), other than ``besides``."""
    words = words_of(text)
    found = [
        (len(words_of(title)), i)
        for i, title in enumerate(titles)
        if i != besides and _contains(words, words_of(title)) is not None
    ]
    return max(found)[1] if found else None


def _label_of(answer: str, labels: Sequence[str]) -> str | None:
    if not labels:
        return " ".join(words_of(answer)) or None
    stems = [stem(w) for w in words_of(answer)]
    placed = [
        (at, label)
        for label in labels
        if (at := _contains(stems, [stem(w) for w in words_of(label)])) is not None
    ]
    return min(placed)[1] if placed else None


def read_value(plan: QuestionPlan, note: Note, doc: int, titles: Sequence[str]) -> DocumentValue:
    """What one verified note of document ``doc`` gives the combination (``reason`` set when nothing)."""
    title = titles[doc]
    answer = " ".join(note_answer(note).split())
    value = DocumentValue(doc_index=doc, title=title, answer=answer, sources=note.sources)
    if plan.combine in NUMBERED:
        skip = set(numbers_in(plan.per_document_question)) | set(numbers_in(title))
        value.number = next((n for n in numbers_in(answer) if n not in skip), None)
        value.reason = None if value.number is not None else "its answer gives no number"
    elif plan.combine == "group":
        value.label = _label_of(answer, plan.labels)
        value.reason = None if value.label else f"its answer names none of {', '.join(plan.labels)}"
    elif plan.combine == "chain":
        value.link = named_document(answer, titles, besides=doc)
    return value


def document_values(
    plan: QuestionPlan, notes: Sequence[Note], chunks: Sequence[Chunk], titles: Sequence[str]
) -> tuple[list[DocumentValue], list[Note]]:
    """Each document's value (in document order) and the note each comes from: the strongest of its
    verified notes that gives what the combination reads (a number, a label), else its strongest. A
    document of several chunks may give a note per chunk, not all of them about the question asked."""
    doc_of = {c.id: c.doc_index for c in chunks}
    readings: dict[int, list[tuple[DocumentValue, Note]]] = {}
    for note in notes:
        if note.verified_quotes:
            doc = doc_of[note.sources[0]]
            readings.setdefault(doc, []).append((read_value(plan, note, doc, titles), note))
    values: list[DocumentValue] = []
    chosen: list[Note] = []
    for doc, title in enumerate(titles):
        if doc not in readings:
            values.append(DocumentValue(doc_index=doc, title=title, reason="no verified answer"))
            continue
        value, note = max(readings[doc], key=lambda pair: (pair[0].reason is None, strength(pair[1])))
        values.append(value)
        chosen.append(note)
    return values, chosen


def _shown(value: DocumentValue) -> str:
    return f"{value.title} ({value.number:g})" if value.number is not None else value.title


def _cannot(plan: QuestionPlan, values: Sequence[DocumentValue], why: str) -> Aggregation:
    """An aggregation the question gives too little to compute: no answer, and why."""
    return Aggregation(plan=plan, values=list(values), answer="", used=[], explanation=why)


def combine_values(
    plan: QuestionPlan, values: Sequence[DocumentValue], question: str, titles: Sequence[str]
) -> Aggregation:
    """The answer the plan computes from the documents' values."""
    usable = [v for v in values if v.answer is not None and v.reason is None]
    kind = plan.combine
    explanation = ""
    used = [v.doc_index for v in usable]
    if kind == "group":
        order = list(plan.labels) + sorted(
            {v.label for v in usable if v.label and v.label not in plan.labels}
        )
        lines = [f"{label}: {', '.join(v.title for v in usable if v.label == label)}" for label in order]
        answer = "\n".join(line for line in lines if not line.endswith(": ")) if usable else ""
        named = used
        explanation = f"{len(usable)} document(s) grouped by their answer to: {plan.per_document_question}"
    elif kind in ("order", "highest", "lowest"):
        ranked = sorted(usable, key=lambda v: v.number or 0.0, reverse=kind != "lowest")
        if kind == "order" and re.search(
            r"\b(lowest|smallest|least|fewest|ascending|shortest) (to|first)\b", question, re.I
        ):
            ranked.reverse()
        chosen = ranked if kind == "order" else ranked[:1]
        answer = ", ".join(_shown(v) for v in chosen)
        named = [v.doc_index for v in chosen]
        explanation = f"{len(usable)} document(s) compared by the number each gives"
    elif kind == "between":
        bounds = numbers_in(question)[:2]
        if len(bounds) < 2:
            return _cannot(plan, values, "the question gives no range (two numbers) to select by")
        low, high = min(bounds), max(bounds)
        inside = [v for v in usable if v.number is not None and low <= v.number <= high]
        answer = ", ".join(_shown(v) for v in inside)
        named = [v.doc_index for v in inside]
        explanation = f"{len(inside)} of {len(usable)} document(s) give a number between {low:g} and {high:g}"
    elif kind == "chain":
        start = named_document(question, titles)
        if start is None:
            return _cannot(plan, values, "the question names no document to start the chain from")
        links = {v.doc_index: v.link for v in values}
        path = [start]
        while (following := links.get(path[-1])) is not None and following not in path:
            path.append(following)
        used = named = path
        answer = " -> ".join(titles[i] for i in path)
        explanation = f"followed {len(path) - 1} link(s) from {titles[start]}"
    else:  # list
        answer = "\n".join(f"{v.title}: {v.answer}" for v in usable)
        named = used
        explanation = f"{len(usable)} document(s) answered: {plan.per_document_question}"
    missing = [v for v in values if v.reason]
    if missing:
        explanation += "; left out: " + "; ".join(f"{v.title} ({v.reason})" for v in missing)
    return Aggregation(
        plan=plan, values=list(values), answer=answer, explanation=explanation, used=used, named=named
    )


async def aggregate(state: RunState, kit: RunKit) -> RunState:
    """The per-document combination node: ``aggregation``, the notes it rests on, the chunks left out."""
    plan = QuestionPlan.model_validate(state["plan"])
    chunks = state.get("input_chunks") or []
    doc_of = {c.id: c.doc_index for c in chunks}
    titles = [str(t) for t in state.get("document_titles") or []]
    notes = state.get("notes") or []
    values, chosen = document_values(plan, notes, chunks, titles)
    result = combine_values(plan, values, state["question"], titles)
    taking_part = set(result.used)
    kept = [n for n in chosen if doc_of[n.sources[0]] in taking_part]
    reasons = {v.doc_index: v.reason for v in values if v.reason}
    filtered = []
    for note in notes:
        if any(note is k for k in kept):
            continue
        doc = doc_of[note.sources[0]]
        if not any(note is c for c in chosen):
            why = "another chunk of its document answered more strongly"
        else:
            why = (
                f"its document's answer takes no part in the answer ({reasons.get(doc) or 'not on the path'})"
            )
        filtered += [(source, why) for source in note.sources]
    return {"aggregation": result.model_dump(), "notes": kept, "filtered": filtered}
