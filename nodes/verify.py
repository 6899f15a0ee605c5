"""The verification call: the model asked whether the sentences an answer rests on state it.

Words confirm most answers (``nodes/answer_support.py``): a sentence that names the asked entity and
speaks to what is asked of it, holding the answer's words. They cannot confirm an answer whose
sentences name the entity and nothing of what is asked, or leave out part of what is asked that the
document speaks of elsewhere (:data:`CONFIRMING_RULES`): that sentence may
be another fact about the same entity, a step of a chain whose next step no note holds, or the answer in
other words. A reader can tell these apart, so such an answer gets one call (``prompts/verify.toml``),
and stands only on a "yes". A model that cannot verify (measured at chance: the embedded SmolLM2-135M,
``longgraph/endpoint.py`` ``MODEL_PROFILES``) gets no call, and the answer does not stand: right or
silent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from longgraph.nodes.kit import RunKit
from longgraph.nodes.lexical import sentence_spans
from longgraph.prompts import neutralise_frames
from longgraph.state.contract import Evidence
from longgraph.state.outputs import AnswerCheck
from longgraph.state.usage import Usage

PROMPTS = "verify"
STAGE = "verify"


@dataclass(frozen=True)
class Checked:
    """What the verification call said of one answer."""

    confirmed: bool
    why: str
    usage: Usage = field(default_factory=Usage)


def shown_sentences(quotes: Sequence[Evidence]) -> str:
    """The quotes' sentences, each once, one per line, in document order."""
    ordered = sorted(quotes, key=lambda q: (q.doc_index, q.start))
    seen = dict.fromkeys(" ".join(q.text[a:b].split()) for q in ordered for a, b in sentence_spans(q.text))
    return "\n".join(s for s in seen if s)


async def verify_answer(kit: RunKit, question: str, answer: str, quotes: Sequence[Evidence]) -> Checked:
    """Whether the model, shown ``quotes``' sentences, says they state ``answer`` as the answer."""
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
    reason = " ".join(value.reason.split())[:200]
    said = f"the verification call says {value.stated}" + (f" ({reason})" if reason else "")
    return Checked(value.stated == "yes", said, result.usage)
