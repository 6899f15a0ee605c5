"""The answer inside a model's wording of it: what to judge when the whole wording does not stand.

A capable model does not answer as the protocol's examples do. It frames its answer ("The answer is
No.", "According to the text, 17"), explains it after ("17. The text says: The Harriers scored 4 goals
… The Wolves scored 6 …", "X (8.6 metres)"), or answers a choice with the fact that decides it
("The Eagles scored 7 goals in the final." for "Which of the Harriers, the Wolves and the Eagles scored
the most?"). Judged whole, such wordings fail the rules an answer is held to: the frame's words are in
no note, the explanation names every look-alike it compared, the deciding fact does not mention the
options it beat. Measured with the scripted capable reader wording its conclusions so
(``longgraph/testing/capable.py`` styles "sentence" and "explained"): 16 of 135 right answers of the
hand-written reasoning scenarios came back NO INFORMATION.

So the answer is read out of its wording (:func:`answer_readings`) and each reading is judged by every
rule, as a bare answer would be: nothing stands that would not stand said alone, and the result says
what was cut (``nodes/finalize.py``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from longgraph.nodes.answer_support import Judged, Rarity, capitalised_runs, judge_answer, name_phrases
from longgraph.nodes.lexical import content_stems, sentence_spans
from longgraph.state.notes import Note

_SOURCE = r"(?:text|document|documents|passage|passages|notes?|context|excerpts?)"
_FRAME = re.compile(
    r"^\s*(?:(?:so|thus|therefore|in\s+short|in\s+summary|overall)\s*,\s*)?"
    r"(?:(?:most\s+|very\s+)?(?:probably|likely|presumably|possibly|perhaps)\s*,?\s*"
    r"|i\s+(?:think|believe)\s*(?:that\s*)?,?\s*|it\s+(?:seems|appears)\s*(?:that\s*)?,?\s*"
    rf"|(?:according\s+to|based\s+on|from|per)\s+the\s+{_SOURCE}\s*[,:]?\s*"
    rf"|the\s+{_SOURCE}\s+(?:says|say|states|state|shows|show|indicates|indicate|mentions|mention)"
    r"\s*(?:that\s*)?:?\s*"
    r"|(?:the\s+)?(?:final\s+|short\s+)?answer(?:\s+is)?\s*:\s*"
    r"|the\s+(?:final\s+|short\s+)?answer\s+is\s*)",
    re.IGNORECASE,
)
"""Words that only say an answer follows ("The answer is", "According to the text,", "Answer:"), or
how sure the model is of it ("Probably", "I think"): the answer itself is judged as if said plainly."""

_EXPLAINED = re.compile(
    r"(?:\s*[.;:,]\s*|\s+[—–-]\s*|\s+)"
    rf"(?=(?:because|since|as\s+the\s+{_SOURCE}|the\s+{_SOURCE}\s+(?:says|states|shows|gives|lists|"
    rf"mentions)|according\s+to|this\s+is\s+because|from\s+the\s+{_SOURCE})\b)"
    r"|\s*\(",
    re.IGNORECASE,
)
"""Where an answer ends and its explanation begins: ". The text says", ", because", " (8.6 metres)"."""

_ASKS_WHICH = re.compile(r"\b(?:which|who|whom)\b", re.IGNORECASE)
_ASKS_WHY = re.compile(r"^\s*why\b|\bfor\s+what\s+reason\b", re.IGNORECASE)


_EMPHASIS = re.compile(r"(?<![\w*`])(\*\*|\*|`)(?=[^\s*`])(.+?)(?<=[^\s*`])\1(?![\w*`])")
"""Markdown emphasis around words ("**234,394**", "*X*", "`4NZ517`"; not underscores, which names
and code hold, "__init__"): how a chat model sets off its
answer, no word of it. Measured with the scripted capable reader worded as a chat model ("Based on the
text, the answer is **234,394**."): the answer stood, and came back to the user with its asterisks."""


def unframed(answer: str) -> str:
    """``answer`` without the words that only announce it ("The answer is No." → "No.") and without the
    Markdown emphasis that sets it off ("**No**" → "No")."""
    answer = _EMPHASIS.sub(r"\2", answer)
    while (match := _FRAME.match(answer)) and match.end() < len(answer.rstrip()):
        answer = answer[match.end() :]
    return answer.strip()


def part_only(given: str, reading: str, judged: Judged) -> Judged | None:
    """``judged`` made ``derived`` and unconfirmed when the words confirm only a part of ``given`` (its
    reading is neither the answer as given nor the answer without its frame: a statement of several, the
    words before an explanation), else None. The answer as given is what is returned, never the part,
    so the whole is what must be confirmed (by the verification call)."""
    plain = " ".join(unframed(given).split()).rstrip(".")
    if judged.kind == "none" or reading.rstrip(".") in (given.rstrip("."), plain):
        return None
    part = f"only part of it ({reading[:80]!r}) is confirmed by the words"
    return Judged("derived", judged.quotes, unconfirmed=part)


def before_explanation(answer: str, question: str) -> str:
    """``answer`` up to where it starts to explain itself ("17. The text says: …" → "17"); all of it
    when it does not. A "why" question's answer is its explanation ("because of the flood")."""
    if _ASKS_WHY.search(question):
        return answer
    match = _EXPLAINED.search(answer)
    return answer[: match.start()].strip() if match and match.start() > 0 else answer


@functools.lru_cache(maxsize=64)
def _options(question: str) -> tuple[frozenset[str], ...]:
    """The names a "which" question offers to choose among, parsed once per question (the map stage
    reads every chunk's answer against the same question)."""
    return tuple(name_phrases(question)) if _ASKS_WHICH.search(question) else ()


def chosen_option(answer: str, question: str) -> str:
    """The one option ``answer`` names, in its own words, when the question asks which of several it
    names ("Which of the Harriers, the Wolves and the Eagles …?") and the answer names exactly one
    ("The Eagles scored 7 goals in the final." → "The Eagles"); else ""."""
    options = _options(question)
    if len(options) < 2:
        return ""
    # A run may name its option with the names that place it ("The Provost of X" for the
    # Provost among "the officials of X Chancellor, Warden, … and Provost": a
    # held-out split, read by the capable reader in sentences, silent in every strategy).
    named = {
        option: run
        for run in capitalised_runs(answer)
        for option in options
        if option <= frozenset(content_stems(run))
    }
    runs = list(dict.fromkeys(named.values()))
    if len(named) != 1:
        return ""
    # With its article, as the answer says it ("The Eagles"), where it has one.
    article = re.search(rf"\b(the)\s+{re.escape(runs[0])}", answer, re.IGNORECASE)
    return f"{article.group(1)} {runs[0]}" if article else runs[0]


def answer_readings(answer: str, question: str) -> list[str]:
    """The ways to read the answer a wording gives, the whole first: without its frame, then up to its
    explanation, then the one option of a choice it names; each once, none empty."""
    bare = unframed(answer)
    readings = [answer, bare, before_explanation(bare, question)]
    option = chosen_option(bare, question)
    if option:
        readings.append(option)
    return [r for r in dict.fromkeys(" ".join(r.split()).rstrip(",;:") for r in readings) if r]


def judge_wording(
    answer: str,
    notes: Sequence[Note],
    question: str,
    *,
    partial: bool = False,
    rarity: Rarity | None = None,
    unread: int = 0,
) -> tuple[str, Judged]:
    """``answer`` judged (:func:`judge_answer`), or, when it does not stand, the first reading of the
    answer inside its wording that stands (:func:`answer_readings`), else, when it makes several
    statements, its first statement that stands on its own (read the same way), judged alone; with
    the text that stood (the answer as given when none did). Every stage that judges a model's answer
    judges it so: the final answer, a tree node's or a collapse group's, PECAN's over the reached
    passages.

    A reader that copies the text runs on past the sentence that answers. Measured (a
    held-out split, PECAN, 8K): "The great organ of the X cathedral has 8,193 pipes. It's obvious
    that biotech or software startups exist ..." did not stand (the second sentence's words are in no
    verified note), nor did the one note that held the fact, whose answer was the same copy: NO
    INFORMATION. Each reading passes every rule on its own, so a statement about something else, or one
    step of a chain, stands no more than it would alone."""
    # Its frame says nothing the answer does ("Probably", "The answer is"): judged without it, always,
    # or a tree node's note keeps "Probably Y" as a name no sentence gives.
    answer = unframed(answer) or answer
    whole = judge_answer(answer, notes, question, partial=partial, rarity=rarity, unread=unread)
    if whole.kind != "none":
        return answer, whole
    statements = [answer[start:end] for start, end in sentence_spans(answer)]
    tried = {answer}
    for text in [answer, *(statements if len(statements) >= 2 else [])]:
        for reading in answer_readings(text, question):
            if reading in tried:
                continue
            tried.add(reading)
            judged = judge_answer(reading, notes, question, partial=partial, rarity=rarity, unread=unread)
            if judged.kind != "none":
                return reading, judged
    return answer, whole
