"""A scripted *capable* reader: answers as an 8B–70B model would, to test the answer layer against it.

The stub's oracle copies the one sentence that matches a question, which is what the embedded 135M
model does at best. A capable model does more: it copies every sentence that bears on the question, even
part of a chain ("Acme was founded by Pell Darrow" for "Where was Acme's founder born?"), and when the
notes in front of it hold what it needs it concludes — a count, a sum, a comparison, a verdict, the end of
the chain — in words no single sentence holds. The answer layer must hand that conclusion back, not
overrule it with a note sentence.

A :class:`Scenario` plants facts, one per place in a document, and names what a capable reader concludes
from them. The reader answers every stage that reads text for the question: with the conclusion once it
sees every fact it needs, with the facts it sees (copied) when it sees some, and with NO INFORMATION when
it sees none; Segment+'s filter keeps a note that holds a fact, PECAN's search says "Yes" once the shown
information holds every fact needed. Stages that build structure (outlines, summaries, information
points, plans) get the oracle's answers, as before. Asked to verify an answer (``prompts/verify.toml``), it
says yes to its own conclusion and no to anything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from longgraph.testing.answers import (
    build_completion_content,
    check_answer,
    check_content,
    verification_asked,
)
from longgraph.testing.oracle import NO_INFORMATION, extract_question_and_text

READING_SCHEMAS = frozenset(
    {
        "ChunkAnswer",
        "DirectAnswer",
        "ReduceOutput",
        "MapOutput",
        "TreeAnswer",
        "TreeAnswerPlain",
        "SegmentNote",
        "MergedReasoning",
        "FreeTextNote",
        "FilterDecision",
    }
)
"""Stages that read text for the question and answer it (or judge a note for it)."""
SETTINGS: dict[str, Any] = {
    "context_window": 2048,
    "max_output_tokens": 256,
    "structured_output": "json_schema",
    "base_url": "http://fake.invalid/v1",
    "model": "scripted",
    "temperature": 0.0,
    "cache_path": "",
    "tom_top_k": 0,
}
"""What a graph run on the scripted reader gets: small windows (many chunks from a short document),
constrained JSON, no cache; ``base_url`` is never contacted, and being set it keeps the embedded server
out of the picture."""
Style = Literal["bare", "sentence", "explained", "chatty"]
"""How the reader words what it concludes. Real 8B–70B models do not all answer alike, and an answer
layer built against one wording is fitted to it: "bare" gives the conclusion alone ("2,800"); "sentence"
gives it as a sentence (the fact that states it, copied, or "The answer is 3."); "explained" gives it
and then the facts it rests on, look-alikes' values among them where it compared them, and says it
does not know in its own words ("The text does not say.") instead of the protocol's NO INFORMATION;
"chatty" words it as a chat model tuned to please does: a lead-in, the conclusion in Markdown bold, a
list as bullet lines ("Based on the text, the answer is:\n- **X**\n- **Y**"), and not
knowing as an apology ("I could not find that in the text provided.")."""
STYLES: tuple[Style, ...] = get_args(Style)
ENOUGH_SCHEMA = "Sufficiency"
CHECK_SCHEMA = "AnswerCheck"
"""The proposed answer, whole: a list may take several lines (the prompt leaves a blank line after it)."""
_ASKED = re.compile(r"^Question:\s*(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Scenario:
    """Facts planted in a document, the question, and what a capable reader concludes from them."""

    name: str
    question: str
    facts: tuple[str, ...]
    conclusion: str
    """What the reader answers once it sees every fact (the expected final answer)."""
    accepted: tuple[str, ...] = ()
    """Other spellings of the right answer a test accepts (beside ``conclusion``)."""

    def right(self, answer: str) -> bool:
        """Whether ``answer`` states the conclusion (or an accepted spelling) as a whole: a count of 4 is
        not the 4 in "134 horses"."""
        folded = " ".join(answer.casefold().split())

        def holds(said: str) -> bool:
            return bool(
                re.search(
                    rf"(?<![\w.,]){re.escape(' '.join(said.casefold().split()))}(?![\w]|[.,]\d)", folded
                )
            )

        if any(holds(a) for a in (self.conclusion, *self.accepted)):
            return True
        # A list said another way (one item a line, in bold): every item, each whole.
        items = list_items(self.conclusion, self.question)
        return bool(items) and all(holds(item) for item in items)


def schema_name(extras: Mapping[str, Any]) -> str:
    """The JSON schema a request asks for by name (its ``response_format``), or "" in text mode."""
    response_format = extras.get("response_format")
    if isinstance(response_format, Mapping):
        spec = response_format.get("json_schema")
        if isinstance(spec, Mapping):
            return str(spec.get("name") or "")
    return ""


UNKNOWN_IN_OWN_WORDS = "The text does not say."
UNKNOWN_CHATTILY = "I could not find that in the text provided."
_LISTED = re.compile(r",\s+|\s+and\s+")
_ASKS_FOR_ITEMS = re.compile(r"^\W*(?:for\s+)?which\s+(?!of\b)[a-z]+s\b", re.IGNORECASE)


def list_items(conclusion: str, question: str) -> list[str]:
    """The items of a conclusion that answers a question asking for several things ("For which
    foundations …", "Which teams scored …"), or none: a motto ("measure twice and sail once") is one
    value, whatever its words."""
    if not _ASKS_FOR_ITEMS.search(question):
        return []
    items = _LISTED.split(conclusion)
    return items if len(items) > 1 else []


_COUNTED_IN = re.compile(r"\bhow\s+many\s+(?!of\b)([a-z]+)\b", re.IGNORECASE)
"""The unit a "How many metres …" question counts in: a chat model writes it after the number."""


def worded(conclusion: str, seen: Sequence[str], style: Style, question: str = "") -> str:
    """``conclusion``, drawn from the facts ``seen``, as a reader of ``style`` words it (``question``:
    what it answers, whose unit a chatty reader writes after a number)."""
    if conclusion == NO_INFORMATION:
        unknown = {"explained": UNKNOWN_IN_OWN_WORDS, "chatty": UNKNOWN_CHATTILY}
        return unknown.get(style, NO_INFORMATION)
    if style == "bare":
        return conclusion
    if style == "chatty":
        items = list_items(conclusion, question)
        if items:
            return "Based on the text, the answer is:\n" + "\n".join(f"- **{item}**" for item in items)
        unit = _COUNTED_IN.search(question)
        if unit and re.fullmatch(r"[\d,.]+", conclusion):
            conclusion = f"{conclusion} {unit.group(1)}"
        return f"Based on the text, the answer is **{conclusion}**."
    whole = re.compile(rf"(?<![\w.,]){re.escape(conclusion)}(?![\w]|[.,]\d)")
    stating = [fact for fact in seen if whole.search(fact)]
    if style == "sentence":
        # The one fact that states it, copied (a chain's end, the top item's own fact); a conclusion no
        # fact states (a count, a list) said so.
        return stating[0] if len(stating) == 1 else f"The answer is {conclusion}."
    because = " ".join(seen)
    return f"{conclusion}. The text says: {because}"


Wording = Callable[[str, Sequence[str], Style, str], str]
"""How a reader words a conclusion: (conclusion, the facts seen, style, question) -> its text."""


def recognised(fact: str, flat: str) -> bool:
    """Whether a reader sees ``fact`` in ``flat`` (whitespace-normalised text): the sentence's words as
    written, its closing punctuation aside (a quote that ends "... Willner and" is the sentence "...
    Willner and ." to any reader)."""
    core = " ".join(fact.split()).rstrip(" .;:!?")
    return bool(core) and core in flat


def capable_responder(scenario: Scenario, style: Style = "bare", wording: Wording | None = None) -> Any:
    """A :class:`~longgraph.testing.fakes.ScriptedChatModel` responder reading as a capable model,
    wording what it concludes in ``style`` (with ``wording``, :func:`worded` when None)."""
    from longgraph.testing.fakes import oracle_responder

    word = wording or worded

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        name = schema_name(extras)
        if name == CHECK_SCHEMA:  # the verification call: yes to the answer it would have given itself
            content = str(messages[-1]["content"])
            verifying = verification_asked(messages)
            asked = _ASKED.search(content)
            given = verifying.proposed if verifying else ""
            right = bool(given) and (
                scenario.right(given)
                # A step of its own reasoning, asked on its own ("What is the name of the architect of
                # the X library?" on the way to where the architect grew up): yes when a fact it
                # needs, shown, states the proposed answer. The question itself gets yes only for the
                # conclusion (a count's answer is not one of the items it counts).
                or (
                    asked is not None
                    and asked.group(1).strip() != scenario.question.strip()
                    and any(
                        recognised(fact, " ".join(content.split())) and given.rstrip(".") in fact
                        for fact in scenario.facts
                    )
                )
            )
            # Its own way of saying it found nothing claims nothing; another answer is its one claim.
            unknown = word(NO_INFORMATION, [], style, scenario.question)
            claims_nothing = not given or given in (NO_INFORMATION, unknown)
            check = check_answer(given, None if claims_nothing else "stated" if right else "not stated")
            return check_content({"messages": list(messages), **extras}, check)
        if name not in READING_SCHEMAS and name != ENOUGH_SCHEMA:
            return oracle_responder(messages, extras)
        _, text = extract_question_and_text(list(messages))
        flat = " ".join(text.split())
        seen = [fact for fact in scenario.facts if recognised(fact, flat)]
        body = {"messages": list(messages), **extras}
        if name == ENOUGH_SCHEMA:
            enough = len(seen) == len(scenario.facts)
            return build_completion_content(body, said=("Yes", "enough") if enough else ("No", None))[0]
        if len(seen) == len(scenario.facts):
            said: tuple[str, str | None] = (
                word(scenario.conclusion, seen, style, scenario.question),
                " ".join(seen),
            )
        elif seen:
            said = (" ".join(seen), " ".join(seen))
        else:
            said = (word(NO_INFORMATION, seen, style, scenario.question), None)
        return build_completion_content(body, said=said)[0]

    return respond
