"""How the CLI prints the checks' verdict on an answer: an unconfirmed answer is marked on stdout with the
quotes it rests on, and why it is unconfirmed, or what was withheld and why, goes to stderr."""

from __future__ import annotations

from longgraph.state.contract import GraphOutput
from longgraph.state.outputs import is_no_information

UNCONFIRMED_MARK = "[UNCONFIRMED]"
QUOTES_SHOWN = 2


def shown_answer(result: GraphOutput) -> str:
    """The answer as printed: an unconfirmed one marked :data:`UNCONFIRMED_MARK`, followed by the
    verified quotes it rests on (at most :data:`QUOTES_SHOWN`), so it is never read as a checked one."""
    if result.verdict != "unconfirmed" or is_no_information(result.answer):
        return result.answer
    quotes = [q for q in result.evidence if q.verified and q.text][:QUOTES_SHOWN]
    shown = [f"{UNCONFIRMED_MARK} {result.answer}"]
    shown += [f'  rests on: "{" ".join(q.text.split())[:300]}"' for q in quotes]
    return "\n".join(shown)


def verdict_lines(result: GraphOutput) -> list[str]:
    """What the checks said, for stderr: why an answer is unconfirmed, or what was withheld and why."""
    if result.verdict is None or result.verdict == "supported":
        return []
    own = next((c.answer for c in result.candidates if c.chunk_id is None), None)
    if result.verdict == "unconfirmed" and own is None:
        return [f"unconfirmed: {result.verdict_reason}"]
    return [f"{result.verdict}, withheld: the model answered {own!r}; {result.verdict_reason}"]
