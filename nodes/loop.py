"""The one bounded loop every iterative stage is built on: plan a round, fan it out, gather it, repeat.

``plan ──(route)──Send per task──▶ <combine node> ∥ ──▶ gather ──▶ plan``, until ``plan`` schedules
nothing (``route`` answers "done") or has nothing left to work on ("empty"). A subclass says what a
round is: LLM×MapReduce's collapse and Segment+'s merge (``nodes/reduction.py: ReductionLoop``, notes
grouped in order under a budget), ToM's bottom-up aggregation (tree nodes grouped by clustering) and
ToM's tree reduce (one level of the tree per round). What they share lives here, once:

* ``route`` sends the round's tasks (``plan`` wrote them under ``loop_tasks``) to the combine node;
* the bound: :meth:`stop_reason` says why the loop must end now — ``max_collapse_rounds`` rounds
  done, or a round that cannot (or did not) make progress — so no loop ever runs into LangGraph's
  ``recursion_limit``; each subclass documents its fallback for that case;
* ``gather`` puts the fan-in back in task order (a superstep's results arrive in any order), clears
  it, counts the round, and hands the results to :meth:`absorb`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from langgraph.types import Send

from longgraph.nodes.kit import RunKit
from longgraph.state.graph_state import RunState, cleared

TASKS = "loop_tasks"
"""The state key where ``plan`` puts the round's task payloads (each with an ``index``)."""


@dataclass(frozen=True)
class BoundedLoop(ABC):
    """The mechanics of one bounded loop; subclasses define a round."""

    name: str
    """What a round is called in progress events and notes: "collapse", "merge", "aggregation", ..."""
    combine_node: str
    """The graph node that does one task of a round (the ``Send`` target)."""
    results_key: str = "combined"
    """The fan-in state key the combine node appends its results to (each with an ``index``)."""

    @abstractmethod
    async def plan(self, state: Any, kit: RunKit) -> Mapping[str, Any]:
        """Decide the next round: write its tasks under ``loop_tasks`` (none: the loop is done)."""

    @abstractmethod
    async def absorb(
        self, results: Sequence[Any], state: Any, kit: RunKit, round_no: int
    ) -> Mapping[str, Any]:
        """The state update a finished round makes of its results (in task order)."""

    def is_empty(self, state: Mapping[str, Any]) -> bool:
        """Nothing left to work on (``route`` answers "empty")."""
        return False

    def route(self, state: Mapping[str, Any]) -> Sequence[Send | str] | Literal["done", "empty"]:
        if self.is_empty(state):
            return "empty"
        tasks = state.get(TASKS) or []
        if not tasks:
            return "done"
        return [Send(self.combine_node, task) for task in tasks]

    @staticmethod
    def did_not_shrink(total: int, previous: int | None, what: str) -> str | None:
        """The stall every loop checks: "did not shrink <what>" when a round's input (``total`` tokens) is
        no smaller than the last round's (``previous``; None before the first round), else None."""
        return f"did not shrink {what}" if previous is not None and total >= previous else None

    @staticmethod
    def next_round(state: Mapping[str, Any]) -> int:
        """The number of the round about to be planned or gathered (rounds count from 1)."""
        return int(state.get("rounds") or 0) + 1

    def stop_reason(self, state: Mapping[str, Any], kit: RunKit, *, stalled: str | None) -> str | None:
        """Why the loop must stop before another round: the bound, or ``stalled`` (no progress)."""
        done = self.next_round(state) - 1
        if stalled is not None:
            return f"{self.name} round {done + 1} {stalled}"
        limit = kit.context.max_collapse_rounds
        if done >= limit:
            return f"{self.name} stopped after {done} round(s) (limit {limit})"
        return None

    async def gather(self, state: Any, kit: RunKit) -> dict[str, Any]:
        """Put the round's results in task order and absorb them; clear the fan-in and the tasks, count
        the round. (A plain dict: the fan-in key is the subclass's ``results_key``, not a literal.)"""
        results = sorted(state.get(self.results_key) or [], key=lambda r: r.index)
        round_no = self.next_round(state)
        update = await self.absorb(results, state, kit, round_no)
        return {**update, self.results_key: cleared(), TASKS: [], "rounds": round_no}


LoopState = TypeVar("LoopState", bound=RunState)


def fresh_loop(update: LoopState) -> LoopState:
    """``update`` with the loop keys as the node before a loop leaves them: no round done, nothing
    measured, nothing planned. A graph with two loops in a row (ToM: aggregation, then reasoning) or a
    stage that runs again (a stage that runs once more) starts the next loop at round 1 this way."""
    update["rounds"] = 0
    update["previous_tokens"] = None
    update["loop_tasks"] = []
    return update
