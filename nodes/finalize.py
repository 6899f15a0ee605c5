"""The result, for every strategy: the answer settled against the evidence, every chunk's fate, the cost.

**Settling the answer** (strategies that ground their notes) is a gate, never a rewrite: the answer
is the final stage's own, as given, or NO INFORMATION (:func:`settle`), with a verdict on it. It is
``supported`` when

* ``extractive``: the words confirm it with no call: read without its frame and emphasis, its new
  words, numbers included, are in the verified quotes of the notes that reached it, and the quotes
  it rests on are about what the question asks (``nodes/answer_support.py: judge_answer``);
* ``derived``: code works it out from them (a count, sum, difference, extremum or mean of their
  numbers: ``nodes/derivation.py``; a choice ranked by their numbers), or one verification call
  (``nodes/verify.py``), shown the question, the whole answer and the quotes, says the quotes state it.
  Every answer the words do not confirm goes to that call (a paraphrase, a two-hop chain, a verdict, a
  choice among the question's options, an answer of which only a part stands); where the model cannot
  verify, the embedder's reading decides what it was calibrated on (``verify_answers`` "embedding":
  the words finding the asked entity but not what is asked of it), and nothing else stands.

An answer the notes refute (a number no quote holds and no arithmetic over them gives) is
``refuted`` without a call and **withheld**: the answer is NO INFORMATION, ``supported`` False,
``support`` "none", and ``candidates`` lists the model's own answer first (its ``chunk_id`` None) with
why, then the closest notes' answers. Any other answer that does not stand is ``unconfirmed``: by
default (``on_unconfirmed`` "show") it is returned as the model gave it, ``supported`` False, with the
quotes it rests on as its evidence, so a user of a model that cannot verify still sees what it found,
flagged; "withhold" treats it as a refuted one. ``verdict`` and ``verdict_reason`` say which and why.
No note, cut of the answer or other option of a choice is ever put in its place: a check that replaces
a right model's answer with another sentence turns right answers into confident wrong ones.

``evidence`` is the quotes that support the answer (exact spans of the original documents, with the
confidence of their notes), strongest first, followed by the other quotes of those notes (unverified
ones flagged); ``confidence`` is the evidence-based confidence of the strongest supporting note (the
weakest, for an answer resting on several as a whole).

Baselines (``settle=False``) answer from one call: their answer stands as given, ``supported`` is
None, and their evidence is the shown chunks whose text contains the answer.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from longgraph.nodes.answer_support import Judged, Rarity, asks_count, reasoned_beyond_the_words
from longgraph.nodes.answer_wording import judge_wording, part_only
from longgraph.nodes.chain import Followed, Unfollowed, follow_chain, link_to_follow
from longgraph.nodes.derivation import Asked, asks_to_combine, numbers_in, unexplained_numbers
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import content_stems, sentence_spans, words_of
from longgraph.nodes.passages import rereading_enabled
from longgraph.nodes.reduction import strength
from longgraph.nodes.report import chunk_reports
from longgraph.nodes.verify import Verifier, verifier_for
from longgraph.state.context import UnconfirmedSetting
from longgraph.state.contract import Candidate, Chunk, ChunkReport, Evidence, Stats, Verdict
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, Note
from longgraph.state.outputs import NO_INFORMATION, is_no_information
from longgraph.state.records import Computation
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


MAX_QUOTES_VERIFIED = 12
"""Verified quotes, strongest notes first, shown to the verification call for an answer the words
cannot confirm: a bound on what one call costs."""


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


def chain_may_help(kit: RunKit, settled: Settled) -> bool:
    """Whether to follow a chain the question names (``nodes/chain.py``): nothing answered it as asked
    (no answer stands as ``supported``), and second readings are on (compact protocol)."""
    return settled.output.get("verdict") != "supported" and rereading_enabled(kit.context)


def read_on_the_chain(
    chain: Followed, outcomes: Sequence[ChunkOutcome], filtered: Sequence[tuple[int, str]]
) -> tuple[list[ChunkOutcome], list[tuple[int, str]]]:
    """The chunk outcomes and set-aside chunks with the chain's two readings in place: their reports
    say what they were asked, even for a chunk no stage had read (ToM's compression set it aside)."""
    read_again = {o.chunk_id: o for o in chain.outcomes}
    kept = [read_again.pop(o.chunk_id, o) for o in outcomes] + list(read_again.values())
    return kept, [f for f in filtered if f[0] not in {o.chunk_id for o in chain.outcomes}]


def with_chain(settled: Settled, chain: Followed | Unfollowed, notes: Sequence[Note]) -> Settled:
    """``settled`` (not supported) with what following the chain gave: its answer, ``derived`` from
    the two notes it rests on, or ``settled`` as it was with why the chain did not lead anywhere."""
    spent = chain.usage if settled.verify_usage is None else settled.verify_usage + chain.usage
    if isinstance(chain, Unfollowed):
        return Settled(settled.output, [*settled.decisions, *chain.decisions], spent)
    output: RunState = {
        "answer": chain.answer,
        "rationale": chain.rationale,
        "confidence": min(n.confidence for n in chain.notes),
        "supported": True,
        "support": "derived",
        "verdict": "supported",
        "verdict_reason": "following the chain the question names, each step stands on a verified note",
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
        "verdict": None,
        "verdict_reason": "",
        "candidates": [c.model_dump() for c in candidates],
        "evidence": [],
    }


def _withheld(
    given: str, why: str, notes: Sequence[Note], outcomes: Sequence[ChunkOutcome], verdict: Verdict | None
) -> RunState:
    """NO INFORMATION in place of the model's answer (refuted, or unconfirmed under "withhold"; no
    verdict when the answer claims nothing, the model's own way of saying it found nothing): the
    model's answer is the first candidate, with why, so a reader can still see what the model said."""
    output = _no_information(why, notes, outcomes)
    own = Candidate(chunk_id=None, answer=given, confidence=None, reason=why).model_dump()
    output["candidates"] = [own, *output["candidates"]][:MAX_CANDIDATES]
    output["verdict"], output["verdict_reason"] = verdict, why
    return output


def numbers_refuting(answer: str, question: str, quotes: Sequence[Evidence]) -> list[float]:
    """The numbers of the whole ``answer`` (beyond the question's) that none of the verified ``quotes``
    holds and no count, sum, difference, extremum or mean the question asks for gives
    (``nodes/derivation.py``): an answer holding one is refuted, whatever part of it stands."""
    groups = [numbers_in(q.text, spelled=True) for q in quotes if q.verified]
    asked = Asked(counts=asks_count(question), combines=asks_to_combine(question))
    return unexplained_numbers(answer, question, groups, asked)


def _plain_sentence(text: str) -> str:
    """A sentence as compared for copying: Unicode-normalised, casefolded, whitespace collapsed, without
    the quotes, brackets and end punctuation around it."""
    folded = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return folded.strip(_AROUND_A_SENTENCE)


_AROUND_A_SENTENCE = " .!?;:,\"'“”‘’«»()[]*_`"
_OPENING_QUOTES = "\"'“‘«"
_CLOSING_MARKS = "\"'”’»)]"
_SENTENCE_ENDS = ".!?。！？"


def _whole_sentences(line: str, *, last_open: bool = False) -> list[str]:
    """The whole sentences of ``line`` (:func:`_plain_sentence`): the project's sentence spans joined
    until one ends a sentence, that is ends with end punctuation (a title does not) and what follows
    begins another ("… Jr. (born …" and "… Вертов ; born …" end none). ``last_open``: the rest after the
    last end is a sentence too (an answer may leave out its full stop)."""
    sentences, begin = [], None
    for start, end in sentence_spans(line):
        begin = start if begin is None else begin
        last = line[start:end].rstrip(_CLOSING_MARKS)[-1:]
        after = line[end:].lstrip()[:1]
        if (
            last
            and last in _SENTENCE_ENDS
            and (not after or after.isupper() or after.isdigit() or after in _OPENING_QUOTES)
        ):
            sentences.append(_plain_sentence(line[begin:end]))
            begin = None
    if begin is not None and last_open:
        sentences.append(_plain_sentence(line[begin:]))
    return [s for s in sentences if s]


def copied_sentences(answer: str, quotes: Sequence[Evidence]) -> list[Evidence]:
    """The verified quotes ``answer`` copies when it is nothing but whole sentences of them; else none.

    A verification call cannot confirm a copy: it reads whether the quotes state the answer's claims,
    and every claim of a copy is stated, whether or not it answers the question (a sentence about the
    first hop of a chain, given for the second). A copy the words do not confirm is therefore
    ``unconfirmed``, with no call."""
    by_sentence: dict[str, Evidence] = {}
    for quote in quotes:
        for line in quote.text.splitlines() if quote.verified else []:  # a title heads its own line
            for sentence in _whole_sentences(line):
                by_sentence.setdefault(sentence, quote)
    said = [s for line in answer.splitlines() for s in _whole_sentences(line, last_open=True)]
    if not said or not all(s in by_sentence for s in said):
        return []
    return list({id(q): q for q in (by_sentence[s] for s in said)}.values())


def grounded(answer: str, question: str, notes: Sequence[Note]) -> bool:
    """Whether any content word of ``answer`` beyond the question's own stands in a verified quote of
    ``notes`` (word forms compared): what an unconfirmed answer must have to be shown as something the
    model found in the text. An answer in words of its own only ("The text does not say.", an apology)
    has none, and is withheld like a refuted one."""
    own = content_stems(answer) - content_stems(question)
    return bool(own & content_stems(" ".join(q.text for n in notes for q in n.verified_quotes)))


def _unconfirmed(
    state: RunState,
    why: str,
    quotes: Sequence[Evidence],
    notes: Sequence[Note],
    outcomes: Sequence[ChunkOutcome],
    on_unconfirmed: UnconfirmedSetting,
) -> RunState:
    """An answer nothing confirms or refutes. "show": the model's answer as given, ``supported`` False,
    verdict ``unconfirmed``, its evidence the quotes it rests on (no confidence: nothing vouches for it),
    the closest notes' answers as candidates, when it is :func:`grounded`; "withhold", or an answer
    not grounded: NO INFORMATION with it as the first candidate."""
    given = " ".join((state.get("answer") or "").split())
    if on_unconfirmed == "withhold":
        return _withheld(given, why, notes, outcomes, "unconfirmed")
    if not grounded(given, state["question"], notes):
        why = (
            f"{why}; none of its own words stands in a verified quote, so it shows nothing found in the text"
        )
        return _withheld(given, why, notes, outcomes, "unconfirmed")
    resting = [n for n in notes if any(q in n.quotes for q in quotes)]
    output = _no_information(why, notes, outcomes)
    output["answer"], output["rationale"], output["confidence"] = given, state.get("rationale", ""), None
    output["verdict"], output["verdict_reason"] = "unconfirmed", why
    output["evidence"] = _evidence(quotes, resting)
    return output


def _verified_quotes(notes: Sequence[Note]) -> list[Evidence]:
    """The verified quotes of the notes, strongest note first, at most :data:`MAX_QUOTES_VERIFIED`."""
    ranked = sorted((n for n in notes if n.verified_quotes), key=strength, reverse=True)
    return [q for n in ranked for q in n.verified_quotes][:MAX_QUOTES_VERIFIED]


async def settle(
    state: RunState,
    notes: Sequence[Note],
    outcomes: Sequence[ChunkOutcome],
    rarity: Rarity,
    verify: Verifier | None = None,
    *,
    reads_answers: bool = True,
    on_unconfirmed: UnconfirmedSetting = "show",
) -> Settled:
    """The answer, rationale, confidence, support flag and kind, candidates and evidence of a grounded run;
    ``rarity``: how common the question's words are in the document; ``verify``: the verification call,
    None where nothing can make one; ``reads_answers``: whether ``verify`` is a model reading the
    answer (False for the embedder's reading, which confirms only what the words find about the asked
    entity).

    **A gate, never a rewrite**: the answer is the final stage's own, as given, or NO INFORMATION. It
    stands without a call when the words confirm it: its reading (the answer without the frame and
    emphasis it is set off by) is read in the verified notes or worked out from them, about what the
    question names (:func:`~longgraph.nodes.answer_wording.judge_wording`). Any other answer — a
    paraphrase, a step of a chain, a comparison, a count, an answer that goes on to explain itself —
    gets one verification call shown the question, the whole answer and the verified quotes it rests
    on (or the strongest notes' quotes), and is ``supported`` only when it reads every claim as stated
    (refuted when one is contradicted, the model's no-answer when it finds no claim); an answer the notes
    contradict (a number no quote holds and no arithmetic over them gives) gets no call and is
    ``refuted``: withheld (NO INFORMATION, the model's answer the first candidate, with why). Any other
    answer is ``unconfirmed``: shown as given or withheld, as ``on_unconfirmed`` says."""
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
    given = " ".join((state.get("answer") or "").split())
    if not given or is_no_information(given):
        why = "the final stage found no answer in the verified notes"
        return Settled(_no_information(why, notes, outcomes))
    decisions: list[str] = []
    read = {o.chunk_id for o in outcomes}  # a chunk set aside but read after all is not unread
    unread = len(set(state.get("unread") or []) - read)
    reading, judged = judge_wording(given, notes, question, rarity=rarity, unread=unread)
    whole = part_only(given, reading, judged)
    # The embedder's reading (``verify_answers`` "embedding") was calibrated on answers the words find
    # about the asked entity but cannot confirm (``judged.unconfirmed``, a part that stands among
    # them); it is no reader of an answer the words refuse. Those a reading
    # model verifies; where none can, they are withheld, not guessed at.
    reads = verify is not None and reads_answers
    needs_a_reader = False
    unexplained = (
        [
            v
            for v in numbers_refuting(
                given, question, [*judged.quotes, *(q for n in notes for q in n.verified_quotes)]
            )
            if v not in numbers_in(reading)
        ]
        if whole is not None
        else []
    )
    if unexplained:
        # The part read stands, but the answer as given goes on with a number the notes refute.
        listed = ", ".join(f"{int(v)}" if v.is_integer() else f"{v:g}" for v in unexplained[:4])
        why = f"the verified notes contradict it (its number(s) {listed} are in no verified note and follow from none)"
        return Settled(_withheld(given, why, notes, outcomes, "refuted"))
    if whole is not None:
        judged = whole  # the answer as given is what the user gets: the whole must be confirmed
    elif judged.kind == "none" and judged.refuted:
        why = f"the verified notes contradict it ({judged.why})"
        return Settled(_withheld(given, why, notes, outcomes, "refuted"))
    elif judged.kind == "none":
        judged = Judged("derived", _verified_quotes(notes), unconfirmed=judged.why)
        needs_a_reader = True
    if judged.kind == "derived" and (
        beyond := reasoned_beyond_the_words(reading, question, _verified_quotes(notes))
    ):
        # A verdict or a choice: only a reader can tell which one the notes favour (the embedder's
        # closeness cannot), so without one it is withheld.
        judged = Judged("derived", judged.quotes, unconfirmed=judged.unconfirmed or beyond)
        needs_a_reader = True
    spent: Usage | None = None
    if judged.unconfirmed and not reads and needs_a_reader:
        why = f"the words cannot confirm it ({judged.unconfirmed}), and no model here reads it to verify it"
        return Settled(_unconfirmed(state, why, judged.quotes, notes, outcomes, on_unconfirmed))
    if judged.unconfirmed:
        copied = copied_sentences(given, [q for n in notes for q in n.verified_quotes])
        if copied:
            why = (
                f"the words cannot confirm it ({judged.unconfirmed}), and it is a sentence copied from the "
                "text, which no verification call can confirm (every claim of a copy is stated)"
            )
            return Settled(_unconfirmed(state, why, copied, notes, outcomes, on_unconfirmed))
        if verify is None:
            why = f"the words cannot confirm it ({judged.unconfirmed}), and nothing verifies it here"
            return Settled(_unconfirmed(state, why, judged.quotes, notes, outcomes, on_unconfirmed))
        checked = await verify(given, judged.quotes)
        spent = checked.usage
        if not checked.confirmed:
            why = f"the words cannot confirm it ({judged.unconfirmed}); {checked.why}"
            if checked.outcome == "refuted":
                return Settled(_withheld(given, why, notes, outcomes, "refuted"), decisions, spent)
            if checked.outcome == "empty":  # the model said, in words of its own, that it found nothing
                return Settled(_withheld(given, why, notes, outcomes, None), decisions, spent)
            shown = _unconfirmed(state, why, judged.quotes, notes, outcomes, on_unconfirmed)
            return Settled(shown, decisions, spent)
        decisions.append(f"the words could not confirm the answer ({judged.unconfirmed}); {checked.why}")
    supporting_notes = [n for n in notes if any(q in n.quotes for q in judged.quotes)]
    # A quoted answer is as strong as its best note; one worked out over several, as its weakest.
    weakest_link = judged.kind == "derived"
    confidence = (min if weakest_link else max)((n.confidence for n in supporting_notes), default=None)
    if weakest_link:
        decisions.append(
            f"the answer rests on {len(supporting_notes)} verified note(s) as a whole (worked out from "
            "them, or confirmed on them by the verification call), not quoted from one"
        )
    output: RunState = {
        "answer": given,
        "rationale": state.get("rationale", ""),
        "confidence": confidence,
        "supported": True,
        "support": judged.kind,
        "verdict": "supported",
        "verdict_reason": (
            "the verification call says its quotes state it"
            if spent is not None
            else "its words stand in the verified quotes"
            if judged.kind == "extractive"
            else "worked out from the verified quotes in code"
        ),
        "candidates": [],
        "evidence": _evidence(judged.quotes, supporting_notes),
    }
    return Settled(output, decisions, spent)


def settle_computation(computation: Computation, chunks: Sequence[Chunk]) -> Settled:
    """The records path's result: the value computed in code stands as computed, ``supported`` when
    every record it rests on has a verified quote (a record is kept only with one, so: when it rests
    on any); nothing computed is NO INFORMATION, never 0. Its evidence is those records' quotes."""
    titles = {c.id: c.title for c in chunks}
    said = [
        f"path: records ({computation.plan.operation} over {len(computation.used)} record(s): {computation.explanation})"
    ]
    said += [f"records conflict: {c}" for c in computation.conflicts]
    if not computation.answer.strip() or not computation.used:
        nothing: RunState = {
            "answer": NO_INFORMATION,
            "rationale": computation.explanation,
            "confidence": 0.0,
            "supported": False,
            "support": "none",
            "verdict": None,
            "verdict_reason": "",
            "candidates": [],
            "evidence": [],
        }
        return Settled(nothing, said)
    computed: RunState = {
        "answer": computation.answer,
        "rationale": computation.explanation,
        "confidence": 1.0,
        "supported": True,
        "support": "derived",
        "verdict": "supported",
        "verdict_reason": f"computed in code from {len(computation.used)} record(s), each with a verified quote",
        "candidates": [],
        "evidence": [
            Evidence(
                chunk_id=r.chunk_id,
                doc_index=r.doc_index,
                title=titles.get(r.chunk_id, ""),
                start=r.start,
                end=r.end,
                text=r.quote,
                verified=True,
            )
            for r in computation.used
        ],
    }
    return Settled(computed, said)


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


async def finalize(
    state: RunState, kit: RunKit, *, strategy: str, grounded: bool = True, path: str | None = None
) -> RunState:
    """The output contract of ``strategy`` (see the module docstring); ``path``: what ``path`` calls the
    strategy's own reading (``records`` when the records route answered)."""
    chunks: list[Chunk] = state.get("input_chunks") or []
    outcomes: list[ChunkOutcome] = state.get("outcomes") or []
    notes: list[Note] = state.get("notes") or []
    used = {s for n in notes for s in n.sources}
    filtered: list[tuple[int, str]] = state.get("filtered") or []
    computation = state.get("computation")
    if grounded and computation is not None:
        computed = Computation.model_validate(computation)
        settled = settle_computation(computed, chunks)
        used |= {r.chunk_id for r in computed.used} | {c for r in computed.used for c in r.also}
    elif grounded:
        rarity = await kit.rarity(chunks, state["question"])  # PECAN's search counted it already
        question = state["question"]

        verify = verifier_for(kit, question)
        reads = kit.context.verify_answers == "on"
        settled = await settle(
            state,
            notes,
            outcomes,
            rarity,
            verify,
            reads_answers=reads,
            on_unconfirmed=kit.context.on_unconfirmed,
        )
        link = link_to_follow(question) if chain_may_help(kit, settled) else None
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
            "verdict": None,
            "verdict_reason": "",
            "candidates": [],
            "evidence": shown_evidence(answer, chunks, used),
        }
        settled = Settled(ungrounded)
    reports: list[ChunkReport] = chunk_reports(chunks, outcomes, used, filtered)
    stats = build_stats(state, settled.verify_usage)
    stats.notes += settled.decisions
    waited = kit.spending.waited_s if kit.spending is not None else 0.0
    if waited >= 0.05:
        stats.notes.append(
            f"this run's calls waited {waited:.1f} s for room in its user's share (calls per window)"
        )
    own = path or strategy
    problem = state.get("plan_problem")
    if computation is None and problem:
        stats.notes.insert(0, f"path: {own} (not the records path: {problem})")
    taken = "records" if computation is not None else own
    result: RunState = {"chunks": reports, "stats": stats.model_dump(), "strategy": strategy, "path": taken}
    result.update(settled.output)
    return result
