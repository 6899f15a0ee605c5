"""The stub's deterministic "model": which question is asked, which text is shown, what answers it.

The oracle (:func:`oracle_answer`) is a bag-of-words sentence matcher: good enough to make a scripted
"model" find a planted fact in the chunk that holds it and say ``[NO INFORMATION]`` everywhere else.
It reads prompts by the project's layout rules (``prompts/__init__.py``): the shown text between
"... begins as follows:" and "... concludes here." lines, the question on the last "Question:" line
outside them. No web server here: unit-test fakes import this module directly.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
import string
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

NO_INFORMATION = "[NO INFORMATION]"
"""The literal answer the paper's prompts ask for when a chunk holds nothing relevant."""

TEXT_MARKERS: tuple[tuple[str, str | None], ...] = (
    ("begins as follows:", "concludes here."),
    ("Information from chunks:", None),
)
"""(start, end) substrings of the lines that fence the text shown to the model; ``None``: to the end.

The oracle only searches inside these fences so it never "finds" the answer in the instructions or in
the question itself. Extend this tuple when a prompt family uses other fences.
"""

FORMAT_HEADER = "Please follow this format:"
"""The line after which a text-mode prompt lists the labels it wants, one ``Label:`` a line (see
``longgraph.structured.format_instructions``); the oracle answers with exactly those labels."""

PROTOCOL_LABELS: tuple[str, ...] = (
    "Extracted Information",
    "Rationale",
    "Answer",
    "Confidence Score",
    "Confidence",
    "Information",
    "Evidence",
    "Chunk",
    "Summary",
)
"""Line labels of the paper's text protocol: in reduce prompts they start a new segment and are dropped,
so an answer quoted from a map output comes back without its ``Answer:`` prefix."""

STOP_WORDS: frozenset[str] = frozenset(
    """
    the and for are but not you all any can had her was one our out has his how its may who what which
    when where why did does doe this that with from they them their there then than into were been have
    will would could should about also these those some such only other very just over your she him each
    upon more most being both after before during while because here according text document passage
    mentioned mention question answer whose whom
    """.split()  # noqa: SIM905 - a word list reads better as prose than as 90 quoted literals
)

_WORD_RE = re.compile(r"[a-z0-9]+")
# A sentence ends at . ! or ? (optionally followed by a closing quote or bracket) plus whitespace. The
# capturing group keeps the separators so sentence offsets can be recovered from the pieces' lengths.
_SPLIT_RE = re.compile(r"((?:(?<!\b[A-Za-z])\.|[!?])[\"'”’)\]]?\s+)")
"""Sentence ends; a one-letter word's period ("Alder v. Birch", "J. Smith") does not end one."""
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_TOKEN_CHARS = frozenset(string.ascii_lowercase + string.digits)
_QUESTION_RE = re.compile(
    r"^\s*(?:[-*#>]+\s*)?(?:\*\*)?Question(?:\*\*)?\s*:(?:\*\*)?\s*(.*)$", re.IGNORECASE
)
_LABEL_LINE_RE = re.compile(r"^\s*(?:\*\*)?[A-Z][A-Za-z0-9 _()/-]{0,40}(?:\*\*)?:(?:\s|$)")
_FORMAT_LABEL_RE = re.compile(r"^\s*(?:\*\*)?([A-Za-z][A-Za-z0-9 _()/-]{0,40}?)(?:\*\*)?\s*:\s*$")
_NOTE_HEADER_RE = re.compile(r"^\s*(?:Note|Information) from [^:\n]{1,80}:\s*", re.IGNORECASE)
"""A note's header line ("Note from chunks 3-7:"): dropped like a protocol label."""
_PROTOCOL_LABEL_RE = re.compile(
    r"^\s*(?:[-*]\s*)?(?:\*\*)?(?:" + "|".join(re.escape(x) for x in PROTOCOL_LABELS) + r")(?:\s*\d+)?"
    r"(?:\*\*)?\s*:(?:\*\*)?\s*",
    re.IGNORECASE,
)


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(text.lower()) if len(w) >= 3 and w not in STOP_WORDS}


_BULLET_RE = re.compile(r"^(?:[*\u2022]|-(?=\s))\s+")


def _segments(text: str) -> Iterator[str]:
    """Yield paragraphs of ``text``: wrapped lines joined, protocol labels and JSON map outputs unpacked.

    Reduce prompts quote map outputs (``Answer: ...`` lines or JSON objects); unpacking them lets the
    oracle quote the fact rather than the wrapper around it.
    """
    current: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            if current:
                yield " ".join(current)
                current = []
            continue
        if line.startswith("{") and line.endswith("}"):
            try:
                obj = json.loads(line)
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                if current:
                    yield " ".join(current)
                    current = []
                yield from (v for v in obj.values() if isinstance(v, str))
                continue
        if _BULLET_RE.match(line):  # a bullet point is an item of its own, not a wrapped line
            if current:
                yield " ".join(current)
            current = [_BULLET_RE.sub("", line, count=1)]
            continue
        label = _PROTOCOL_LABEL_RE.match(line) or _NOTE_HEADER_RE.match(line)
        if label:
            if current:
                yield " ".join(current)
            current = [line[label.end() :]] if line[label.end() :] else []
            continue
        current.append(line)
    if current:
        yield " ".join(current)


def _split_sentences(text: str) -> tuple[str, list[str]]:
    """Return (normalised text, pieces): pieces alternate sentence, separator, and join to the text.

    Splitting each segment with a capturing pattern stays in C; offsets come from the pieces' lengths.
    """
    pieces: list[str] = []
    for segment in _segments(text):
        pieces.extend(_SPLIT_RE.split(segment.replace("\n", " ")))
        pieces.append("\n")
    return "".join(pieces), pieces


def _word_positions(low: str, word: str) -> Iterator[int]:
    """Start offsets of ``word`` as a whole token in the lower-cased ``low`` (str.find runs in C)."""
    i = low.find(word)
    while i >= 0:
        end = i + len(word)
        if (i == 0 or low[i - 1] not in _TOKEN_CHARS) and (end == len(low) or low[end] not in _TOKEN_CHARS):
            yield i
        i = low.find(word, end)


_TITLE_LABEL = re.compile(r"^\[Document: [^\n]*\]$", re.MULTILINE)


def oracle_answer(question: str, text: str) -> tuple[str | None, float]:
    """Answer ``question`` from ``text`` by picking the sentence sharing most content words with it.

    Returns ``(sentence, 5.0)`` when the best sentence shares at least ``max(2, 50 %)`` of the question's
    content words, else ``(None, 0.0)``. A sentence with exactly the question's content words is taken to
    be the question echoed back and is skipped. Ties go to the earliest sentence, so the result is
    deterministic.
    """
    q_words = _content_words(question)
    if not q_words:
        return None, 0.0
    threshold = max(2.0, 0.5 * len(q_words))
    # A chunk's "[Document: title]" lines label the text; they are not sentences of it (a question naming
    # the document would otherwise be "answered" with its title).
    norm, pieces = _split_sentences(_TITLE_LABEL.sub("", text) if "[Document: " in text else text)
    # Find the question's words in the whole text and bucket them into sentences by offset: tokenising
    # every sentence in Python cost ~2.5 ms per 26 KB prompt and capped the benchmark's throughput.
    starts = list(itertools.accumulate(map(len, pieces), initial=0))[0::2]
    low = norm.translate(_ASCII_LOWER)  # length-preserving, unlike str.lower(); tokens are ASCII anyway
    hits: dict[int, set[str]] = {}
    for word in q_words:
        for pos in _word_positions(low, word):
            hits.setdefault(bisect.bisect_right(starts, pos) - 1, set()).add(word)
    best: str | None = None
    best_score = 0
    for idx in sorted(hits):
        score = len(hits[idx])
        if score <= best_score:
            continue
        sentence = (pieces[2 * idx] + pieces[2 * idx + 1].rstrip()).strip()
        if score == len(q_words) and _content_words(sentence) == q_words:
            continue  # the question echoed back, not an answer
        best, best_score = sentence, score
    if best is not None and best_score >= threshold:
        return best, 5.0
    return None, 0.0


def _message_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        return "\n".join(str(p) for p in parts)
    return ""


def _marker_spans(lines: Sequence[str]) -> list[tuple[int, int]]:
    """Half-open line ranges of the fenced text blocks (marker lines themselves excluded)."""
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        low = lines[i].lower()
        opened = next((pair for pair in TEXT_MARKERS if pair[0].lower() in low), None)
        if opened is None:
            i += 1
            continue
        end_marker = opened[1]
        start = i + 1
        j = start
        if end_marker is not None:
            while j < len(lines) and end_marker.lower() not in lines[j].lower():
                j += 1
        else:
            j = len(lines)
        spans.append((start, j))
        i = j + 1
    return spans


def _question_spans(lines: Sequence[str]) -> list[tuple[int, int, str]]:
    """Every ``Question:`` block as (first line, end line, question text)."""
    found: list[tuple[int, int, str]] = []
    for i, line in enumerate(lines):
        m = _QUESTION_RE.match(line)
        if not m:
            continue
        parts = [m.group(1).strip()] if m.group(1).strip() else []
        j = i + 1
        while j < len(lines) and lines[j].strip() and not _LABEL_LINE_RE.match(lines[j]):
            parts.append(lines[j].strip())
            j += 1
        found.append((i, j, " ".join(parts)))
    return found


def extract_question_and_text(messages: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """Split chat ``messages`` into (question, text shown to the model) following the prompt conventions.

    The question is the last non-empty ``Question:`` block outside the fenced text (see
    :data:`TEXT_MARKERS`) of the user messages, falling back to the system messages and then to the last
    line ending in ``?``. The text is the content of every fence; without fences, the whole user message
    minus the question lines.
    """
    # Messages are separate blocks: a blank line keeps one's last line from running into the next.
    user_text = "\n\n".join(_message_text(m) for m in messages if m.get("role") == "user")
    lines = user_text.splitlines()
    spans = _marker_spans(lines)

    def inside(idx: int) -> bool:
        return any(a <= idx < b for a, b in spans)

    candidates = [q for q in _question_spans(lines) if q[2]]
    outside = [q for q in candidates if not inside(q[0])]
    chosen = (outside or candidates)[-1] if candidates else None
    question = chosen[2] if chosen else ""
    if not question:
        system_text = "\n".join(
            _message_text(m) for m in messages if m.get("role") in ("system", "developer")
        )
        sys_q = [q for q in _question_spans(system_text.splitlines()) if q[2]]
        if sys_q:
            question = sys_q[-1][2]
        else:
            asked = [ln.strip() for ln in lines if ln.strip().endswith("?")]
            question = asked[-1] if asked else ""
    skip = set(range(chosen[0], chosen[1])) if chosen else set()
    if spans:
        # Blocks are joined by blank lines so a sentence never runs from one block into the next.
        text = "\n\n".join("\n".join(lines[k] for k in range(a, b) if k not in skip) for a, b in spans)
    else:
        text = "\n".join(ln for k, ln in enumerate(lines) if k not in skip)
    return question, text


POINTS_PER_GROUP = 3
"""The oracle's summariser: one point per this many consecutive segments of the shown text."""


def summary_points(text: str) -> list[str]:
    """Summary points of ``text`` (a question-free summarise prompt, e.g. PECAN's Table A1): the first
    sentence of every :data:`POINTS_PER_GROUP`-th segment (line). Deterministic, and it compresses, so a
    graph built on it converges; a fact not at a segment's start survives only in the chunks below."""
    segments = [line.strip() for line in text.splitlines() if line.strip()]
    points = []
    for segment in segments[::POINTS_PER_GROUP]:
        first = _SPLIT_RE.split(segment.lstrip("*-• "), maxsplit=1)[0].strip()
        if first:
            points.append(first[:280])
    return points


_NUMBERED_LINE = re.compile(r"^\[(\d+)\]\s+(.*\S)\s*$")


def synthesis_sentences(text: str) -> list[dict[str, Any]]:
    """An upper pyramid node (Pyramid-Align's synthesis prompt): the numbered sentences of the shown text,
    every :data:`POINTS_PER_GROUP`-th kept with its bold markers removed, each citing its own id — and,
    so that bad citations are exercised too, one id that was never shown. Deterministic and shrinking."""
    numbered = [
        (int(m.group(1)), m.group(2).replace("**", "").strip())
        for line in text.splitlines()
        if (m := _NUMBERED_LINE.match(line.strip()))
    ]
    kept = numbered[::POINTS_PER_GROUP]
    unknown = 1 + max((i for i, _ in numbered), default=0) + 10_000
    return [
        {"text": sentence[:280], "cites": [i, unknown] if k == 0 else [i]}
        for k, (i, sentence) in enumerate(kept)
    ]


def generated_question(text: str) -> str:
    """A question about the shown text (Pyramid-Align's question prompts): about its first sentence."""
    body = " ".join(
        line.replace("**", "") for line in text.splitlines() if not line.startswith(("###", "Propose"))
    )
    first = _SPLIT_RE.split(body.strip(), maxsplit=1)[0].strip()
    words = re.findall(r"[\w'-]+", first)[:8]
    return f"What does the text say about {' '.join(words) or 'its subject'}?"


NO_PLAN: dict[str, Any] = {"aggregates": False}
"""The oracle's records plan of every question (``nodes/records/``): a sentence matcher cannot plan, so
every question keeps its strategy's path."""
