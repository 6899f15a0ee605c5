"""How notes are shown to the model, and measured for the token budgets.

One renderer for every note. The labels are the prompt set's (``[notes]`` in its TOML file), so
LLM×MapReduce's paper prompts show "Extracted Information / Rationale / Answer / Confidence Score"
and Segment+'s show "Evidence / Reasoning", while the note underneath is the same. A quote that the
answer merely repeats is shown once. The order is the stage's (``notes = "strongest_first"`` in the
prompt file): collapse and reduce read the most confident notes first; Segment+'s merge keeps
document order, as the paper does.

Token counts are taken with the longest label set of all prompt sets, so a note measured once fits
any prompt it is later shown in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from longgraph.nodes.checks import words_of
from longgraph.prompts import NoteLabels
from longgraph.state.notes import Note

if TYPE_CHECKING:
    from longgraph.nodes.kit import RunKit

_SEPARATOR_TOKENS = 2  # the blank line between two notes


def source_label(sources: Sequence[int], unit: str = "chunk") -> str:
    """``chunk 3``, ``chunks 3-7`` or ``chunks 1, 4, 9``."""
    if len(sources) == 1:
        return f"{unit} {sources[0]}"
    if list(sources) == list(range(sources[0], sources[-1] + 1)):
        return f"{unit}s {sources[0]}-{sources[-1]}"
    return f"{unit}s " + ", ".join(map(str, sources))


def quote_line(text: str) -> str:
    return " ".join(text.split())


def render_note(note: Note, labels: NoteLabels) -> str:
    """The note as one block of a prompt."""
    head = f"{labels.header} {source_label(note.sources, labels.unit)}:"
    if not note.structured:
        return f"{head}\n{note.reasoning.strip()}"
    lines = [head]
    quotes = [quote_line(q.text) for q in note.quotes]
    if quotes:
        lines.append(f"{labels.evidence}:")
        lines.extend(f"{i}. {q}" for i, q in enumerate(quotes, 1))
    elif labels.show_empty_evidence:
        lines.append(f"{labels.evidence}: (none)")
    if note.reasoning.strip():
        lines.append(f"{labels.reasoning}: {note.reasoning.strip()}")
    answer = note.answer.strip()
    if answer and not any(words_of(answer) == words_of(q) for q in quotes):
        lines.append(f"{labels.answer}: {answer}")
    if labels.confidence:
        lines.append(f"{labels.confidence}: {note.confidence:g}")
    return "\n".join(lines)


def ordered(notes: Sequence[Note], order: str) -> list[Note]:
    """Notes in the order a stage reads them: ``document`` or ``strongest_first`` (stable)."""
    if order == "strongest_first":
        return sorted(notes, key=lambda n: -n.confidence)
    return list(notes)


def join_notes(notes: Sequence[Note], labels: NoteLabels, order: str = "document") -> str:
    return "\n\n".join(render_note(n, labels) for n in ordered(notes, order))


def measure_notes(notes: Sequence[Note], kit: RunKit) -> list[Note]:
    """The notes with their token counts, taken once in one batch with the longest labels."""
    if not notes:
        return []
    counts = kit.tokenizer.count_batch([render_note(n, kit.widest_labels) for n in notes])
    return [
        n.model_copy(update={"tokens": c + _SEPARATOR_TOKENS}) for n, c in zip(notes, counts, strict=True)
    ]


def total_tokens(notes: Sequence[Note]) -> int:
    return sum(n.tokens for n in notes)
