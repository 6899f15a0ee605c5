"""Segment+ notes as the model sees them, how they are measured, and what to keep when they overflow.

Rendering follows the paper's two-part note (Evidence, Reasoning) as labelled text rather than JSON:
quotes stay readable (no escaped quote marks) and each quote is numbered on its own line, so the
"concatenated verbatim" evidence of a merged note is still one sentence per line.

Value, used only when something must be left out (the evidence of all notes cannot fit the window,
or the merge loop stalls): a quote that was found in its segment beats one that was not (a possible
hallucination), then a quote sharing more of the question's words beats one sharing fewer, then the
earlier quote wins. A note's value is its verified quotes, then its quotes, then the question words in
its reasoning. The ranking is lexical on purpose: it costs no call and is reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence

from longgraph.nodes.provenance import words_of
from longgraph.state.contract import Evidence
from longgraph.state.segment_plus import EvidenceNote
from longgraph.tokenizer import Tokenizer

_SEPARATOR_TOKENS = 2  # the blank line between two notes
_STOP_WORDS = frozenset(
    "the and for are but not you all any can had her was one our out has his how its may who what which "  # noqa: SIM905 - a word list reads better as prose
    "when where why did does this that with from they them their there then than into were been have will "
    "would could should about also these those some such only other very just over your she him each upon "
    "more most being both after before during while because here".split()
)


def source_label(sources: Sequence[int]) -> str:
    """``segment 3``, ``segments 3-7`` or ``segments 1, 4, 9``."""
    if len(sources) == 1:
        return f"segment {sources[0]}"
    if list(sources) == list(range(sources[0], sources[-1] + 1)):
        return f"segments {sources[0]}-{sources[-1]}"
    return "segments " + ", ".join(map(str, sources))


def render_note(note: EvidenceNote) -> str:
    """The note as shown to the filter, merge and answer prompts."""
    head = f"Note from {source_label(note.sources)}:"
    if not note.structured:
        return f"{head}\n{note.reasoning.strip()}"
    lines = [head]
    if note.quotes:
        lines.append("Evidence:")
        lines.extend(f"{i}. {quote_line(q)}" for i, q in enumerate(note.quotes, 1))
    else:
        lines.append("Evidence: (none)")
    lines.append(f"Reasoning: {note.reasoning.strip()}")
    if note.answer:
        confidence = f" (confidence {note.confidence:g}/5)" if note.confidence is not None else ""
        lines.append(f"Answer: {note.answer.strip()}{confidence}")
    return "\n".join(lines)


def quote_line(quote: Evidence) -> str:
    return " ".join(quote.text.split())


def join_notes(notes: Sequence[EvidenceNote]) -> str:
    return "\n\n".join(render_note(n) for n in notes)


def measured(notes: Sequence[EvidenceNote], tokenizer: Tokenizer) -> list[EvidenceNote]:
    """The notes with their rendered token counts (counted in one batch)."""
    if not notes:
        return []
    counts = tokenizer.count_batch([render_note(n) for n in notes])
    return [
        n.model_copy(update={"tokens": c + _SEPARATOR_TOKENS}) for n, c in zip(notes, counts, strict=True)
    ]


def total_tokens(notes: Sequence[EvidenceNote]) -> int:
    return sum(n.tokens for n in notes)


def question_words(question: str) -> frozenset[str]:
    """The content words of the question (short and common words left out; CJK characters kept)."""
    return frozenset(
        w for w in words_of(question) if w not in _STOP_WORDS and (len(w) >= 3 or not w.isascii())
    )


def overlap(text: str, wanted: frozenset[str]) -> int:
    return len(wanted.intersection(words_of(text)))


def evidence_tokens(notes: Sequence[EvidenceNote], tokenizer: Tokenizer) -> int:
    """Tokens of every quote line of every note (what concatenation can never shrink)."""
    lines = [quote_line(q) for n in notes for q in n.quotes]
    return sum(tokenizer.count_batch(lines)) + 3 * len(lines) if lines else 0


def _span_key(quote: Evidence) -> tuple[object, ...]:
    if quote.verified:
        return (quote.doc_index, quote.start, quote.end)
    return ("unverified", " ".join(words_of(quote.text)))


def trim_evidence(
    notes: Sequence[EvidenceNote], cap: int, question: str, tokenizer: Tokenizer
) -> tuple[list[EvidenceNote], list[Evidence], int]:
    """Bring the quotes of all notes under ``cap`` tokens: duplicates first, then the lowest-value quotes.

    Returns the notes (re-measured, kept quotes in their original order), the quotes left out, and
    how many exact duplicates were dropped (the same span quoted twice: dropping one loses nothing).
    """
    seen: set[tuple[object, ...]] = set()
    deduplicated: list[list[Evidence]] = []
    duplicates = 0
    for note in notes:
        kept = []
        for quote in note.quotes:
            key = _span_key(quote)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            kept.append(quote)
        deduplicated.append(kept)
    flat = [(i, j, q) for i, quotes in enumerate(deduplicated) for j, q in enumerate(quotes)]
    costs = tokenizer.count_batch([quote_line(q) for _, _, q in flat]) if flat else []
    wanted = question_words(question)
    ranked = sorted(
        range(len(flat)), key=lambda k: (not flat[k][2].verified, -overlap(flat[k][2].text, wanted), k)
    )
    chosen: set[int] = set()
    used = 0
    for k in ranked:
        cost = costs[k] + 3  # the number, the newline, the rounding of a line
        if used + cost <= cap:
            chosen.add(k)
            used += cost
    dropped = [flat[k][2] for k in range(len(flat)) if k not in chosen]
    keep_by_note: list[list[Evidence]] = [[] for _ in notes]
    for k in sorted(chosen):
        keep_by_note[flat[k][0]].append(flat[k][2])
    trimmed = [n.model_copy(update={"quotes": q}) for n, q in zip(notes, keep_by_note, strict=True)]
    return measured(trimmed, tokenizer), dropped, duplicates


def note_value(note: EvidenceNote, wanted: frozenset[str]) -> tuple[int, int, int]:
    return (sum(q.verified for q in note.quotes), len(note.quotes), overlap(note.reasoning, wanted))


def fit_notes(
    notes: Sequence[EvidenceNote], budget: int, question: str, tokenizer: Tokenizer
) -> tuple[list[EvidenceNote], list[EvidenceNote], list[EvidenceNote]]:
    """The most valuable notes that fit ``budget`` together, in document order.

    A note that does not fit whole is kept without its reasoning when its quotes alone fit (verbatim
    evidence is what the answer relies on most); otherwise it is set aside. Returns (kept, kept
    without reasoning, set aside).
    """
    wanted = question_words(question)
    ranked = sorted(range(len(notes)), key=lambda i: (tuple(-v for v in note_value(notes[i], wanted)), i))
    bare = measured(
        [n.model_copy(update={"reasoning": "(left out to fit the window)"}) for n in notes], tokenizer
    )
    kept: dict[int, EvidenceNote] = {}
    stripped: list[int] = []
    used = 0
    for i in ranked:
        if used + notes[i].tokens <= budget:
            kept[i] = notes[i]
            used += notes[i].tokens
        elif notes[i].structured and notes[i].quotes and used + bare[i].tokens <= budget:
            kept[i] = bare[i]
            stripped.append(i)
            used += bare[i].tokens
    return (
        [kept[i] for i in sorted(kept)],
        [notes[i] for i in sorted(stripped)],
        [n for i, n in enumerate(notes) if i not in kept],
    )


def merge_into_one(batch: Sequence[EvidenceNote], reasoning: str) -> EvidenceNote:
    """One note for a batch: the quotes concatenated verbatim, in order, and the merged reasoning."""
    confidences = [n.confidence for n in batch if n.confidence is not None]
    return EvidenceNote(
        sources=[s for n in batch for s in n.sources],
        quotes=[q for n in batch for q in n.quotes],
        reasoning=reasoning,
        structured=batch[0].structured,
        confidence=max(confidences) if confidences else None,
    )
