"""The result, for every strategy: the answer settled against the evidence, every chunk's fate, the cost.

**Settling the answer** (strategies that ground their notes): the final stage's answer stands when it
follows from the verified notes that reached it (:func:`judge_answer`), and ``support`` says how:

* ``extractive``: its new words, numbers included, are in the notes' verified quotes
  (:func:`~longgraph.nodes.support.support_in_notes`);
* ``derived``: it is worked out from them — a count, sum, difference, extremum or mean of their
  numbers, or a verdict on the notes that bear on the question (``nodes/derivation.py``) — its other
  words in the notes;
* and in both cases it is **about what the question names**: every name of the question is in the
  quotes it rests on, or in a quote linked to them by a shared name (a chain). Asked for one entity's
  value, a note giving a look-alike's is not evidence.

An answer that stands but that words cannot confirm (its sentences name the asked entity and none of
what is asked of it) gets one verification call (``nodes/verify.py``) and stands only on a "yes"; where
the model cannot verify, the embedder's reading decides (``verify_answers`` "embedding"), and with
neither it does not stand.

An answer that does not stand (a value from nowhere, another entity's value, a restated question) is
replaced by the strongest verified note that names what the question asks, and ``stats.notes`` says so.
When no verified note names it, the answer is NO INFORMATION, ``supported`` is False, ``support`` is
"none", and ``candidates`` lists the closest answers with why each does not stand: the result says
plainly that the text does not say, instead of passing a look-alike off as the answer.

``evidence`` is the quotes that support the answer (exact spans of the original documents, with the
confidence of their notes), strongest first, followed by the other quotes of those notes (unverified
ones flagged); ``confidence`` is the evidence-based confidence of the strongest supporting note.

Baselines (``settle=False``) answer from one call: their answer stands as given, ``supported`` is
None, and their evidence is the shown chunks whose text contains the answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from longgraph.nodes.answer_support import Judged, Rarity, ranked_choice, whole_date
from longgraph.nodes.answer_wording import judge_wording
from longgraph.nodes.chain import Followed, Unfollowed, follow_chain, link_to_follow
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import words_of
from longgraph.nodes.passages import rereading_enabled
from longgraph.nodes.reduction import strength
from longgraph.nodes.report import chunk_reports
from longgraph.nodes.verify import Verifier, confirmed, verifier_for
from longgraph.state.contract import Candidate, Chunk, ChunkReport, Evidence, Stats
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, Note
from longgraph.state.outputs import NO_INFORMATION, is_no_information
from longgraph.state.plan import Aggregation
from longgraph.state.usage import Usage

MAX_CANDIDATES = 5


def build_stats(state: RunState, extra: Usage | None = None) -> Stats:
    usage = (state.get("usage") or Usage()) + (extra or Usage())
    built = "built_from_cache" in state
    return Stats(
        **usage.model_dump(),
        build=(state.get("build_usage") or Usage()) if built else None,
        build_seconds=state.get("build_seconds") if built else None,
        built_from_cache=state.get("built_from_cache") if built else None,
        structure=state.get("structure"),
        collapse_rounds=int(state.get("rounds") or 0),
        seconds=round(time.time() - state.get("started_at", time.time()), 3),
        notes=list(state.get("decisions") or []),
    )


def agrees(answer: str, other: str) -> bool:
    """Whether two short texts say the same thing (one's words contain the other's, in order)."""
    a, b = " ".join(words_of(answer)), " ".join(words_of(other))
    return bool(a and b) and (f" {a} " in f" {b} " or f" {b} " in f" {a} ")


def note_answer(note: Note) -> str:
    """What a note answers: its answer, else its most relevant verified quote, else its reasoning."""
    if note.answer.strip() and not is_no_information(note.answer):
        return note.answer.strip()
    quotes = note.verified_quotes
    if quotes:
        return " ".join(max(quotes, key=lambda q: q.confidence or 0.0).text.split())
    return note.reasoning.strip()


MAX_NOTES_VERIFIED = 2
"""Notes, strongest first, whose own answers a verification call (or the embedder) is asked to confirm
when no note's answer is confirmed by its words: a bound on what a fallback costs a capable model."""


@dataclass(frozen=True)
class Fallback:
    """What answers instead of a final answer that does not stand: a note (None: no note stands), what
    confirming it said, and what confirming cost (None: no call was made)."""

    note: Note | None = None
    answer: str = ""
    """The note's answer, or the statement of it that stands (``nodes/answer_wording.py``)."""
    said: str = ""
    usage: Usage | None = None


async def fallback_note(
    notes: Sequence[Note], question: str, rarity: Rarity, unread: int, verify: Verifier | None
) -> Fallback:
    """The strongest verified note whose own answer stands as the final answer, judged as one would be
    (so it cannot be a look-alike's value, a sentence about another entity). A note its words confirm
    comes first; else the strongest whose words cannot confirm them go to the same verification as a
    final answer (:func:`confirmed`), at most :data:`MAX_NOTES_VERIFIED`. Measured (dev, 8K): mapreduce's
    reduce answered "How is a coin made by the ivory mint stamped?" in words of its own, and its one
    note, "Coins struck at the ivory mint carry the mark R2-ZY", was never shown to the embedder that
    confirms the same sentence when it is the final answer (ToM's run)."""
    judged = [
        (n, *judge_wording(note_answer(n), notes, question, rarity=rarity, unread=unread))
        for n in sorted((n for n in notes if n.verified_quotes), key=strength, reverse=True)
    ]
    standing = [(n, text, j) for n, text, j in judged if j.kind != "none"]
    by_words = [(n, text) for n, text, j in standing if not j.unconfirmed]
    if by_words:
        return Fallback(*by_words[0])
    spent: Usage | None = None
    for note, text, j in standing[:MAX_NOTES_VERIFIED]:
        kept, checked = await confirmed(j, text, verify)
        if checked is None:
            continue  # nothing can confirm it (verify_answers off)
        spent = checked.usage if spent is None else spent + checked.usage
        if kept.kind != "none":
            said = f"the words could not confirm its answer ({j.unconfirmed}); {checked.why}"
            return Fallback(note, text, said, spent)
    return Fallback(usage=spent)


def candidates_from(outcomes: Sequence[ChunkOutcome]) -> list[Candidate]:
    """The best answers that failed the grounding check (most support, then most relevance)."""
    rejected = [o for o in outcomes if o.fate == "unsupported" and o.answer]
    rejected.sort(key=lambda o: (-(o.support or 0.0), -(o.relevance or 0.0), o.chunk_id))
    return [
        Candidate(chunk_id=o.chunk_id, answer=o.answer or "", confidence=o.confidence, reason=o.reason or "")
        for o in rejected[:MAX_CANDIDATES]
    ]


def _evidence(supporting: Sequence[Evidence], notes: Sequence[Note]) -> list[Evidence]:
    chosen = {(q.doc_index, q.start, q.end, q.text) for q in supporting}
    rest = [q for n in notes for q in n.quotes if (q.doc_index, q.start, q.end, q.text) not in chosen]
    ordered = sorted(supporting, key=lambda q: (-(q.confidence or 0.0), q.doc_index, q.start))
    seen: set[tuple[object, ...]] = set()
    out = []
    for q in [*ordered, *sorted(rest, key=lambda q: (not q.verified, q.doc_index, q.start))]:
        key = (q.doc_index, q.start, q.end, q.verified, q.text if not q.verified else "")
        if key not in seen:
            seen.add(key)
            out.append(q)
    return out


@dataclass(frozen=True)
class Settled:
    """What settling a run's answer gives: the output keys, the notes for ``stats.notes``, and what a
    verification call cost (None: none was made)."""

    output: RunState
    decisions: list[str] = field(default_factory=list)
    verify_usage: Usage | None = None


def chain_may_help(state: RunState, kit: RunKit, settled: Settled) -> bool:
    """Whether to follow a chain the question names (``nodes/chain.py``): nothing answered it as asked,
    the question was not planned per document, and second readings are on (compact protocol)."""
    return (
        is_no_information(str(settled.output.get("answer", "")))
        and not state.get("chunk_questions")
        and rereading_enabled(kit.context)
    )


def read_on_the_chain(
    chain: Followed, outcomes: Sequence[ChunkOutcome], filtered: Sequence[tuple[int, str]]
) -> tuple[list[ChunkOutcome], list[tuple[int, str]]]:
    """The chunk outcomes and set-aside chunks with the chain's two readings in place: their reports
    say what they were asked, even for a chunk no stage had read (ToM's compression set it aside)."""
    read_again = {o.chunk_id: o for o in chain.outcomes}
    kept = [read_again.pop(o.chunk_id, o) for o in outcomes] + list(read_again.values())
    return kept, [f for f in filtered if f[0] not in {o.chunk_id for o in chain.outcomes}]


def with_chain(settled: Settled, chain: Followed | Unfollowed, notes: Sequence[Note]) -> Settled:
    """``settled`` (NO INFORMATION) with what following the chain gave: its answer, ``derived`` from
    the two notes it rests on, or the same NO INFORMATION with why the chain did not lead anywhere."""
    spent = chain.usage if settled.verify_usage is None else settled.verify_usage + chain.usage
    if isinstance(chain, Unfollowed):
        return Settled(settled.output, [*settled.decisions, *chain.decisions], spent)
    output: RunState = {
        "answer": chain.answer,
        "rationale": chain.rationale,
        "confidence": min(n.confidence for n in chain.notes),
        "supported": True,
        "support": "derived",
        "candidates": [],
        "evidence": _evidence(chain.quotes, [*chain.notes, *notes]),
    }
    return Settled(output, [*settled.decisions, *chain.decisions], spent)


def _no_information(why: str, notes: Sequence[Note], outcomes: Sequence[ChunkOutcome]) -> RunState:
    """NO INFORMATION, with the answers that came closest and why each does not stand."""
    from_notes = [
        Candidate(chunk_id=n.sources[0], answer=note_answer(n), confidence=n.confidence, reason=why)
        for n in sorted((n for n in notes if n.verified_quotes), key=strength, reverse=True)
    ]
    candidates = [*from_notes, *candidates_from(outcomes)][:MAX_CANDIDATES]
    return {
        "answer": NO_INFORMATION,
        "rationale": why,
        "confidence": 0.0,
        "supported": False,
        "support": "none",
        "candidates": [c.model_dump() for c in candidates],
        "evidence": [],
    }


async def _ranked_instead(
    notes: Sequence[Note], question: str, rarity: Rarity, unread: int, verify: Verifier | None
) -> tuple[str, Judged, Usage | None] | None:
    """The option of a choice the verified notes rank first (``answer_support.ranked_choice``), standing
    as any answer does (confirmed where the words cannot confirm it), with what confirming it spent; or
    None."""
    choice = ranked_choice(notes, question, rarity=rarity, unread=unread)
    if choice is None:
        return None
    answer, judged = choice
    kept, checked = await confirmed(judged, answer, verify)
    return (answer, kept, checked.usage if checked else None) if kept.kind != "none" else None


async def settle(
    state: RunState,
    notes: Sequence[Note],
    outcomes: Sequence[ChunkOutcome],
    rarity: Rarity,
    verify: Verifier | None = None,
) -> Settled:
    """The answer, rationale, confidence, support flag and kind, candidates and evidence of a grounded run;
    ``rarity``: how common the question's words are in the document; ``verify``: the verification call,
    None where the model cannot make one."""
    question = state["question"]
    if not any(n.verified_quotes for n in notes):
        failed = sum(o.fate == "failed" for o in outcomes)
        unsupported = sum(o.fate == "unsupported" for o in outcomes)
        if unsupported:
            why = (
                f"no verified note answers the question: {unsupported} chunk(s) answered, but none of those "
                "answers is supported by its text (see candidates)"
            )
        elif failed:
            why = f"no chunk yielded information ({failed} of {len(outcomes)} failed, the rest reported none)"
        else:
            why = "every chunk reported no information for this question"
        return Settled(_no_information(why, [], outcomes))
    answer = (state.get("answer") or "").strip()
    decisions: list[str] = []
    read = {o.chunk_id for o in outcomes}  # a chunk set aside but read after all is not unread
    unread = len(set(state.get("unread") or []) - read)
    given = answer
    answer, first = judge_wording(given, notes, question, rarity=rarity, unread=unread)
    judged, checked = await confirmed(first, answer, verify)
    if answer != given and judged.kind != "none":
        decisions.append(
            f"the final answer ({given[:80]!r}) runs on past what stands: cut to {answer[:80]!r}"
        )
    elif answer != given:
        answer = given  # its statement did not stand either: what follows speaks of the answer as given
    if checked is not None and checked.confirmed:
        decisions.append(f"the words could not confirm the answer ({judged.unconfirmed}); {checked.why}")
    spent = checked.usage if checked is not None else None
    rationale = state.get("rationale", "")
    choice = await _ranked_instead(notes, question, rarity, unread, verify) if judged.kind == "none" else None
    if choice is not None:
        shown = f"{answer[:80]!r}" if answer else "no readable answer"
        decisions.append(
            f"the final answer ({shown}) does not stand ({judged.why}): answered with the option the verified "
            "notes rank first, each option's value given by them"
        )
        answer, judged, used = choice
        if used is not None:
            spent = used if spent is None else spent + used
        rationale = "the option the verified notes' values rank first"
    elif judged.kind == "none":
        fallback = await fallback_note(notes, question, rarity, unread, verify)
        if fallback.usage is not None:
            spent = fallback.usage if spent is None else spent + fallback.usage
        if fallback.note is None:
            why = (
                f"the final answer does not stand ({judged.why}), and no verified note's own answer is about "
                "what the question asks: the text does not say"
            )
            return Settled(_no_information(why, notes, outcomes), decisions, spent)
        strongest = fallback.note
        shown = f"{answer[:80]!r}" if answer else "no readable answer"
        decisions.append(
            f"the final answer ({shown}) does not stand ({judged.why}): answered with the strongest verified "
            f"note about the question instead (chunks {', '.join(map(str, strongest.sources))})"
        )
        if fallback.said:
            decisions.append(fallback.said)
        answer = fallback.answer
        judged = Judged("extractive", list(strongest.verified_quotes))
        rationale = strongest.reasoning or "the strongest verified note's answer"
    whole = whole_date(answer, question, judged.quotes) if judged.kind == "extractive" else None
    if whole is not None:
        decisions.append(
            f"the answer ({answer[:80]!r}) gave part of the date its sentence states: given whole"
        )
        answer = whole
    supporting_notes = [n for n in notes if any(q in n.quotes for q in judged.quotes)]
    # A quoted answer is as strong as its best note; one worked out over several, as its weakest.
    weakest_link = judged.kind == "derived"
    confidence = (min if weakest_link else max)((n.confidence for n in supporting_notes), default=None)
    if weakest_link:
        decisions.append(
            f"the answer is worked out from {len(supporting_notes)} verified note(s) (a count, sum, comparison "
            "or verdict over them), not quoted from one"
        )
    output: RunState = {
        "answer": answer,
        "rationale": rationale,
        "confidence": confidence,
        "supported": True,
        "support": judged.kind,
        "candidates": [],
        "evidence": _evidence(judged.quotes, supporting_notes),
    }
    return Settled(output, decisions, spent)


def settle_aggregation(
    aggregation: Aggregation, notes: Sequence[Note], outcomes: Sequence[ChunkOutcome], chunks: Sequence[Chunk]
) -> RunState:
    """A decomposed question's result: the answer computed in code from the documents' verified notes
    (``nodes/aggregate.py``) stands as computed; its evidence is the notes of the documents it names,
    then of the others it weighed; its confidence is the weakest of the notes it names."""
    if not aggregation.answer.strip():
        return {
            "answer": NO_INFORMATION,
            "rationale": f"no per-document answer could be combined: {aggregation.explanation}",
            "confidence": 0.0,
            "supported": False,
            "support": "none",
            "candidates": [c.model_dump() for c in candidates_from(outcomes)],
            "evidence": [],
        }
    doc_of = {c.id: c.doc_index for c in chunks}
    named = set(aggregation.named)
    naming = [n for n in notes if doc_of[n.sources[0]] in named]
    quotes = [q for n in naming for q in n.verified_quotes]
    return {
        "answer": aggregation.answer,
        "rationale": aggregation.explanation,
        "confidence": min((n.confidence for n in naming), default=None),
        "supported": bool(quotes),
        "support": "derived" if quotes else "none",
        "candidates": [],
        "evidence": _evidence(quotes, notes),
    }


def shown_evidence(answer: str, chunks: Sequence[Chunk], used: set[int]) -> list[Evidence]:
    """Baselines: the shown chunks whose text contains the answer (one call gives no finer provenance)."""
    if is_no_information(answer):
        return []
    return [
        Evidence(chunk_id=c.id, doc_index=p.doc_index, title=p.title, start=p.start, end=p.end)
        for c in chunks
        if c.id in used and agrees(answer, c.text)
        for p in c.parts
    ]


async def finalize(state: RunState, kit: RunKit, *, strategy: str, grounded: bool = True) -> RunState:
    """The output contract of ``strategy`` (see the module docstring)."""
    chunks: list[Chunk] = state.get("input_chunks") or []
    outcomes: list[ChunkOutcome] = state.get("outcomes") or []
    notes: list[Note] = state.get("notes") or []
    used = {s for n in notes for s in n.sources}
    filtered: list[tuple[int, str]] = state.get("filtered") or []
    aggregation = state.get("aggregation")
    if grounded and aggregation:
        settled = Settled(
            settle_aggregation(Aggregation.model_validate(aggregation), notes, outcomes, chunks)
        )
    elif grounded:
        rarity = await kit.rarity(chunks, state["question"])  # PECAN's search counted it already
        question = state["question"]

        settled = await settle(state, notes, outcomes, rarity, verifier_for(kit, question))
        link = link_to_follow(question) if chain_may_help(state, kit, settled) else None
        if link is not None:
            chain = await follow_chain(state, kit, link)
            settled = with_chain(settled, chain, notes)
            if isinstance(chain, Followed):
                outcomes, filtered = read_on_the_chain(chain, outcomes, filtered)
                used |= {s for n in chain.notes for s in n.sources}
    else:
        answer = (state.get("answer") or "").strip() or NO_INFORMATION
        answer = NO_INFORMATION if is_no_information(answer) else answer
        ungrounded: RunState = {
            "answer": answer,
            "rationale": state.get("rationale", ""),
            "confidence": None,
            "supported": None,
            "candidates": [],
            "evidence": shown_evidence(answer, chunks, used),
        }
        settled = Settled(ungrounded)
    reports: list[ChunkReport] = chunk_reports(chunks, outcomes, used, filtered)
    stats = build_stats(state, settled.verify_usage)
    stats.notes += settled.decisions
    result: RunState = {"chunks": reports, "stats": stats.model_dump(), "strategy": strategy}
    result.update(settled.output)
    return result
