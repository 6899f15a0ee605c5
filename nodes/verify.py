"""Confirming an answer the words cannot: the model's verification call, or the embedder's reading.

Words confirm most answers (``nodes/answer_support.py``): a sentence that names the asked entity and
speaks to what is asked of it, holding the answer's words. They cannot confirm an answer whose
sentences name the entity and nothing of what is asked, continue its name as another thing's ("the
X flour shop" for the X flour mill), or leave out part of what is asked that the document
speaks of elsewhere (:data:`CONFIRMING_RULES`): that sentence may be another fact about the same entity,
another thing of its name, a step of a chain whose next step no note holds, or the answer in other
words. A reader can tell these apart, so such an answer gets one call (``prompts/verify.toml``),
and stands only when the call reads every claim of it as stated by the quotes.

A model that cannot verify (measured at chance: the embedded SmolLM2-135M, ``longgraph/endpoint.py``
``MODEL_PROFILES``) gets the embedder's reading instead (:func:`confirm_by_meaning`): the answer's
sentence must be close in meaning to the question, and closer to it than to the words that only name
the entity; and never for another thing of the name, which reads as close as the right thing does.
Where neither is at hand the answer does not stand: right or silent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from longgraph.nodes.answer_support import (
    Judged,
    entity_phrases,
    items_asked_for,
    modified_phrases,
    only_the_first_step,
    other_thing_of_that_name,
    wrong_kind_of_answer,
)
from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import content_stems, sentence_spans
from longgraph.prompts import neutralise_frames
from longgraph.state.contract import Evidence
from longgraph.state.outputs import AnswerCheck
from longgraph.state.usage import Usage

PROMPTS = "verify"
STAGE = "verify"


CheckOutcome = Literal["supported", "unconfirmed", "refuted", "empty"]
"""What a check says of an answer: every claim stated; some not stated; one contradicted; no claim."""


@dataclass(frozen=True)
class Checked:
    """What the verification call said of one answer: ``confirmed`` only when it is ``supported``."""

    confirmed: bool
    why: str
    usage: Usage = field(default_factory=Usage)
    outcome: CheckOutcome = "unconfirmed"


def shown_sentences(quotes: Sequence[Evidence]) -> str:
    """The quotes' sentences, each once, one per line, in document order."""
    ordered = sorted(quotes, key=lambda q: (q.doc_index, q.start))
    seen = dict.fromkeys(" ".join(q.text[a:b].split()) for q in ordered for a, b in sentence_spans(q.text))
    return "\n".join(s for s in seen if s)


async def verify_answer(kit: RunKit, question: str, answer: str, quotes: Sequence[Evidence]) -> Checked:
    """What the model, shown ``quotes``' sentences, says of ``answer``'s claims: supported when they
    state every claim, refuted when they contradict one, empty when it makes none."""
    # The answer is the document's words as a model repeated them: shown on one line, unable to open or
    # close a frame of its own (a document that plants "Question: ..." in it gets no second question).
    result = await kit.call(
        PROMPTS,
        STAGE,
        text=shown_sentences(quotes),
        question=question,
        answer=neutralise_frames(" ".join(answer.split())),
        work="verifying the answer",
    )
    value = result.value
    if not isinstance(value, AnswerCheck):
        return Checked(False, f"the verification call gave no verdict ({result.error})", result.usage)
    outcome = value.outcome
    listed = "; ".join(f"{' '.join(c.claim.split())[:80]!r} {c.verdict}" for c in value.claims[:4])
    said = (
        "the verification call finds no claim in it"
        if outcome == "empty"
        else f"the verification call reads its claims against the quotes: {listed}"
    )
    return Checked(outcome == "supported", said, result.usage, outcome)


MEANING_FLOOR = 0.6
"""Cosine similarity (the bundled all-MiniLM-L6-v2) an answer's sentence needs with the question."""
BEYOND_ENTITY = 0.04
"""How much closer the sentence must be to the question than to the words naming its entity.

A chain's bridge ("The X garden is tended by Ilka Y", asked in which town the gardener was
born) is as close to the question as a paraphrase, but no closer to it than to "the gardener of the
X garden": the margin is what refuses it. First chosen (0.08) on a dev templates
(``evals/bench/verify_probe.py --by meaning``, 12 seeds): another fact about the asked entity 0/348
confirmed, the chain's bridge 0/84, the answer in other words 125/348. Measured again in an earlier run on
the dev templates then (69 templates and 20 chains, 12 seeds): the bridges' margins reach +0.024 at
most (240 cases), and 0.08 refused half the answers in other words ("The mayor of Z is a man named
Odile W" for "Which person governs the town of Z?", +0.048). At 0.04: bridges 0/240,
another fact 0/828, the answer in other words 496/828 (402 at 0.08), the answer in the question's
words 723/828 (663)."""


def _closeness(vectors: np.ndarray, question: int, other: int, sentence: int) -> tuple[float, float]:
    """The sentence's cosine with the question, and how much it exceeds its cosine with ``other``."""
    to_question = float(vectors[question] @ vectors[sentence])
    return to_question, to_question - float(vectors[other] @ vectors[sentence])


async def confirm_by_meaning(kit: RunKit, question: str, answer: str, quotes: Sequence[Evidence]) -> Checked:
    """Whether a sentence the answer rests on, one holding its words, is close in meaning to what the
    question asks (:data:`MEANING_FLOOR`) beyond naming its entity (:data:`BEYOND_ENTITY`), read by the
    run's embedder (the bundled one unless set; vectors cached: ``longgraph/embeddings.py``). No model
    call: for a model that cannot verify."""
    if items_asked_for(question) is not None:
        # "For how many officials of Y ...": whether the answer leaves some out is not a matter of
        # how close its sentences are to the question.
        return Checked(False, "the embedder cannot tell whether an answer over every item leaves some out")
    sentences = list(dict.fromkeys(shown_sentences(quotes).splitlines()))
    wanted = content_stems(answer)
    holding = [s for s in sentences if wanted & content_stems(s)] or sentences
    # An entity named by a modifier ("the ivory mint") is compared as one named by a name: measured on
    # the dev templates' such entities (6 seeds), the answer in other words 43/60 confirmed, another fact
    # about the entity 0/60; without it every one of them was refused for want of an entity.
    entity = ", ".join(entity_phrases(question) or modified_phrases(question))
    if not holding or not entity:
        return Checked(False, "the embedder has no sentence or no named entity to compare")
    if first_step := only_the_first_step(question, answer, holding):
        return Checked(False, first_step)
    if wrong_kind := wrong_kind_of_answer(question, answer):  # closeness says nothing of kinds
        return Checked(False, wrong_kind)
    if (other := other_thing_of_that_name(question, holding)) is not None:
        # "The X flour shop sold 3,112 bags" read 0.6+ close to "How many bags did the X flour
        # mill fill?": one word apart, a sentence about another thing is as close as the right one.
        return Checked(
            False, f"the embedder cannot tell {other[1]!r} from {other[0]!r}: another thing, or the same"
        )
    vectors = await kit.embed([question, entity, *holding])
    readings = [_closeness(vectors, 0, 1, i + 2) for i in range(len(holding))]

    def passes(reading: tuple[float, float]) -> bool:
        return reading[0] >= MEANING_FLOOR and reading[1] >= BEYOND_ENTITY

    # One sentence that passes confirms; else the closest is the one shown.
    near, beyond = max(readings, key=lambda r: (passes(r), r[0]))
    stands = passes((near, beyond))
    said = (
        f"the embedder reads its sentence {near:.2f} close to the question and {beyond:+.2f} closer to it "
        f"than to {entity!r} (it needs {MEANING_FLOOR:.2f} and {BEYOND_ENTITY:+.2f})"
    )
    return Checked(stands, said)


Verifier = Callable[[str, Sequence[Evidence]], Awaitable[Checked]]
"""(answer, the quotes it rests on) -> what the verification call said."""


async def confirmed(judged: Judged, answer: str, verify: Verifier | None) -> tuple[Judged, Checked | None]:
    """``judged``, or "none" when the words cannot confirm it (``judged.unconfirmed``) and no
    verification call reads every claim as stated (without a verifier, a model measured unable to verify, it does not
    stand); and what the call said, if one was made."""
    if judged.kind == "none" or not judged.unconfirmed:
        return judged, None
    if verify is None:
        why = f"{judged.unconfirmed}; nothing confirms it (verify_answers off)"
        return Judged("none", [], why), None
    checked = await verify(answer, judged.quotes)
    if not checked.confirmed:
        return Judged("none", [], f"{judged.unconfirmed}; {checked.why}"), checked
    return judged, checked


def verifier_for(kit: RunKit, question: str) -> Verifier | None:
    """What confirms an answer the words cannot (``verify_answers``): the model's call, the embedder's
    reading, or nothing."""
    setting = kit.context.verify_answers

    async def by_call(answer: str, quotes: Sequence[Evidence]) -> Checked:
        return await verify_answer(kit, question, answer, quotes)

    async def by_meaning(answer: str, quotes: Sequence[Evidence]) -> Checked:
        return await confirm_by_meaning(kit, question, answer, quotes)

    return by_call if setting == "on" else by_meaning if setting == "embedding" else None
