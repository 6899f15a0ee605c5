"""Second readings: the passage of a chunk that bears most on the question, found while the chunk is
read, and read again alone when the chunk's first answer missed it.

Measured with SmolLM2-135M: a chunk holding the answer often answers from another sentence (or says it
has no information) when read whole, and rightly when its strongest passage is read alone. The search
is lexical and bounded (:func:`sentence_bounds`), so on a 1.28M-token input it costs a fraction of a
second. Second readings are for the compact protocol; the paper's is measured as written.

A second reading reads two stretches at once (:meth:`~longgraph.state.notes.Passage.stretches`): the
strongest sentence alone, and that sentence with one either side. Measured with SmolLM2-135M on the
holder passages of the general suite's one-fact, look-alike and paraphrase questions (24, both
splits): the sentence alone was answered right 22 times, with its neighbours 18 ("1038" for "24,328
apple trees", from a date in the next sentence). The neighbours stay for the text whose value
sentence leans on another ("It stands 77 metres tall"), which the sentence alone cannot answer; the
grounding check keeps the better reading.

A passage **bears strongly** on a question when it shares half its weighted words (two at least, or a
name), or when its sentence holds every name the question gives: a question asked in other words than
the text's ("When do the traders of X gather each week?" of "In X, the weekly market is held
on Monday mornings") shares little with it but the name of what it asks about. Measured on the
general suite's dev templates: 33 of 69 paraphrased questions shared less than half their words with
the sentence that answers them, and 26 of those 33 held the question's every name. The sentence that
names them is also the one read (:func:`best_passage` ranks such sentences first).
"""

from __future__ import annotations

import asyncio
import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Literal, NamedTuple

from langgraph.types import Send

from longgraph.llm import StructuredCall
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import (
    CJK,
    QuestionWords,
    question_words,
    sentence_spans,
)
from longgraph.nodes.provenance import documents_of
from longgraph.nodes.support import Span, confidence_of, evidence_of
from longgraph.nodes.word_forms import held_by_every_form
from longgraph.state.context import Context
from longgraph.state.contract import Chunk, DocumentIn
from longgraph.state.graph_state import RunState
from longgraph.state.notes import ChunkOutcome, Note, Passage
from longgraph.state.outputs import StructuredOutput

REREAD = "reread"
"""The label of a second reading (its reads, calls and progress events)."""


REREAD_RELEVANCE = 0.5
"""A passage holding at least this share (and two) of the question's content words earns a chunk a
second reading when its first answer was not evidence."""


class Found(NamedTuple):
    """The passage of a chunk that bears most on a question (:func:`best_passage`)."""

    span: Span
    """The strongest sentence with one either side (of its document)."""
    relevance: float
    """The strongest sentence's weighted share of the question's words."""
    sentence: Span
    """The strongest sentence alone."""
    named: bool = False
    """Whether that sentence holds every name the question gives (:meth:`QuestionWords.names_all`)."""

    def stretches(self) -> list[tuple[int, int]]:
        """What a second reading reads, as offsets in the passage's document: the strongest sentence
        alone, then with its neighbours, when it has any (as :meth:`Passage.stretches`)."""
        sentence, whole = (self.sentence.start, self.sentence.end), (self.span.start, self.span.end)
        return [sentence] if sentence == whole else [sentence, whole]


async def read_each(
    kit: RunKit,
    texts: Sequence[str],
    *,
    prompts: str,
    stage: str,
    question: str,
    label: str,
    work: str,
    record_unanswered: bool = False,
) -> list[StructuredCall[StructuredOutput]]:
    """The stretches of a second reading (or of a chain's passage) read at once, in order."""
    return list(
        await asyncio.gather(
            *(
                kit.call(
                    prompts,
                    stage,
                    text=text,
                    question=question,
                    label=label,
                    work=work,
                    record_unanswered=record_unanswered,
                )
                for text in texts
            )
        )
    )


def best_passage(
    chunk: Chunk,
    documents: Sequence[DocumentIn],
    wanted: QuestionWords,
    weights: Mapping[str, float] | None = None,
    saying: AbstractSet[str] = frozenset(),
) -> Found | None:
    """The chunk's sentence that shares most of the question's words (the first of equals), with a
    sentence either side; a sentence holding every name the question gives ranks above any that does
    not (the name says what the question is about; the rest of its words may be paraphrased).

    ``saying``: the stems of an answer already given. Only the sentences holding one of them are
    ranked when any of them shares a question word: the passage an answer is worked out from is the one
    that says it. Asked "For which companies does the text give the debt?" in essays about companies,
    three of five chunks holding "the … company owes …" offered a sentence on startups instead (the word
    "company" in both, "debt" in neither), and PECAN's right list of five was refused (the general
    suite's dev split, the scripted capable reader).

    ``weights`` (each question word's rarity in the document, ``lexical.rarity_weight``) break ties: of
    two sentences sharing as much, the one whose shared words weigh more. Asked for ferries'
    departure times, "The X ferry leaves at 8:15" and "times have changed" share one word each;
    measured with the scripted capable reader, PECAN's count of 3 ferries rested on the second.

    Only the sentences that could beat the best so far are analysed: each sentence's rank is bounded
    from above by the question words beginning a word in it (:func:`sentence_bounds`), and sentences
    are scored in descending bound until no bound can beat the best. Measured on the 1.28M-token
    needle: 0.23 s for the 64 chunks the chunk-level bound lets through, scoring every sentence; most
    sentences share nothing with the question and are never analysed now.
    """
    sentences: list[tuple[int, str, int, int]] = []
    bounds: list[float] = []
    for part in chunk.parts:
        text = documents[part.doc_index].text
        spans = sentence_spans(text, part.start, part.end)
        sentences += [(part.doc_index, part.title, start, end) for start, end in spans]
        bounds += sentence_bounds(text, spans, wanted)
    if not sentences or not wanted:
        return None

    def span(i: int) -> Span:
        return Span.of(*sentences[i], documents)

    def rareness(stems: frozenset[str]) -> float:
        return sum(weights.get(w, 0.0) for w in wanted.held(stems)) if weights else 0.0

    ranked: Sequence[int] = range(len(sentences))
    if saying:
        says = [i for i in ranked if bounds[i] > 0 and span(i).stems & saying]
        ranked = says or ranked
    best, best_score, best_rareness = -1, -1.0, 0.0
    for i in sorted(ranked, key=lambda i: (-bounds[i], i)):
        if bounds[i] < best_score or (bounds[i] == best_score and i > best and not weights):
            break  # every later sentence scores less, or as much but later (and no tie is broken)
        stems = span(i).stems
        score = _rank(stems, wanted)
        rare = rareness(stems)
        if (score, rare, -i) > (best_score, best_rareness, -best) or best < 0:
            best, best_score, best_rareness = i, score, rare
    same_document = [d for d, *_ in sentences]
    lo = best - 1 if best > 0 and same_document[best - 1] == same_document[best] else best
    hi = best + 1 if best + 1 < len(sentences) and same_document[best + 1] == same_document[best] else best
    passage = span(lo)
    for k in range(lo + 1, hi + 1):
        passage = passage.joined(span(k))
    named = best_score > 1.0
    return Found(passage, best_score - 1.0 if named else best_score, span(best), named)


def _rank(stems: frozenset[str] | set[str], wanted: QuestionWords) -> float:
    """How a sentence ranks for a second reading: its weighted share of the question's words, plus one
    when it holds every name the question gives (so it outranks every sentence that does not)."""
    return wanted.share(stems) + (1.0 if wanted.names_all(stems) else 0.0)


def passage_note(
    chunk: Chunk,
    documents: Sequence[DocumentIn],
    wanted: QuestionWords,
    *,
    weights: Mapping[str, float] | None = None,
    saying: AbstractSet[str] = frozenset(),
) -> Note | None:
    """The chunk's passage that bears most on the question, as a note of that quote alone (the text's
    own words, no answer), or None when none bears on it: what one answer worked out over several chunks
    (PECAN's) is judged against (``nodes/answer_support.py``). ``weights`` and ``saying``: as for
    :func:`best_passage`."""
    found = best_passage(chunk, documents, wanted, weights, saying)
    if found is None or found.relevance <= 0.0:
        return None
    return found_note(found, chunk.id, documents)


def found_note(found: Found, chunk_id: int, documents: Sequence[DocumentIn]) -> Note:
    """A found passage as a note of that quote alone (the text's own words, no answer)."""
    confidence = confidence_of(1.0, found.relevance, None)
    return Note(
        sources=[chunk_id],
        quotes=[evidence_of(found.span, chunk_id, documents, confidence)],
        confidence=confidence,
    )


def bears_strongly(relevance: float, wanted: QuestionWords, *, named: bool = False) -> bool:
    """Whether a passage of ``relevance`` bears strongly on the question: half its weighted words, and
    two question words or one name at least (names count twice in ``relevance``); or, ``named``, its
    sentence holds every name the question gives (see the module docstring)."""
    return named or (
        relevance >= REREAD_RELEVANCE and relevance * wanted.weight >= min(2, wanted.weight) - 1e-9
    )


def may_bear_strongly(chunk: Chunk, documents: Sequence[DocumentIn], wanted: QuestionWords) -> bool:
    """Whether any passage of ``chunk`` could bear strongly on the question (:func:`bears_strongly`).

    A cheap upper bound, exact in what it rules out: a question word counts as present when its stem
    (without a final "y", which a stem may have gained from "-ies") begins a word anywhere in the chunk's
    casefolded text, and no sentence holds a word the whole text lacks. The per-sentence analysis of
    :func:`best_passage` then runs only where it can matter: on a 1.28M-token run it was a fifth of the
    orchestrator's CPU, mostly spent on chunks that share too little with the question."""
    text = " ".join(documents[p.doc_index].text[p.start : p.end] for p in chunk.parts).casefold()
    present = {word for word in wanted if any(_begins_a_word(text, form) for form in wanted.forms(word))}
    return bears_strongly(wanted.share(present), wanted, named=wanted.names_all(present))


_INSIDE_A_WORD = re.compile(rf"[^\W_{CJK}]")
"""A character that continues a word (``nodes/lexical.py``'s ``WORD``: letters and digits, not CJK)."""


def sentence_bounds(text: str, spans: Sequence[tuple[int, int]], wanted: QuestionWords) -> list[float]:
    """For each sentence ``text[start:end]`` of ``spans`` (in order), the :func:`_rank` of the question's
    words that begin a word in it, themselves or one of their other forms (:func:`_begins_a_word`,
    :meth:`QuestionWords.forms`): the most any passage centred on it can score.

    Found from where each word occurs in the casefolded stretch the sentences cover (one ``str.find``
    per occurrence) rather than sentence by sentence (a slice, a casefold and a find per word for every
    sentence: 21,900 sentences on the 1.28M-token needle, 0.06 s of the grounding stage). A stretch
    whose casefolding changes its length ("ß" becomes "ss") cannot be mapped back to sentences by
    position; it is bounded sentence by sentence, which is the definition."""
    if not spans:
        return []
    low, high = spans[0][0], spans[-1][1]
    folded = text[low:high].casefold()
    if len(folded) != high - low:
        return [
            _rank(
                {w for w in wanted if any(_begins_a_word(text[s:e].casefold(), f) for f in wanted.forms(w))},
                wanted,
            )
            for s, e in spans
        ]
    starts = [s - low for s, _ in spans]
    present: dict[int, set[str]] = {}
    for word in wanted:
        for form in wanted.forms(word):  # "held" is said for "holds", "composer" by "composed"
            for prefix in _written_prefixes(form):
                at = folded.find(prefix)
                while at >= 0:
                    i = bisect.bisect_right(starts, at) - 1
                    inside = i >= 0 and at + len(prefix) <= spans[i][1] - low
                    if inside and (
                        not form.isascii() or at == starts[i] or not _INSIDE_A_WORD.match(folded, at - 1)
                    ):
                        present.setdefault(i, set()).add(word)
                    at = folded.find(prefix, at + 1)
    nothing = _rank(frozenset(), wanted)
    return [_rank(present[i], wanted) if i in present else nothing for i in range(len(spans))]


def _written_prefixes(stem: str) -> tuple[str, ...]:
    """What every written form of a word with this stem begins with: the strings every form holds
    (``word_forms.held_by_every_form``: the key's first letters, and its irregular forms whole), and
    for a number its digits before its first thousands separator ("24328" may be written "24,328":
    ``nodes/lexical.py`` reads both as one word)."""
    if stem[:1].isdigit():
        whole = stem.split(".")[0]
        return (whole[: len(whole) % 3 or 3] if len(whole) > 3 and whole.isdigit() else stem,)
    return held_by_every_form(stem)


def _begins_a_word(text: str, stem: str) -> bool:
    """Whether a word with this stem may occur in ``text``: one of its written beginnings
    (:func:`_written_prefixes`) at a word start, or anywhere for a non-ASCII stem (each CJK character
    is a word of its own). ``str.find`` rather than a look-behind regex, which took 36 times as long
    over a 1.28M-token input (0.36 s)."""
    return any(_begins_a_word_with(text, prefix, stem.isascii()) for prefix in _written_prefixes(stem))


def _begins_a_word_with(text: str, prefix: str, ascii_word: bool) -> bool:
    """Whether ``prefix`` begins a word of ``text`` (anywhere, for a word not in ASCII)."""
    at = text.find(prefix)
    if not ascii_word:
        return at >= 0
    while at >= 0:
        if at == 0 or not _INSIDE_A_WORD.match(text, at - 1):
            return True
        at = text.find(prefix, at + 1)
    return False


def worth_rereading(
    outcome: ChunkOutcome, relevance: float, wanted: QuestionWords, *, named: bool = False
) -> bool:
    """A strong passage (:func:`bears_strongly`) the first answer did not use: no evidence, evidence far
    less relevant, or only the sentence behind a wrong number (``nodes/grounding.py``, step 5)."""
    if not bears_strongly(relevance, wanted, named=named):
        return False
    if outcome.fate in ("no_information", "unsupported") or outcome.value_dropped:
        return True
    return outcome.fate == "noted" and (outcome.relevance or 0.0) + 0.25 < relevance


def rereading_enabled(context: Context) -> bool:
    """Second readings are for the compact protocol (the paper's protocol is measured as written)."""
    return context.reread and context.prompt_variant == "compact"


def strongest_passage(chunk: Chunk, documents: Sequence[DocumentIn], wanted: QuestionWords) -> Passage | None:
    """The passage of ``chunk`` a second reading would read (:func:`best_passage`), when one may bear
    strongly on the question (:func:`may_bear_strongly`); else None. It depends on the chunk and the
    question only, so :func:`find_passages` looks for it while the chunk is being read."""
    if not may_bear_strongly(chunk, documents, wanted):
        return None
    found = best_passage(chunk, documents, wanted)
    if found is None:
        return None
    span, sentence = found.span, found.sentence
    return Passage(
        doc_index=span.doc_index,
        title=span.title,
        start=span.start,
        end=span.end,
        relevance=found.relevance,
        sentence_start=sentence.start,
        sentence_end=sentence.end,
        named=found.named,
    )


def passage_worth_rereading(
    outcome: ChunkOutcome, passage: Passage | None, wanted: QuestionWords
) -> Passage | None:
    """The chunk's strongest passage (:func:`strongest_passage`) when its first reading (``outcome``)
    missed it (:func:`worth_rereading`); else None."""
    if passage is None or not worth_rereading(outcome, passage.relevance, wanted, named=passage.named):
        return None
    return passage


async def find_passages(state: RunState, kit: RunKit) -> RunState:
    """The passage search, beside the read stage: each chunk's :func:`strongest_passage` for the
    question it is judged against, so that :func:`ground`, which waits for the last read, does not
    search (on the 1.28M-token needle: 0.07 s between the last map answer and the reduce call).
    Nothing to do when second readings are off."""
    if not rereading_enabled(kit.context):
        return {}
    chunks = state.get("input_chunks") or []
    documents = documents_of(state)

    def search() -> dict[int, Passage | None]:
        wanted = question_words(state["question"])
        return {chunk.id: strongest_passage(chunk, documents, wanted) for chunk in chunks}

    return {"passages": await asyncio.to_thread(search)}  # CPU work off the event loop


def _better(
    a: tuple[ChunkOutcome, Note | None], b: tuple[ChunkOutcome, Note | None]
) -> tuple[ChunkOutcome, Note | None]:
    """Of two readings of one chunk, the one that gave evidence (the more confident if both did)."""
    if (a[1] is None) != (b[1] is None):
        return a if a[1] is not None else b
    if a[1] is not None and b[1] is not None:
        return a if a[1].confidence >= b[1].confidence else b
    return a


def settle_readings(
    graded: Sequence[tuple[ChunkOutcome, Note | None]],
) -> tuple[ChunkOutcome, Note | None, bool]:
    """A chunk's first reading and any second one (of its best passage) made one: the better, its
    reason saying what the second reading did, and whether it helped."""
    outcome, note = graded[0]
    for other in graded[1:]:
        outcome, note = _better((outcome, note), other)
    if len(graded) == 1:
        return outcome, note, False
    helped = note is not None and outcome is not graded[0][0]
    reason = (
        "answered on a second reading of its most relevant passage"
        if helped
        else (outcome.reason or "") + "; a second reading did not help"
    )
    return outcome.model_copy(update={"reason": reason}), note, helped


def rereads_to(target: str) -> Callable[[RunState], list[Send] | Literal["done"]]:
    """A router sending each chunk worth a second reading to ``target``, or going on (``done``)."""

    def route_rereads(state: RunState) -> list[Send] | Literal["done"]:
        rereads = state.get("rereads") or []
        if not rereads:
            return "done"
        return [Send(target, task) for task in rereads]

    return route_rereads
