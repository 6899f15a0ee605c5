"""How structured information (map/collapse outputs) is shown to the model and measured."""

from __future__ import annotations

from collections.abc import Sequence

from longgraph.state.mapreduce import Note
from longgraph.state.outputs import MapOutput
from longgraph.tokenizer import Tokenizer


def _source_label(sources: Sequence[int]) -> str:
    if len(sources) == 1:
        return f"chunk {sources[0]}"
    return (
        f"chunks {sources[0]}-{sources[-1]}"
        if list(sources) == list(range(sources[0], sources[-1] + 1))
        else ("chunks " + ", ".join(map(str, sources)))
    )


def render_note(sources: Sequence[int], output: MapOutput) -> str:
    """The paper's four-field layout, headed by where the information came from."""
    return (
        f"Information from {_source_label(sources)}:\n"
        f"Extracted Information: {output.extracted_information.strip()}\n"
        f"Rationale: {output.rationale.strip()}\n"
        f"Answer: {output.answer.strip()}\n"
        f"Confidence Score: {output.confidence_score:g}"
    )


def make_notes(items: Sequence[tuple[list[int], MapOutput]], tokenizer: Tokenizer) -> list[Note]:
    """Notes with their rendered token counts (counted once, in one batch)."""
    rendered = [render_note(sources, output) for sources, output in items]
    counts = tokenizer.count_batch(rendered) if rendered else []
    return [
        Note(sources=sources, output=output, tokens=n + 2)  # +2: the blank line between notes
        for (sources, output), n in zip(items, counts, strict=True)
    ]


def join_notes(notes: Sequence[Note]) -> str:
    return "\n\n".join(render_note(n.sources, n.output) for n in notes)
