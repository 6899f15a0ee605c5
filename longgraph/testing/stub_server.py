"""A local OpenAI-compatible chat server with a deterministic "oracle" model and fault injection.

Why it exists: the graphs talk to real OpenAI-compatible endpoints over HTTP, and their retry, timeout,
fallback and checkpoint logic only gets exercised honestly by a real HTTP peer that misbehaves on purpose.
A real model is slow and non-deterministic; this stub answers in microseconds, deterministically, from the
text it is shown, and injects errors, hangs, malformed output, rate limits and process death on a
reproducible schedule (a seed plus the request counter).

Three ways to run it:

* ``python -m longgraph.testing.stub_server --port 0 ...`` prints ``STUB_URL=http://127.0.0.1:PORT/v1``;
* :func:`run_stub_in_subprocess` wraps that in a context manager (needed for ``exit_after``, which kills
  the process for real);
* :func:`run_stub_in_thread` serves from a background thread of the current process (fast, for tests).

The oracle (:func:`oracle_answer`) is a bag-of-words sentence matcher: good enough to make a scripted
"model" find a planted fact in the chunk that holds it and say ``[NO INFORMATION]`` everywhere else.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import enum
import itertools
import json
import math
import os
import queue
import random
import re
import socket
import string
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = [
    "EXIT_AFTER_RETURN_CODE",
    "FORMAT_HEADER",
    "NO_INFORMATION",
    "TEXT_MARKERS",
    "Fault",
    "StubConfig",
    "StubHandle",
    "build_completion_content",
    "create_app",
    "decide_fault",
    "extract_question_and_text",
    "main",
    "oracle_answer",
    "requested_labels",
    "run_stub_in_subprocess",
    "run_stub_in_thread",
]

NO_INFORMATION = "[NO INFORMATION]"
"""The literal answer the paper's prompts ask for when a chunk holds nothing relevant."""

EXIT_AFTER_RETURN_CODE = 3
"""Exit status of a process stopped by ``exit_after``: distinct from a crash (1) and a clean stop (0)."""

STAGE_HEADER = "X-Longgraph-Stage"
"""Header the project's client sets so the stub can count requests per pipeline stage."""

URL_LINE_PREFIX = "STUB_URL="

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
_SPLIT_RE = re.compile(r"([.!?][\"'”’)\]]?\s+)")
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


# --------------------------------------------------------------------------------------------------
# Configuration and the fault schedule
# --------------------------------------------------------------------------------------------------


class StubConfig(BaseModel):
    """Fault and identity settings; changeable at runtime through ``POST /stub/config``.

    Rates are independent slices of one uniform draw per request (error, then timeout, then malformed), so
    ``error_rate=0.2`` really means 20 % of the non-rate-limited requests fail, whatever the other rates.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(default="stub", description="Model name served at /v1/models and echoed in responses.")
    latency_s: float = Field(default=0.0, ge=0, description="Fixed sleep before every chat answer.")
    error_rate: float = Field(default=0.0, ge=0, le=1, description="Fraction answered HTTP 500 or 503.")
    timeout_rate: float = Field(default=0.0, ge=0, le=1, description="Fraction that hang for hang_s.")
    hang_s: float = Field(
        default=3600.0, ge=0, description="How long a 'timeout' request hangs before answering."
    )
    malformed_rate: float = Field(
        default=0.0, ge=0, le=1, description="Fraction answered 200 with broken content."
    )
    rate_limit_every: int = Field(default=0, ge=0, description="Every Nth request answers 429; 0 disables.")
    retry_after_s: float = Field(default=1.0, ge=0, description="Retry-After sent with a 429.")
    die_after: int | None = Field(
        default=None, ge=0, description="After N completed answers, refuse with 503."
    )
    exit_after: int | None = Field(
        default=None,
        ge=1,
        description="After N completed answers, stop the server (os._exit in a subprocess).",
    )
    seed: int = Field(default=0, description="Seed of the per-request fault draws.")
    api_key: str | None = Field(
        default=None,
        description="Opt-in: answer 401 to chat requests whose bearer token differs, echoing the token "
        "presented in the error message as some providers do (tests that keys never leak use it).",
    )


class Fault(enum.StrEnum):
    """What the stub does to one request; decided by :func:`decide_fault` alone."""

    NONE = "none"
    RATE_LIMIT = "rate_limit"
    ERROR_500 = "error_500"
    ERROR_503 = "error_503"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"


_MALFORMED_KINDS = ("truncated", "gibberish", "prose")


def _request_rng(seed: int, seq: int) -> random.Random:
    """A generator that depends only on (seed, seq): the schedule survives concurrency and restarts."""
    return random.Random(f"longgraph-stub:{seed}:{seq}")


def decide_fault(config: StubConfig, seq: int) -> Fault:
    """Return the fault for the ``seq``-th chat request (1-based) under ``config``.

    Pure: the same config and counter always give the same fault, which is what makes two runs with the
    same seed inject the same faults in the same order.
    """
    if config.rate_limit_every and seq % config.rate_limit_every == 0:
        return Fault.RATE_LIMIT
    rng = _request_rng(config.seed, seq)
    u = rng.random()
    if u < config.error_rate:
        return Fault.ERROR_500 if rng.random() < 0.5 else Fault.ERROR_503
    u -= config.error_rate
    if u < config.timeout_rate:
        return Fault.TIMEOUT
    u -= config.timeout_rate
    if u < config.malformed_rate:
        return Fault.MALFORMED
    return Fault.NONE


# --------------------------------------------------------------------------------------------------
# The oracle
# --------------------------------------------------------------------------------------------------


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(text.lower()) if len(w) >= 3 and w not in STOP_WORDS}


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
    norm, pieces = _split_sentences(text)
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


# --------------------------------------------------------------------------------------------------
# Building the answer in the requested shape
# --------------------------------------------------------------------------------------------------

_POSITIVE = ("keep", "yes", "true", "relevant", "accept", "include")
_NEGATIVE = ("remove", "no", "false", "irrelevant", "reject", "drop", "exclude", "discard")


def _resolve(root: Mapping[str, Any], prop: Mapping[str, Any], depth: int = 0) -> dict[str, Any]:
    """Follow local ``$ref`` / single ``allOf`` / nullable ``anyOf`` so the property's real shape shows."""
    out: dict[str, Any] = dict(prop)
    if depth > 8:
        return out
    ref = out.pop("$ref", None)
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for key in ref[2:].split("/"):
            target = target.get(key, {}) if isinstance(target, Mapping) else {}
        if isinstance(target, Mapping):
            out = {**_resolve(root, target, depth + 1), **out}
    for combo in ("allOf", "anyOf", "oneOf"):
        options = out.pop(combo, None)
        if isinstance(options, list):
            non_null = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
            if non_null:
                out = {**_resolve(root, non_null[0], depth + 1), **out}
    return out


def _schema_type(prop: Mapping[str, Any]) -> str | None:
    t = prop.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    if isinstance(t, str):
        return t
    enum_values = prop.get("enum")
    if isinstance(enum_values, list) and enum_values:
        first = enum_values[0]
        if isinstance(first, bool):
            return "boolean"
        if isinstance(first, int | float):
            return "number"
        return "string"
    if "properties" in prop:
        return "object"
    return None


def _pick_enum(values: Sequence[Any], found: bool) -> Any:
    """Choose the enum member that means "keep" when something was found, "remove" otherwise."""
    wanted = _POSITIVE if found else _NEGATIVE
    for v in values:
        if str(v).strip().lower() in wanted:
            return v
    if found or len(values) < 2:
        return values[0]
    return values[1]


@dataclass(frozen=True, slots=True)
class _Verdict:
    sentence: str | None
    confidence: float

    @property
    def found(self) -> bool:
        return self.sentence is not None

    @property
    def answer(self) -> str:
        return self.sentence if self.sentence is not None else NO_INFORMATION

    @property
    def rationale(self) -> str:
        if self.found:
            return "The text states this directly."
        return "The text does not mention anything relevant to the question."


def _fill_value(root: Mapping[str, Any], name: str, raw: Mapping[str, Any], verdict: _Verdict) -> Any:
    prop = _resolve(root, raw)
    low = name.lower()
    ptype = _schema_type(prop)
    enum_values = prop.get("enum")
    if "confidence" in low or (ptype in ("number", "integer") and not enum_values):
        if ptype == "integer":
            return int(verdict.confidence)
        if ptype == "string":
            return str(int(verdict.confidence))
        return verdict.confidence
    if isinstance(enum_values, list) and enum_values:
        return _pick_enum(enum_values, verdict.found)
    if ptype == "boolean":
        return verdict.found
    if ptype == "array":
        items = _resolve(root, prop.get("items") or {})
        if _schema_type(items) == "object":
            return [_fill_object(root, items, verdict)] if verdict.found else []
        if "answer" in low:
            return [verdict.answer] if verdict.found else []
        return [verdict.sentence] if verdict.sentence is not None else []
    if ptype == "object":
        return _fill_object(root, prop, verdict)
    if ptype == "null":
        return None
    if "answer" in low:
        return verdict.answer
    if any(k in low for k in ("rationale", "reason", "explanation", "thought")):
        return verdict.rationale
    return verdict.sentence if verdict.sentence is not None else "No relevant information."


def _fill_object(root: Mapping[str, Any], schema: Mapping[str, Any], verdict: _Verdict) -> dict[str, Any]:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    return {
        str(k): _fill_value(root, str(k), v if isinstance(v, Mapping) else {}, verdict)
        for k, v in props.items()
    }


def _default_object(verdict: _Verdict) -> dict[str, Any]:
    return {
        "extracted_information": verdict.sentence if verdict.sentence is not None else "None",
        "rationale": verdict.rationale,
        "answer": verdict.answer,
        "confidence_score": int(verdict.confidence),
    }


def _text_protocol(verdict: _Verdict) -> str:
    return (
        f"Extracted Information: {verdict.sentence if verdict.sentence is not None else 'None'}\n"
        f"Rationale: {verdict.rationale}\n"
        f"Answer: {verdict.answer}\n"
        f"Confidence Score: {int(verdict.confidence)}"
    )


def requested_labels(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The labels the last user message asks for, in order: the ``Label:`` lines that follow
    :data:`FORMAT_HEADER` (as ``longgraph.structured.format_instructions`` writes them in text mode).

    Empty when the prompt asks for no labelled format (the oracle then answers the four-line protocol).
    """
    users = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
    if not users:
        return []
    text = _message_text(users[-1])
    at = text.lower().rfind(FORMAT_HEADER.lower())
    if at < 0:
        return []
    labels: list[str] = []
    for line in text[at + len(FORMAT_HEADER) :].splitlines()[1:]:
        match = _FORMAT_LABEL_RE.match(line)
        if match is None:
            if labels or line.strip():
                break
            continue
        labels.append(match.group(1).strip())
    return labels


def _label_property(label: str) -> dict[str, Any]:
    """The JSON-schema shape a text label stands for, so text mode answers what JSON mode would."""
    low = label.lower()
    if "confidence" in low or "score" in low:
        return {"type": "integer"}
    if "decision" in low or low == "label":
        return {"type": "string", "enum": ["Keep", "Remove"]}
    if "evidence" in low:
        return {"type": "array", "items": {"type": "string"}}
    return {"type": "string"}


def _labelled_answer(labels: Sequence[str], verdict: _Verdict) -> str:
    """One ``Label: value`` section per requested label, filled as :func:`_fill_value` fills a JSON field
    of the same name: answers get the answer, confidences the score, decisions Keep/Remove, evidence the
    matched sentence as a bullet (``None`` when nothing matched), rationales and reasoning the rationale,
    anything else the matched sentence (or "No relevant information.")."""
    sections: list[str] = []
    for label in labels:
        value = _fill_value({}, label.lower().replace(" ", "_"), _label_property(label), verdict)
        if isinstance(value, list):
            shown = "\n".join(f"- {item}" for item in value) if value else "None"
            sections.append(f"{label}:\n{shown}" if value else f"{label}: {shown}")
        else:
            sections.append(f"{label}: {value}")
    return "\n".join(sections)


def _json_schema_of(response_format: Any) -> Mapping[str, Any] | None:
    if not isinstance(response_format, Mapping) or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    return schema if isinstance(schema, Mapping) else {}


def _chosen_tool(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The function a tool-calling client (e.g. ``method="function_calling"``) forces, if any."""
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if not isinstance(tools, list) or not tools or choice == "none":
        return None
    functions = [
        t["function"] for t in tools if isinstance(t, Mapping) and isinstance(t.get("function"), Mapping)
    ]
    if not functions:
        return None
    if isinstance(choice, Mapping):
        wanted = (choice.get("function") or {}).get("name")
        for fn in functions:
            if fn.get("name") == wanted:
                named: Mapping[str, Any] = fn
                return named
    fn0: Mapping[str, Any] = functions[0]
    return fn0


def build_completion_content(body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | None]:
    """Return (message content, forced tool or None) for a chat request body, per the oracle.

    With a ``json_schema`` response format the content is a JSON object holding every schema property;
    with a forced tool it is that tool's JSON arguments; otherwise (text mode) it is one ``Label: value``
    line per label the prompt's "Please follow this format:" block asks for (:func:`requested_labels`),
    or the paper's four-line protocol when the prompt asks for none.
    """
    messages = body.get("messages")
    question, text = extract_question_and_text(messages if isinstance(messages, list) else [])
    verdict = _Verdict(*oracle_answer(question, text))
    tool = _chosen_tool(body)
    if tool is not None:
        params = tool.get("parameters")
        tool_schema: Mapping[str, Any] = params if isinstance(params, Mapping) else {}
        obj = _fill_object(tool_schema, tool_schema, verdict) if "properties" in tool_schema else None
        return json.dumps(obj or _default_object(verdict), ensure_ascii=False), tool
    response_format = body.get("response_format")
    schema = _json_schema_of(response_format)
    if schema is not None:
        obj = _fill_object(schema, schema, verdict) if "properties" in schema else _default_object(verdict)
        return json.dumps(obj, ensure_ascii=False), None
    if isinstance(response_format, Mapping) and response_format.get("type") == "json_object":
        return json.dumps(_default_object(verdict), ensure_ascii=False), None
    labels = requested_labels(messages if isinstance(messages, list) else [])
    if labels:
        return _labelled_answer(labels, verdict), None
    return _text_protocol(verdict), None


def _malform(content: str, seed: int, seq: int) -> str:
    """Break ``content`` so that no parser can read it, a tolerant one included.

    ``longgraph.structured`` closes JSON cut off inside a value and keeps the fields before the cut, and
    reads any ``Label:`` line: so a "truncated" JSON answer is cut inside its first key (no value
    survives), a truncated text answer loses every colon (no label survives), and the other kinds carry
    neither JSON nor labels.
    """
    kind = _request_rng(seed, seq).choice(_MALFORMED_KINDS)
    if kind == "truncated" and len(content) > 2:
        stripped = content.lstrip()
        if stripped.startswith("{"):
            key_end = stripped.find('"', stripped.find('"') + 1)
            return stripped[: key_end if key_end > 0 else 1]
        return "{" + content[: max(1, len(content) // 2)].replace(":", "")
    if kind == "gibberish":
        rng = _request_rng(seed, seq + 1_000_003)
        return " ".join("".join(rng.choice("qxzjkvw~#@") for _ in range(6)) for _ in range(12))
    return "I am sorry, I cannot help with that request {"


# --------------------------------------------------------------------------------------------------
# The HTTP application
# --------------------------------------------------------------------------------------------------


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _error_body(message: str, kind: str, code: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _format_seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


@dataclass
class _StubState:
    """Everything mutable lives here, one instance per app: no module-level state."""

    config: StubConfig
    on_exit: Callable[[], None]
    is_stopping: Callable[[], bool] = lambda: False
    requests: int = 0
    completed: int = 0
    in_flight: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    by_stage: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    log: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=10_000))
    exiting: bool = False

    def reset(self) -> None:
        self.requests = 0
        self.completed = 0
        self.by_status.clear()
        self.by_stage.clear()
        self.faults.clear()
        self.log.clear()

    def refusing(self) -> bool:
        cfg = self.config
        if self.exiting or (cfg.exit_after is not None and self.completed >= cfg.exit_after):
            return True
        return cfg.die_after is not None and self.completed >= cfg.die_after

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "completed": self.completed,
            "in_flight": self.in_flight,
            "by_status": dict(self.by_status),
            "by_stage": dict(self.by_stage),
            "faults": dict(self.faults),
            "config": self.config.model_dump(),
        }


async def _hang(request: Request, seconds: float, is_stopping: Callable[[], bool]) -> str | None:
    """Sleep up to ``seconds``; end early with the reason if the client hung up or the server is stopping.

    Ending early keeps hung tasks from piling up under a benchmark and lets a shutdown finish without
    uvicorn cancelling handlers (which would log tracebacks).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while (remaining := deadline - loop.time()) > 0:
        if await request.is_disconnected():
            return "disconnected"
        if is_stopping():
            return "stopping"
        await asyncio.sleep(min(0.2, remaining))
    return None


class _StubApp:
    """Request handlers bound to one :class:`_StubState`."""

    def __init__(self, state: _StubState) -> None:
        self.state = state

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def models(self, request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {
                        "id": self.state.config.model,
                        "object": "model",
                        "created": 0,
                        "owned_by": "longgraph-stub",
                    }
                ],
            }
        )

    async def stats(self, request: Request) -> Response:
        return JSONResponse(self.state.snapshot())

    async def fault_log(self, request: Request) -> Response:
        return JSONResponse({"log": list(self.state.log)})

    async def reset(self, request: Request) -> Response:
        self.state.reset()
        return JSONResponse(self.state.snapshot())

    async def configure(self, request: Request) -> Response:
        try:
            update = await request.json()
            if not isinstance(update, dict):
                raise ValueError("body must be a JSON object")
            self.state.config = StubConfig.model_validate({**self.state.config.model_dump(), **update})
        except (ValueError, ValidationError) as exc:
            return JSONResponse(_error_body(str(exc), "invalid_request_error", 400), status_code=400)
        return JSONResponse(self.state.config.model_dump())

    def _finish(self, status: int | str, seq: int, fault: Fault | str, stage: str) -> None:
        st = self.state
        st.by_status[str(status)] += 1
        if fault != Fault.NONE:
            st.faults[str(fault)] += 1
        st.log.append({"seq": seq, "fault": str(fault), "status": status, "stage": stage})

    def _exit_task(self) -> BackgroundTask:
        """Stop the server shortly after this (last) response has been handed to the transport."""
        loop = asyncio.get_running_loop()
        self.state.exiting = True
        return BackgroundTask(loop.call_later, 0.05, self.state.on_exit)

    async def chat(self, request: Request) -> Response:
        st = self.state
        st.requests += 1
        seq = st.requests
        stage = request.headers.get(STAGE_HEADER, "unknown")
        st.by_stage[stage] += 1
        st.in_flight += 1
        try:
            return await self._chat(request, seq, stage)
        finally:
            st.in_flight -= 1

    async def _chat(self, request: Request, seq: int, stage: str) -> Response:
        st = self.state
        cfg = st.config
        if cfg.api_key is not None:
            presented = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if presented != cfg.api_key:
                self._finish(401, seq, "unauthorized", stage)
                refusal = f"Incorrect API key provided: {presented}"
                return JSONResponse(_error_body(refusal, "invalid_request_error", 401), status_code=401)
        if st.refusing():
            self._finish(503, seq, "refused", stage)
            return JSONResponse(_error_body("stub server is down", "server_error", 503), status_code=503)
        fault = decide_fault(cfg, seq)
        if fault is Fault.RATE_LIMIT:
            self._finish(429, seq, fault, stage)
            wait = cfg.retry_after_s
            headers = {"Retry-After": _format_seconds(wait), "retry-after-ms": str(int(wait * 1000))}
            return JSONResponse(
                _error_body("rate limited by stub", "rate_limit_error", 429), status_code=429, headers=headers
            )
        try:
            body = await request.json()
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("body must be a JSON object with a 'messages' list")
        except ValueError as exc:
            self._finish(400, seq, fault, stage)
            return JSONResponse(_error_body(str(exc), "invalid_request_error", 400), status_code=400)
        if cfg.latency_s > 0:
            await asyncio.sleep(cfg.latency_s)
        if fault in (Fault.ERROR_500, Fault.ERROR_503):
            code = 500 if fault is Fault.ERROR_500 else 503
            self._finish(code, seq, fault, stage)
            return JSONResponse(_error_body(f"injected {code}", "server_error", code), status_code=code)
        if fault is Fault.TIMEOUT:
            ended = await _hang(request, cfg.hang_s, st.is_stopping)
            if ended == "disconnected":
                self._finish("disconnected", seq, fault, stage)
                return Response(status_code=499)
            if ended == "stopping":
                self._finish(503, seq, fault, stage)
                return JSONResponse(_error_body("stub server stopping", "server_error", 503), status_code=503)
        content, tool = build_completion_content(body)
        if fault is Fault.MALFORMED:
            content = _malform(content, cfg.seed, seq)
        if st.refusing():  # another request reached die_after/exit_after while this one slept
            self._finish(503, seq, "refused", stage)
            return JSONResponse(_error_body("stub server is down", "server_error", 503), status_code=503)
        st.completed += 1
        self._finish(200, seq, fault, stage)
        background = None
        if st.config.exit_after is not None and st.completed >= st.config.exit_after:
            background = self._exit_task()
        prompt_chars = sum(len(_message_text(m)) for m in body["messages"] if isinstance(m, Mapping))
        usage = {
            "prompt_tokens": max(1, prompt_chars // 4),
            "completion_tokens": _approx_tokens(content),
            "total_tokens": max(1, prompt_chars // 4) + _approx_tokens(content),
        }
        completion_id = f"chatcmpl-stub-{seq}-{uuid.uuid4().hex[:8]}"
        created = int(time.time())
        if body.get("stream"):
            options = body.get("stream_options")
            include_usage = not (isinstance(options, Mapping) and options.get("include_usage") is False)
            chunks = _sse_chunks(
                completion_id, created, cfg.model, content, tool, usage if include_usage else None
            )
            return StreamingResponse(chunks, media_type="text/event-stream", background=background)
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        finish_reason = "stop"
        if tool is not None:
            message["content"] = None
            message["tool_calls"] = [_tool_call(seq, tool, content)]
            finish_reason = "tool_calls"
        payload = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": cfg.model,
            "system_fingerprint": "longgraph-stub",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": usage,
        }
        return JSONResponse(payload, background=background)


def _tool_call(seq: int, tool: Mapping[str, Any], arguments: str) -> dict[str, Any]:
    return {
        "id": f"call_stub_{seq}",
        "type": "function",
        "function": {"name": str(tool.get("name", "tool")), "arguments": arguments},
    }


async def _sse_chunks(
    completion_id: str,
    created: int,
    model: str,
    content: str,
    tool: Mapping[str, Any] | None,
    usage: dict[str, int] | None,
) -> AsyncIterator[str]:
    """OpenAI-style SSE: a role chunk, the content in a few pieces, a finish chunk, usage, ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None) -> str:
        data = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

    yield chunk({"role": "assistant", "content": ""}, None)
    if tool is not None:
        call = _tool_call(0, tool, content)
        yield chunk({"tool_calls": [{"index": 0, **call}]}, None)
        yield chunk({}, "tool_calls")
    else:
        step = max(1, math.ceil(len(content) / 4))
        for i in range(0, len(content), step):
            yield chunk({"content": content[i : i + step]}, None)
        yield chunk({}, "stop")
    if usage is not None:
        final = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": usage,
        }
        yield f"data: {json.dumps(final)}\n\n"
    yield "data: [DONE]\n\n"


def _hard_exit() -> None:
    os._exit(EXIT_AFTER_RETURN_CODE)


def create_app(
    config: StubConfig | None = None,
    on_exit: Callable[[], None] | None = None,
    is_stopping: Callable[[], bool] | None = None,
) -> Starlette:
    """Build the Starlette app.

    ``on_exit`` is what ``exit_after`` triggers (default: ``os._exit``); ``is_stopping`` tells hanging
    requests that the server is shutting down so they answer 503 instead of being cancelled.
    """
    state = _StubState(config=config or StubConfig(), on_exit=on_exit or _hard_exit)
    if is_stopping is not None:
        state.is_stopping = is_stopping
    handlers = _StubApp(state)
    routes = [
        Route("/v1/chat/completions", handlers.chat, methods=["POST"]),
        Route("/chat/completions", handlers.chat, methods=["POST"]),
        Route("/v1/models", handlers.models, methods=["GET"]),
        Route("/health", handlers.health, methods=["GET"]),
        Route("/stub/stats", handlers.stats, methods=["GET"]),
        Route("/stub/log", handlers.fault_log, methods=["GET"]),
        Route("/stub/config", handlers.configure, methods=["POST"]),
        Route("/stub/reset", handlers.reset, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.stub = state
    return app


# --------------------------------------------------------------------------------------------------
# Serving: CLI, subprocess, thread
# --------------------------------------------------------------------------------------------------


def _bind(host: str, port: int) -> socket.socket:
    """Bind before uvicorn starts so port 0 resolves to a known free port we can print."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def _base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


def _uvicorn_config(app: Starlette, *, in_thread: bool) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        # A thread must not reconfigure the host process's logging.
        log_config=None if in_thread else uvicorn.config.LOGGING_CONFIG,
        limit_concurrency=100_000,
        backlog=4096,
        timeout_keep_alive=30,
        timeout_graceful_shutdown=1,
        lifespan="off",
    )


def _make_server(
    config: StubConfig | None, *, on_exit: Callable[[], None] | None, in_thread: bool
) -> uvicorn.Server:
    """A uvicorn server around a fresh app; ``on_exit=None`` makes ``exit_after`` stop the server."""
    holder: list[uvicorn.Server] = []

    def stop_server() -> None:
        holder[0].should_exit = True

    def stopping() -> bool:
        return bool(holder and holder[0].should_exit)

    app = create_app(config, on_exit=on_exit or stop_server, is_stopping=stopping)
    server = uvicorn.Server(_uvicorn_config(app, in_thread=in_thread))
    holder.append(server)
    return server


_CLI_FLAGS: tuple[tuple[str, str], ...] = (
    ("model", "--model"),
    ("latency_s", "--latency"),
    ("error_rate", "--error-rate"),
    ("timeout_rate", "--timeout-rate"),
    ("hang_s", "--hang"),
    ("malformed_rate", "--malformed-rate"),
    ("rate_limit_every", "--rate-limit-every"),
    ("retry_after_s", "--retry-after"),
    ("die_after", "--die-after"),
    ("exit_after", "--exit-after"),
    ("seed", "--seed"),
    ("api_key", "--api-key"),
)
"""StubConfig field ↔ CLI flag; one table so the parser and the subprocess launcher cannot drift apart."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m longgraph.testing.stub_server",
        description="OpenAI-compatible stub server with a deterministic oracle and fault injection.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (default)")
    kinds: dict[str, Callable[[str], Any]] = {
        "model": str,
        "rate_limit_every": int,
        "die_after": int,
        "exit_after": int,
        "seed": int,
        "api_key": str,
    }
    for name, flag in _CLI_FLAGS:
        info = StubConfig.model_fields[name]
        parser.add_argument(flag, dest=name, type=kinds.get(name, float), default=None, help=info.description)
    return parser


def _config_to_argv(config: StubConfig) -> list[str]:
    argv: list[str] = []
    defaults = StubConfig()
    for name, flag in _CLI_FLAGS:
        value = getattr(config, name)
        if value is not None and value != getattr(defaults, name):
            argv += [flag, str(value)]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: serve until SIGTERM/SIGINT, printing ``STUB_URL=...`` once listening."""
    args = _parser().parse_args(argv)
    values = {name: getattr(args, name) for name, _ in _CLI_FLAGS if getattr(args, name) is not None}
    config = StubConfig.model_validate(values)
    sock = _bind(args.host, args.port)
    server = _make_server(config, on_exit=_hard_exit, in_thread=False)

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        # uvicorn exposes no "listening" event, only this flag.
        while not server.started and not task.done():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        if server.started:
            print(f"{URL_LINE_PREFIX}{_base_url(sock)}", flush=True)
        await task

    with asyncio.Runner(loop_factory=server.config.get_loop_factory()) as runner:
        runner.run(serve())
    return 0


@dataclass
class StubHandle:
    """A running stub: where to send requests, plus its control plane."""

    base_url: str
    """OpenAI base URL, ending in ``/v1``."""
    pid: int
    process: subprocess.Popen[str] | None = None
    _client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=10.0), repr=False)

    @property
    def root_url(self) -> str:
        return self.base_url.removesuffix("/v1")

    def stats(self) -> dict[str, Any]:
        response = self._client.get(f"{self.root_url}/stub/stats")
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    def fault_log(self) -> list[dict[str, Any]]:
        """Per-request (seq, fault, status, stage) records since the last reset, oldest first."""
        response = self._client.get(f"{self.root_url}/stub/log")
        response.raise_for_status()
        log: list[dict[str, Any]] = response.json()["log"]
        return log

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Update fault settings at runtime; returns the full new config. Counters are kept."""
        response = self._client.post(f"{self.root_url}/stub/config", json=changes)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    def reset(self) -> None:
        """Zero the counters and the request sequence, so the fault schedule restarts from request 1."""
        self._client.post(f"{self.root_url}/stub/reset").raise_for_status()

    def close(self) -> None:
        self._client.close()


def _read_url_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    """Wait for the ``STUB_URL=`` line, then keep draining stdout so the child never blocks on a pipe."""
    assert process.stdout is not None
    stdout = process.stdout
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        for line in stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, name="stub-stdout", daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            break
        if line is None:
            break
        if line.startswith(URL_LINE_PREFIX):
            return line[len(URL_LINE_PREFIX) :].strip()
    raise RuntimeError(
        f"stub server did not report its URL within {timeout_s} s (exit code {process.poll()})"
    )


@contextlib.contextmanager
def run_stub_in_subprocess(
    config: StubConfig | None = None, *, host: str = "127.0.0.1", startup_timeout_s: float = 30.0
) -> Iterator[StubHandle]:
    """Run the stub as ``python -m longgraph.testing.stub_server`` and yield its handle.

    A separate process is the only honest way to test ``exit_after`` (the process really dies) and keeps
    the stub's event loop off the caller's CPU budget. On exit: SIGTERM, then SIGKILL after 5 s.
    """
    cmd = [sys.executable, "-m", "longgraph.testing.stub_server", "--host", host, "--port", "0"]
    cmd += _config_to_argv(config or StubConfig())
    env = dict(os.environ)
    # Make the package importable even before an editable install exists (source checkout).
    source_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (source_root, env.get("PYTHONPATH", "")) if p)
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    handle: StubHandle | None = None
    try:
        handle = StubHandle(
            base_url=_read_url_line(process, startup_timeout_s), pid=process.pid, process=process
        )
        yield handle
    finally:
        if handle is not None:
            handle.close()
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


@contextlib.contextmanager
def run_stub_in_thread(
    config: StubConfig | None = None, *, host: str = "127.0.0.1", startup_timeout_s: float = 10.0
) -> Iterator[StubHandle]:
    """Serve the stub from a daemon thread of this process and yield its handle.

    Cheapest start-up for tests. ``exit_after`` here stops the server (later connections are refused)
    instead of killing the process, which would take the test runner with it.
    """
    sock = _bind(host, 0)
    server = _make_server(config, on_exit=None, in_thread=True)
    errors: list[BaseException] = []

    def target() -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # surfaced to the caller below
            errors.append(exc)

    thread = threading.Thread(target=target, name="stub-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if errors or not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"stub server thread failed to start: {errors[:1]}")
        time.sleep(0.005)
    handle = StubHandle(base_url=_base_url(sock), pid=os.getpid())
    try:
        yield handle
    finally:
        handle.close()
        server.should_exit = True
        thread.join(timeout=10)
        if thread.is_alive():
            server.force_exit = True
            thread.join(timeout=5)
        with contextlib.suppress(OSError):
            sock.close()


if __name__ == "__main__":
    raise SystemExit(main())
