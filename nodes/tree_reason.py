"""ToM's recursive MapReduce over the DocTree, in post-order, one level of the tree per round.

Paper §3.3: **Map** on a node takes its own information (title, keywords, summary, and a leaf's
original text) plus, for an inner node, the **Reduce** of its children's results; Reduce resolves
conflicts among siblings by confidence (out of 10 in the paper's protocol, parsed and used: it is the
model's score of the note, combined with the evidence as everywhere, ``nodes/checks``) and is
skipped for a single child. Every node of a level runs in parallel (:class:`TreeReduce`, a bounded
loop: ``nodes/loop.py``; the tree's height bounds it — at most four parsed levels plus the
aggregation's bounded rounds).

Grounded like every strategy: a leaf's reading is a note only with a verbatim quote of the leaf's
own text (its span of the chunk); an inner node's Reduce and Map answers are the model's own, as
given, carrying the verified quotes of its children's notes that hold their words (all of them when
none does), so the root's evidence points at the characters of the document and the final verdict
judges the root's answer. An inner node's Map asks for an answer from its outline and the reduced
notes (the ``map_inner`` stage where the prompt set has one: a compact leaf reading copies a sentence
of the text, which an inner node has none of). An unreadable Reduce or Map leaves the node the
evidence below it: the strongest child's note, or the reduced note. Where the paper is silent: an inner node
none of whose children holds evidence is not mapped — its own information is model-written summary,
which nothing could verify — and carries no result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from longgraph.llm import StructuredCall
from longgraph.nodes.checks import (
    combined_note,
    documents_of,
    ground_read,
    read_question,
)
from longgraph.nodes.kit import RunKit
from longgraph.nodes.loop import BoundedLoop
from longgraph.nodes.read import chunk_read, enforce_failure_budget
from longgraph.nodes.reduction import set_aside_weak, strength, weak_note_reason
from longgraph.nodes.render import join_notes, measure_notes, render_note
from longgraph.nodes.runtime import report_progress
from longgraph.nodes.tree import leaf_text, node_info
from longgraph.state.contract import Chunk
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
        question = read_question(state["question"])
        for item in results:
            reasoned: Reasoned = item
            node = tree.node(reasoned.node_id)
            if reasoned.read is not None:  # a leaf: grounded against its own text
                chunk = Chunk(id=node.chunk_id or 0, parts=node.parts, tokens=0, text="")
                outcome, note = ground_read(reasoned.read, chunk, documents, question)
                outcomes.append(outcome)
            else:
                note = reasoned.note
            if reasoned.decision:
                decisions.append(reasoned.decision)
            if note is not None:
                done[node.id] = measure_notes([note], kit)[0]
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


def _draft(result: StructuredCall[Any]) -> NoteDraft | None:
    return (
        result.value.note_draft()
        if result.value is not None and hasattr(result.value, "note_draft")
        else None
    )


async def _read_leaf(task: ReasonTask, kit: RunKit, stage: str) -> ToMState:
    """Map on a leaf: its reading, grounded on the document when the level is gathered."""
    node, question, text = task["node"], task["question"], task["leaf_text"]
    result = await kit.call(
        PROMPTS,
        stage,
        text=node_info(node, text),
        question=question,
        work=f"map of tree node {node.id}",
        record_unanswered=True,
    )
    report_progress("tree map", total=task["total"], message=f"level {task['round']}")
    read = chunk_read(result, node.chunk_id or 0, stage, prompts=PROMPTS)
    return {"reasoned": [Reasoned(index=task["index"], node_id=node.id, read=read)], "usage": result.usage}


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
        if draft is not None and draft.answer and not is_no_information(draft.answer):
            reduced = combined_note(draft, children, read_question(question), sources)
        else:
            reduced = strongest
            why = f"was unreadable ({result.error})" if draft is None else "found no answer"
            decision = f"the reduce at tree node {node.id} {why}; its strongest child's note goes on"
    info = node_info(node)
    text = f"{info}\n\nPrevious reasoning results:\n{render_note(reduced, labels)}"
    inner = f"{map_stage}_inner" if f"{map_stage}_inner" in kit.prompts(PROMPTS).stages else map_stage
    result = await kit.call(PROMPTS, inner, text=text, question=question, work=f"map of tree node {node.id}")
    report_progress("tree map", total=task["total"], message=f"level {task['round']}")
    usage = result.usage if usage is None else usage + result.usage
    draft = _draft(result)
    mapped = (
        combined_note(draft, [reduced], read_question(question), sources)
        if draft is not None and draft.answer and not is_no_information(draft.answer)
        else reduced  # no answer of its own: the reduced evidence goes on
    )
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
