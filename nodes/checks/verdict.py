"""The verdict on the model's own final answer: decisions (b), (c) and (e); never a rewrite.

In order, on the answer as given (read without the words that only announce it, "The answer is",
and the Markdown emphasis that sets it off: :func:`unframed`):

* (c) **refuted**, no call: it writes a number (beyond the question's) that no verified quote holds
  and no arithmetic over the quotes' numbers gives (:mod:`.numbers`).
* **a copy** (nothing but whole sentences of verified quotes) is ``unconfirmed``, no call: every claim
  of a copy is stated, so neither the words nor a claims check can tell whether it answers.
* (b) **grounded**: its own words (beyond the question's) stand in a verified quote, or it is a
  stretch of one. Words in a quote do not show that it answers (a look-alike's value, another fact
  about the entity, the bridge of a chain are stretches of quotes too), so grounding decides only
  whether an unconfirmed answer is shown, and which quotes it rests on.
* (e) **one verification call** for every answer that is not refuted and not a copy (the typed callable :data:`Verify`, made by ``nodes/finalize.py``):
  shown the question, the answer and the quotes it rests on, it lists the answer's claims with a
  verdict each; ``supported`` when every claim is stated, ``refuted`` when one is contradicted, no
  verdict when it finds no claim (the model said it found nothing), else ``unconfirmed``. Without a
  call the answer is ``unconfirmed``.

``grounded`` says whether any of the answer's own words stands in a verified quote: what an
unconfirmed answer needs to be shown as something the model found in the text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from longgraph.nodes.checks.numbers import unexplained_numbers
from longgraph.nodes.checks.question import Question
from longgraph.nodes.checks.quotes import dedupe_quotes
from longgraph.nodes.checks.words import content_stems, sentence_spans, words_of
from longgraph.state.contract import Evidence, SupportKind, Verdict
from longgraph.state.outputs import AnswerCheck
from longgraph.state.usage import Usage

MAX_QUOTES_SHOWN = 12
"""Verified quotes shown to the verification call, those holding the answer's words first."""
_SOURCE = r"(?:text|document|documents|passage|passages|notes?|context|excerpts?)"
_FRAME = re.compile(
    r"^\s*(?:(?:so|thus|therefore|in\s+short|overall)\s*,\s*)?"
    rf"(?:(?:according\s+to|based\s+on|from)\s+the\s+{_SOURCE}\s*[,:]?\s*"
    rf"|the\s+{_SOURCE}\s+(?:says|states|shows)\s*(?:that\s*)?:?\s*"
    r"|(?:the\s+)?(?:final\s+|short\s+)?answer(?:\s+is)?\s*:\s*|the\s+(?:final\s+|short\s+)?answer\s+is\s*)",
    re.IGNORECASE,
)
_EMPHASIS = re.compile(r"(?<![\w*`])(\*\*|\*|`)(?=[^\s*`])(.+?)(?<=[^\s*`])\1(?![\w*`])")
_AROUND = " .!?;:,\"'“”‘’«»()[]*_`"

CheckOutcome = Literal["supported", "unconfirmed", "refuted", "empty"]


@dataclass(frozen=True)
class Checked:
    """What the verification call said of an answer, and what the call cost."""

    outcome: CheckOutcome
    why: str
    usage: Usage = field(default_factory=Usage)


Verify = Callable[[str, Sequence[Evidence]], Awaitable[Checked]]
"""(the answer as given, the verified quotes it rests on) -> what the verification call said."""


@dataclass(frozen=True)
class Judgement:
    """The verdict on one answer. ``verdict`` None: the answer claims nothing (the model's way of
    saying it found nothing). ``support``: how a supported answer stands (``extractive``: a stretch of
    a quote the call confirmed; ``derived``: any other answer it confirmed). ``quotes``: what it rests on. ``usage``: the call's cost, None when none was made."""

    verdict: Verdict | None
    support: SupportKind
    reason: str
    quotes: list[Evidence]
    grounded: bool
    usage: Usage | None = None


def unframed(answer: str) -> str:
    """``answer`` without the Markdown emphasis around its words and the words that only announce it
    ("Based on the text, the answer is **X**." -> "X.")."""
    answer = _EMPHASIS.sub(r"\2", answer)
    while (match := _FRAME.match(answer)) and match.end() < len(answer.rstrip()):
        answer = answer[match.end() :]
    return answer.strip()


def checked_claims(check: AnswerCheck | None, error: str | None, usage: Usage) -> Checked:
    """The verification call's answer read as a :class:`Checked` (no answer: ``unconfirmed``)."""
    if check is None:
        return Checked("unconfirmed", f"the verification call gave no verdict ({error})", usage)
    if check.outcome == "empty":
        return Checked("empty", "the verification call finds no claim in it", usage)
    listed = "; ".join(f"{' '.join(c.claim.split())[:80]!r} {c.verdict}" for c in check.claims[:4])
    return Checked(
        check.outcome, f"the verification call reads its claims against the quotes: {listed}", usage
    )


def _plain(sentence: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", sentence).casefold().split()).strip(_AROUND)


def _sentences(line: str, *, last_open: bool) -> list[str]:
    """The whole sentences of ``line`` as compared for copying: sentence spans joined until one ends
    with end punctuation and what follows begins another (a capital, a digit, an opening quote), so a
    title line or "Jr. (born" ends none; ``last_open``: the rest after the last end is one too (an
    answer may leave out its full stop)."""
    sentences, begin = [], None
    for start, end in sentence_spans(line):
        begin = start if begin is None else begin
        last = line[start:end].rstrip("\"'”’»)]")[-1:]
        after = line[end:].lstrip()[:1]
        if (
            last
            and last in ".!?。！？"
            and (not after or after.isupper() or after.isdigit() or after in "\"'“‘«")
        ):
            sentences.append(_plain(line[begin:end]))
            begin = None
    if begin is not None and last_open:
        sentences.append(_plain(line[begin:]))
    return [s for s in sentences if s]


def copied(answer: str, quotes: Sequence[Evidence]) -> list[Evidence]:
    """The quotes ``answer`` copies when it is nothing but whole sentences of them; else none."""
    by_sentence: dict[str, Evidence] = {}
    for quote in (q for q in quotes if q.verified):
        for line in quote.text.splitlines():
            for sentence in _sentences(line, last_open=False):
                by_sentence.setdefault(sentence, quote)
    said = [s for line in answer.splitlines() for s in _sentences(line, last_open=True)]
    if not said or not all(s in by_sentence for s in said):
        return []
    return list({id(q): q for q in (by_sentence[s] for s in said)}.values())


def in_a_quote(reading: str, quotes: Sequence[Evidence]) -> list[Evidence]:
    """The quotes that hold ``reading``'s words as one stretch, shorter than the sentence it is in."""
    said = " ".join(words_of(reading))
    holding = []
    for quote in quotes:
        for a, b in sentence_spans(quote.text):
            sentence = " ".join(words_of(quote.text[a:b]))
            if said and f" {said} " in f" {sentence} " and said != sentence:
                holding.append(quote)
                break
    return holding


def own_words(answer: str, question: Question) -> set[str]:
    """The answer's content words beyond the question's: what it claims."""
    return content_stems(answer) - question.words


def holding_first(
    answer: str, question: Question, quotes: Sequence[Evidence]
) -> tuple[list[Evidence], list[Evidence]]:
    """The verified ``quotes`` holding any of the answer's own words, and the others."""
    words = own_words(unframed(answer), question)
    verified = [q for q in quotes if q.verified]
    holding = [q for q in verified if words & content_stems(q.text)]
    return holding, [q for q in verified if q not in holding]


async def judge(
    answer: str, question: Question, quotes: Sequence[Evidence], verify: Verify | None
) -> Judgement:
    """The verdict on ``answer`` (as given, not empty) over the verified ``quotes`` (strongest first)."""
    quotes = dedupe_quotes(q for q in quotes if q.verified)
    reading = unframed(answer)
    words = own_words(reading, question)
    grounded = bool(words & content_stems(" ".join(q.text for q in quotes)))
    holding_words, others = holding_first(reading, question, quotes)
    resting = [*holding_words, *others][:MAX_QUOTES_SHOWN]  # what the verdict rests on
    wrong = unexplained_numbers(reading, question.numbers, [q.text for q in quotes])
    if wrong:
        listed = ", ".join(f"{int(v)}" if v.is_integer() else f"{v:g}" for v in wrong[:4])
        why = f"the verified quotes contradict it: its number(s) {listed} are in none and follow from none"
        return Judgement("refuted", "none", why, resting, grounded)
    if copies := copied(reading, quotes):
        why = "it is a sentence copied from the text: its words cannot show that it answers the question"
        return Judgement("unconfirmed", "none", why, copies, grounded)
    holding = in_a_quote(reading, quotes) if words else []
    if verify is None:
        why = (
            "its words stand in a verified quote, which does not show that it answers; nothing verifies it here"
            if holding
            else "its words do not confirm it, and nothing verifies it here"
        )
        return Judgement("unconfirmed", "none", why, holding or resting, grounded)
    checked = await verify(answer, holding or resting)
    verdict: Verdict | None = (
        None
        if checked.outcome == "empty"
        else "supported"
        if checked.outcome == "supported"
        else "refuted"
        if checked.outcome == "refuted"
        else "unconfirmed"
    )
    support: SupportKind = "none" if verdict != "supported" else "extractive" if holding else "derived"
    return Judgement(verdict, support, checked.why, holding or resting, grounded, checked.usage)


def supporting_quotes(answer: str, question: Question, quotes: Sequence[Evidence]) -> list[Evidence]:
    """The verified quotes a combining stage's ``answer`` rests on (those holding its own words), or
    all of them when none does: what a collapsed or reduced note carries on."""
    holding, others = holding_first(answer, question, quotes)
    return holding or others
