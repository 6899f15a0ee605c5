"""Standard decoding: the whole input when it fits the window, else its longest prefix that does.

The baseline every divide-and-conquer method is measured against (spec §7). The input is chunked with
the one chunker at the size one call can hold, so when the input fits there is a single chunk and the
model reads all of it. When it does not, whole chunks are taken in order while they fit and the first
chunk that does not is cut at the exact token where the window runs out (so the window is filled, not
left short by a paragraph boundary). Where the cut fell (document, character, tokens kept of the
total) goes into the run's notes, and every chunk past it is reported ``filtered`` with that reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from longgraph.nodes.chunking import part_spans
from longgraph.nodes.kit import RunKit
from longgraph.nodes.prepare import chunk_input
from longgraph.nodes.runtime import report_progress
from longgraph.state.baseline import BaselineState, ShownChunk
from longgraph.state.contract import Chunk
from longgraph.tokenizer import Tokenizer

PROMPTS = "baseline"
STAGE = "answer"
_JOIN_TOKENS = 1  # the blank line between two shown chunks
_MIN_PARTIAL = 32  # a cut chunk shorter than this is not worth showing


@dataclass(frozen=True)
class Cut:
    """Where a truncated input stops: the first character the model does not see."""

    chunk_id: int
    doc_index: int
    title: str
    char: int
    tokens_kept: int
    tokens_total: int

    def describe(self, window: int) -> str:
        where = f"document {self.doc_index}" + (f" ({self.title})" if self.title else "")
        share = self.tokens_kept / self.tokens_total if self.tokens_total else 1.0
        return (
            f"truncated to fit the {window}-token window: read the first {self.tokens_kept:,} of "
            f"{self.tokens_total:,} tokens ({share:.1%}); cut at {where}, character {self.char:,} "
            f"(inside chunk {self.chunk_id})"
        )


def chunk_offset_to_document(chunk: Chunk, offset: int) -> tuple[int, str, int]:
    """(document index, title, character offset in that document) of ``chunk.text[offset]``.

    Inverts how the chunker renders a chunk: each part's span, headed by its title label, parts joined
    by a blank line.
    """
    for part, (start, end) in zip(chunk.parts, part_spans(chunk), strict=True):
        if offset <= end:
            return part.doc_index, part.title, part.start + max(0, offset - start)
    last = chunk.parts[-1]
    return last.doc_index, last.title, last.end


def select_prefix(
    chunks: list[Chunk], budget: int, tokenizer: Tokenizer
) -> tuple[list[ShownChunk], list[tuple[int, str]], Cut | None]:
    """The chunks (the last one possibly cut) whose text fits ``budget`` tokens, the rest, and the cut."""
    shown: list[ShownChunk] = []
    used = 0
    cut: Cut | None = None
    total = sum(c.tokens for c in chunks) + _JOIN_TOKENS * max(0, len(chunks) - 1)
    rest: list[Chunk] = []
    for index, chunk in enumerate(chunks):
        join = _JOIN_TOKENS if shown else 0
        if used + join + chunk.tokens <= budget:
            shown.append(ShownChunk(chunk_id=chunk.id, text=chunk.text))
            used += join + chunk.tokens
            continue
        remaining = budget - used - join
        starts = tokenizer.token_starts(chunk.text) if remaining >= _MIN_PARTIAL else []
        if starts and len(starts) <= remaining:  # counted whole, it fits after all
            shown.append(ShownChunk(chunk_id=chunk.id, text=chunk.text))
            used += join + len(starts)
            continue
        if starts:
            char = starts[remaining]
            shown.append(
                ShownChunk(
                    chunk_id=chunk.id,
                    text=chunk.text[:char],
                    note=f"cut after {remaining} of its {len(starts)} tokens: the window was full",
                )
            )
            used += join + remaining
        else:
            char = 0
        doc_index, title, doc_char = chunk_offset_to_document(chunk, char)
        cut = Cut(chunk.id, doc_index, title, doc_char, used, total)
        rest = chunks[index + 1 :] if char else chunks[index:]
        break
    if cut is None:
        return shown, [], None
    reason = (
        f"truncated: beyond the cut at document {cut.doc_index}, character {cut.char:,} "
        f"(only the first {cut.tokens_kept:,} of {cut.tokens_total:,} tokens fit the window)"
    )
    return shown, [(c.id, reason) for c in rest], cut


async def truncate_input(state: BaselineState, kit: RunKit) -> BaselineState:
    """Chunk the input and keep what one call can read; say where the input was cut, if it was."""
    prepared = await chunk_input(state, kit, prompts=PROMPTS, stage=STAGE)
    budget = kit.budget(PROMPTS, STAGE, prepared["question"])
    shown, filtered, cut = select_prefix(prepared["input_chunks"], budget, kit.tokenizer)
    decisions = list(prepared["decisions"])
    if cut is not None:
        decisions.append(cut.describe(kit.window))
    report_progress(
        "truncate", total=1, message="whole input fits" if cut is None else f"cut at chunk {cut.chunk_id}"
    )
    return {**prepared, "decisions": decisions, "shown": shown, "filtered": filtered}
