"""Readers built from a generator's gold: a perfect reader (``reference``) and one that reads perfectly
but never aggregates (``extractor``).

A suite's gold becomes a :class:`Gold`: the **records** the right answer rests on — each a verbatim span
of the document (a needle sentence, an assignment, a list entry, a supporting sentence), counted with
its multiplicity — the conclusion a right model draws from all of them, and whether drawing it takes
more than one record (counting, ranking, listing several values, following a chain). A reader finds the
records in the text a call shows it (:meth:`Gold.seen`: the raw text of a chunk, or notes that copied
records), and answers:

* **reference** — a perfect model. Reading a chunk, it copies the records present (the evidence, as
  the map prompts ask), as many as the output budget holds; over notes, or in a call whose answer is
  the run's, it gives the conclusion once every record is shown (worded as the run's wording asks) and
  copies what it sees otherwise; shown none, NO INFORMATION. Asked to verify, it says yes to a right
  answer only.
* **extractor** — reads as perfectly (the same records from the same text) but never combines
  records: for a question that needs one record it concludes as the reference does; for one that needs
  several, over notes or in a call whose answer is the run's, it answers with its best single note
  (the first record it sees), whatever the notes allow. Asked to verify, it says yes only to a right
  answer one shown record states. A graph scores high with it only where code does the combining.

Both answer every structured call the graphs make: the reading calls by the rules above, PECAN's
"enough?" by whether the shown records suffice (for the extractor: suffice without combining), the
records route's plan (the generator's own, :attr:`Gold.plan`) and extraction (every record the chunk
holds, with its field values, cut at the output budget as a model's answer is), and the calls that
build structure (outlines, summaries, information points) by the stub's oracle, as the capable reader
does (:mod:`longgraph.testing.capable`). Nothing here reads the project's answer code.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from longgraph.state.records import MAX_RECORD_ROWS
from longgraph.testing.answers import build_completion_content, check_answer, check_content
from longgraph.testing.capable import CHECK_SCHEMA, ENOUGH_SCHEMA, READING_SCHEMAS, schema_name
from longgraph.testing.oracle import NO_INFORMATION, extract_question_and_text
from longgraph.tokenizer import get_tokenizer

Reader = Literal["reference", "extractor"]
READERS: tuple[Reader, ...] = get_args(Reader)
Wording = Literal["bare", "sentence", "chatty"]
WORDINGS: tuple[Wording, ...] = get_args(Wording)
UNKNOWN_CHATTILY = "I'm sorry, but I could not find that in the text provided."
_PROPOSED = re.compile(r"^Proposed answer:\s*(.*?)\n\n", re.MULTILINE | re.DOTALL)
_CHUNK_SHOWN = "The text begins as follows:"
"""The fence of a chunk's own text (``prompts/``): a call that reads a chunk, not notes or information."""
PLAN_SCHEMA = "RecordPlan"
RECORDS_SCHEMA = "ChunkRecords"
FINAL_SCHEMA = "DirectAnswer"
"""The schema of a call whose answer is the run's (a single pass over the text, a reduce)."""
CHARS_PER_TOKEN = 3
"""A reader's copy is cut to the output budget at this many characters a token (a safe floor for
English and for RULER's numbers and codes under cl100k_base)."""


def flat(text: str) -> str:
    """Whitespace runs as one space: how records are compared with shown text."""
    return " ".join(text.split())


@dataclass(frozen=True)
class Gold:
    """What a question's right answer rests on and what a right model concludes from it."""

    conclusion: str
    """The right answer as a right model gives it (the gold; a list joined by ", ")."""
    records: Counter[str]
    """Each record a verbatim span of the document (whitespace flattened), with how often it occurs;
    none for a question the document cannot answer."""
    right: Callable[[str], bool]
    """Whether an answer is right (the suite's own scorer, full marks)."""
    pattern: re.Pattern[str] | None = None
    """Finds candidate records in shown text (every match that is a record counts); None: each record
    is looked for as it is (fine for a handful)."""
    aggregates: bool = field(default=False)
    """The answer needs more than one record combined."""
    plan: Mapping[str, Any] | None = None
    """The records plan a right model writes for the question (``state/records.py``), None: it does not
    aggregate; both readers write it (planning reads the question, it combines nothing)."""
    rows: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Each record's field values in the plan's order, as the document writes them."""

    def seen(self, text: str) -> Counter[str]:
        """The records ``text`` shows (no more of each than the document holds)."""
        shown = flat(text)
        if self.pattern is not None:
            found = Counter(m for m in self.pattern.findall(shown) if m in self.records)
        else:
            found = Counter({r: shown.count(r) for r in self.records if r in shown})
        return found & self.records

    def suffices(self, seen: Counter[str]) -> bool:
        return bool(self.records) and seen == self.records

    def stated_by_one(self, answer: str, shown: Counter[str]) -> bool:
        """Whether one shown record states ``answer`` (the extractor's verification)."""
        said = flat(answer).casefold().rstrip(".")
        return bool(said) and any(said in record.casefold() for record in shown)


def word_conclusion(conclusion: str, seen: Sequence[str], wording: Wording) -> str:
    """``conclusion`` worded as a right model of ``wording`` words it (``seen``: the records it read):
    the bare answer; a sentence (the first record that states it whole, copied, else "The answer is
    X."); chat style (a lead-in and the answer in Markdown bold; not knowing as an apology)."""
    if conclusion == NO_INFORMATION:
        return UNKNOWN_CHATTILY if wording == "chatty" else NO_INFORMATION
    if wording == "sentence":
        whole = re.compile(rf"(?<!\w){re.escape(conclusion)}(?!\w)", re.IGNORECASE)
        stating = [r for r in seen if whole.search(r)]
        return stating[0] if stating else f"The answer is {conclusion}."
    if wording == "chatty":
        return f"Based on the text, the answer is **{conclusion}**."
    return conclusion


def copied_records(records: Sequence[str], budget_tokens: int) -> str:
    """The records in document order, as many as fit the output budget (at least the first)."""
    limit = max(1, budget_tokens) * CHARS_PER_TOKEN
    kept: list[str] = []
    used = 0
    for record in records:
        if kept and used + len(record) + 1 > limit:
            break
        kept.append(record)
        used += len(record) + 1
    return "\n".join(kept)


def _records_answer(records: Sequence[str], gold: Gold, budget_tokens: int) -> str:
    """Every record as an extraction row (values and quote), as JSON; cut at the output budget when it
    runs past it, as a model's answer is (the records path then reads the chunk in halves)."""
    rows = [{"values": list(gold.rows.get(r, ())), "quote": r} for r in records][:MAX_RECORD_ROWS]
    text = json.dumps({"records": rows})
    starts = get_tokenizer(None).token_starts(text)
    return text if len(starts) <= budget_tokens else text[: starts[budget_tokens]]


def gold_responder(
    gold: Gold, reader: Reader, wording: Wording = "bare", *, max_output_tokens: int = 256
) -> Callable[[Sequence[Mapping[str, Any]], Mapping[str, Any]], str]:
    """A :class:`~longgraph.testing.fakes.ScriptedChatModel` responder: ``reader`` over ``gold``."""
    from longgraph.testing.fakes import oracle_responder

    def in_order(seen: Counter[str], text: str) -> list[str]:
        shown = flat(text)
        return sorted(seen, key=lambda r: shown.find(r))

    def respond(messages: Sequence[Mapping[str, Any]], extras: Mapping[str, Any]) -> str:
        name = schema_name(extras)
        body = {"messages": list(messages), **extras}
        if name == CHECK_SCHEMA:
            content = str(messages[-1]["content"])
            proposed = _PROPOSED.search(content)
            answer = proposed.group(1) if proposed else ""
            right = bool(answer) and gold.right(answer)
            if reader == "extractor" and gold.aggregates:
                right = right and gold.stated_by_one(answer, gold.seen(content))
            claims_nothing = not answer.strip() or answer.strip() in (NO_INFORMATION, UNKNOWN_CHATTILY)
            check = check_answer(answer, None if claims_nothing else "stated" if right else "not stated")
            return check_content(body, check)
        if name == PLAN_SCHEMA:
            return json.dumps(dict(gold.plan) if gold.plan else {"aggregates": False})
        if name == RECORDS_SCHEMA:  # every record the chunk holds, as the output budget allows
            _, shown_text = extract_question_and_text(list(messages))
            seen_here = gold.seen(shown_text)
            rows = [r for r in sorted(seen_here.elements(), key=lambda r: flat(shown_text).find(r))]
            return _records_answer(rows, gold, max_output_tokens)
        if name not in READING_SCHEMAS and name != ENOUGH_SCHEMA:
            return oracle_responder(messages, extras)
        _, text = extract_question_and_text(list(messages))
        prompt = str(messages[-1]["content"])
        seen = gold.seen(text)
        records = in_order(seen, text)
        can_conclude = gold.suffices(seen) and (reader == "reference" or not gold.aggregates)
        if name == ENOUGH_SCHEMA:
            return build_completion_content(body, said=("Yes", "enough") if can_conclude else ("No", None))[0]
        evidence = copied_records(records, max_output_tokens)
        reads_a_chunk = name != FINAL_SCHEMA and _CHUNK_SHOWN in prompt
        if not records:
            said: tuple[str, str | None] = (word_conclusion(NO_INFORMATION, records, wording), None)
        elif reads_a_chunk:  # a chunk's reading: the evidence present, copied as the prompt asks
            said = (evidence, evidence)
        elif can_conclude:
            said = (word_conclusion(gold.conclusion, records, wording), evidence)
        elif reader == "extractor" and gold.aggregates:  # its best single note, never a combination
            said = (records[0], records[0])
        else:
            said = (evidence, evidence)
        return build_completion_content(body, said=said)[0]

    return respond
