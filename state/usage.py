"""What model calls cost: one accumulator, summed by the graph state and reported in ``stats``.

Every LLM call returns a :class:`Usage`; nodes return it under the state key ``usage``, whose reducer
is ``+``; the result's :class:`~longgraph.state.contract.Stats` extends it with the run's own figures.
One type, so a new counter is added in one place and reaches the result without being copied.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Usage(BaseModel):
    """Calls and tokens of one or more model calls (retries included)."""

    llm_calls: int = 0
    failed_calls: int = 0
    """Calls whose answer could not be parsed (each retry of a parse counts)."""
    cached_calls: int = 0
    """Answers served from the result cache instead of the endpoint."""
    unanswered_calls: int = 0
    """Calls that ran out of the endpoint's retries and were recorded as their chunk's failure, the run
    going on (``nodes/endpoint_health.py``): a resume retries them (``longgraph/api.py``), and a tree or
    graph built with any is not cached for the next question."""
    cached_by_stage: dict[str, int] = Field(default_factory=dict)
    """Which stages those were (a question-free stage, like ToM's parse, is reused across questions)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls_by_stage: dict[str, int] = Field(default_factory=dict)
    completion_tokens_by_stage: dict[str, int] = Field(default_factory=dict)
    """What each stage's calls wrote: ``completion_tokens_by_stage["map"] / calls_by_stage["map"]`` is
    the cost of one map call, the figure the compact protocol was designed to cut."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            failed_calls=self.failed_calls + other.failed_calls,
            cached_calls=self.cached_calls + other.cached_calls,
            unanswered_calls=self.unanswered_calls + other.unanswered_calls,
            cached_by_stage=_summed(self.cached_by_stage, other.cached_by_stage),
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            calls_by_stage=_summed(self.calls_by_stage, other.calls_by_stage),
            completion_tokens_by_stage=_summed(
                self.completion_tokens_by_stage, other.completion_tokens_by_stage
            ),
        )

    def counted(self, stage: str, *, prompt_tokens: int, completion_tokens: int) -> Usage:
        """This usage plus one call of ``stage``."""
        return self + Usage(
            llm_calls=1,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            calls_by_stage={stage: 1},
            completion_tokens_by_stage={stage: completion_tokens},
        )

    def completion_per_call(self, stage: str) -> float | None:
        """Mean completion tokens of one call of ``stage`` (None when it made none)."""
        calls = self.calls_by_stage.get(stage, 0)
        return self.completion_tokens_by_stage.get(stage, 0) / calls if calls else None


def _summed(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = dict(a)
    for key, n in b.items():
        out[key] = out.get(key, 0) + n
    return out
