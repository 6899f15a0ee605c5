"""Whether a question and its documents fit one plain call (``graphs/auto.py``).

The input fits when its text, counted with the run's tokenizer, is no longer than what the single-pass
baseline's prompt leaves for text with this question (``prompts/baseline.toml``, with room for the
answer: :meth:`~longgraph.nodes.kit.RunKit.budget`). Counting stops once the budget is passed, so a
long document costs no more than the budget to rule out.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from longgraph.nodes.chunking import PART_JOIN, title_label
from longgraph.nodes.kit import RunKit
from longgraph.state.contract import parse_input
from longgraph.state.graph_state import RunState

PLAIN_PROMPTS = "baseline"
PLAIN_STAGE = "answer"


async def fits_whole(state: RunState, kit: RunKit) -> RunState:
    """``fits`` and why, as the first of the run's notes (``path``)."""
    given = {k: state.get(k) for k in ("question", "document", "documents") if state.get(k) is not None}
    graph_input = parse_input(given)
    budget = kit.budget(PLAIN_PROMPTS, PLAIN_STAGE, graph_input.question)
    texts = [title_label(doc.title) + doc.text for doc in graph_input.as_documents()]

    def count() -> int:
        total = 0
        for text in texts:
            total += kit.tokenizer.count(text) + kit.tokenizer.count(PART_JOIN)
            if total > budget:
                break
        return total

    tokens = await asyncio.to_thread(count)
    if tokens <= budget:
        why = f"plain (the input fits one call: {tokens:,} tokens of the {budget:,} the window leaves)"
        return {"fits": True, "decisions": [f"path: {why}"]}
    why = f"the input does not fit one call (over {budget:,} tokens)"
    return {"fits": False, "decisions": [why]}


def route_fit(state: RunState) -> Literal["plain", "planned"]:
    """One plain call for an input that fits; the planned path otherwise."""
    return "plain" if state.get("fits") else "planned"
