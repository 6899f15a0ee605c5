"""The grounding check: whether a model's note is evidence, and what it is worth.

One shared stage for every strategy (``ground`` after the read stage; :func:`support_in_notes` for
collapse outputs and the final answer). It exists because self-reported confidence cannot tell a
real answer from a confabulated one: measured with the embedded SmolLM2-135M on needle haystacks,
every chunk without the fact still "answered" — restating the question ("The secret code ... is a
mystery"), or copying unrelated text — with the same confidence as the one chunk that holds it. A
check against the source tells them apart.

**The check** (lexical, reproducible, no model call; words as in :mod:`longgraph.nodes.lexical`):

1. The note's quotes are located in the original documents (``nodes/provenance.py``); quotes that
   cannot be found stay in the note flagged ``verified=False`` and never count as support.
2. *New words* of the answer: its content words that are not in the question. An answer with none
   **restates the question** ("The code that opens the vault is the code that opens the vault"): not
   evidence. (A bare verdict — yes, no, true, false — is judged by the sentence that bears on it.)
3. The **supporting span** is the located quote, or the window of one to three consecutive sentences
   of the chunk, that holds the most of the new words (ties: the shortest, then most question words).
   ``support`` is the share of new words it holds, and 0 when it lacks any **number** of the answer: a
   wrong number is a wrong answer however many words around it match (measured: SmolLM2 answered
   "23.1 million dollars" from a chunk saying 433.1, and "million dollars" alone passed). Below
   :data:`MIN_SUPPORT` the answer's value is **not in the chunk** (a hallucinated value): not evidence.
   A **name misspelt** ("Odeil" where the span has "Odile": ``nodes/support.py`` ``misspelt_names``) is
   another name, as a changed digit is another number: not evidence either.
4. ``relevance`` is the share of the question's content words in that span, the question's names
   counted twice (:class:`~longgraph.nodes.lexical.QuestionWords`). It ranks notes and sets their
   confidence; it refuses nothing. Whether a verbatim sentence answers the question is the final
   answer's check (``nodes/finalize.py``: the words, then one verification call that reads the
   answer's claims against the quotes), not a word count here: a question asked in other words shares
   little but a name with the sentence that answers it, and a word-overlap floor silenced right
   answers (the reference reader's dev split: SQuAD 0.94 with a floor, 0.99 without). A note
   without an answer (a Segment+ note of quotes) is judged by its most relevant verified quote; one
   with no quote found in the chunk, by what its reasoning states (as an answer).

5. **A wrong number in a right sentence.** An answer rejected only because its number is not in the
   chunk, whose other new words (one at least: "million dollars") are in a sentence that holds a number
   and bears strongly on the question (half its weighted words, and two of them or one name, or every
   name the question gives, as for a second reading), keeps that sentence as its note, without the model's answer. A bare value (a
   number, a garbled timestamp) has no other words to place it: it keeps a sentence only when the
   question names something and the sentence holds every name it gives (measured with SmolLM2-135M:
   asked "When was the X bridge opened?", the holder chunk answered "2018-09-23T14:57:56.783Z" on
   both readings of "The X bridge was opened on 23 October 1918", and look-alike bridges' dates
   were the only notes). Measured for the first case with SmolLM2 on loong-synth: the chunk holding
   "total revenue of 855.7 million dollars" answered "$85.1 million" on both readings, and the run
   answered with another company's revenue. The note is a quote, judged as a note of quotes is: support the share of
   the answer's other words the sentence holds, relevance the sentence's; what reaches the final stage
   is the text's number. Where second readings are on, such a chunk still gets one.

Steps 2-3 are :data:`READING_RULES`, applied to each statement of a note in order; the first that fails
gives the reason. Confidence is :func:`~longgraph.nodes.support.confidence_of`. Chunks whose notes fail
the check are reported ``unsupported`` with the reason; nothing is dropped silently. Free-text notes
(Segment+'s "no structure" ablation) quote nothing: their new words are looked for in the whole
chunk, and their relevance is that of the note's own text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from longgraph.errors import TooManyFailures
from longgraph.nodes.answer_support import named_by_its_modifier
from longgraph.nodes.answer_wording import answer_readings
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import (
    QuestionWords,
    content_stems,
    question_words,
    sentence_spans,
)
from longgraph.nodes.loop import fresh_loop
from longgraph.nodes.passages import (
    REREAD,
    bears_strongly,
    passage_worth_rereading,
    rereading_enabled,
    settle_readings,
    strongest_passage,
)
from longgraph.nodes.provenance import documents_of, has_words, locate_quotes
from longgraph.nodes.render import measure_notes
from longgraph.nodes.support import (
    MIN_SUPPORT,
    VERDICT_WORDS,
    Span,
    Support,
    best_support,
    chunk_spans,
    confidence_of,
    dedupe_quotes,
    evidence_of,
    held_share,
    is_number,
    misspelt_names,
    new_words,
    quote_spans,
    shown_words,
)
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn, Evidence
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, ChunkRead, Note, NoteDraft
from longgraph.state.tasks import ReadTask

WINDOW = 3
"""Most consecutive sentences a supporting span may join (an answer may combine adjacent sentences)."""

ALSO_HOLDING = 2
"""How many more of the chunk's sentences a note keeps beside its best one when they hold an unquoted
answer's words as wholly ("352" in "… 260 of the 352 votes" and in "In total there are 352 votes"):
which one the model read it in is not known, and the one that bears most on the question by its
words need not be it. Kept, the later stages see each, so a reader combining the notes is shown the
sentence the answer was read in."""


def ground_read(
    read: ChunkRead, chunk: Chunk, documents: Sequence[DocumentIn], question: str
) -> tuple[ChunkOutcome, Note | None]:
    """Check one chunk's draft against the chunk: its outcome, and its note when it is evidence."""
    if read.draft is None:
        return ChunkOutcome(chunk_id=chunk.id, fate="failed", reason=read.error, raw_output=read.raw), None
    draft = read.draft
    quotes = [q.strip() for q in draft.quotes if has_words(q)]
    located = locate_quotes(quotes, chunk, documents) if quotes else []
    said = ChunkOutcome(
        chunk_id=chunk.id,
        fate="no_information",
        answer=(draft.answer or draft.reasoning) or None,
        extracted="\n".join(quotes) or None,
        model_confidence=draft.model_confidence,
    )
    wanted = question_words(question)
    if draft.no_information and not any(q.verified for q in located):
        return said, None

    against = _Chunk(chunk, documents, question, wanted)
    verdict = _judge(draft, located, against)
    if verdict.reason and draft.structured and not draft.answer and not quotes:
        # A note that quoted nothing is a no-information note (Segment+ removes notes with empty
        # evidence); its reasoning could have rescued it only by being supported by the chunk.
        reason = (
            f"its note quoted nothing, and its reasoning is not supported by the chunk ({verdict.reason})"
        )
        return said.model_copy(update={"reason": reason}), None
    outcome = said.model_copy(
        update={
            "fate": "unsupported" if verdict.reason else "noted",
            "reason": verdict.reason,
            "confidence": verdict.confidence if not verdict.reason else 0.0,
            "support": round(verdict.support.support, 3),
            "relevance": round(verdict.support.relevance, 3),
        }
    )
    if verdict.reason:
        kept = sentence_behind_wrong_number(draft, against)
        if kept is None:
            return outcome, None
        confidence = confidence_of(kept.support, kept.relevance, draft.model_confidence)
        reason = f"{verdict.reason}: the sentence it paraphrases is kept as its note, its value dropped"
        assert kept.span is not None  # a kept sentence is a span of the chunk
        note = Note(
            sources=[chunk.id],
            reasoning=draft.reasoning,
            quotes=[evidence_of(kept.span, chunk.id, documents, confidence)],
            model_confidence=draft.model_confidence,
            confidence=confidence,
            structured=draft.structured,
        )
        return outcome.model_copy(
            update={
                "fate": "noted",
                "reason": reason,
                "confidence": confidence,
                "value_dropped": True,
                "support": round(kept.support, 3),
                "relevance": round(kept.relevance, 3),
            }
        ), note
    span = verdict.support.span
    supporting = [
        evidence_of(s, chunk.id, documents, verdict.confidence)
        for s in ([span] if span is not None else []) + list(verdict.also)
    ]
    others = [
        q.model_copy(update={"confidence": verdict.confidence if q.verified else None}) for q in located
    ]
    note = Note(
        sources=[chunk.id],
        answer=draft.answer,
        reasoning=draft.reasoning,
        quotes=dedupe_quotes(supporting + others),
        model_confidence=draft.model_confidence,
        confidence=verdict.confidence,
        structured=draft.structured,
    )
    return outcome, note


@dataclass(frozen=True)
class Measured:
    """One statement of a draft (or its quotes) measured against the chunk: what the rules judge."""

    stated: str
    """The statement as the model wrote it ("" for a note of quotes alone)."""
    support: Support
    claimed: bool
    """A claim in words (an answer, or the reasoning standing for one), not quotes alone."""
    named: bool = False
    """Its span names what the question asks about (:meth:`_Chunk.names_what_is_asked`)."""
    also: tuple[Span, ...] = ()
    """Other sentences of the chunk that hold the statement as wholly (:data:`ALSO_HOLDING`)."""


def says_something_new(m: Measured) -> str:
    """Step 2: a claim whose words are all the question's restates it ("The code that opens the vault is
    the code that opens the vault"); a bare verdict is judged by the sentence that bears on it."""
    if m.claimed and not m.support.new_words and not (content_stems(m.stated) & VERDICT_WORDS):
        return "restates the question (no new word)"
    return ""


def stated_in_the_chunk(m: Measured) -> str:
    """Step 3: the span that best supports the claim holds at least :data:`MIN_SUPPORT` of its new words
    and every number of it; else its value is not in the chunk (a hallucinated value)."""
    if m.support.support >= MIN_SUPPORT:
        return ""
    held = m.support.span.stems if m.support.span is not None else frozenset()
    return f"is not in the chunk (not found: {shown_words(m.support.new_words - held, m.stated)})"


def names_spelt_as_in_the_chunk(m: Measured) -> str:
    """Step 3b: a claim's name the supporting span spells otherwise (:func:`misspelt_names`) is another
    name: not the chunk's value, however many of the claim's other words the span holds."""
    if not m.claimed or m.support.span is None:
        return ""
    misspelt = misspelt_names(m.stated, m.support.span.stems)
    if not misspelt:
        return ""
    shown = ", ".join(f"{word!r}, near the text's {near!r}" for word, near in misspelt[:3])
    return f"misspells a name of the chunk ({shown})"


READING_RULES: tuple[Callable[[Measured], str], ...] = (
    says_something_new,
    stated_in_the_chunk,
    names_spelt_as_in_the_chunk,
)
"""Whether a measured statement is evidence, in order; each returns why not (after "its answer" or
"its note"), or "". Tested as a table in ``tests/unit/test_grounding.py``."""


def why_not_evidence(m: Measured) -> str:
    """The first rule a measured statement fails, or "" when it is evidence."""
    return next((why for rule in READING_RULES if (why := rule(m))), "")


@dataclass(frozen=True)
class _Verdict:
    support: Support
    confidence: float
    reason: str | None
    also: tuple[Span, ...] = ()
    """The sentences the claim's other standing statements rest on (a reader that gathers every
    sentence bearing on the question writes several, each its own evidence)."""


@dataclass(frozen=True)
class _Chunk:
    """What a draft is measured against: its chunk, in its documents, for the question's words."""

    chunk: Chunk
    documents: Sequence[DocumentIn]
    question: str
    wanted: QuestionWords

    @cached_property
    def titles(self) -> list[str]:
        """The document titles the model was shown with the text (a claim may repeat them)."""
        return [p.title for p in self.chunk.parts if p.title]

    @cached_property
    def sentences(self) -> list[Span]:
        return chunk_spans(self.chunk, self.documents)

    def names_what_is_asked(self, support: Support) -> bool:
        """Whether the supporting span holds every name the question gives
        (:meth:`QuestionWords.names_all`) or, for a question naming its entity by a modifier alone, that
        modifier before a noun (``answer_support.named_by_its_modifier``): :attr:`Measured.named`."""
        span = support.span
        if span is None:
            return False
        if self.wanted.names_all(span.stems):
            return True
        return named_by_its_modifier(
            self.question, self.documents[span.doc_index].text[span.start : span.end]
        )

    def measure_free_text(self, text: str) -> Measured:
        """A free-text note (no quotes): its new words in a few sentences of the chunk, else anywhere in
        it; its relevance, that of its own text."""
        claim = new_words(text, self.wanted, self.titles)
        support = best_support(claim, self.sentences, self.wanted, window=WINDOW)
        if support.support < MIN_SUPPORT:
            parts = self.chunk.parts
            whole = [Span.of(p.doc_index, p.title, p.start, p.end, self.documents) for p in parts]
            support = max(support, best_support(claim, whole, self.wanted), key=lambda s: s.support)
        relevance = self.wanted.share(content_stems(text))
        return Measured(text, Support(support.span, support.support, relevance, claim), False)

    def measure_statement(self, stated: str, verified: Sequence[Span]) -> Measured:
        """One statement measured whole, or, when that is no evidence, the first reading of the answer
        inside its wording that is (``nodes/answer_wording.py``, as the final answer is read): "234,394
        — as the text states." is a value of the chunk, however the model words it. The whole's
        measure, and so its reason, when no reading stands."""
        whole = self.measure_claim(stated, verified)
        if not why_not_evidence(whole):
            return whole
        for reading in answer_readings(stated, self.question)[1:]:
            measured = self.measure_claim(reading, verified)
            if not why_not_evidence(measured):
                return measured
        return whole

    def measure_claim(self, stated: str, verified: Sequence[Span]) -> Measured:
        """One statement of a claim: the verified quote, or the window of up to :data:`WINDOW` sentences
        of the chunk, that holds most of its new words; for a bare verdict, the sentence that bears most
        on the question."""
        wanted = self.wanted
        claim = new_words(stated, wanted, self.titles)
        if not claim and not (content_stems(stated) & VERDICT_WORDS):  # restates the question
            return Measured(stated, Support(None, 0.0, 0.0, claim), True)
        support = best_support(claim, verified, wanted) if verified else Support(None, 0.0, 0.0, claim)
        if not claim:
            bearing = best_support(wanted, [*verified, *self.sentences], wanted)
            support = Support(bearing.span, 1.0 if bearing.span else 0.0, bearing.relevance, claim)
        elif support.support < 1.0:  # not (wholly) in its quotes: look through the chunk's sentences
            wider = best_support(claim, self.sentences, wanted, window=WINDOW)
            support = max(support, wider, key=lambda s: (s.support, s.relevance))
            if support is wider and wider.support >= 1.0:
                also = self.also_holding(claim, wider)
                return Measured(stated, support, True, self.names_what_is_asked(support), also)
        return Measured(stated, support, True, self.names_what_is_asked(support))

    def also_holding(self, claim: frozenset[str], best: Support) -> tuple[Span, ...]:
        """Up to :data:`ALSO_HOLDING` other sentences of the chunk holding all of ``claim``, that bear on
        the question as much as a note must, the most relevant first; a sentence in the same words as
        one kept (a repeated line) is not kept twice."""
        others = sorted(
            (
                (relevance, i, span)
                for i, span in enumerate(self.sentences)
                if held_share(claim, span.stems) >= 1.0 and (relevance := self.wanted.share(span.stems)) > 0.0
            ),
            key=lambda o: (-o[0], o[1]),
        )
        said = {best.span.stems} if best.span is not None else set()
        kept: list[Span] = []
        for _, _, span in others:
            if span.stems not in said and len(kept) < ALSO_HOLDING:
                said.add(span.stems)
                kept.append(span)
        return tuple(kept)


def _judge(draft: NoteDraft, located: Sequence[Evidence], against: _Chunk) -> _Verdict:
    """Measure a draft against its chunk (steps 2-4 of the module docstring) and apply the rules.

    A claim of several sentences (or one cut off at the output limit) is evidence when one of its
    statements is (the best supported of those), and every statement that stands is quoted: measured
    with the scripted capable reader (``evals/bench/capable_general.py``), a count over four planted
    facts whose chunk's reader wrote two of them lost the second, and the right count of 4 no longer
    followed from the notes; a note of quotes is judged by its most relevant
    verified quote; a note of quotes none of which is in the chunk, by what its reasoning states (a
    small model often leaves the quote list empty and writes the sentence it read into its reasoning).
    """
    verified = quote_spans(located, against.documents)
    wanted = against.wanted
    what = "answer" if draft.answer or not draft.structured else "note"
    if not draft.structured:
        measured = [against.measure_free_text(draft.reasoning)]
    elif draft.answer or (not verified and draft.reasoning.strip()):
        measured = [
            against.measure_statement(part, verified) for part in _statements(draft.answer or draft.reasoning)
        ]
    elif verified:
        quoted = best_support(frozenset(), verified, wanted)
        measured = [Measured("", quoted, False, against.names_what_is_asked(quoted))]
    else:
        return _Verdict(
            Support(None, 0.0, 0.0, frozenset()), 0.0, f"none of its {len(located)} quote(s) is in the chunk"
        )
    judged = [(m, why_not_evidence(m)) for m in measured]
    standing = [m for m, why in judged if not why]
    if not standing:
        m, why = max(judged, key=lambda j: (j[0].support.support, j[0].support.relevance))
        return _Verdict(m.support, 0.0, f"its {what} {why}")
    best_measured = max(standing, key=lambda m: (m.support.support, m.support.relevance))
    best = best_measured.support
    also = tuple(m.support.span for m in standing if m.support.span is not None and m.support is not best)
    also += tuple(span for span in best_measured.also if span not in also)
    return _Verdict(best, confidence_of(best.support, best.relevance, draft.model_confidence), None, also)


def sentence_behind_wrong_number(draft: NoteDraft, against: _Chunk) -> Support | None:
    """Step 5 of the module docstring: the chunk's sentence that an answer with a wrong number
    paraphrases (its support and relevance), or None when there is none."""
    if not draft.structured:
        return None
    wanted = against.wanted
    claim = new_words(draft.answer or draft.reasoning, wanted, against.titles)
    numbers = frozenset(w for w in claim if is_number(w))
    words = claim - numbers
    if not numbers or not (words or wanted.named):
        return None
    spans = against.sentences
    if numbers <= frozenset().union(*(span.stems for span in spans)):
        return None  # its numbers are in the chunk: not a wrong number (rejected for another reason)
    best: Support | None = None
    for span in spans:
        if not any(is_number(w) for w in span.stems - wanted) or held_share(words, span.stems) < MIN_SUPPORT:
            continue
        if not words and not wanted.names_all(span.stems):
            continue  # a bare value: only a sentence naming every name the question holds
        relevance = wanted.share(span.stems)
        if best is None or relevance > best.relevance:
            best = Support(span, held_share(words, span.stems), relevance, claim)
    if best is None or best.span is None or best.relevance <= 0.0:
        return None
    if not bears_strongly(best.relevance, wanted, named=wanted.names_all(best.span.stems)):
        return None
    return best


def _statements(text: str) -> list[str]:
    """The sentences of a claim (the whole claim when it is one sentence)."""
    spans = sentence_spans(text)
    parts = [text[a:b] for a, b in spans if any(ch.isalnum() for ch in text[a:b])]
    return parts if len(parts) > 1 else [text]


def enforce_failure_budget(
    failed: Sequence[int], total: int, kit: RunKit, *, stage: str, first_error: str | None
) -> None:
    """Raise :class:`~longgraph.errors.TooManyFailures` when more than ``max_failed_fraction`` of the
    ``total`` chunks read failed (ids ``failed``): an answer from the rest would mislead."""
    if total and len(failed) / total > kit.context.max_failed_fraction:
        ids = ", ".join(map(str, failed[:20]))
        raise TooManyFailures(
            f"{len(failed)} of {total} chunks failed in the {stage} stage (chunks {ids}"
            f"{'…' if len(failed) > 20 else ''}); first error: {first_error}"
        )


async def ground(state: RunState, kit: RunKit) -> RunState:
    """The grounding stage: every chunk's reading checked against the chunk, in chunk order.

    A chunk read twice (a second reading of its most relevant passage, see :func:`worth_rereading`)
    keeps the reading that gave evidence. Also enforces the failure budget: more failed chunks than
    ``max_failed_fraction`` raise :class:`~longgraph.errors.TooManyFailures` (an answer from the rest
    would mislead). Returns the chunks to read again in ``rereads`` (empty on the second pass).
    """
    by_chunk: dict[int, list[ChunkRead]] = {}
    for read in state.get("reads") or []:
        by_chunk.setdefault(read.chunk_id, []).append(read)
    first = [next((r for r in rs if r.stage != REREAD), rs[0]) for _, rs in sorted(by_chunk.items())]
    failed = [r for r in first if r.draft is None]
    enforce_failure_budget(
        [r.chunk_id for r in failed],
        len(first),
        kit,
        stage=failed[0].stage if failed else "",
        first_error=failed[0].error if failed else None,
    )
    chunks = {c.id: c for c in state.get("input_chunks") or []}
    documents = documents_of(state)
    settings = kit.context
    may_reread = rereading_enabled(settings)
    searched = state.get("passages") or {}

    def check() -> tuple[list[ChunkOutcome], list[Note], list[ReadTask], int]:
        outcomes, notes, rereads, reread_helped = [], [], [], 0
        for chunk_id, reads in sorted(by_chunk.items()):
            chunk = chunks[chunk_id]
            asked = judged = state["question"]
            wanted = question_words(judged)
            graded = [ground_read(r, chunk, documents, judged) for r in reads]
            outcome, note, helped = settle_readings(graded)
            reread_helped += helped
            if len(graded) == 1 and may_reread and reads[0].draft is not None:
                strongest = (
                    searched[chunk_id]
                    if chunk_id in searched
                    else strongest_passage(chunk, documents, wanted)
                )
                span = passage_worth_rereading(outcome, strongest, wanted)
                if span is not None:
                    for start, end in span.stretches():
                        text = documents[span.doc_index].text[start:end]
                        part = ChunkPart(doc_index=span.doc_index, title=span.title, start=start, end=end)
                        # The passage alone, without its document's title label: measured with SmolLM2 on
                        # the demo's needle, a "who" question about a passage labelled "Paul Graham essays"
                        # was answered "Paul Graham essays" at 300 and 1,500 tokens, and rightly without it.
                        passage = Chunk(id=chunk_id, parts=[part], tokens=0, text=text)
                        rereads.append(ReadTask(chunk=passage, question=asked, total=0))
            outcomes.append(outcome)
            if note is not None:
                notes.append(note)
        return (
            outcomes,
            notes,
            [ReadTask(chunk=t["chunk"], question=t["question"], total=len(rereads)) for t in rereads],
            reread_helped,
        )

    outcomes, notes, rereads, helped = await asyncio.to_thread(check)  # CPU work off the event loop
    decisions = []
    if any(r.stage == REREAD for rs in by_chunk.values() for r in rs):
        reread = sum(any(r.stage == REREAD for r in rs) for rs in by_chunk.values())
        decisions.append(
            f"{reread} chunk(s) were read a second time, their most relevant passage alone: {helped} gave evidence"
        )
    if not rereads:
        unverified = [q for n in notes for q in n.quotes if not q.verified]
        if unverified:
            where = sorted({q.chunk_id for q in unverified})
            decisions.append(
                f"{len(unverified)} quoted sentence(s) could not be found in their segment (segments "
                f"{', '.join(map(str, where))}): kept and flagged verified=false in the evidence"
            )
        unsupported = [o for o in outcomes if o.fate == "unsupported"]
        if unsupported:
            decisions.append(
                f"{len(unsupported)} chunk(s) answered without support in their text (reported 'unsupported'); "
                f"{len(notes)} note(s) passed the grounding check"
            )
    handover: RunState = {
        "outcomes": outcomes,
        "notes": measure_notes(notes, kit),
        "rereads": rereads,
        "decisions": decisions,
    }
    return fresh_loop(handover)
