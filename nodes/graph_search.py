"""PECAN's dynamic graph search (paper §3.2, Appendices B, C): retrieve nodes until the model has enough.

* **start** — the visited set S starts with the top level (in its order; when it does not fit the
  search prompt, the top nodes most similar to the question that fit, said in ``stats.notes``).
* **progress control** (§3.2.1) — the model is asked "Can this question be answered by the following
  information?" (Table A2) over the question and S; on "No" one more node is retrieved and the question
  asked again. The search stops after ``pecan_patience`` "Yes" answers (stop patience ``p``, §4.4), after
  ``pecan_max_nodes`` retrievals, when the next node would overflow the prompt even condensed, or when
  every node is visited — ``stats.notes`` says which. The prompt grows at its end only (question first, each node
  appended), so the server's prefix cache serves every earlier turn (vLLM's automatic prefix caching:
  the node-level KV cache of Appendix B).
* **graph search** (§3.2.2) — an unvisited node i scores ``z_i = Σ_{j ∈ P_i ∩ S} r_j e_{j,i}`` (that is
  ``z = Eᵀ r``, computed over S's edges only) plus its similarity to the question (the paper's embedding
  cosine, plus the share of the question's words the node holds: :func:`node_relevance`); the argmax
  is retrieved. ``r_j``: the attention of node j's tokens to the question's in the search prompt,
  multiplied by j's position index with the question first (Appendix C), when a local model reads
  attention; otherwise j's similarity to the question (labelled ``embedding+words-similarity``).
  Ablations: no similarity term (``pecan-no-embedding``), no progress control (``pecan-fixed-k``).
* **condensing** (the project's, not the paper's) — when the next node would overflow the prompt, the
  model notes what the prompt holds that bears on the question, and the note replaces the prompt's
  nodes (they stay visited: grounding reaches their chunks). The prompt's prefix changes once then.
* **answer** — the second turn of Table A2: the first-turn prompt, the model's "Yes", then the answer
  request (one shared prefix again).
* **grounding** — the answer must rest on the document, as in every strategy: it is checked against the
  chunks the search reached (visited chunks, and the chunks the visited points weigh most through the
  edges, :data:`DESCENT` per point) with the shared grounding stage; the chunks never reached are
  reported ``filtered`` with why.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from longgraph.llm import StructuredCall
from longgraph.nodes.attention import attention_reader, spans_in
from longgraph.nodes.checks import (
    confidence_of,
    content_stems,
    documents_of,
    ground_read,
    read_question,
    strongest_sentence,
)
from longgraph.nodes.ip_graph import PROMPTS, node_text, stage_mode
from longgraph.nodes.kit import RunKit
from longgraph.nodes.read import enforce_failure_budget
from longgraph.nodes.retrieval import best_piece_scores
from longgraph.nodes.runtime import report_progress
from longgraph.prompts import neutralise_frames
from longgraph.state.contract import Chunk, DocumentIn
from longgraph.state.notes import ChunkOutcome, ChunkRead, Note, NoteDraft
from longgraph.state.outputs import StructuredOutput, Sufficiency, answer_of, is_no_information
from longgraph.state.pecan import IPGraph, PecanState, SearchStep
from longgraph.structured import Mode, format_instructions

DESCENT = 3
"""Chunks below each visited point (by accumulated edge weight) the answer is checked against."""


NOTED = "Noted from information read earlier:"
"""How the condensed note is introduced in the search prompt (before the nodes shown since)."""


def render_nodes(graph: IPGraph, node_ids: Sequence[int], chunks: Mapping[int, Chunk]) -> str:
    """Nodes as the search prompt shows them: one ``* node`` line each, in visit order."""
    return "\n".join(f"* {node_text(graph.node(i), chunks)}" for i in node_ids)


def note_line(note: str) -> list[str]:
    """The condensed note's line in the search prompt (none before any condensing)."""
    return [f"* {NOTED} {' '.join(note.split())}"] if note else []


def shown_nodes(state: Mapping[str, Any]) -> list[int]:
    """The visited nodes the search prompt shows: those visited since the last condensing."""
    return list(state["visited"][int(state.get("shown_from") or 0) :])


def search_information(graph: IPGraph, state: Mapping[str, Any], chunks: Mapping[int, Chunk]) -> str:
    """The information of the search prompts: the condensed note, then the nodes shown since."""
    lines = note_line(str(state.get("condensed_note") or ""))
    shown = shown_nodes(state)
    return "\n".join([*lines, render_nodes(graph, shown, chunks)] if shown else lines)


def _chunks(state: PecanState) -> dict[int, Chunk]:
    return {c.id: c for c in state["input_chunks"]}


def search_budget(kit: RunKit, question: str) -> int:
    """Tokens the prompt's information may take: what every search prompt (ask, answer, condense) leaves."""
    return min(kit.budget(PROMPTS, stage, question) for stage in ("enough", "answer", "condense"))


def node_similarity(graph: IPGraph, question_vector: np.ndarray[Any, Any]) -> list[float]:
    """Each node's cosine similarity to the question (a chunk's best piece)."""
    vectors = graph.piece_vectors()
    if not len(vectors):
        return [0.0] * len(graph.nodes)
    return best_piece_scores(question_vector, vectors, graph.vector_owners, len(graph.nodes))


WORD_WEIGHT = 0.5
"""How much the question's words in a node add to its cosine similarity (:func:`node_relevance`)."""


def node_relevance(
    graph: IPGraph, question_vector: np.ndarray[Any, Any], question: str, chunks: Mapping[int, Chunk]
) -> list[float]:
    """Each node's similarity to the question: its cosine, plus :data:`WORD_WEIGHT` × the share of the
    question's words it holds, each word weighted by how rare it is among the chunks (:func:`word_weights`).

    An embedding reads "the X customs house" and "the Y customs house" alike, so among
    look-alike facts the cosine alone can rank the asked one's chunk below another's; the name tells
    them apart. Measured on the general suite's dev split (8K, 300-token chunks, MiniLM, 12 seeds): the
    asked fact's chunk ranked first by the cosine in 20 of 24 look-alike cases and 22 of 24 paraphrased
    questions (one below third); with the words added, in 24 of 24 of each, and still 24 of 24 single
    facts. Unweighted, a word every other chunk holds counted as much as the one that says what is
    asked: for "For which reservoirs does the text give the fill level?", filler chunks holding "levels"
    tied with the reservoirs' and took the search prompt's room (measured with the scripted capable
    reader, PECAN found two reservoirs of three). Blocking (0.65 s for 5,100 chunks of 1.28M tokens, the
    weights included): run it in a thread."""
    wanted = read_question(question).words
    cosine = node_similarity(graph, question_vector)
    stems = [content_stems(node_text(node, chunks)) for node in graph.nodes]
    weights = word_weights(
        wanted, [s for node, s in zip(graph.nodes, stems, strict=True) if node.chunk_id is not None]
    )
    total = sum(weights.values())
    return [
        score + WORD_WEIGHT * (sum(weights[word] for word in wanted & held) / total if total else 1.0)
        for held, score in zip(stems, cosine, strict=True)
    ]


def word_weights(wanted: frozenset[str], chunk_stems: Sequence[AbstractSet[str]]) -> dict[str, float]:
    """Each question word's weight: the rarer among the chunks, the more (``log(1 + n / (1 + holding))``)."""
    total = len(chunk_stems)
    return {word: math.log(1 + total / (1 + sum(word in s for s in chunk_stems))) for word in wanted}


def retrieval_scores(
    graph: IPGraph, relevance: Mapping[int, float], similarity: Sequence[float], *, use_similarity: bool
) -> dict[int, float]:
    """§3.2.2: ``z = Eᵀ r`` over the visited nodes' edges, plus similarity (unvisited nodes only)."""
    visited = set(relevance)
    z: dict[int, float] = {}
    for j, r in relevance.items():
        for lower, weight in graph.node(j).edges.items():
            if int(lower) not in visited:
                z[int(lower)] = z.get(int(lower), 0.0) + r * weight
    return {
        node.id: z.get(node.id, 0.0) + (similarity[node.id] if use_similarity else 0.0)
        for node in graph.nodes
        if node.id not in visited
    }


@dataclass(frozen=True)
class Shown:
    """What one search prompt shows: ``nodes`` of ``graph`` (after the condensed ``note``, when the
    prompt was condensed) over the run's ``chunks``, for ``question``."""

    graph: IPGraph
    nodes: Sequence[int]
    note: str
    chunks: Mapping[int, Chunk]
    question: str


def attention_relevance(kit: RunKit, mode: Mode, prompt: Shown, new: Sequence[int]) -> dict[int, float]:
    """Appendix C: the attention of each of ``new``'s tokens to the question's, × its position index
    (the question at position 1, the first line of the information at 2: the condensed note, when the
    prompt was condensed, then the shown nodes), read from the search prompt as the local model lays
    it out. Blocking: run it in a thread."""
    graph, shown, note, chunks, question = (
        prompt.graph,
        prompt.nodes,
        prompt.note,
        prompt.chunks,
        prompt.question,
    )
    reader = attention_reader(str(kit.context.attention_model), kit.context.attention_precision)
    info = search_information(graph, {"visited": shown, "condensed_note": note}, chunks)
    messages = kit.prompts(PROMPTS).render(
        "enough",
        kit.context.task,
        format=format_instructions(Sufficiency, mode),
        context=info,
        question=question,
    )
    full = reader.chat_text(messages)
    question_at = max(0, full.find(question))
    question_span = (question_at, question_at + len(question))
    # The lines as the prompt shows them (rendering marks frame-like lines inside them "(quoted)").
    noted = note_line(note)
    lines = [neutralise_frames(line) for line in noted]
    lines += [neutralise_frames(f"* {node_text(graph.node(i), chunks)}") for i in shown]
    spans = spans_in(full, lines, question_span[1])[len(noted) :]
    index = {node_id: k for k, node_id in enumerate(shown)}
    first = 2 + len(noted)
    reading = reader.read(full, [spans[index[i]] for i in new], [question_span])
    return {i: float(reading.weights[k, 0]) * (first + index[i]) for k, i in enumerate(new)}


async def start_search(
    state: PecanState, kit: RunKit, *, use_similarity: bool = True, fixed_k: bool = False
) -> PecanState:
    """S ← the top level (what fits the prompt); r and the question's similarity to every node."""
    graph: IPGraph = state["ip_graph"]
    question = state["question"]
    chunks = _chunks(state)
    vectors = await kit.embed([question])
    similarity = await asyncio.to_thread(node_relevance, graph, vectors[0], question, chunks)
    budget = search_budget(kit, question)
    top = graph.top
    counts = dict(
        zip(top, kit.tokenizer.count_batch([node_text(graph.node(i), chunks) for i in top]), strict=True)
    )
    decisions: list[str] = []
    if sum(counts.values()) + 2 * len(top) > budget:
        kept: list[int] = []
        used = 0
        for i in sorted(top, key=lambda i: (-similarity[i], i)):
            if used + counts[i] + 2 <= budget // 2:  # half: room left for the search to retrieve
                kept.append(i)
                used += counts[i] + 2
        decisions.append(
            f"the top level ({len(top)} nodes) does not fit the search prompt: the search starts from the "
            f"{len(kept)} most similar to the question that fill half of it"
        )
        top = sorted(kept, key=top.index)
    tokens = sum(counts[i] + 2 for i in top)
    relevance = await _relevance(kit, Shown(graph, top, "", chunks, question), top, similarity)
    return {
        "visited": top,
        "relevance": relevance,
        "similarity": similarity,
        "yes_count": 0,
        "search_trace": [],
        "search_tokens": tokens,
        "decisions": decisions,
        "search_stop": "",
        # A thread asked again must carry neither the last answer turn's failure nor its condensed prompt.
        "answer_error": "",
        "condensed_note": "",
        "shown_from": 0,
        "condensations": 0,
        "room_needed": None,
        "search_limits": {
            "patience": 0 if fixed_k else kit.context.pecan_patience,
            "max_nodes": kit.context.pecan_fixed_k if fixed_k else kit.context.pecan_max_nodes,
        },
    }


async def _relevance(
    kit: RunKit, prompt: Shown, new: Sequence[int], similarity: Sequence[float]
) -> dict[int, float]:
    """r for the ``new`` nodes: attention (the paper's) when the graph has attention edges, else similarity."""
    known = {i: float(r) for i, r in ((i, similarity[i]) for i in new)}
    if prompt.graph.edge_mode != "attention" or not new:
        return known
    return await asyncio.to_thread(attention_relevance, kit, stage_mode(kit, "enough"), prompt, new)


async def _turn(
    state: PecanState, kit: RunKit, stage: Literal["enough", "answer"], work: str
) -> StructuredCall[StructuredOutput]:
    """One turn of Table A2: ``stage``'s prompt over the information the search has reached."""
    graph: IPGraph = state["ip_graph"]
    text = search_information(graph, state, _chunks(state))
    return await kit.call(PROMPTS, stage, text=text, question=state["question"], work=work)


async def ask_sufficiency(state: PecanState, kit: RunKit) -> PecanState:
    """Table A2, first turn: can the question be answered from S? (unreadable counts as No)."""
    result = await _turn(state, kit, "enough", f"search turn {len(state.get('search_trace') or []) + 1}")
    verdict = getattr(result.value, "answer", None) or "unreadable"
    trace = list(state.get("search_trace") or [])
    last = trace[-1] if trace and not trace[-1].verdict else None
    step = SearchStep(
        turn=len(trace) + (0 if last else 1),
        node=last.node if last else None,
        score=last.score if last else None,
        verdict=verdict,
    )
    trace = [*trace[:-1], step] if last else [*trace, step]
    report_progress("search", total=_search_steps(state))
    return {
        "search_trace": trace,
        "yes_count": int(state.get("yes_count") or 0) + (verdict == "Yes"),
        "usage": result.usage,
    }


def _retrieved(state: Mapping[str, Any]) -> int:
    return sum(1 for step in state.get("search_trace") or [] if step.node is not None)


def after_verdict(state: PecanState) -> Literal["retrieve", "answer"]:
    """Router after a Yes/No turn: answer after ``patience`` Yes answers, at the retrieval bound, or when
    the last retrieval found nothing that fits; else retrieve one more node."""
    limits = state.get("search_limits") or {}
    if state.get("search_stop"):
        return "answer"
    if int(state.get("yes_count") or 0) >= int(limits.get("patience", 1)):
        return "answer"
    return "answer" if _retrieved(state) >= int(limits.get("max_nodes", 0)) else "retrieve"


def after_retrieval(fixed: bool) -> Any:
    """Router after a retrieval: ask again (progress control), retrieve again (fixed-k), condense the
    prompt to make room for the next node, or answer."""

    def route(state: PecanState) -> Literal["ask", "retrieve", "condense", "answer"]:
        if state.get("search_stop"):
            return "answer"
        if state.get("room_needed") is not None:
            return "condense"
        return "retrieve" if fixed else "ask"

    route.__name__ = "after_retrieval"
    return route


async def retrieve_node(
    state: PecanState, kit: RunKit, *, use_similarity: bool = True, fixed_k: bool = False
) -> PecanState:
    """Retrieve the best-scoring unvisited node and append it to S (or record why the search stops)."""
    graph: IPGraph = state["ip_graph"]
    visited = list(state["visited"])
    relevance = dict(state.get("relevance") or {})
    similarity = state.get("similarity") or [0.0] * len(graph.nodes)
    limit = int((state.get("search_limits") or {}).get("max_nodes", 0))
    if _retrieved(state) >= limit:
        return {"search_stop": f"retrieved {limit} node(s), the {'fixed k' if fixed_k else 'bound'}"}
    scores = retrieval_scores(graph, relevance, similarity, use_similarity=use_similarity)
    if not scores:
        return {"search_stop": "every node of the graph was visited"}
    best = max(scores, key=lambda i: (scores[i], -i))
    chunks = _chunks(state)
    tokens = kit.tokenizer.count(node_text(graph.node(best), chunks)) + 2
    if int(state.get("search_tokens") or 0) + tokens > search_budget(kit, state["question"]):
        if shown_nodes(state):  # the prompt's nodes can be condensed to a note
            return {"room_needed": best}
        return {"search_stop": f"the next node ({best}) would overflow the search prompt"}
    visited.append(best)
    note = str(state.get("condensed_note") or "")
    shown = visited[int(state.get("shown_from") or 0) :]
    prompt = Shown(graph, shown, note, chunks, state["question"])
    relevance.update(await _relevance(kit, prompt, [best], similarity))
    step = SearchStep(
        turn=len(state.get("search_trace") or []) + 1,
        node=best,
        score=round(scores[best], 4),
        verdict="" if not fixed_k else "fixed k: no question asked",
    )
    if fixed_k:
        report_progress("search", total=_search_steps(state))
    return {
        "visited": visited,
        "relevance": relevance,
        "search_trace": [*(state.get("search_trace") or []), step],
        "search_tokens": int(state.get("search_tokens") or 0) + tokens,
    }


async def condense_search_prompt(state: PecanState, kit: RunKit) -> PecanState:
    """Make room for the next node: the model notes what the search prompt holds that bears on the
    question, and the note replaces the prompt's nodes (they stay visited, so grounding reaches their
    chunks); the search goes on after them. When the note leaves no room either, the search stops on
    the prompt as it was.

    Why: a question whose facts lie in more chunks than the prompt holds (a list, a count or a highest
    over six chunks of 260 tokens, at a 2,048-token window: the prompt holds four) was answered from a
    part of them — measured with the scripted capable reader on the general suite's dev split (16K
    tokens, three seeds), PECAN said NO INFORMATION to 9 of 24 aggregation questions, every one of them
    after the next node would have overflowed the prompt; a real model may instead list the part it saw."""
    graph: IPGraph = state["ip_graph"]
    chunks = _chunks(state)
    best = int(state["room_needed"] or 0)
    shown = shown_nodes(state)
    count = int(state.get("condensations") or 0) + 1
    result = await kit.call(
        PROMPTS,
        "condense",
        text=search_information(graph, state, chunks),
        question=state["question"],
        work=f"condensing the search prompt ({len(shown)} node(s))",
    )
    overflow = f"the next node ({best}) would overflow the search prompt"
    if result.value is None:
        return {
            "room_needed": None,
            "usage": result.usage,
            "search_stop": f"{overflow}, and condensing it gave no note ({result.error})",
        }
    note = str(getattr(result.value, "note", "") or "").strip()
    note = "" if is_no_information(note) else note
    tokens = kit.tokenizer.count(note_line(note)[0]) + 2 if note else 0
    needed = kit.tokenizer.count(node_text(graph.node(best), chunks)) + 2
    if tokens + needed > search_budget(kit, state["question"]) or tokens >= int(
        state.get("search_tokens") or 0
    ):
        return {"room_needed": None, "usage": result.usage, "search_stop": f"{overflow}, even condensed"}
    return {
        "room_needed": None,
        "usage": result.usage,
        "condensed_note": note,
        "shown_from": len(state["visited"]),
        "search_tokens": tokens,
        "condensations": count,
        "decisions": [
            f"graph search: the search prompt was condensed to make room for node {best} "
            f"({len(shown)} node(s) became a note of {tokens} token(s))"
        ],
    }


def after_condensing(state: PecanState) -> Literal["retrieve", "answer"]:
    """Router after condensing: retrieve the node there is room for now, or answer."""
    return "answer" if state.get("search_stop") else "retrieve"


def _search_steps(state: PecanState) -> int:
    """The search's progress total: its most turns (Yes/No turns, or fixed-k retrievals)."""
    limits = state.get("search_limits") or {}
    return int(limits.get("max_nodes", 0)) + (1 if int(limits.get("patience", 0)) else 0)


def _steps_done(state: PecanState) -> int:
    trace = state.get("search_trace") or []
    if int((state.get("search_limits") or {}).get("patience", 0)):
        return sum(1 for step in trace if step.verdict)
    return sum(1 for step in trace if step.node is not None)


def stop_description(state: PecanState) -> str:
    if state.get("search_stop"):
        return str(state["search_stop"])
    patience = int((state.get("search_limits") or {}).get("patience", 0))
    if patience and int(state.get("yes_count") or 0) >= patience:
        return f'the model said "Yes" {patience} time(s) (stop patience)'
    return f"retrieved {_retrieved(state)} node(s), the bound"


async def answer_from_graph(state: PecanState, kit: RunKit) -> PecanState:
    """Table A2, second turn: the answer from the visited nodes."""
    graph: IPGraph = state["ip_graph"]
    result = await _turn(state, kit, "answer", "the answer turn of the graph search")
    left = _search_steps(state) - _steps_done(state)
    if left > 0:  # the search stopped before its bound: its bar still reaches its total
        report_progress("search", total=_search_steps(state), advance=left)
    report_progress("answer", total=1)
    stop = stop_description(state)
    levels = sorted({graph.node(i).level for i in state["visited"]})
    condensed = int(state.get("condensations") or 0)
    shown = (
        f"{len(state['visited'])} node(s) in the prompt"
        if not condensed
        else f"{len(state['visited'])} node(s) read, the prompt condensed {condensed} time(s)"
    )
    decisions = [
        f"graph search: {shown} (levels {', '.join(map(str, levels))}), "
        f"{_retrieved(state)} retrieved; stopped because {stop}"
    ]
    if result.value is None:
        decisions.append(f"the answer turn was unparseable ({result.error})")
        return {
            "answer": "",
            "answer_error": str(result.error),
            "usage": result.usage,
            "decisions": decisions,
            "search_stop": stop,
        }
    return {
        "answer": answer_of(result.value),
        "rationale": "",
        "usage": result.usage,
        "decisions": decisions,
        "search_stop": stop,
    }


def chunks_reached(graph: IPGraph, visited: Sequence[int]) -> list[int]:
    """Node ids of the chunks the search reached: visited chunks, then, for each visited point, the
    :data:`DESCENT` chunks its edges weigh most (weights multiplied down the levels, summed over paths).

    All visited points are carried down together, one column each, in one pass over the nodes below
    them in top-down order: walking each point's paths on its own looked up 1.27 million nodes for one
    question at 256K (0.7 s of a 1.1 s second question, against a stub)."""
    reached = [i for i in visited if graph.node(i).chunk_id is not None]
    points = [i for i in visited if graph.node(i).chunk_id is None]
    if not points:
        return list(dict.fromkeys(reached))
    order = _top_down(graph, points)
    row_of = {node_id: row for row, node_id in enumerate(order)}
    carried = np.zeros((len(order), len(points)))
    touched = np.zeros((len(order), len(points)), dtype=bool)  # reached, even through a zero weight
    for column, point in enumerate(points):
        carried[row_of[point], column] = 1.0
        touched[row_of[point], column] = True
    for node_id in order:
        node = graph.node(node_id)
        if node.chunk_id is not None:
            continue
        weight, seen = carried[row_of[node_id]], touched[row_of[node_id]]
        for lower, w in node.edges.items():
            carried[row_of[int(lower)]] += weight * w
            touched[row_of[int(lower)]] |= seen
    chunk_rows = [(row_of[i], i) for i in order if graph.node(i).chunk_id is not None]
    for column in range(len(points)):
        below = [(-float(carried[row, column]), i) for row, i in chunk_rows if touched[row, column]]
        reached += [i for _, i in sorted(below)[:DESCENT]]
    return list(dict.fromkeys(reached))


def _top_down(graph: IPGraph, starts: Sequence[int]) -> list[int]:
    """The nodes reachable from ``starts`` (themselves included), each after every node with an edge
    down to it: a reversed depth-first post-order."""
    done: set[int] = set()
    post: list[int] = []
    for start in starts:
        if start in done:
            continue
        done.add(start)
        stack = [(start, iter(graph.node(start).edges))]
        while stack:
            node_id, lowers = stack[-1]
            lower = next(lowers, None)
            if lower is None:
                stack.pop()
                post.append(node_id)
            elif int(lower) not in done:
                done.add(int(lower))
                stack.append((int(lower), iter(graph.node(int(lower)).edges)))
    return post[::-1]


async def conclude_search(state: PecanState, kit: RunKit) -> PecanState:
    """Ground the answer on the chunks the search reached; account for every chunk."""
    graph: IPGraph = state["ip_graph"]
    answer = (state.get("answer") or "").strip()
    chunks = _chunks(state)
    documents = documents_of(state)
    question = state["question"]
    reached = chunks_reached(graph, state["visited"])
    visited = set(state["visited"])
    unread = state.get("answer_error") or ""
    if unread:
        # The one call that read the reached chunks gave nothing: they failed, as a chunk whose reading
        # is unparseable does in every strategy, and the failure budget decides (all of them: the run
        # fails, unless the budget allows every chunk to fail). Not "no answer": nothing was read.
        ids = [int(graph.node(i).chunk_id or 0) for i in reached]
        enforce_failure_budget(ids, len(ids), kit, stage="answer", first_error=unread)
    # The answer alone, as a quote-less note: grounding finds the sentences that
    # support it; quoting the bare answer would make a span of "4820193" alone, bearing on no question word.
    draft = NoteDraft(answer=answer, no_information=is_no_information(answer))
    outcomes: list[ChunkOutcome] = []
    notes: list[Note] = []
    for node_id in reached:
        chunk_id = graph.node(node_id).chunk_id
        assert chunk_id is not None
        how = (
            "visited by the search" if node_id in visited else "reached through the edges of a visited point"
        )
        if unread:
            reason = f"{how}; the answer turn that read it was unparseable ({unread})"
            outcomes.append(ChunkOutcome(chunk_id=chunk_id, fate="failed", reason=reason))
            continue
        if not answer:
            outcomes.append(
                ChunkOutcome(chunk_id=chunk_id, fate="no_information", reason=f"{how}; no answer")
            )
            continue
        read = ChunkRead(chunk_id=chunk_id, stage="answer", draft=draft)
        outcome, note = ground_read(read, chunks[chunk_id], documents, read_question(question))
        reason = f"{how}; {outcome.reason}" if outcome.reason else how
        outcomes.append(outcome.model_copy(update={"reason": reason}))
        if note is not None:
            notes.append(note)
    if answer and not is_no_information(answer) and not unread and not notes:
        notes = _bearing_sentences([chunks[o.chunk_id] for o in outcomes], documents, question)
        bearing = {n.sources[0] for n in notes}
        outcomes = [
            o.model_copy(
                update={
                    "fate": "noted",
                    "reason": f"{o.reason}; its sentence bearing most on the question is evidence",
                }
            )
            if o.chunk_id in bearing
            else o
            for o in outcomes
        ]
    _keep_one_candidate(outcomes)
    reached_chunks = {graph.node(i).chunk_id for i in reached}
    filtered = [
        (
            cid,
            f"not reached by the graph search ({len(state['visited'])} node(s) visited, "
            f"{'attention' if graph.edge_mode == 'attention' else 'embedding-similarity'} edges)",
        )
        for cid in graph.chunk_ids
        if cid not in reached_chunks
    ]
    return {
        "notes": notes,
        "outcomes": outcomes,
        "filtered": filtered,
        "structure": describe_search(state),
    }


MAX_BEARING = 6
"""Reached chunks whose sentence bearing most on the question is shown to the verdict."""


def _bearing_sentences(
    reached: Sequence[Chunk], documents: Sequence[DocumentIn], question: str
) -> list[Note]:
    """When no reached chunk holds the answer verbatim (a total, a verdict, the end of a chain: one answer
    over many nodes), the evidence it is judged on: each reached chunk's sentence holding the largest
    share of the question's words, as a quote-only note, the :data:`MAX_BEARING` strongest."""
    read = read_question(question)
    found: list[tuple[float, Note]] = []
    for chunk in reached:
        share, best, sentences = strongest_sentence(chunk, documents, read)
        if best >= 0:
            confidence = confidence_of(share, None)
            quote = sentences[best].model_copy(update={"confidence": confidence})
            found.append((share, Note(sources=[chunk.id], quotes=[quote], confidence=confidence)))
    found.sort(key=lambda f: -f[0])
    return [note for _, note in found[:MAX_BEARING]]


def _keep_one_candidate(outcomes: list[ChunkOutcome]) -> None:
    """One answer was checked against every reached chunk: the chunk that comes closest to supporting it
    stays ``unsupported`` (so the answer is listed as a candidate when no chunk supports it); for the
    others the answer is simply not in them (``no_information``, with the reason)."""
    unsupported = [o for o in outcomes if o.fate == "unsupported"]
    if not unsupported:
        return
    supported = any(o.fate == "noted" for o in outcomes)
    closest = None if supported else max(unsupported, key=lambda o: (o.support or 0.0, o.relevance or 0.0))
    for index, outcome in enumerate(outcomes):
        if outcome.fate == "unsupported" and outcome is not closest:
            outcomes[index] = outcome.model_copy(update={"fate": "no_information"})


def describe_search(state: PecanState) -> dict[str, Any]:
    """``stats.structure``: the graph, how its edges and the question's relevance were weighed, the search."""
    graph: IPGraph = state["ip_graph"]
    attention = graph.edge_mode == "attention"
    return {
        "kind": "information-point graph",
        "edges": graph.edge_mode,
        "edge_model": graph.edge_model,
        "relevance": "attention × position index" if attention else "embedding+words-similarity",
        "nodes": len(graph.nodes),
        "levels": [len(level) for level in graph.levels],
        "construction": graph.construction,
        "visited": list(state["visited"]),
        "retrieved": _retrieved(state),
        "yes_answers": int(state.get("yes_count") or 0),
        "search_stop": state.get("search_stop") or "",
        "condensations": int(state.get("condensations") or 0),
        "embedding_model": graph.embedding_model,
        "trace": [step.model_dump() for step in state.get("search_trace") or []],
    }


__all__ = [
    "after_condensing",
    "after_retrieval",
    "after_verdict",
    "answer_from_graph",
    "ask_sufficiency",
    "chunks_reached",
    "conclude_search",
    "condense_search_prompt",
    "retrieval_scores",
    "retrieve_node",
    "start_search",
]
