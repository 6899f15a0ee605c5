"""The capable reader's scenario of a templated-suite instance (:mod:`longgraph.evals.data.general`),
from the generator's planted facts and gold alone."""

from __future__ import annotations

import re

from longgraph.evals.data.instance import EvalInstance
from longgraph.state.outputs import NO_INFORMATION
from longgraph.testing.capable import Scenario


def scenario_of(instance: EvalInstance) -> Scenario:
    """What a capable reader of ``instance`` needs to see and concludes: the fact holding the asked
    entity's value (not its look-alikes'), both steps of a chain, every item of an aggregation, or
    nothing at all for an absent entity."""
    kind = instance.metadata["kind"]
    facts: list[str] = list(instance.metadata["facts"])
    gold = instance.gold_answers[0]
    if kind == "absent":
        return Scenario(instance.id, instance.question, (), NO_INFORMATION)
    if kind in ("one", "paraphrase", "distractors"):
        # The value as a word of its own: "Ash" is not in "… the springs of Ashford", nor 4 in "44".
        said = re.compile(rf"(?<![\w]){re.escape(gold)}(?![\w])")
        facts = [fact for fact in facts if said.search(fact)]
        if len(facts) != 1:
            raise ValueError(f"{instance.id}: the value {gold!r} is in {len(facts)} planted facts, not one")
    return Scenario(instance.id, instance.question, tuple(facts), gold)
