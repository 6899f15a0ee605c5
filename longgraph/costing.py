"""Dry runs: what a run will send — chunks, calls, prompt tokens — before any model call is made.

Why: a 1.28M-token document read by a 135M model on a CPU, or by a paid endpoint, is an hour or a bill;
a user should know which before paying, and set ``max_calls`` / ``max_prompt_tokens``
(``longgraph/spending.py``) from it.

How, without a second copy of any strategy:

* **The chunks are the graph's own.** The strategy's compiled graph runs its first node (the chunk
  node, with its own prompt set, stage and size setting) on an in-memory checkpointer and stops
  there. The context is resolved as a run resolves it (the endpoint's window, from ``GET /models``: no
  completion is requested).
* **The first reading stage is exact.** Each of its calls is rendered with the one renderer
  ``call_structured`` uses (:func:`longgraph.llm.render_call`) and counted with the run's tokenizer
  plus the per-message allowance the spending limit charges: the same figure a budget counts. What
  that stage reads follows the strategy's declared :class:`CostShape`: every chunk (map, Segment+'s
  gather), ToM's ``tom_top_k`` parsed chunks (the count is exact; their tokens are a bound, the largest
  ``k`` chunks, since which ones are chosen needs the embeddings), PECAN's first-level batches
  (grouped by the same function the construction uses), or one call (the baselines: a bound).
* **The rest is a bound.** What follows depends on the model's answers, so it is bounded from the
  loops' own limits (``max_collapse_rounds``, ``pecan_max_nodes``, the schemas' item caps), with every
  call at most ``window − max_output_tokens`` prompt tokens and each call possibly repeated
  ``parse_retries`` times. The bound is loose by design: it is what cannot be exceeded, the budgets
  are what enforce it. Each stage says how it was counted.

Embedding requests (retrieval, ToM's selection, PECAN's similarity edges) are not model calls and are
not counted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from longgraph.graphs.declare import CostShape
from longgraph.llm import LLMProvider, call_mode, render_call
from longgraph.state.context import Context
from longgraph.state.contract import Chunk
from longgraph.tokenizer import PER_MESSAGE_TOKENS

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.graph.state import CompiledStateGraph

    from longgraph.nodes.kit import RunKit


class StageCost(BaseModel):
    stage: str
    calls: int
    prompt_tokens: int
    exact: bool
    how: str


class CostEstimate(BaseModel):
    """A dry run's answer: exact for the first reading stage, an upper bound for the rest."""

    strategy: str
    model: str
    context_window: int
    max_output_tokens: int
    chunks: int
    document_tokens: int
    stages: list[StageCost] = Field(default_factory=list)

    @property
    def exact(self) -> StageCost:
        return self.stages[0]

    @property
    def calls_at_most(self) -> int:
        return sum(s.calls for s in self.stages)

    @property
    def prompt_tokens_at_most(self) -> int:
        return sum(s.prompt_tokens for s in self.stages)

    def lines(self) -> list[str]:
        first = self.exact
        out = [
            f"{self.strategy} on {self.model} (window {self.context_window:,}, output ≤{self.max_output_tokens:,}): "
            f"{self.chunks} chunk(s), {self.document_tokens:,} document tokens",
            f"{'stage':<28}{'calls':>9}{'prompt tokens':>16}  how",
        ]
        for stage in self.stages:
            mark = "" if stage.exact else "≤"
            out.append(
                f"{stage.stage:<28}{mark + format(stage.calls, ','):>9}{mark + format(stage.prompt_tokens, ','):>16}"
                f"  {stage.how}"
            )
        out.append(
            f"{'total':<28}{'≤' + format(self.calls_at_most, ','):>9}{'≤' + format(self.prompt_tokens_at_most, ','):>16}"
            f"  ({first.calls:,} call(s) and {first.prompt_tokens:,} tokens of it {'exact' if first.exact else 'bounded'})"
        )
        return out


def first_stage_prompt_tokens(
    kit: RunKit, prompts: str, stage: str, texts: Sequence[str], question: str
) -> list[int]:
    """Prompt tokens of each call of ``stage`` over ``texts``, as the spending limit counts them."""
    prompt_set = kit.prompts(prompts)
    schema = kit.schema(prompts, stage)
    mode = call_mode(kit.client(), prompt_set, stage)
    rendered = [
        [
            str(m.content)
            for m in render_call(
                prompt_set,
                stage,
                task=kit.context.task,
                schema=schema,
                mode=mode,
                variables={"context": text, "question": question},
            )
        ]
        for text in texts
    ]
    counts = kit.tokenizer.count_batch([content for call in rendered for content in call])
    tokens, at = [], 0
    for call in rendered:
        tokens.append(sum(counts[at : at + len(call)]) + PER_MESSAGE_TOKENS * len(call))
        at += len(call)
    return tokens


def collapse_calls_at_most(notes: int, rounds: int) -> int:
    """Calls the bounded reduction loop can make: each round shrinks the notes by at least one (a
    round that does not ends the loop), and makes at most one call per group."""
    return sum(max(notes - r, 0) for r in range(1, min(rounds, max(notes - 1, 0)) + 1))


def prompt_bound(context: Context) -> int:
    """The most prompt tokens one call can carry: the window less the output budget (the bound every
    stage after the first is estimated with)."""
    return context.window - context.max_output_tokens


def _bounded(stage: str, calls: int, per_call: int, how: str) -> StageCost:
    return StageCost(stage=stage, calls=calls, prompt_tokens=calls * per_call, exact=False, how=how)


Staged = tuple[StageCost, list[StageCost]]
"""A shape's first stage (exact where it can be), and bounds for the stages after it."""


def estimate_stages(shape: CostShape, chunks: Sequence[Chunk], question: str, kit: RunKit) -> list[StageCost]:
    """The first stage exactly (or its bound where the shape says so), then bounds for the rest."""
    ctx: Context = kit.context
    per_call = prompt_bound(ctx)
    by_kind = {"fan-out": _fan_out_stages, "tree": _tree_stages, "ip-graph": _ip_graph_stages}
    first, rest = by_kind.get(shape.kind, _single_call_stages)(shape, chunks, question, kit)
    if shape.kind != "single-call" and ctx.verify_answers == "on":
        rest.append(_bounded("verify", 1, per_call, "one, when words cannot confirm the answer"))
    if ctx.parse_retries:
        total = first.calls + sum(s.calls for s in rest)
        rest.append(
            _bounded("parse retries", total * ctx.parse_retries, per_call, f"≤{ctx.parse_retries} per call")
        )
    return [first, *rest]


def _fan_out_stages(shape: CostShape, chunks: Sequence[Chunk], question: str, kit: RunKit) -> Staged:
    """Every chunk read (rendered and counted), a plan, filters, the reduction loop."""
    ctx, n = kit.context, len(chunks)
    per_call = prompt_bound(ctx)
    tokens = first_stage_prompt_tokens(
        kit, shape.prompts, shape.first_stage, [c.text for c in chunks], question
    )
    first = StageCost(
        stage=shape.first_stage,
        calls=n,
        prompt_tokens=sum(tokens),
        exact=True,
        how="every chunk, rendered and counted",
    )
    rest: list[StageCost] = []
    if ctx.reread and ctx.prompt_variant == "compact":
        rest.append(
            _bounded(
                "reread", n, max(tokens, default=0), "at most one per chunk (its passage on the question)"
            )
        )
    rest += _planning(shape, kit)
    if shape.filters:
        rest.append(_bounded("filter", n, per_call, "one Keep/Remove per note"))
    rounds = collapse_calls_at_most(n, ctx.max_collapse_rounds)
    how = f"≤{ctx.max_collapse_rounds} rounds, each one shorter"
    rest += [
        _bounded("collapse/merge", rounds, per_call, how),
        _bounded("final answer", 1, per_call, "one call"),
    ]
    return first, rest


def _planning(shape: CostShape, kit: RunKit) -> list[StageCost]:
    """The records route's planning call, where the strategy plans (an aggregating question is then read
    for records instead of the strategy's path: bounded by the same calls per chunk)."""
    if not shape.plans or kit.context.plan_records == "off":
        return []
    how = "one planning call (an aggregating question is read for records instead)"
    return [_bounded("plan", 1, prompt_bound(kit.context), how)]


def _tree_stages(shape: CostShape, chunks: Sequence[Chunk], question: str, kit: RunKit) -> Staged:
    """ToM: the selected chunks parsed, then bounds for aggregation and the tree's map and reduce."""
    ctx, n = kit.context, len(chunks)
    per_call = prompt_bound(ctx)
    k = n if ctx.tom_top_k == 0 else min(ctx.tom_top_k, n)
    tokens = sorted(
        first_stage_prompt_tokens(kit, shape.prompts, shape.first_stage, [c.text for c in chunks], "")
    )
    first = StageCost(
        stage=shape.first_stage,
        calls=k,
        prompt_tokens=sum(tokens[n - k :]),
        exact=k == n,
        how=f"the {k} selected chunk(s)" + ("" if k == n else "; tokens: the largest k"),
    )
    rounds = ctx.max_collapse_rounds
    nodes = k * 13 + rounds * k + 1  # ≤12 sections + a root per chunk; summaries
    rest = [
        _bounded("summarize", rounds * k + 1, per_call, f"≤{rounds} aggregation rounds over ≤{k} top nodes"),
        _bounded(
            "tree map + reduce",
            2 * nodes + 1,
            per_call,
            "two per tree node (a leaf's map; an inner node's reduce and map), "
            "assuming ≤12 sections a chunk (the outline schema's cap)",
        ),
        *_planning(shape, kit),
    ]
    return first, rest


def _ip_graph_stages(shape: CostShape, chunks: Sequence[Chunk], question: str, kit: RunKit) -> Staged:
    """PECAN: the first-level batches counted, then bounds for the higher levels and the search."""
    from longgraph.nodes.ip_graph import level_one_batch_texts

    ctx = kit.context
    per_call = prompt_bound(ctx)
    texts = level_one_batch_texts(chunks, kit)
    tokens = first_stage_prompt_tokens(kit, shape.prompts, shape.first_stage, texts, "")
    first = StageCost(
        stage=f"{shape.first_stage} (level 2)",
        calls=len(texts),
        prompt_tokens=sum(tokens),
        exact=True,
        how="first-level batches, as the construction groups them",
    )
    budget = min(ctx.pecan_batch_tokens, kit.budget(shape.prompts, shape.first_stage, ""))
    upper = _ip_levels_at_most(len(texts), ctx, budget)
    retrieved = max(ctx.pecan_max_nodes, ctx.pecan_fixed_k)  # the search's bound, fixed-k or not
    rest = [
        _bounded(
            "points (higher levels)",
            upper,
            per_call,
            f"≤{ctx.max_collapse_rounds} levels, each batch's points ≤ its output",
        ),
        _bounded(
            "search + answer",
            2 * retrieved + 3,
            per_call,
            "a Yes/No turn and at most one condensing of the prompt per retrieved node, one condensing "
            "before the first, the answer",
        ),
    ]
    return first, rest


def _single_call_stages(shape: CostShape, chunks: Sequence[Chunk], question: str, kit: RunKit) -> Staged:
    """A baseline: one call over the text that fits."""
    per_call = prompt_bound(kit.context)
    return _bounded(shape.first_stage, 1, per_call, "one call over the text that fits"), []


def _ip_levels_at_most(first_batches: int, ctx: Context, budget: int) -> int:
    """Batches of PECAN's levels above the second. A batch's points are at most ``max_output_tokens``
    tokens (plus the 2-token separator each, so at most 3x that), and in-order grouping makes any two
    consecutive batches overflow the batch budget: a layer of ``T`` tokens is at most ``2T/budget + 1``
    batches."""
    batches, total = first_batches, 0
    for _ in range(max(ctx.max_collapse_rounds - 1, 0)):
        if batches <= 1:
            break
        layer_tokens = batches * 3 * ctx.max_output_tokens
        batches = 2 * math.ceil(layer_tokens / max(budget, 1)) + 1
        total += batches
    return total


async def estimate_run(
    graph_input: Mapping[str, Any],
    *,
    strategy: str,
    shape: CostShape,
    build: Callable[[BaseCheckpointSaver[str]], CompiledStateGraph[Any, Any, Any, Any]],
    context: Context,
    llm: LLMProvider,
) -> CostEstimate:
    """Chunk ``graph_input`` with ``strategy``'s own graph (``build(checkpointer)``, stopped after its
    first node) and estimate what the run would send, by its cost ``shape``; no completion is requested."""
    from langgraph.checkpoint.memory import InMemorySaver

    from longgraph.checkpointing import checkpoint_serializer
    from longgraph.nodes.kit import kit_for

    graph = build(InMemorySaver(serde=checkpoint_serializer()))
    first = next(target for source, target in graph.builder.edges if source == "__start__")
    given = dict(graph_input)
    stops = [first]
    if first == "plan_records":  # the plan is not asked for: the strategy's own reading is chunked
        given["plan"] = given.get("plan") or {"aggregates": False}
        routes = next(iter(graph.builder.branches[first].values())).ends or {}
        stops = [str(routes["otherwise"]), str(routes["records"])]
    context = replace(context, read_while_chunking=False)  # no call may leave
    config: Any = {"configurable": {"thread_id": "dry-run"}}
    await graph.ainvoke(given, config, context=context, interrupt_after=stops)
    values = (await graph.aget_state(config)).values
    chunks: list[Chunk] = values["input_chunks"]
    kit = await kit_for(context, llm)
    return CostEstimate(
        strategy=strategy,
        model=str(kit.context.model),
        context_window=kit.window,
        max_output_tokens=kit.context.max_output_tokens,
        chunks=len(chunks),
        document_tokens=sum(c.tokens for c in chunks),
        stages=estimate_stages(shape, chunks, str(values["question"]), kit),
    )
