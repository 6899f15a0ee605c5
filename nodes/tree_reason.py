"""ToM's recursive MapReduce over the DocTree, in post-order, one level of the tree per round.

Paper §3.3: **Map** on a node takes its own information (title, keywords, summary, and a leaf's
original text) plus, for an inner node, the **Reduce** of its children's results; Reduce resolves
conflicts among siblings by confidence (out of 10 in the paper's protocol, parsed and used: it is the
model's score of the note, combined with the evidence as everywhere, ``nodes/grounding.py``) and is
skipped for a single child. Every node of a level runs in parallel (:class:`TreeReduce`, a bounded
loop: ``nodes/loop.py``; the tree's height bounds it — at most four parsed levels plus the
aggregation's bounded rounds).

Grounded like every strategy: a leaf's answer is checked against the leaf's own text (its span of the
chunk); an inner node's Reduce and Map answers against the verified quotes of its children's notes —
a node keeps exactly the quotes that support its answer, so the root's evidence points at the
characters of the document. A Reduce answer its children's quotes do not confirm by words (a two-hop
conclusion, a verdict) goes on as the node's answer with all their quotes, for the final stage's gate
to decide (said in ``stats.notes``); an unreadable Reduce, or one that found nothing, leaves the node
its strongest child's note. Where the paper is silent: an inner node
none of whose children holds evidence is not mapped — its own information is model-written summary,
which nothing could verify — and carries no result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from longgraph.llm import StructuredCall
from longgraph.nodes.answer_wording import judge_wording
from longgraph.nodes.grounding import enforce_failure_budget, ground_read
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import question_words
from longgraph.nodes.loop import BoundedLoop
from longgraph.nodes.passages import (
    REREAD,
    passage_worth_rereading,
    read_each,
    rereading_enabled,
    settle_readings,
    strongest_passage,
)
from longgraph.nodes.provenance import documents_of
from longgraph.nodes.read import chunk_read
from longgraph.nodes.reduction import set_aside_weak, strength, weak_note_reason
from longgraph.nodes.render import join_notes, measure_notes, render_note
from longgraph.nodes.runtime import report_progress
from longgraph.nodes.support import confidence_of, dedupe_quotes
from longgraph.nodes.tree import leaf_text, node_info
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn
from longgraph.state.notes import ChunkOutcome, Note, NoteDraft
from longgraph.state.outputs import is_no_information
from longgraph.state.tom import DocTree, Reasoned, ReasonTask, ToMState

PROMPTS = "tom"
_FATE_ORDER = {"noted": 0, "unsupported": 1, "no_information": 2, "failed": 3}


@dataclass(frozen=True)
class TreeReduce(BoundedLoop):
    """Post-order reasoning, one tree level per round (see the module docstring)."""

    name: str = "reasoning"
    combine_node: str = "reason_at_node"
    results_key: str = "reasoned"

    def stop_reason(self, state: Mapping[str, Any], kit: RunKit, *, stalled: str | None) -> str | None:
        return None  # bounded by the tree's height (built bounded), not by max_collapse_rounds

    async def plan(self, state: ToMState, kit: RunKit) -> ToMState:
        tree: DocTree = state["doc_tree"]
        heights = tree.heights()
        top = max(heights.values(), default=-1)
        results = state.get("results") or {}
        documents = documents_of(state)
        level = int((state.get("extra") or {}).get("tree_level", 0))
        round_no = self.next_round(state)
        while level <= top:
            ready = []
            for node_id in sorted(i for i, h in heights.items() if h == level):
                node = tree.node(node_id)
                children = [results[c] for c in node.children if c in results]
                if not node.children or children:  # an inner node with no evidence below: nothing to do
                    ready.append((node, children))
            level += 1
            if ready:
                tasks = [
                    ReasonTask(
                        index=i,
                        node=node,
                        children=children,
                        question=state["question"],
                        round=round_no,
                        leaf_text=leaf_text(node, documents) if not node.children else "",
                        total=len(ready),
                    )
                    for i, (node, children) in enumerate(ready)
                ]
                return {"loop_tasks": tasks, "extra": {**(state.get("extra") or {}), "tree_level": level}}
        return {"loop_tasks": [], "extra": {**(state.get("extra") or {}), "tree_level": level}}

    async def absorb(self, results: Sequence[Any], state: ToMState, kit: RunKit, round_no: int) -> ToMState:
        tree: DocTree = state["doc_tree"]
        documents = documents_of(state)
        done = dict(state.get("results") or {})
        outcomes: list[ChunkOutcome] = list(state.get("leaf_outcomes") or [])
        decisions = []
        reread = reread_helped = 0
        for item in results:
            reasoned: Reasoned = item
            node = tree.node(reasoned.node_id)
            if reasoned.read is not None:  # a leaf: grounded against its own text
                chunk = Chunk(id=node.chunk_id or 0, parts=node.parts, tokens=0, text="")
                reads = [reasoned.read, *reasoned.rereads]
                graded = [ground_read(r, chunk, documents, state["question"]) for r in reads]
                outcome, note, helped = settle_readings(graded)
                reread += len(reads) > 1
                reread_helped += helped
                outcomes.append(outcome)
            else:
                note = reasoned.note
            if reasoned.decision:
                decisions.append(reasoned.decision)
            if note is not None:
                done[node.id] = measure_notes([note], kit)[0]
        if reread:
            decisions.append(
                f"{reread} tree leaf/leaves were read a second time, their most relevant passage alone: "
                f"{reread_helped} gave evidence"
            )
        leaves = [r.node_id for r in results if r.read is not None and r.node_id in done]
        filtered = _set_aside_weak_leaves(done, leaves, kit, decisions)
        return {"results": done, "leaf_outcomes": outcomes, "decisions": decisions, "filtered": filtered}


def _set_aside_weak_leaves(
    done: dict[int, Note], leaves: Sequence[int], kit: RunKit, decisions: list[str]
) -> list[tuple[int, str]]:
    """As before any reduce (``nodes/reduction.py``): leaf notes much weaker than the strongest are set
    aside, here once for the whole tree (every leaf is read in the first round), so a confabulation
    that passed grounding on a word or two cannot outvote the note that holds the question's words."""
    notes = [done[i] for i in leaves]
    kept, weak = set_aside_weak(notes, kit.context.min_note_strength or 0.0)
    if not weak:
        return []
    strongest = max(n.confidence for n in notes)
    for node_id in leaves:
        if any(done[node_id] is n for n in weak):
            del done[node_id]
    covered = {s for n in kept for s in n.sources}
    reason = weak_note_reason(kit.context.min_note_strength or 0.0, strongest)
    decisions.append(f"set aside {len(weak)} leaf note(s) with much weaker evidence than the strongest")
    return [(source, reason) for source in sorted({s for n in weak for s in n.sources} - covered)]


def _labels(kit: RunKit, confidence: bool) -> Any:
    labels = kit.prompts(PROMPTS).labels
    return labels if confidence else replace(labels, confidence="")


def _grounded(
    answer_note: Note | None,
    draft_answer: str,
    model_confidence: float | None,
    inputs: Sequence[Note],
    question: str,
    sources: list[int],
) -> Note | None:
    """A note for ``draft_answer`` keeping the quotes of ``inputs`` it stands on, or None
    (``nodes/answer_support.py``: read in them, or worked out from them). The note's answer is the
    model's own, as given, never the part of it the words read: the final check judges it whole."""
    _, judged = judge_wording(draft_answer, inputs, question, partial=True)
    if judged.kind == "none":
        return None
    return Note(
        sources=sources,
        answer=" ".join(draft_answer.split()),
        quotes=judged.quotes,
        model_confidence=model_confidence,
        confidence=confidence_of(judged.support, judged.relevance, model_confidence),
        reasoning=answer_note.reasoning if answer_note else "",
    )


def _unconfirmed(draft: NoteDraft, children: Sequence[Note], sources: list[int], strongest: Note) -> Note:
    """The reduce's own answer when its children's quotes do not confirm it by words (a two-hop
    conclusion, a verdict, a comparison): it rests on all their verified quotes, with the strongest
    child's confidence. Replacing it with the strongest child's note would answer with another note's
    text; the final stage's gate (``nodes/finalize.py``: the verification call) decides whether it is
    supported."""
    quotes = dedupe_quotes(q for child in children for q in child.verified_quotes)
    return Note(
        sources=sources,
        answer=draft.answer,
        reasoning=draft.reasoning,
        quotes=quotes,
        model_confidence=draft.model_confidence,
        confidence=strongest.confidence,
    )


def _draft(result: StructuredCall[Any]) -> NoteDraft | None:
    return (
        result.value.note_draft()
        if result.value is not None and hasattr(result.value, "note_draft")
        else None
    )


async def _read_leaf(task: ReasonTask, kit: RunKit, stage: str) -> ToMState:
    """Map on a leaf, and (as for any chunk: ``nodes/grounding.py``) a second reading of its most
    relevant passage alone when the first answer is not supported by the leaf's text but that passage
    bears strongly on the question. Both are grounded on the document when the level is gathered."""
    node, question, text = task["node"], task["question"], task["leaf_text"]
    chunk_id = node.chunk_id or 0
    result = await kit.call(
        PROMPTS,
        stage,
        text=node_info(node, text),
        question=question,
        work=f"map of tree node {node.id}",
        record_unanswered=True,
    )
    report_progress("tree map", total=task["total"], message=f"level {task['round']}")
    read, usage, rereads = chunk_read(result, chunk_id, stage, prompts=PROMPTS), result.usage, []
    if read.draft is not None and rereading_enabled(kit.context):
        alone = [DocumentIn(text=text)]  # the leaf on its own: offsets are the leaf's
        leaf = Chunk(
            id=chunk_id, parts=[ChunkPart(doc_index=0, title="", start=0, end=len(text))], tokens=0, text=text
        )
        wanted = question_words(question)
        outcome, _ = ground_read(read, leaf, alone, question)
        span = passage_worth_rereading(outcome, strongest_passage(leaf, alone, wanted), wanted)
        stretches = span.stretches() if span is not None else []
        again = await read_each(
            kit,
            [text[start:end] for start, end in stretches],
            prompts=PROMPTS,
            stage=stage,
            question=question,
            label=REREAD,
            work=f"second reading of tree node {node.id}",
            record_unanswered=True,
        )
        for result in again:
            rereads.append(chunk_read(result, chunk_id, REREAD, prompts=PROMPTS))
            usage = usage + result.usage
    reasoned = Reasoned(index=task["index"], node_id=node.id, read=read, rereads=rereads)
    return {"reasoned": [reasoned], "usage": usage}


async def reason_at_node(task: ReasonTask, kit: RunKit, *, confidence: bool = True) -> ToMState:
    """Map on a leaf; Reduce the children then Map on an inner node (see the module docstring)."""
    node = task["node"]
    question = task["question"]
    map_stage, reduce_stage = ("map", "reduce") if confidence else ("map_plain", "reduce_plain")
    labels = _labels(kit, confidence)
    if not node.children:
        return await _read_leaf(task, kit, map_stage)

    children = task["children"]
    sources = sorted({s for n in children for s in n.sources})
    strongest = max(children, key=strength)
    usage = None
    decision = None
    reduced = children[0]
    if len(children) > 1:  # Reduce: skipped for a single child (paper §3.3)
        result = await kit.call(
            PROMPTS,
            reduce_stage,
            text=join_notes(children, labels, "strongest_first"),
            question=question,
            work=f"reduce at tree node {node.id}",
        )
        usage = result.usage
        draft = _draft(result)
        grounded = (
            _grounded(None, draft.answer, draft.model_confidence, children, question, sources)
            if draft
            else None
        )
        if grounded is not None and draft is not None:
            reduced = grounded.model_copy(update={"reasoning": draft.reasoning})
        elif draft is not None and draft.answer and not is_no_information(draft.answer):
            reduced = _unconfirmed(draft, children, sources, strongest)
            decision = (
                f"the words of its children's quotes do not confirm the reduce at tree node {node.id}; "
                "its answer goes on with their quotes, for the final check"
            )
        else:
            reduced = strongest
            why = (
                f"was unreadable ({result.error})"
                if draft is None
                else "was not supported by its children's quotes"
            )
            decision = f"the reduce at tree node {node.id} {why}; kept its strongest child's note"
    info = node_info(node)
    text = f"{info}\n\nPrevious reasoning results:\n{render_note(reduced, labels)}"
    result = await kit.call(
        PROMPTS, map_stage, text=text, question=question, work=f"map of tree node {node.id}"
    )
    report_progress("tree map", total=task["total"], message=f"level {task['round']}")
    usage = result.usage if usage is None else usage + result.usage
    draft = _draft(result)
    mapped = (
        _grounded(reduced, draft.answer, draft.model_confidence, [reduced], question, sources)
        if draft
        else None
    )
    if mapped is None:
        mapped = reduced  # its own information cannot be verified: the reduced evidence stands
    reasoned = Reasoned(index=task["index"], node_id=node.id, note=mapped, decision=decision)
    return {"reasoned": [reasoned], "usage": usage}


async def conclude(state: ToMState, kit: RunKit) -> ToMState:
    """The root's note is the answer; each chunk's fate is the best of its leaves'."""
    tree: DocTree = state["doc_tree"]
    results = state.get("results") or {}
    roots = [results[r] for r in tree.roots if r in results]
    by_chunk: dict[int, ChunkOutcome] = {}
    for outcome in state.get("leaf_outcomes") or []:
        known = by_chunk.get(outcome.chunk_id)
        if known is None or _FATE_ORDER[outcome.fate] < _FATE_ORDER[known.fate]:
            by_chunk[outcome.chunk_id] = outcome
    failed = [o for _, o in sorted(by_chunk.items()) if o.fate == "failed"]
    enforce_failure_budget(
        [o.chunk_id for o in failed],
        len(by_chunk),
        kit,
        stage="map",
        first_error=failed[0].reason if failed else None,
    )
    outcomes = []
    for chunk_id in tree.chunk_ids:
        outcome = by_chunk.get(chunk_id) or ChunkOutcome(
            chunk_id=chunk_id, fate="no_information", reason="no section of it was read"
        )
        loss = tree.losses.get(chunk_id)
        selected = (state.get("selection") or {}).get(chunk_id)
        reasons = (selected, outcome.reason, f"parser: {loss}" if loss else None)
        outcome = outcome.model_copy(update={"reason": "; ".join(x for x in reasons if x) or None})
        outcomes.append(outcome)
    if not roots:
        return {"notes": [], "outcomes": outcomes}
    best = max(roots, key=strength)
    # The root's note answers; every verified note of the tree is the evidence it is judged against, as
    # every map note is for mapreduce: a list question's items live in leaves the root's quotes left out.
    others = [n for i, n in sorted(results.items()) if n is not best and n.verified_quotes]
    return {
        "notes": [best, *others],
        "outcomes": outcomes,
        "answer": best.answer or "",
        "rationale": best.reasoning,
    }
