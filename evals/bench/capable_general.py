"""The general suite read by the scripted capable reader, through every strategy.

``python -m longgraph.evals.bench.capable_general [--split test] [--n 2] [--tokens 4000]``

Why: the issue's target for a capable model (8B–70B) is every kind right through every strategy, and
the hand-written scenarios of ``tests/unit/test_capable_reader.py`` are shapes the answer layer was built
against. This runs the suite's own instances instead (any split, so the held-out templates too): each
one's planted facts become a :class:`~longgraph.testing.capable.Scenario` whose reader copies a fact
that bears on the question (the asked entity's, never a look-alike's), concludes the gold once it sees
every fact it needs (the value, the chain's end, the total, count, highest or list), says NO
INFORMATION where the asked entity is absent, and says yes to its own answer when asked to verify.
The answer layer must hand that answer back, supported. Injected fakes, no server: seconds, not minutes.
It prints the share right per kind and strategy and every wrong answer marked supported.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from longgraph.evals.bench import print_figures
from longgraph.evals.data.general import KINDS, Split, build_general
from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.readers.general import scenario_of
from longgraph.evals.scoring.structured import score_general
from longgraph.state.contract import GraphOutput
from longgraph.strategies import build_strategy
from longgraph.testing.capable import SETTINGS, STYLES, Style, capable_responder
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel

STRATEGIES = ("mapreduce", "segment-plus", "mapreduce-segment-merge", "tom", "pecan")


def read(
    strategy: str, instance: EvalInstance, window: int | None = None, style: Style = "bare"
) -> GraphOutput:
    """``instance`` read through ``strategy`` by the capable reader wording its answers in ``style``
    (``window``: its context window, the settings' small one when None)."""
    model = ScriptedChatModel(responder=capable_responder(scenario_of(instance), style))
    graph = build_strategy(strategy, FakeProvider(model))
    given = {"question": instance.question, "documents": instance.documents}
    context = {**SETTINGS, **({"context_window": window} if window else {})}
    return GraphOutput.model_validate(asyncio.run(graph.ainvoke(given, context=context)))


def measure(
    split: Split,
    n: int,
    tokens: int,
    strategies: Sequence[str] = STRATEGIES,
    seed: int = 0,
    window: int | None = None,
    style: Style = "bare",
) -> dict[str, Any]:
    """Right and wrong-but-supported per (kind, strategy), with what each miss answered."""
    right: dict[tuple[str, str], list[bool]] = defaultdict(list)
    misses: list[str] = []
    wrong_supported = 0
    for instance in build_general(target_tokens=tokens, n=n, seed=seed, split=split):
        kind = str(instance.metadata["kind"])
        for strategy in strategies:
            result = read(strategy, instance, window, style)
            ok = score_general(result.answer, instance.label)["correct"] == 1.0
            right[(kind, strategy)].append(ok)
            if not ok:
                wrong_supported += bool(result.supported)
                misses.append(
                    f"{strategy} {instance.id} ({instance.metadata['template']}): {instance.question!r} → "
                    f"{result.answer[:100]!r} (supported {result.supported}, gold {instance.gold_answers[0]!r})"
                )
    return {"right": dict(right), "misses": misses, "wrong_supported": wrong_supported}


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--n", type=int, default=2, help="instances per kind")
    parser.add_argument("--tokens", type=int, default=4_000, help="length of each instance")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--window", type=int, default=None, help="the reader's context window (default: 2,048, many chunks)"
    )
    parser.add_argument("--style", choices=STYLES, default="bare", help="how the reader words its answers")
    parser.add_argument(
        "--strategies", default=",".join(STRATEGIES), help="comma-separated (default: every one it reads)"
    )
    args = parser.parse_args(argv)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        parser.error(f"unknown strategies {', '.join(unknown)} (known: {', '.join(STRATEGIES)})")
    started = time.perf_counter()
    found = measure(
        args.split, args.n, args.tokens, strategies, seed=args.seed, window=args.window, style=args.style
    )
    figures: dict[str, object] = {
        "split": args.split,
        "instances per kind": args.n,
        "tokens": args.tokens,
        "window": args.window or SETTINGS["context_window"],
        "style": args.style,
    }
    for kind in KINDS:
        cells = [f"{s} {sum(found['right'][(kind, s)])}/{len(found['right'][(kind, s)])}" for s in strategies]
        figures[kind] = ", ".join(cells)
    figures["wrong answers marked supported"] = found["wrong_supported"]
    figures["seconds"] = round(time.perf_counter() - started, 1)
    print_figures("the general suite, read by the scripted capable reader", figures)
    for miss in found["misses"]:
        print(f"  missed: {miss}")
    return found


if __name__ == "__main__":
    main()
