"""Can a model plan? The records plan call (``prompts/records.toml``) on questions whose kind is known.

``python -m longgraph.evals.bench.plan_probe [--n 12] [--stub]``

Why: a strategy that plans sends an aggregating question to the records route and keeps any other on
its own path (``graphs/wiring.py``), so a model that misplans a single fact as an aggregation loses
it, and one that misses an aggregation keeps arithmetic in its head. A model gets planning by default
only if it tells the two apart (``longgraph/embedded/catalog.py``: ``ModelProfile.plans``, on at
accuracy >= 0.9). This asks the plan call, through the project's own prompt and structured path, about:

* single facts: the real suite's human-written dev questions (SQuAD v2, HotpotQA bridge and
  comparison): right when no plan is made;
* aggregations: loong-synth's Comparison, Clustering and Chain questions and RULER's vt, cwe and fwe
  queries: right when the plan can be carried out and names the operation the generator's own plan
  names.

It prints the share right per kind, and the accuracy: the mean of the single-fact and aggregation
shares. The embedded server is reused if one runs, otherwise started.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import defaultdict
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

from longgraph.evals.bench import bench_endpoint, endpoint_label, print_figures
from longgraph.llm import default_provider
from longgraph.nodes.kit import build_kit
from longgraph.nodes.records.stages import PROMPTS
from longgraph.state.context import Context
from longgraph.state.records import RecordPlan

Case = tuple[str, str, str | None]
"""(kind, question, the operation a right plan names; None: a single fact, no plan)."""


def cases(n: int) -> list[Case]:
    """``n`` questions of each kind (fewer where a kind has fewer)."""
    from longgraph.evals.data.loong_synth import build_loong_synth
    from longgraph.evals.data.real import cases as real_cases
    from longgraph.evals.data.ruler import build_ruler
    from longgraph.evals.readers.ruler import ruler_gold

    out: list[Case] = []
    for kind in ("squad", "hotpot-bridge", "hotpot-comparison"):
        out += [(f"single fact: {kind}", c["question"], None) for c in real_cases(kind, "dev")[:n]]
    for family in ("comparison", "clustering", "chain"):
        for instance in build_loong_synth(length_set=1, n=n, seed=0, families=[family]):
            plan = instance.metadata["plan"]
            out.append((f"aggregation: loong-synth {family}", instance.question, str(plan["operation"])))
    for task in ("vt", "cwe", "fwe"):
        for instance in build_ruler(target_tokens=4_000, n=min(n, 3), seed=0, tasks=[task]):
            plan = ruler_gold(instance).plan or {}
            out.append((f"aggregation: RULER {task}", instance.question, str(plan.get("operation"))))
    return out


def right(case: Case, raw: Any) -> bool:
    """Whether the plan the model wrote is what ``case`` needs (see the module docstring)."""
    _, _, wanted = case
    try:
        plan = RecordPlan.model_validate(raw)
    except ValueError:
        return wanted is None
    if wanted is None:
        return bool(plan.problems())
    return not plan.problems() and plan.operation == wanted


async def probe(all_cases: Sequence[Case], settings: dict[str, Any]) -> dict[str, object]:
    kit = await build_kit(Context(**settings), default_provider)
    said: dict[str, list[bool]] = defaultdict(list)
    calls = 0
    for case in all_cases:
        result = await kit.call(PROMPTS, "plan", text="", question=case[1], work="probing the plan")
        calls += result.usage.llm_calls
        said[case[0]].append(right(case, result.value.model_dump() if result.value is not None else None))
    figures: dict[str, object] = {k: f"{sum(v)}/{len(v)}" for k, v in said.items()}
    single = [x for k, v in said.items() if k.startswith("single") for x in v]
    many = [x for k, v in said.items() if k.startswith("aggregation") for x in v]
    figures["single facts left unplanned"] = f"{sum(single) / max(1, len(single)):.2f}"
    figures["aggregations planned right"] = f"{sum(many) / max(1, len(many)):.2f}"
    figures["accuracy"] = f"{(sum(single) / max(1, len(single)) + sum(many) / max(1, len(many))) / 2:.2f}"
    figures["calls"] = calls
    return figures


def main(argv: Sequence[str] | None = None) -> dict[str, object]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=12, help="questions per kind")
    parser.add_argument("--stub", action="store_true", help="the stub's oracle instead of the embedded vLLM")
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        endpoint = bench_endpoint(stack, embedded=not args.stub, latency=0.0)[0]
        figures = asyncio.run(probe(cases(args.n), {**endpoint, "cache_path": ""}))
    print_figures(
        "can the model plan?", {"planner": endpoint_label(embedded=not args.stub, latency=0.0), **figures}
    )
    return figures


if __name__ == "__main__":
    main()
