"""Scripted readers built from a suite generator's gold, to state what the graphs lose of a right model.

``longgraph eval --reader reference|extractor --wording bare|sentence|chatty`` runs a suite with one of
them as the model (records labelled ``reference-<wording>`` / ``extractor-<wording>``); ``oracle`` is
the stub's bag-of-words matcher, as ``--oracle``. What each reader does is in
:mod:`longgraph.evals.readers.gold`; the gold each suite gives them is in its module here (``ruler``,
``loong_synth``, ``real``, ``general``: those two suites' reference reads through the capable reader,
as measured before). The readers are built from the generator's gold alone, never from the project's answer code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, get_args

from longgraph.errors import ConfigurationError
from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.readers.gold import READERS, WORDINGS, Gold, Reader, Wording, gold_responder
from longgraph.testing.capable import Scenario

ReaderChoice = Literal["model", "oracle", "reference", "extractor"]
READER_CHOICES: tuple[ReaderChoice, ...] = get_args(ReaderChoice)
SUITES_WITH_GOLD: tuple[str, ...] = ("ruler", "loong-synth", "real", "general")
Responder = Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], str]

__all__ = [
    "READERS",
    "READER_CHOICES",
    "SUITES_WITH_GOLD",
    "WORDINGS",
    "Gold",
    "Reader",
    "ReaderChoice",
    "Wording",
    "gold_of",
    "reader_label",
    "responder_for",
]


def reader_label(reader: Reader, wording: Wording) -> str:
    """The model label of a reader's records: ``reference-bare``, ``extractor-chatty``, …"""
    return f"{reader}-{wording}"


def gold_of(instance: EvalInstance) -> Gold:
    """The records a reader needs for ``instance``; :class:`ConfigurationError` for a suite with none."""
    if instance.suite == "ruler":
        from longgraph.evals.readers.ruler import ruler_gold

        return ruler_gold(instance)
    if instance.suite == "loong-synth":
        from longgraph.evals.readers.loong_synth import loong_synth_gold

        return loong_synth_gold(instance)
    if instance.suite in ("real", "general"):
        from longgraph.evals.scoring import get_scorer

        scenario = _scenario(instance)
        scorer = get_scorer(str(instance.scorer))

        def right(answer: str) -> bool:
            return scorer.score(answer, instance.label)[scorer.metric] >= 1.0

        records = Counter(dict.fromkeys(scenario.facts, 1))
        return Gold(scenario.conclusion, records, right, aggregates=len(records) > 1)
    raise ConfigurationError(
        f"no reader is built for the {instance.suite} suite (readers: {', '.join(SUITES_WITH_GOLD)})"
    )


def _scenario(instance: EvalInstance) -> Scenario:
    if instance.suite == "real":
        from longgraph.evals.readers.real import scenario_of

        return scenario_of(instance)
    from longgraph.evals.readers.general import scenario_of as general_scenario

    return general_scenario(instance)


def responder_for(
    instance: EvalInstance, reader: Reader, wording: Wording, *, max_output_tokens: int = 256
) -> Responder:
    """The scripted model that answers every call of a run on ``instance`` as ``reader`` would."""
    if reader == "reference" and instance.suite in ("real", "general"):  # the capable reader, as measured
        from longgraph.evals.readers.real import word
        from longgraph.testing.capable import capable_responder

        wording_of = word if instance.suite == "real" else None
        responder: Responder = capable_responder(_scenario(instance), wording, wording_of)
        return responder
    return gold_responder(gold_of(instance), reader, wording, max_output_tokens=max_output_tokens)
