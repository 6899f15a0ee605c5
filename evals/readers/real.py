"""The reference reader for real questions: a right model, built from the gold annotations alone.

It knows each question's gold answers and gold supporting sentences (``metadata["facts"]`` of a
:mod:`longgraph.evals.data.real` instance) and nothing of the answer layer. In a call that reads text
it copies the supporting sentences the shown text holds (the part of a chain a chunk holds), gives the
gold once the shown text holds every supporting sentence, and says it does not know when it holds
none; Segment+'s filter keeps a note holding a supporting sentence, PECAN's search says "Yes" once
every one is shown, and asked to verify it says yes to the gold and no to anything else
(:func:`longgraph.testing.capable.capable_responder` does the reading).

So whatever a graph run on it returns that is not the gold is what the graphs lose of a right model:
the ceiling the issue's targets are stated on. :data:`WORDINGS` are how real models word the same
right answer: the bare span, a sentence (the supporting sentence that states it, copied, else "The
answer is X."), and chat style (a lead-in and the answer in Markdown bold; not knowing as an apology).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from longgraph.evals.data.instance import EvalInstance
from longgraph.evals.readers.gold import WORDINGS, Wording, word_conclusion
from longgraph.state.contract import GraphOutput
from longgraph.testing.capable import SETTINGS, Scenario, Style, capable_responder
from longgraph.testing.oracle import NO_INFORMATION

__all__ = ["WORDINGS", "Wording", "read", "reference_responder", "scenario_of", "word"]


def scenario_of(instance: EvalInstance) -> Scenario:
    """What the reader of ``instance`` must see (its gold supporting sentences) and concludes (its first
    gold answer, or NO INFORMATION for an unanswerable question); other golds are accepted spellings."""
    golds = [g for g in instance.gold_answers if g != "NO INFORMATION"]
    if not golds:
        return Scenario(instance.id, instance.question, (), NO_INFORMATION)
    facts = tuple(str(f) for f in instance.metadata["facts"])
    return Scenario(instance.id, instance.question, facts, golds[0], accepted=tuple(golds[1:]))


def word(conclusion: str, seen: Sequence[str], style: Style, question: str = "") -> str:
    """``conclusion`` worded as a right model of ``style`` words it (``seen``: the facts it read)."""
    del question
    return word_conclusion(conclusion, seen, style)  # type: ignore[arg-type]  # the three wordings only


def reference_responder(instance: EvalInstance, wording: Wording = "bare") -> Any:
    """A :class:`~longgraph.testing.fakes.ScriptedChatModel` responder: the reference reader of
    ``instance`` wording its answers as ``wording``."""
    return capable_responder(scenario_of(instance), wording, word)


def lenient(respond: Any) -> Any:
    """``respond`` with a lenient verifier: the verification call reads the proposed answer as stated
    whenever its content words (word forms compared) all stand in the shown sentences, whether or not
    it answers the question; every other call as ``respond`` answers it. What keeps wrong answers from
    being supported under such a verifier is that no stage rewrites an answer into words of the text."""
    from longgraph.nodes.checks import content_stems
    from longgraph.testing.answers import check_answer, check_content, verification_asked

    def respond_leniently(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        asked = verification_asked(messages)
        if asked is not None:
            words = content_stems(asked.proposed)
            if words and words <= content_stems(asked.sentences):
                return check_content(
                    {"messages": list(messages), **extras}, check_answer(asked.proposed, "stated")
                )
        answer: str = respond(messages, extras)
        return answer

    return respond_leniently


def read(
    strategy: str,
    instance: EvalInstance,
    wording: Wording = "bare",
    window: int | None = None,
    *,
    verifier: Literal["reference", "lenient"] = "reference",
) -> GraphOutput:
    """``instance`` read through ``strategy`` by the reference reader (``window``: its context window,
    :data:`~longgraph.testing.capable.SETTINGS`' small one when None, so a document is many chunks;
    ``verifier``: "lenient" answers the verification call by :func:`lenient`)."""
    from longgraph.strategies import build_strategy
    from longgraph.testing.fakes import FakeProvider, ScriptedChatModel

    respond = reference_responder(instance, wording)
    model = ScriptedChatModel(responder=lenient(respond) if verifier == "lenient" else respond)
    graph = build_strategy(strategy, FakeProvider(model))
    context = {**SETTINGS, **({"context_window": window} if window else {})}
    return GraphOutput.model_validate(asyncio.run(graph.ainvoke(instance.graph_input(), context=context)))
