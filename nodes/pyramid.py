"""Pyramid-Align's stages (LLM×MapReduce paper §5, Appendices B–C): build the pyramid, ask, answer, record.

* **leaves** — the document's chunks (the one chunker; ``pyramid_leaf_tokens``, by default what the
  synthesis prompt holds over ``pyramid_fan_in``), split into sentences, each given an id and an
  importance: :data:`IMPORTANCE`.
* **levels** — :class:`PyramidConstruction`, the project's bounded loop: the layer's nodes are grouped in
  order, at most ``pyramid_fan_in`` (3) a group and no more than the synthesis prompt holds (fewer when
  the window forces it), and the model writes each group's upper node: sentences citing the ids of the
  lower sentences they draw on. A cited id that is not one of the group's sentences is dropped and
  counted; an upper sentence's importance is the sum of its valid citations'. The top third of a group's
  sentences by importance are **bold** in its prompt. Repeat until one root; a group whose answer is
  unreadable rises unchanged (noted; an unwritten root leaves the level below as the top): nothing of
  the document is lost, so only a level of several groups none of which could be written raises
  ``TooManyFailures`` (as PECAN's levels; ``max_failed_fraction``, meant for chunks that go unread,
  failed a document for one unreadable group of two). ``max_collapse_rounds`` or a round that does not
  shrink the layer ends it (noted, the layer's nodes are the top).
* **question** — one node drawn with a seeded generator (seed and document), one of the three categories
  drawn with it; the category's prompt (``prompts/pyramid.toml``) gets the node's sentences, bold as above.
  A model that writes a statement instead is asked from the next node of a seeded order, up to
  ``pyramid_question_nodes``; none: the run ends without a record, with what the model wrote.
* **answer** — the project's ``mapreduce`` graph, invoked as a subgraph over the whole document: ``A`` is
  its answer, ``M`` its chunks' map outputs.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
import re
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from longgraph.errors import TooManyFailures
from longgraph.nodes.checks import content_stems, sentence_spans, words_of
from longgraph.nodes.kit import RunKit
from longgraph.nodes.loop import BoundedLoop, fresh_loop
from longgraph.nodes.prepare import chunk_documents_blocking
from longgraph.nodes.reduction import SizedNode, group_in_order
from longgraph.nodes.runtime import report_progress
from longgraph.state.contract import Chunk, DocumentIn, GraphOutput
from longgraph.state.graph_state import RunState
from longgraph.state.outputs import GeneratedQuestion, PyramidSynthesis
from longgraph.state.pyramid import (
    CATEGORIES,
    QUESTION_STAGES,
    Pyramid,
    PyramidNode,
    PyramidState,
    Record,
    RejectedQuestion,
    Sentence,
    Synthesised,
    SynthesisTask,
)
from longgraph.state.usage import Usage

PROMPTS = "pyramid"
IMPORTANCE = (
    "TF-IDF over the document's sentences (each sentence a document): raw word counts times the smoothed "
    "idf ln((1 + n) / (1 + df)) + 1 (scikit-learn's default formula, computed here), casefolded words, no "
    "stop list; a sentence scores the sum over its words"
)
"""How leaf importance is computed (recorded in every record and in the dataset card)."""
BOLD_SHARE = 1 / 3
"""The share of a prompt's sentences shown in bold: the most important third."""


def leaf_importance(sentences: Sequence[str]) -> list[float]:
    """Each sentence's importance: the sum of its words' TF-IDF (:data:`IMPORTANCE`)."""
    counts = [Counter(words_of(s)) for s in sentences]
    document_frequency: Counter[str] = Counter()
    for words in counts:
        document_frequency.update(words.keys())
    n = len(sentences)
    idf = {w: math.log((1 + n) / (1 + df)) + 1 for w, df in document_frequency.items()}
    return [round(sum(tf * idf[w] for w, tf in words.items()), 4) for words in counts]


def bold_ids(sentences: Sequence[Sentence]) -> set[int]:
    """The ids shown in bold: the top third by importance (ties in order), never a zero score."""
    ranked = sorted((s for s in sentences if s.importance > 0), key=lambda s: -s.importance)
    keep = math.ceil(len(sentences) * BOLD_SHARE) if sentences else 0
    return {s.id for s in ranked[:keep]}


def render_nodes(pyramid: Pyramid, members: Sequence[int], *, numbered: bool = True) -> str:
    """The members' sentences for a prompt: a part per node, ``[id]`` before each sentence when the model
    must cite them, the most important third of all of them in ``**bold**``."""
    nodes = [pyramid.node(m) for m in members]
    bold = bold_ids([s for n in nodes for s in n.sentences])
    parts = []
    for k, node in enumerate(nodes, 1):
        lines = []
        for s in node.sentences:
            text = f"**{s.text}**" if s.id in bold else s.text
            lines.append(f"[{s.id}] {text}" if numbered else text)
        body = "\n".join(lines) if numbered else " ".join(lines)
        parts.append(f"Part {k}:\n{body}" if len(nodes) > 1 else body)
    return "\n\n".join(parts)


def document_key(text: str) -> str:
    """A document's identity: the hash of its text (what the seeded draw and a resumed run key on)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def input_documents(state: PyramidState) -> list[DocumentIn]:
    """The input as documents (one ``document``, or ``documents`` as dicts or models)."""
    given: Sequence[Any] = state.get("documents") or [{"title": "", "text": state.get("document") or ""}]
    return [DocumentIn.model_validate(d) for d in given]


def document_text(state: PyramidState) -> str:
    """The document as one text (several documents joined by blank lines, as the record's ``X``)."""
    return "\n\n".join(d.text for d in input_documents(state))


async def chunk_leaves(state: PyramidState, kit: RunKit) -> PyramidState:
    """The leaves' chunks: ``pyramid_leaf_tokens``, or what the synthesis prompt holds over
    ``pyramid_fan_in`` (so that many leaves fit one upper node's prompt). No question exists yet."""
    fits = kit.budget(PROMPTS, "synthesise", "")
    size = kit.context.pyramid_leaf_tokens or max(64, fits // kit.context.pyramid_fan_in)
    placeholder = cast(RunState, {**state, "question": "(pyramid)"})
    chunked = await asyncio.to_thread(
        chunk_documents_blocking,
        placeholder,
        kit,
        prompts=PROMPTS,
        stage="synthesise",
        size=size,
    )
    return {
        "input_chunks": chunked["input_chunks"],
        "started_at": chunked["started_at"],
        "decisions": chunked["decisions"],
    }


async def start_pyramid(state: PyramidState, kit: RunKit) -> PyramidState:
    """Level 0: every chunk a leaf, its sentences numbered and scored over the whole document."""
    chunks: list[Chunk] = state["input_chunks"]
    per_chunk = [[chunk.text[a:b] for a, b in sentence_spans(chunk.text)] or [chunk.text] for chunk in chunks]
    scores = iter(leaf_importance([s for sentences in per_chunk for s in sentences]))
    nodes = []
    next_id = 0
    for chunk, sentences in zip(chunks, per_chunk, strict=True):
        scored = []
        for text in sentences:
            scored.append(Sentence(id=next_id, text=" ".join(text.split()), importance=next(scores)))
            next_id += 1
        nodes.append(PyramidNode(id=chunk.id, level=0, chunk_id=chunk.id, sentences=scored))
    pyramid = Pyramid(nodes=nodes, levels=[[n.id for n in nodes]], importance=IMPORTANCE)
    report_progress("leaves", total=len(chunks), advance=len(chunks), message=f"{next_id} sentences")
    handover: PyramidState = {"pyramid": pyramid, "layer": pyramid.levels[0]}
    return fresh_loop(handover)


@dataclass(frozen=True)
class PyramidConstruction(BoundedLoop):
    """One level of the pyramid per round (see the module docstring)."""

    name: str = "pyramid"
    combine_node: str = "synthesise"
    results_key: str = "synthesised"

    async def plan(self, state: PyramidState, kit: RunKit) -> PyramidState:
        pyramid: Pyramid = state["pyramid"]
        layer: list[int] = state["layer"]
        if len(layer) <= 1:
            return {"loop_tasks": [], "pyramid": pyramid.model_copy(update={"construction": "one root"})}
        texts = [render_nodes(pyramid, [i]) for i in layer]
        counts = kit.tokenizer.count_batch(texts)
        total = sum(counts)
        previous = state.get("previous_tokens")
        stalled = self.did_not_shrink(total, previous, "the layer")
        why = self.stop_reason(state, kit, stalled=stalled)
        if why is not None:
            note = f"{why}: its {len(layer)} nodes are the top"
            return {
                "loop_tasks": [],
                "pyramid": pyramid.model_copy(update={"construction": note}),
                "decisions": [note],
            }
        budget = kit.budget(PROMPTS, "synthesise", "")
        groups = group_in_order(
            [SizedNode(i, n + 8) for i, n in zip(layer, counts, strict=True)],
            budget,
            max_items=kit.context.pyramid_fan_in,
        )
        round_no = self.next_round(state)
        tasks = [
            SynthesisTask(
                index=g,
                members=[s.node_id for s in group],
                round=round_no,
                total=len(groups),
                text=render_nodes(pyramid, [s.node_id for s in group]),
            )
            for g, group in enumerate(groups)
        ]
        return {"loop_tasks": tasks, "previous_tokens": total}

    async def absorb(
        self, results: Sequence[Any], state: PyramidState, kit: RunKit, round_no: int
    ) -> PyramidState:
        failed = [r for r in results if not r.sentences]
        if len(results) == len(failed) == 1:
            # The would-be root (6 of 20 SmolLM2 documents): the nodes below are a pyramid without its
            # top, still good to ask from; failing the document for it would throw them away.
            note = (
                f"pyramid level {round_no}: the root could not be synthesised ({failed[0].error}); "
                f"the {len(failed[0].members)} node(s) below are the top"
            )
            pyramid = state["pyramid"].model_copy(update={"construction": note})
            pyramid.notes = [*pyramid.notes, note]
            return {"pyramid": pyramid, "layer": failed[0].members, "decisions": [note]}
        if results and len(failed) == len(results):
            raise TooManyFailures(
                f"none of the {len(results)} upper nodes of level {round_no} of the pyramid could be "
                f"written; first error: {failed[0].error}"
            )
        pyramid = state["pyramid"].model_copy(deep=True)
        index = pyramid.sentence_index()
        next_id = pyramid.next_sentence_id
        layer: list[int] = []
        notes: list[str] = []
        for item in results:
            done: Synthesised = item
            if not done.sentences:
                layer += done.members
                notes.append(
                    f"pyramid level {round_no}: group {done.index} was not synthesised ({done.error}); "
                    f"its {len(done.members)} node(s) rose unchanged"
                )
                continue
            allowed = {s.id for m in done.members for s in pyramid.node(m).sentences}
            sentences = []
            for text, cites in done.sentences:
                valid = list(dict.fromkeys(c for c in cites if c in allowed))
                pyramid.dropped_citations += len(cites) - len([c for c in cites if c in allowed])
                importance = round(sum(index[c].importance for c in valid), 4)
                sentences.append(Sentence(id=next_id, text=text, importance=importance, cites=valid))
                next_id += 1
            level = 1 + max(pyramid.node(m).level for m in done.members)
            node = PyramidNode(id=len(pyramid.nodes), level=level, children=done.members, sentences=sentences)
            pyramid.nodes.append(node)
            layer.append(node.id)
        pyramid.levels.append(layer)
        pyramid.notes += notes
        return {"pyramid": pyramid, "layer": layer, "decisions": notes}


async def synthesise(task: SynthesisTask, kit: RunKit) -> PyramidState:
    """One upper node: the group's sentences synthesised, each citing what it draws on."""
    result = await kit.call(
        PROMPTS,
        "synthesise",
        text=task["text"],
        question="",
        work=f"pyramid node {task['index']} of level {task['round']}",
    )
    report_progress("pyramid", total=task["total"], message=f"level {task['round']}")
    value = result.value
    sentences: list[tuple[str, list[int]]] = []
    if isinstance(value, PyramidSynthesis):
        for s in value.sentences:
            text = " ".join(s.text.split())
            if len(text) > 2:
                sentences.append((text, [int(c) for c in s.cites]))
    error = result.error or (None if sentences else "no sentence in the answer")
    done = Synthesised(index=task["index"], members=task["members"], sentences=sentences, error=error)
    return {"synthesised": [done], "usage": result.usage}


def question_sources(state: PyramidState) -> tuple[list[int], int]:
    """Every node in the order questions are asked from (the seeded draw first, the rest shuffled by
    the same generator), and the category index (drawn once: a document keeps its category)."""
    seed = int(state.get("seed") or 0)
    rng = random.Random(f"{seed}:{document_key(document_text(state))}")
    count = len(state["pyramid"].nodes)
    first = rng.randrange(count)
    category = rng.randrange(len(CATEGORIES))
    rest = [i for i in range(count) if i != first]
    rng.shuffle(rest)
    return [first, *rest], category


async def ask_question(state: PyramidState, kit: RunKit) -> PyramidState:
    """The question: the seeded node, in the seeded category; when the model writes no question from
    it (SmolLM2 sometimes copies a sentence or the format line), the next node of the seeded order, up
    to ``pyramid_question_nodes``. None: no ``question``, and ``rejected_questions`` says what was
    written, so the document is filtered with its reason rather than failed (a rerun would repeat it)."""
    order, category_index = question_sources(state)
    category = CATEGORIES[category_index]
    pyramid: Pyramid = state["pyramid"]
    budget = kit.budget(PROMPTS, QUESTION_STAGES[category], "")
    usage = Usage()
    rejected: list[RejectedQuestion] = []
    tries = order[: kit.context.pyramid_question_nodes]
    for node in tries:
        text = render_nodes(pyramid, [node], numbered=False)
        starts = kit.tokenizer.token_starts(text)
        if len(starts) > budget:  # a leaf can be longer than a question prompt holds: its start is kept
            text = text[: starts[budget]]
        result = await kit.call(
            PROMPTS,
            QUESTION_STAGES[category],
            text=text,
            question="",
            work=f"a {category} question from node {node}",
        )
        usage = usage + result.usage
        if isinstance(result.value, GeneratedQuestion):
            question = " ".join(result.value.question.split())
            problem = question_problem(question, text)
            if problem is None:
                report_progress("question", total=1)
                skipped = [f"node {r.node} gave no question ({r.error})" for r in rejected]
                return {
                    "question": question,
                    "category": category,
                    "source_node": node,
                    "usage": usage,
                    "rejected_questions": rejected,
                    "decisions": skipped,
                }
            rejected.append(RejectedQuestion(node=node, error=problem, raw=result.raw))
            continue
        rejected.append(RejectedQuestion(node=node, error=str(result.error), raw=result.raw))
    report_progress("question", total=1, message="no question")
    note = f"no question from {len(tries)} node(s) of the pyramid: the document is filtered"
    return {"category": category, "usage": usage, "rejected_questions": rejected, "decisions": [note]}


GENERIC_QUESTION_STEMS = frozenset(content_stems("question answer text passage document given following"))
"""Words any question may use: sharing only these with the node is not being about it."""


_ABOUT_THE_QUESTION = re.compile(r"\b(?:the|this|that) (?:question|answer)\b|^\W*\d+\W", re.IGNORECASE)
"""*What is the answer to the question about …?*, *47, Question: 1. …* (9 of 20 SmolLM2 questions)."""


def question_problem(question: str, text: str) -> str | None:
    """Why a parsed question cannot make a record (None: it can). SmolLM2 wrote "What is the question?"
    and "What is the answer to the question about X?" (about a question), an example's question
    copied from the prompt (mostly words the node lacks: at least half of a question's content words
    must be the node's), and sentences of the text with a question mark added (a statement)."""
    if _ABOUT_THE_QUESTION.search(question):
        return "asks about a question or an answer, not about the text"
    asked = content_stems(question) - GENERIC_QUESTION_STEMS
    shared = asked & content_stems(text.replace("**", ""))
    if not shared or len(shared) < len(asked) / 2:
        return f"not about the text (it shares {len(shared)} of its {len(asked)} content words with the node)"
    body = " ".join(words_of(question))
    if len(body.split()) >= 6 and body in " ".join(words_of(text)):
        return "a sentence of the text, not a question about it"
    return None


def route_question(state: PyramidState) -> Literal["answer", "no_question"]:
    """A question goes to the mapreduce answer; none ends the run with what the model wrote."""
    return "answer" if state.get("question") else "no_question"


def intermediate_outputs(result: GraphOutput) -> list[dict[str, Any]]:
    """``M``: each chunk's map output, in chunk order."""
    return [
        {
            "chunk": c.id,
            "status": c.status,
            "extracted": c.extracted,
            "answer": c.answer,
            "confidence": c.confidence,
            **({"reason": c.reason} if c.reason else {}),
        }
        for c in result.chunks
    ]


async def make_record(state: PyramidState, kit: RunKit) -> PyramidState:
    """The record ``(X, Q, M, A)`` with its provenance and cost. ``A`` and ``M`` are the output keys the
    ``answer`` subgraph (the project's mapreduce graph, ``graphs/pyramid.py``) wrote into this state: the
    pyramid's state is a run state, so the answer contract's keys are its own."""
    written: Mapping[str, Any] = state
    result = GraphOutput.model_validate({k: written[k] for k in GraphOutput.model_fields if k in written})
    answered = Usage(**{name: getattr(result.stats, name) for name in Usage.model_fields})
    pyramid: Pyramid = state["pyramid"]
    usage: Usage = (state.get("usage") or Usage()) + answered
    text = document_text(state)
    node = pyramid.node(state["source_node"])
    mapreduce = kit.prompts("mapreduce")
    prompt_versions = {
        "pyramid": kit.prompts(PROMPTS).version,
        f"mapreduce ({kit.context.prompt_variant})": mapreduce.version,
    }
    record = Record(
        id=document_key(text),
        source=str(state.get("source") or ""),
        X=text,
        Q=state["question"],
        M=intermediate_outputs(result),
        A=result.answer,
        category=state["category"],
        source_node=node.id,
        source_level=node.level,
        levels=len(pyramid.levels),
        model=str(kit.context.model),
        prompt_versions=prompt_versions,
        seed=int(state.get("seed") or 0),
        importance=pyramid.importance,
        dropped_citations=pyramid.dropped_citations,
        supported=result.supported,
        calls=usage.llm_calls,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        seconds=round(time.time() - float(state.get("started_at") or time.time()), 3),
        notes=[*pyramid.notes, *(state.get("decisions") or []), *result.stats.notes],
    )
    return {"record": record, "usage": answered}
