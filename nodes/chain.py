"""Following a chain that no single reading could: ask who the question's entity is, then ask about them.

"In which town was the founder of the X guild born?" is answered by two sentences that may be
far apart: "The X guild was founded by Ilka Y." and "Ilka Y was born in Z." A
capable reader chains the two notes in its reduce. A small one does not even keep the second: that
chunk never names the X guild, so it reads as having nothing to say (measured with SmolLM2-135M on
the general suite's two-hop kind: 1 right of 16 on a test split, every miss NO
INFORMATION). Asked "In which town was Ilka Y born?", the same model finds it.

So when the settled answer is NO INFORMATION and the question names an entity through another ("the
founder of the X guild", :func:`~longgraph.nodes.answer_support.chain_links`) and asks something
of it, the run follows the chain, like a person would:

1. **who it is**: the passages that name the inner entity ("X") are looked at first in their own
   words: a sentence that names the X guild, says "founded" (the role's own word family, or "is",
   "serves as", a title: :func:`~longgraph.nodes.answer_support.says_who`) and one name the question
   lacks gives the bridge, "Ilka Y", with no call. Otherwise they are read with "What is the name
   of the founder of the X guild?", and a verified note whose sentence does so, or that a
   verification call confirms for a model that can make one, gives it;
2. **the question about them**: the passages that name the bridge are read with the question asked
   about "Ilka Y", and the answer settles as any answer does (``nodes/finalize.py``: bound to
   what it names, confirmed by words or by the run's verifier).

The result is ``derived`` (a chain over two verified notes), cites both, and ``stats.notes`` says how
it was followed. At most :data:`PASSAGES_PER_HOP` passages are read per step, only their most relevant
sentences; an entity that no sentence names (an absent one) costs no call. Second readings must be on
(``reread``, compact protocol): the readings are the map stage's prompt
(``prompts/mapreduce_compact.toml``), which asks for the sentence that answers, or a link of a chain.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from longgraph.nodes.answer_support import (
    ChainLink,
    asked_kind,
    asked_of,
    capitalised_runs,
    chain_links,
    holder_among,
    outermost_link,
    says_who,
    sentences_of,
    spelled_as_in,
)
from longgraph.nodes.answer_wording import judge_wording, part_only
from longgraph.nodes.grounding import ground_read
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import content_stems, question_words, stem
from longgraph.nodes.passages import Found, best_passage, found_note, read_each
from longgraph.nodes.provenance import documents_of
from longgraph.nodes.read import chunk_read
from longgraph.nodes.verify import confirmed, verifier_for, verify_answer
from longgraph.state.contract import Chunk, DocumentIn, Evidence
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, Note
from longgraph.state.usage import Usage

CHAIN = "chain"
"""The label of a chain's readings (their calls, usage and progress)."""
PROMPTS = "mapreduce"
STAGE = "map"
PASSAGES_PER_HOP = 2
"""Passages read per step: the ones that name what the step asks about and share most of its words."""


@dataclass(frozen=True)
class Followed:
    """A chain followed to its end: the answer, the two notes it rests on (the bridge's first), the
    quotes that support it, and what the readings said and cost."""

    answer: str
    notes: tuple[Note, Note]
    quotes: list[Evidence]
    outcomes: tuple[ChunkOutcome, ChunkOutcome]
    """The two notes' chunks' readings (their reports say what they were asked)."""
    rationale: str
    decisions: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


@dataclass
class Unfollowed:
    """A chain not followed to an answer: why (for ``stats.notes``) and what its readings cost."""

    decisions: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)


def link_to_follow(question: str) -> ChainLink | None:
    """The one entity the question names through another and asks something of, or None (none, or
    several: which to resolve first is not clear). A role that is the value asked for ("How long is the
    *span* of the X footbridge?") has no holder to find: a held-out split spent a call
    asking "What is the name of the span of the X footbridge?"."""
    kind = asked_kind(question)
    links = [
        link
        for link in chain_links(question)
        if asked_of(question, link) and stem(link.role.casefold()) not in kind
    ]
    return outermost_link(question, links[0], kind) if len(links) == 1 else None


def first_step(link: ChainLink) -> str:
    """The question that asks who (or what) the linked entity is."""
    return f"What is the name of {link.phrase}?"


def _naming(chunks: Sequence[Chunk], names: frozenset[str]) -> list[Chunk]:
    """The chunks whose text has a word beginning with each of ``names`` (stems)."""
    patterns = [re.compile(rf"\b{re.escape(n)}", re.IGNORECASE) for n in names]
    return [c for c in chunks if patterns and all(p.search(c.text) for p in patterns)]


def _passages(
    chunks: Sequence[Chunk], documents: Sequence[DocumentIn], names: frozenset[str], question: str
) -> list[tuple[Chunk, Found]]:
    """The :data:`PASSAGES_PER_HOP` passages that name ``names`` and bear most on ``question``."""
    wanted = question_words(question)
    found = []
    for chunk in _naming(chunks, names):
        best = best_passage(chunk, documents, wanted)
        if best is not None and names <= best.span.stems:
            found.append((best.relevance, chunk.id, chunk, best))
    found.sort(key=lambda f: (-f[0], f[1]))
    return [(chunk, best) for _, _, chunk, best in found[:PASSAGES_PER_HOP]]


def _passage_notes(passages: Sequence[tuple[Chunk, Found]], documents: Sequence[DocumentIn]) -> list[Note]:
    """Each passage as a note of its own words (no answer): where the words alone say who holds the role
    ("Ilka X serves as steward of the Y manor", :func:`says_who`), the bridge needs no reading.
    Measured with SmolLM2-135M on a first test split: asked "What is the name of the steward
    of the Y manor?" over that sentence, it answered "Lena X" in every strategy, a misspelt name
    that grounding refuses, and the chain was silent."""
    return [found_note(found, chunk.id, documents) for chunk, found in passages]


@dataclass(frozen=True)
class _Readings:
    """What a step's passages gave: the verified notes with their chunks' outcomes, what the others
    said and why it is no evidence, and what the calls cost."""

    noted: list[tuple[ChunkOutcome, Note]]
    missed: list[str]
    usage: Usage

    def shown_misses(self) -> str:
        return "; ".join(self.missed) or "no passage answered it"


async def _read(
    kit: RunKit, passages: Sequence[tuple[Chunk, Found]], documents: Sequence[DocumentIn], question: str
) -> _Readings:
    """``passages`` read with ``question``, each answer checked against its chunk. Each passage is read
    as second readings are (``nodes/passages.py``): its strongest sentence alone and with its
    neighbours, at once; the first that gives a verified note counts. Measured with SmolLM2-135M: asked
    "What is the name of the hound owned by Bram X?", it copied "Bram X owns a hound named
    Y" from the sentence alone, and with neighbours answered "Y owns a hound named Bram
    X"."""

    async def one(chunk: Chunk, found: Found) -> tuple[tuple[ChunkOutcome, Note] | str, Usage]:
        text = documents[found.span.doc_index].text
        results = await read_each(
            kit,
            [" ".join(text[a:b].split()) for a, b in found.stretches()],
            prompts=PROMPTS,
            stage=STAGE,
            question=question,
            label=CHAIN,
            work=f"following a chain in chunk {chunk.id}",
            record_unanswered=True,
        )
        usage = sum((r.usage for r in results), Usage())
        graded = [
            ground_read(
                chunk_read(r, chunk.id, CHAIN, prompts=PROMPTS),
                chunk,
                documents,
                question,
            )
            for r in results
        ]
        outcome, note = next(((o, n) for o, n in graded if n is not None and n.verified_quotes), graded[0])
        if note is None or not note.verified_quotes:
            said = (outcome.answer or "").strip()[:80]
            why = outcome.reason or (
                "it has no information" if outcome.fate == "no_information" else outcome.fate
            )
            return f"chunk {chunk.id} answered {said!r}: {why}", usage
        why = f"following a chain, its passage was asked {question!r}"
        return (outcome.model_copy(update={"reason": why}), note), usage

    results = await asyncio.gather(*(one(chunk, found) for chunk, found in passages))
    return _Readings(
        noted=[r for r, _ in results if not isinstance(r, str)],
        missed=[r for r, _ in results if isinstance(r, str)],
        usage=sum((u for _, u in results), Usage()),
    )


@dataclass(frozen=True)
class _Bridge:
    """Who the linked entity is, the note that says so, and the link spelled as that note names it."""

    who: str
    note: Note
    link: ChainLink


async def _bridge(
    kit: RunKit,
    link: ChainLink,
    notes: Sequence[Note],
    step: str,
    question: str,
    spent: list[Usage],
    *,
    in_words: bool = False,
) -> _Bridge | str:
    """Who the notes say ``link`` is, or why none says. A sentence that speaks to what the question
    asks of the entity (:func:`asked_of`) is the answer's own sentence, which no reading took, not a
    bridge. ``spent`` gathers what verification calls cost. ``in_words``: the notes are passages of the
    text, no model's answers; a bridge stands only where the words say who holds the role, and no
    verification call is made."""
    seen: list[str] = []
    for note in sorted(notes, key=lambda n: -n.confidence):
        answered = frozenset(content_stems(note.answer))
        for sentence in sentences_of(note.verified_quotes):
            if not link.names <= sentence.stems:
                continue
            said = sentence.stems if in_words else answered
            here = spelled_as_in(link, question, sentence.text)
            new = [
                name
                for name in dict.fromkeys(capitalised_runs(sentence.text))
                if not content_stems(name) & here.names
                and content_stems(name) <= said | sentence.stems
                and content_stems(name) & said
            ]
            new = holder_among(here, sentence.text, new)
            if len(new) != 1:
                seen.append(f"{sentence.text!r} gives {len(new)} new names")
                continue
            answering = sorted(sentence.stems & asked_of(question, here))
            if answering:  # "The anthem of X was composed by P", asked who composed it: no bridge
                seen.append(
                    f"{sentence.text!r} speaks to what the question asks ({', '.join(answering)}) itself"
                )
                continue
            if says_who(here, sentence.text, new[0]):
                return _Bridge(new[0], note, here)
            if kit.context.verify_answers == "on" and not in_words:
                checked = await verify_answer(kit, step, new[0], [q for q in note.verified_quotes])
                spent.append(checked.usage)
                if checked.confirmed:
                    return _Bridge(new[0], note, here)
                seen.append(f"{sentence.text!r}: {checked.why}")
                continue
            seen.append(f"{sentence.text!r} does not say {link.role!r} in that word's family")
    return "; ".join(seen) or f"no verified note names {link.entity}"


async def follow_chain(state: RunState, kit: RunKit, link: ChainLink) -> Followed | Unfollowed:
    """Follow ``link`` (module docstring): the answer at the chain's end, or what was tried."""
    chunks: list[Chunk] = state.get("input_chunks") or []
    documents = documents_of(state)
    question = state["question"]
    attempt = Unfollowed()
    tried = f"the question names {link.phrase!r}"

    step = first_step(link)
    passages = await asyncio.to_thread(_passages, chunks, documents, link.names, step)
    if not passages:
        attempt.decisions.append(f"{tried}, but no passage names {link.entity}: there is no chain to follow")
        return attempt
    spent: list[Usage] = []
    bridge = await _bridge(
        kit, link, _passage_notes(passages, documents), step, question, spent, in_words=True
    )
    if isinstance(bridge, _Bridge):
        said = ChunkOutcome(
            chunk_id=bridge.note.sources[0],
            fate="noted",
            reason=f"following a chain, its passage says who {link.phrase} is in the text's own words",
        )
        first = _Readings(noted=[(said, bridge.note)], missed=[], usage=Usage())
    else:
        first = await _read(kit, passages, documents, step)
        attempt.usage += first.usage
        if not first.noted:
            attempt.decisions.append(f"{tried}; asked {step!r}: no bridge ({first.shown_misses()})")
            return attempt
        bridge = await _bridge(kit, link, [n for _, n in first.noted], step, question, spent)
    attempt.usage = sum(spent, attempt.usage)
    shown = ", ".join(str(c.id) for c, _ in passages)
    if isinstance(bridge, str):
        attempt.decisions.append(f"{tried}; asked {step!r} of chunks {shown}: no bridge ({bridge})")
        return attempt
    who, bridge_note, link = bridge.who, bridge.note, bridge.link
    then = link.asked_through(question, who)
    found = await asyncio.to_thread(_passages, chunks, documents, frozenset(content_stems(who)), then)
    if not found:
        attempt.decisions.append(f"{tried}; {link.phrase} is {who}, but no passage names {who}")
        return attempt
    read = await _read(kit, found, documents, then)
    attempt.usage += read.usage
    second = [n for _, n in read.noted]
    rarity = await kit.rarity(chunks, then)
    reasons = []
    known = content_stems(question) | content_stems(who)
    for outcome, note in sorted(read.noted, key=lambda r: -r[1].confidence):
        given = " ".join(note.answer.split())
        if not content_stems(given) - known:
            reasons.append(f"{given!r} says nothing that the question and {who!r} do not")
            continue
        reading, read_so = judge_wording(given, second, then, rarity=rarity)
        read_so = part_only(given, reading, read_so) or read_so  # judged whole, as the final answer is
        judged, checked = await confirmed(read_so, given, verifier_for(kit, then))
        if checked is not None:
            attempt.usage += checked.usage
        if judged.kind == "none":
            reasons.append(judged.why)
            continue
        sentence = " ".join(bridge_note.verified_quotes[0].text.split())
        bridge_outcome = next(o for o, n in first.noted if n is bridge_note)
        return Followed(
            answer=given,  # the second reading's own answer, as given: never cut or completed
            notes=(bridge_note, note),
            quotes=[*bridge_note.verified_quotes, *judged.quotes],
            outcomes=(bridge_outcome, outcome),
            rationale=f"{link.phrase} is {who} ({sentence!r}); asked {then!r}: {given}",
            decisions=[
                *attempt.decisions,
                f"{tried}, which no reading answered as asked: followed the chain, asking {step!r} "
                f"(chunk {bridge_note.sources[0]}: {who}), then {then!r} (chunk {note.sources[0]})",
            ],
            usage=attempt.usage,
        )
    why = "; ".join([*reasons, *read.missed]) or "no passage answered it"
    attempt.decisions.append(f"{tried}; {link.phrase} is {who}; asked {then!r}: no answer stands ({why})")
    return attempt


__all__ = ["CHAIN", "Followed", "Unfollowed", "first_step", "follow_chain", "link_to_follow"]
