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
characters of the document. An answer its children's quotes do not support is not trusted: the node
keeps its strongest child's note (said in ``stats.notes``). Where the paper is silent: an inner node
none of whose children holds evidence is not mapped — its own information is model-written summary,
which nothing could verify — and carries no result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from longgraph.nodes.grounding import (
    MIN_SUPPORT,
    confidence_of,
    enforce_failure_budget,
    ground_read,
    support_in_notes,
)
from longgraph.nodes.kit import RunKit
from longgraph.nodes.loop import TASKS, BoundedLoop
from longgraph.nodes.provenance import documents_of
from longgraph.nodes.reduction import strength
from longgraph.nodes.render import join_notes, measure_notes, render_note
from longgraph.nodes.runtime import report_progress
from longgraph.nodes.tree import leaf_text, node_info
from longgraph.state.contract import Chunk
from longgraph.state.notes import ChunkOutcome, ChunkRead, Note
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

    async def plan(self, state: ToMState, kit: RunKit) -> dict[str, Any]:
        tree: DocTree = state["doc_tree"]
        heights = tree.heights()
        top = max(heights.values(), default=-1)
        results = state.get("results") or {}
        documents = documents_of(state)
        level = int((state.get("extra") or {}).get("tree_level", 0))
        round_no = int(state.get("rounds") or 0) + 1
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
                    ReasonTask(index=i, node=node, children=children, question=state["question"], round=round_no,
                               leaf_text=leaf_text(node, documents) if not node.children else "", total=len(ready))
                    for i, (node, children) in enumerate(ready)
                ]  # fmt: skip
                return {TASKS: tasks, "extra": {**(state.get("extra") or {}), "tree_level": level}}
        return {TASKS: [], "extra": {**(state.get("extra") or {}), "tree_level": level}}

    async def absorb(
        self, results: Sequence[Any], state: ToMState, kit: RunKit, round_no: int
    ) -> dict[str, Any]:
        tree: DocTree = state["doc_tree"]
        documents = documents_of(state)
        done = dict(state.get("results") or {})
        outcomes: list[ChunkOutcome] = list(state.get("leaf_outcomes") or [])
        decisions = []
        for item in results:
            reasoned: Reasoned = item
            node = tree.node(reasoned.node_id)
            if reasoned.read is not None:  # a leaf: grounded against its own text
                chunk = Chunk(id=node.chunk_id or 0, parts=node.parts, tokens=0, text="")
                outcome, note = ground_read(
                    reasoned.read,
                    chunk,
                    documents,
                    state["question"],
                    min_relevance=kit.context.min_relevance,
                )
                outcomes.append(outcome)
            else:
                note = reasoned.note
            if reasoned.decision:
                decisions.append(reasoned.decision)
            if note is not None:
                done[node.id] = measure_notes([note], kit)[0]
        return {"results": done, "leaf_outcomes": outcomes, "decisions": decisions}


def _labels(kit: RunKit, confidence: bool) -> Any:
    labels = kit.prompts(PROMPTS).labels
    return labels if confidence else replace(labels, confidence="")


def _grounded(answer_note: Note | None, draft_answer: str, model_confidence: float | None, inputs: Sequence[Note],
              question: str, sources: list[int]) -> Note | None:  # fmt: skip
    """A note for ``draft_answer`` keeping the quotes of ``inputs`` that support it, or None."""
    support, quotes = support_in_notes(draft_answer, inputs, question)
    if support.support < MIN_SUPPORT or not quotes:
        return None
    return Note(
        sources=sources, answer=draft_answer, quotes=quotes, model_confidence=model_confidence,
        confidence=confidence_of(support.support, support.relevance, model_confidence),
        reasoning=answer_note.reasoning if answer_note else "",
    )  # fmt: skip


async def reason_at_node(task: ReasonTask, kit: RunKit, *, confidence: bool = True) -> dict[str, Any]:
    """Map on a leaf; Reduce the children then Map on an inner node (see the module docstring)."""
    node = task["node"]
    question = task["question"]
    map_stage, reduce_stage = ("map", "reduce") if confidence else ("map_plain", "reduce_plain")
    labels = _labels(kit, confidence)
    if not node.children:
        result = await kit.call(
            PROMPTS, map_stage, text=node_info(node, task["leaf_text"]), question=question,
            work=f"map of tree node {node.id}",
        )  # fmt: skip
        report_progress("tree map", total=task["total"], message=f"level {task['round']}")
        draft = (
            result.value.note_draft()
            if result.value is not None and hasattr(result.value, "note_draft")
            else None
        )
        read = ChunkRead(chunk_id=node.chunk_id or 0, stage="map", draft=draft, error=result.error,
                         raw=None if draft else result.raw)  # fmt: skip
        return {
            "reasoned": [Reasoned(index=task["index"], node_id=node.id, read=read)],
            "usage": result.usage,
        }

    children = task["children"]
    sources = sorted({s for n in children for s in n.sources})
    strongest = max(children, key=strength)
    usage = None
    decision = None
    reduced = children[0]
    if len(children) > 1:  # Reduce: skipped for a single child (paper §3.3)
        result = await kit.call(
            PROMPTS, reduce_stage, text=join_notes(children, labels, "strongest_first"), question=question,
            work=f"reduce at tree node {node.id}",
        )  # fmt: skip
        usage = result.usage
        draft = (
            result.value.note_draft()
            if result.value is not None and hasattr(result.value, "note_draft")
            else None
        )
        grounded = (
            _grounded(None, draft.answer, draft.model_confidence, children, question, sources)
            if draft
            else None
        )
        if grounded is not None and draft is not None:
            reduced = grounded.model_copy(update={"reasoning": draft.reasoning})
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
    draft = (
        result.value.note_draft()
        if result.value is not None and hasattr(result.value, "note_draft")
        else None
    )
    mapped = (
        _grounded(reduced, draft.answer, draft.model_confidence, [reduced], question, sources)
        if draft
        else None
    )
    if mapped is None:
        mapped = reduced  # its own information cannot be verified: the reduced evidence stands
    reasoned = Reasoned(index=task["index"], node_id=node.id, note=mapped, decision=decision)
    return {"reasoned": [reasoned], "usage": usage}


async def conclude(state: ToMState, kit: RunKit) -> dict[str, Any]:
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
        [o.chunk_id for o in failed], len(by_chunk), kit, stage="map",
        first_error=failed[0].reason if failed else None,
    )  # fmt: skip
    outcomes = []
    for chunk_id in tree.chunk_ids:
        outcome = by_chunk.get(chunk_id) or ChunkOutcome(chunk_id=chunk_id, fate="no_information",
                                                         reason="no section of it was read")  # fmt: skip
        loss = tree.losses.get(chunk_id)
        selected = (state.get("selection") or {}).get(chunk_id)
        reasons = (selected, outcome.reason, f"parser: {loss}" if loss else None)
        outcome = outcome.model_copy(update={"reason": "; ".join(x for x in reasons if x) or None})
        outcomes.append(outcome)
    if not roots:
        return {"notes": [], "outcomes": outcomes}
    best = max(roots, key=strength)
    return {"notes": [best], "outcomes": outcomes, "answer": best.answer or "", "rationale": best.reasoning}
