"""The result, for every strategy: the answer settled against the evidence, every chunk's fate, the cost.

**Settling the answer** (strategies that ground their notes) is a verdict, never a rewrite: the answer
is the final stage's own, as given, or NO INFORMATION (:func:`settle`), judged by ``nodes/checks``
against the verified quotes of the notes that reached it, with the verification call made here
(:func:`verifier_for`). ``supported``: the answer stands, ``support`` says how ("extractive": by its
words; "derived": by the verification call, or computed in code on the records path). ``refuted``:
withheld, NO INFORMATION, the model's answer first among ``candidates`` (its ``chunk_id`` None) with
why. ``unconfirmed``: with ``on_unconfirmed`` "show" (the default) returned as the model gave it,
``supported`` False, with the quotes it rests on, when some of its own words stand in them; otherwise
withheld like a refuted one. The records path's computed value stands when every record it rests on
has a verified quote (:func:`settle_computation`).

``evidence`` is the quotes the answer rests on, strongest first, then the other quotes of those notes
(unverified ones flagged). Baselines (``grounded=False``) answer from one call: their answer stands as
given, ``supported`` None, their evidence the shown chunks whose text contains it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from longgraph.nodes.checks import Checked, Verify, checked_claims, judge, read_question
from longgraph.nodes.kit import RunKit
from longgraph.nodes.reduction import strength
from longgraph.nodes.report import build_stats, chunk_reports, shown_evidence
from longgraph.prompts import neutralise_frames
from longgraph.state.context import UnconfirmedSetting
from longgraph.state.contract import Candidate, Chunk, ChunkReport, Evidence, SupportKind, Verdict
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, Note
from longgraph.state.outputs import NO_INFORMATION, AnswerCheck, is_no_information
from longgraph.state.records import Computation
from longgraph.state.usage import Usage

MAX_CANDIDATES = 5


def note_answer(note: Note) -> str:
    """What a note answers: its answer, else its most relevant verified quote, else its reasoning."""
    if note.answer.strip() and not is_no_information(note.answer):
        return note.answer.strip()
    quotes = note.verified_quotes
    if quotes:
        return " ".join(max(quotes, key=lambda q: q.confidence or 0.0).text.split())
    return note.reasoning.strip()


def candidates_from(outcomes: Sequence[ChunkOutcome]) -> list[Candidate]:
    """The answers of chunks that quoted nothing of their text, most confident first."""
    rejected = [o for o in outcomes if o.fate == "unsupported" and o.answer]
    rejected.sort(key=lambda o: (-(o.model_confidence or 0.0), o.chunk_id))
    return [
        Candidate(chunk_id=o.chunk_id, answer=o.answer or "", confidence=o.confidence, reason=o.reason or "")
        for o in rejected[:MAX_CANDIDATES]
    ]


def _evidence(supporting: Sequence[Evidence], notes: Sequence[Note]) -> list[Evidence]:
    """``supporting`` strongest first, then the other quotes of ``notes`` (verified first), each once."""
    ordered = sorted(supporting, key=lambda q: (-(q.confidence or 0.0), q.doc_index, q.start))
    rest = sorted((q for n in notes for q in n.quotes), key=lambda q: (not q.verified, q.doc_index, q.start))
    seen: set[tuple[object, ...]] = set()
    out = []
    for q in [*ordered, *rest]:
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


def _no_information(why: str, notes: Sequence[Note], outcomes: Sequence[ChunkOutcome]) -> RunState:
    """NO INFORMATION, with the answers that came closest and why each does not stand."""
    from_notes = [
        Candidate(chunk_id=n.sources[0], answer=note_answer(n), confidence=n.confidence, reason=why)
        for n in sorted((n for n in notes if n.verified_quotes), key=strength, reverse=True)
    ]
    return {
        "answer": NO_INFORMATION,
        "rationale": why,
        "confidence": 0.0,
        "supported": False,
        "support": "none",
        "verdict": None,
        "verdict_reason": "",
        "candidates": [c.model_dump() for c in [*from_notes, *candidates_from(outcomes)][:MAX_CANDIDATES]],
        "evidence": [],
    }


def _answered(
    answer: str,
    rationale: str,
    confidence: float | None,
    support: SupportKind,
    verdict: Verdict,
    why: str,
    evidence: list[Evidence],
) -> RunState:
    """The output keys of an answer returned as given (``supported`` only for a supported verdict)."""
    supported = verdict == "supported"
    return {
        "answer": answer,
        "rationale": rationale,
        "confidence": confidence,
        "supported": supported,
        "support": support if supported else "none",
        "verdict": verdict,
        "verdict_reason": why,
        "candidates": [],
        "evidence": evidence,
    }


def _withheld(
    given: str, why: str, notes: Sequence[Note], outcomes: Sequence[ChunkOutcome], verdict: Verdict | None
) -> RunState:
    """NO INFORMATION in place of the model's answer, which is the first candidate, with why."""
    output = _no_information(why, notes, outcomes)
    own = Candidate(chunk_id=None, answer=given, confidence=None, reason=why).model_dump()
    output["candidates"] = [own, *output["candidates"]][:MAX_CANDIDATES]
    output["verdict"], output["verdict_reason"] = verdict, why
    return output


def _nothing_found(outcomes: Sequence[ChunkOutcome]) -> str:
    """Why no verified note exists, from the chunks' fates."""
    failed, unsupported = (sum(o.fate == fate for o in outcomes) for fate in ("failed", "unsupported"))
    if unsupported:
        return f"no verified note answers the question: {unsupported} chunk(s) answered, but none quoted its text (see candidates)"
    if failed:
        return f"no chunk yielded information ({failed} of {len(outcomes)} failed, the rest reported none)"
    return "every chunk reported no information for this question"


async def settle(
    state: RunState,
    notes: Sequence[Note],
    outcomes: Sequence[ChunkOutcome],
    verify: Verify | None = None,
    *,
    on_unconfirmed: UnconfirmedSetting = "show",
) -> Settled:
    """The answer, rationale, confidence, support flag and kind, verdict, candidates and evidence of a
    grounded run: the final stage's answer as given, judged by ``nodes/checks`` (module docstring);
    ``verify``: the verification call, None where nothing can make one."""
    if not any(n.verified_quotes for n in notes):
        return Settled(_no_information(_nothing_found(outcomes), [], outcomes))
    given = " ".join((state.get("answer") or "").split())
    if not given or is_no_information(given):
        return Settled(
            _no_information("the final stage found no answer in the verified notes", notes, outcomes)
        )
    ranked = sorted((n for n in notes if n.verified_quotes), key=strength, reverse=True)
    quotes = [q for n in ranked for q in n.verified_quotes]
    judged = await judge(given, read_question(state["question"]), quotes, verify)
    spent, why = judged.usage, judged.reason
    resting = [n for n in notes if any(q in n.quotes for q in judged.quotes)]
    if judged.verdict is None or judged.verdict == "refuted":
        return Settled(_withheld(given, why, notes, outcomes, judged.verdict), [], spent)
    if judged.verdict == "unconfirmed":
        if on_unconfirmed == "withhold" or not judged.grounded:
            if not judged.grounded:
                why += "; none of its own words stands in a verified quote, so it shows nothing found in the text"
            return Settled(_withheld(given, why, notes, outcomes, "unconfirmed"), [], spent)
        shown = _answered(given, state.get("rationale", ""), None, "none", "unconfirmed", why, [])
        shown["candidates"] = _no_information(why, notes, outcomes)["candidates"]
        shown["evidence"] = _evidence(judged.quotes, resting)
        return Settled(shown, [], spent)
    # A quoted answer is as strong as its best note; one confirmed over several, as its weakest.
    quoted = judged.support == "extractive"
    confidence = (max if quoted else min)((n.confidence for n in resting), default=None)
    evidence = _evidence(judged.quotes, resting)
    output = _answered(
        given, state.get("rationale", ""), confidence, judged.support, "supported", why, evidence
    )
    return Settled(output, [f"the answer was verified: {why}"], spent)


def verifier_for(kit: RunKit, question: str) -> Verify | None:
    """The verification call (``prompts/verify.toml``) when ``verify_answers`` is on, else None. The
    answer is shown on one line, unable to open or close a frame of its own."""
    if kit.context.verify_answers != "on":
        return None

    async def verify(answer: str, quotes: Sequence[Evidence]) -> Checked:
        ordered = sorted(quotes, key=lambda q: (q.doc_index, q.start))
        shown = "\n".join(dict.fromkeys(" ".join(q.text.split()) for q in ordered))
        result = await kit.call(
            "verify",
            "verify",
            text=shown,
            question=question,
            answer=neutralise_frames(" ".join(answer.split())),
            work="verifying the answer",
        )
        value = result.value if isinstance(result.value, AnswerCheck) else None
        return checked_claims(value, result.error, result.usage)

    return verify


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
        return Settled(_no_information(computation.explanation, [], []), said)
    quotes = [
        Evidence(chunk_id=r.chunk_id, doc_index=r.doc_index, title=titles.get(r.chunk_id, ""), start=r.start,
                 end=r.end, text=r.quote, verified=True)
        for r in computation.used
    ]  # fmt: skip
    why = f"computed in code from {len(computation.used)} record(s), each with a verified quote"
    computed = _answered(
        computation.answer, computation.explanation, 1.0, "derived", "supported", why, quotes
    )
    return Settled(computed, said)


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
        verify = verifier_for(kit, state["question"])
        settled = await settle(state, notes, outcomes, verify, on_unconfirmed=kit.context.on_unconfirmed)
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
