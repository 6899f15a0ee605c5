"""The one bounded reduction loop: group notes, combine each group in parallel, repeat until they fit.

LLM×MapReduce's collapse and Segment+'s merge are the same algorithm with a different combine call,
and ToM's bottom-up aggregation and tree reduce have the same shape. A :class:`ReductionLoop` is that
algorithm once, wired in a graph as three nodes and a router::

    plan ──(route)──Send per group──▶ combine ∥ ──▶ gather ──▶ plan
    plan ──(route)──"done"──▶ the final stage        plan ──(route)──"empty"──▶ finalize

* **plan** — the notes fit the final stage's prompt: done. Else group them in order, each group
  filled until the next note would overflow the combine prompt (the papers' grouping), and combine
  another round. Segment+'s merge concatenates quotes verbatim (``keeps_quotes``), which no round can
  shrink: when the quotes alone exceed :data:`EVIDENCE_SHARE` of the window, the lowest-value quotes
  are trimmed once before grouping (duplicates first, then unverified ones, then those sharing fewest
  question words), and the segments that lost all their quotes are reported ``filtered``.
* **bounded** — at most ``max_collapse_rounds`` rounds; a round that would not shrink the notes (every
  group holds one note) or that did not shrink them ends the loop. The papers' loops have no such
  bound (the public LLM×MapReduce code loops forever on a budget too small to converge).
* **fallback** — the same for every strategy: the strongest notes that fit the final prompt are kept
  in document order (a note that does not fit whole is kept without its reasoning when that fits);
  the chunks behind the others are reported ``filtered`` with the reason, and ``stats.notes`` says
  what happened. Never ``recursion_limit``.
* **gather** — this round's notes replace the old ones, in document order; a group whose combine call
  failed keeps its strongest note (said in ``stats.notes``); a group that found nothing has its chunks
  reported ``filtered``.

The combine stage is any async function ``combine(task: GroupTask, kit, **options)`` returning
``{"combined": [Combined(...)], "usage": ...}`` (``nodes/combine.py`` holds collapse and merge).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from longgraph.nodes.checks import content_stems, read_question
from longgraph.nodes.kit import RunKit
from longgraph.nodes.loop import BoundedLoop
from longgraph.nodes.render import measure_notes, quote_line, source_label, total_tokens
from longgraph.state.contract import Evidence
from longgraph.state.graph_state import RunState
from longgraph.state.notes import Note
from longgraph.state.tasks import Combined, GroupTask

EVIDENCE_SHARE = 0.75
"""Share of the window verbatim quotes may take in a loop that keeps them (room for the rest)."""


class _Measured(Protocol):
    @property
    def tokens(self) -> int: ...


MeasuredT = TypeVar("MeasuredT", bound=_Measured)


@dataclass(frozen=True)
class SizedNode:
    """A structure's node with its token count, for :func:`group_in_order` (PECAN's and the pyramid's
    levels)."""

    node_id: int
    tokens: int


def group_in_order(
    notes: Sequence[MeasuredT], budget: int, *, max_items: int | None = None
) -> list[list[MeasuredT]]:
    """Consecutive groups, each filled until the next item would exceed ``budget`` tokens (notes, or
    anything with a token count: ToM groups tree nodes with it) or the group holds ``max_items``
    (Pyramid-Align synthesises about three nodes at a time)."""
    groups: list[list[MeasuredT]] = []
    used = 0
    for note in notes:
        room = max_items is None or (bool(groups) and len(groups[-1]) < max_items)
        if groups and room and used + note.tokens <= budget:
            groups[-1].append(note)
            used += note.tokens
        else:
            groups.append([note])
            used = note.tokens
    return groups


def strength(note: Note) -> tuple[float, int, int]:
    """How much a note is worth keeping: its confidence, then its verified and its other quotes."""
    return (note.confidence, len(note.verified_quotes), len(note.quotes))


def keep_best_fitting(
    notes: Sequence[Note], budget: int, kit: RunKit
) -> tuple[list[Note], list[Note], list[Note]]:
    """The strongest notes that fit ``budget`` together, in document order.

    Returns (kept, kept without their reasoning, set aside).
    """
    ranked = sorted(range(len(notes)), key=lambda i: (tuple(-v for v in strength(notes[i])), i))
    bare = measure_notes([n.model_copy(update={"reasoning": ""}) for n in notes], kit)
    kept: dict[int, Note] = {}
    stripped: list[int] = []
    used = 0
    for i in ranked:
        if used + notes[i].tokens <= budget:
            kept[i] = notes[i]
            used += notes[i].tokens
        elif (
            notes[i].structured and notes[i].quotes and notes[i].reasoning and used + bare[i].tokens <= budget
        ):
            kept[i] = bare[i]
            stripped.append(i)
            used += bare[i].tokens
    return (
        [kept[i] for i in sorted(kept)],
        [notes[i] for i in sorted(stripped)],
        [n for i, n in enumerate(notes) if i not in kept],
    )


def set_aside_weak(notes: Sequence[Note], share: float) -> tuple[list[Note], list[Note]]:
    """(kept, set aside): notes under ``share`` of the strongest note's confidence are set aside.

    A small model's reduce follows whatever it reads; a confabulated answer that happened to share a
    word or two with the question (so it passed grounding with low confidence) must not compete with
    a note whose sentence holds the question's words and the answer's. Notes without a confidence
    (Segment+'s free-text ablation rates them too) are kept.
    """
    if share <= 0 or not notes:
        return list(notes), []
    bar = share * max(n.confidence for n in notes)
    kept = [n for n in notes if n.confidence >= bar]
    return kept, [n for n in notes if n.confidence < bar]


def weak_note_reason(share: float, strongest: float) -> str:
    """Why a note was set aside by :func:`set_aside_weak` (the chunk report's reason)."""
    return f"its note's evidence was much weaker than the strongest note's (confidence under {share:g} × {strongest:g})"


def _quote_key(quote: Evidence) -> tuple[object, ...]:
    return (
        (quote.doc_index, quote.start, quote.end)
        if quote.verified
        else ("unverified", " ".join(quote.text.split()))
    )


def trim_quotes(
    notes: Sequence[Note], cap: int, question: str, kit: RunKit
) -> tuple[list[Note], list[Evidence], int]:
    """Bring the quotes of all notes under ``cap`` tokens: exact duplicates first, then the
    lowest-value quotes (unverified first, then fewest question words, then the later ones).

    Returns the notes (re-measured; kept quotes in their order), the quotes left out, and how many
    duplicates were dropped (dropping a duplicate loses nothing).
    """
    seen: set[tuple[object, ...]] = set()
    unique: list[list[Evidence]] = []
    duplicates = 0
    for note in notes:
        kept = []
        for quote in note.quotes:
            key = _quote_key(quote)
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
            kept.append(quote)
        unique.append(kept)
    flat = [(i, q) for i, quotes in enumerate(unique) for q in quotes]
    costs = kit.tokenizer.count_batch([quote_line(q.text) for _, q in flat]) if flat else []
    wanted = read_question(question).words
    ranked = sorted(
        range(len(flat)),
        key=lambda k: (not flat[k][1].verified, -len(wanted & content_stems(flat[k][1].text)), k),
    )
    chosen: set[int] = set()
    used = 0
    for k in ranked:
        cost = costs[k] + 3  # the number, the newline, the rounding of a line
        if used + cost <= cap:
            chosen.add(k)
            used += cost
    by_note: list[list[Evidence]] = [[] for _ in notes]
    for k in sorted(chosen):
        by_note[flat[k][0]].append(flat[k][1])
    trimmed = [n.model_copy(update={"quotes": q}) for n, q in zip(notes, by_note, strict=True)]
    dropped = [flat[k][1] for k in range(len(flat)) if k not in chosen]
    return measure_notes(trimmed, kit), dropped, duplicates


def quotes_tokens(notes: Sequence[Note], kit: RunKit) -> int:
    lines = [quote_line(q.text) for n in notes for q in n.quotes]
    return sum(kit.tokenizer.count_batch(lines)) + 3 * len(lines) if lines else 0


def _ids(ids: set[int]) -> str:
    shown = sorted(ids)
    return ", ".join(map(str, shown[:20])) + ("…" if len(shown) > 20 else "")


@dataclass(frozen=True)
class ReductionLoop(BoundedLoop):
    """Notes grouped in order and combined until they fit the final stage (see the module docstring)."""

    combine_prompts: str = ""
    combine_stage: str = ""
    final_prompts: str = ""
    final_stage: str = ""
    keeps_quotes: bool = False
    """True when combining concatenates quotes verbatim (Segment+'s merge): enables the one-off trim."""

    def is_empty(self, state: Mapping[str, Any]) -> bool:
        return not state.get("notes")

    async def plan(self, state: RunState, kit: RunKit) -> RunState:
        """Decide: go on to the final stage, combine another round (and how to group), or fall back."""
        notes: list[Note] = state.get("notes") or []
        if not notes:
            return {"loop_tasks": []}
        decisions: list[str] = []
        filtered: list[tuple[int, str]] = []
        notes, weak = set_aside_weak(notes, kit.context.min_note_strength or 0.0)
        if weak:
            strongest = max(n.confidence for n in notes)
            reason = weak_note_reason(kit.context.min_note_strength or 0.0, strongest)
            filtered += [(source, reason) for note in weak for source in note.sources]
            decisions.append(f"set aside {len(weak)} note(s) with much weaker evidence than the strongest")
        question = state["question"]
        final_budget = kit.budget(self.final_prompts, self.final_stage, question)
        if total_tokens(notes) <= final_budget:
            return {"notes": notes, "loop_tasks": [], "decisions": decisions, "filtered": filtered}
        combine_budget = kit.budget(self.combine_prompts, self.combine_stage, question)
        if self.keeps_quotes:
            cap = int(min(final_budget, combine_budget) * EVIDENCE_SHARE)
            quoted = quotes_tokens(notes, kit)
            if quoted > cap:
                notes, dropped, duplicates = trim_quotes(notes, cap, question, kit)
                emptied = {q.chunk_id for q in dropped} - {q.chunk_id for n in notes for q in n.quotes}
                decisions.append(
                    f"evidence overflow: the quotes of {len(notes)} notes take {quoted} tokens, more than the "
                    f"{cap} the window leaves for verbatim evidence ({self.name} never shrinks it): dropped "
                    f"{duplicates} duplicate quote(s) and the {len(dropped)} lowest-value quote(s) (unverified "
                    f"first, then fewest question words) from chunks {_ids({q.chunk_id for q in dropped})}; "
                    "their notes' reasoning was kept"
                )
                reason = (
                    "evidence overflow: all its quoted sentences were trimmed to fit the window "
                    f"(its reasoning still went into the {self.name})"
                )
                filtered += [(source, reason) for source in sorted(emptied)]
                if total_tokens(notes) <= final_budget:
                    return {"notes": notes, "loop_tasks": [], "decisions": decisions, "filtered": filtered}
        total = total_tokens(notes)
        groups = group_in_order(notes, combine_budget)
        previous = state.get("previous_tokens")
        stalled = self.did_not_shrink(total, previous, f"{len(notes)} notes ({total} tokens)")
        if len(groups) == len(notes):
            stalled = f"could not shrink {len(notes)} notes ({total} tokens)"
        why = self.stop_reason(state, kit, stalled=stalled)
        if why is None:
            round_no = self.next_round(state)
            tasks = [
                GroupTask(index=i, notes=g, question=question, round=round_no, total=len(groups))
                for i, g in enumerate(groups)
            ]
            return {"notes": notes, "loop_tasks": tasks, "decisions": decisions, "filtered": filtered}
        kept, stripped, aside = keep_best_fitting(notes, final_budget, kit)
        decisions.append(
            f"{why}: kept the {len(kept)} highest-confidence notes that fit the {self.final_stage} prompt"
            + (f" ({len(stripped)} of them without their reasoning)" if stripped else "")
            + f"; set aside {len(aside)}"
        )
        reason = f"{why}: its note was set aside to fit the window"
        filtered += [(source, reason) for note in aside for source in note.sources]
        return {"notes": kept, "loop_tasks": [], "decisions": decisions, "filtered": filtered}

    async def absorb(self, results: Sequence[Any], state: RunState, kit: RunKit, round_no: int) -> RunState:
        """Replace the notes by this round's notes, in document order."""
        combined: Sequence[Combined] = results
        decisions = [
            f"the {self.name} of {source_label(c.sources)} (round {round_no}) {c.error}"
            for c in combined
            if c.error
        ]
        filtered = [
            (source, c.emptied) for c in combined if c.note is None and c.emptied for source in c.sources
        ]
        notes = [c.note for c in combined if c.note is not None]
        return {
            "notes": measure_notes(notes, kit),
            "previous_tokens": total_tokens(state.get("notes") or []),
            "decisions": decisions,
            "filtered": filtered,
        }
