"""Building the oracle's answer in the shape a request asks for: a JSON schema, a tool, or labels.

With a ``json_schema`` response format the content is a JSON object holding every schema property;
with a forced tool, that tool's JSON arguments; in text mode one ``Label: value`` line per label the
prompt's format block asks for. ``hallucinate`` turns the oracle into a confident liar for every text
that does not hold the answer (the grounding check's adversary in the tests).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from longgraph.testing.oracle import (
    _FORMAT_LABEL_RE,
    FORMAT_HEADER,
    NO_INFORMATION,
    NO_PLAN,
    STOP_WORDS,
    _message_text,
    extract_question_and_text,
    generated_question,
    oracle_answer,
    summary_points,
    synthesis_sentences,
)

HALLUCINATION = "The answer is definitely the blue lantern of Marrowby."
"""What a hallucinating stub says for every text that does not hold the answer."""


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
    said: str | None = None
    """An answer of its own (a scripted reader's conclusion), where the sentence is what it rests on."""

    @property
    def found(self) -> bool:
        return self.sentence is not None

    @property
    def answer(self) -> str:
        if self.said is not None:
            return self.said
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


BULLET_FORMAT = "* summary point"
"""What a text-mode summarise prompt (PECAN's Table A1) shows as its format: the oracle answers in bullets."""


def _asks_for_bullets(messages: Sequence[Mapping[str, Any]]) -> bool:
    return any(BULLET_FORMAT in _message_text(m) for m in messages if m.get("role") == "user")


def _asks_for_plan(messages: Sequence[Mapping[str, Any]]) -> bool:
    """A text-mode records plan prompt (``prompts/records.toml``: its format line)."""
    return any("the plan as one JSON object" in _message_text(m) for m in messages if m.get("role") == "user")


_PROPOSED = re.compile(r"^Proposed answer:\s*(.*)$", re.MULTILINE)
_SHOWN = re.compile(
    r"^The sentences begin as follows:\n(.*?)\nThe sentences conclude here\.", re.MULTILINE | re.DOTALL
)
_TOKEN = re.compile(r"\w+")


def verification(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The oracle's verdict on a verification call (``prompts/verify.toml``): yes when the sentence it
    would answer the question from, among the shown ones, holds every word of the proposed answer
    that the question does not and every name the question gives (a bag-of-words reader confirms only
    what it would have said, about the entity asked)."""
    question, _ = extract_question_and_text(messages)
    asked = verification_asked(messages)
    said = asked.proposed if asked else ""
    best = oracle_answer(question, asked.sentences)[0] if asked else None

    def tokens(text: str) -> set[str]:
        return {t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS}

    new = tokens(said) - tokens(question)
    # "About the very entity the question names", as the prompt asks: its capitalised words (past the
    # first) in the sentence, so a look-alike's sentence ("the X bridge" for the Y one) is no.
    names = {w.lower() for w in re.findall(r"(?<!^)(?<![.?!] )\b[A-Z]\w*", question)} - STOP_WORDS
    if best is None or not new or not new <= tokens(best) or not names <= tokens(best):
        return check_answer(said, "not stated" if said else None)
    return check_answer(said, "stated")


@dataclass(frozen=True)
class VerificationAsked:
    """What a verification call (``prompts/verify.toml``) shows a reader: the proposed answer (one line:
    the caller joins its whitespace) and the sentences between their fences."""

    proposed: str
    sentences: str


def verification_asked(messages: Sequence[Mapping[str, Any]]) -> VerificationAsked | None:
    """The proposed answer and the shown sentences of a verification call, or None for another call:
    the one reading of that prompt every scripted reader shares."""
    content = "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "user")
    proposed, shown = _PROPOSED.search(content), _SHOWN.search(content)
    if proposed is None or shown is None:
        return None
    return VerificationAsked(proposed.group(1).strip(), shown.group(1))


def is_verification(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a request is the verification call (its "Proposed answer:" line and sentence fences)."""
    return verification_asked(messages) is not None


def check_answer(proposed: str, verdict: str | None, reason: str = "") -> dict[str, Any]:
    """An :class:`~longgraph.state.outputs.AnswerCheck` as a reader gives it: the proposed answer as its
    one claim with ``verdict`` ("stated", "not stated", "contradicted"), or no claim (None: the answer
    claims nothing)."""
    claims = [] if verdict is None else [{"claim": " ".join(proposed.split()), "verdict": verdict}]
    return {
        "claims": claims,
        "reason": reason or ("no claim" if verdict is None else f"the claim is {verdict}"),
    }


def check_content(body: Mapping[str, Any], check: Mapping[str, Any]) -> str:
    """``check`` (:func:`check_answer`) as the request asks for it: JSON under a schema, else the
    claim lines of the text protocol (none: a line saying so)."""
    if _json_schema_of(body.get("response_format")) is not None:
        return json.dumps(check, ensure_ascii=False)
    lines = [f"- {c['claim']} | {c['verdict']}" for c in check["claims"]]
    return "\n".join(lines) or "The answer makes no claim."


def build_completion_content(
    body: Mapping[str, Any], *, hallucinate: bool = False, said: tuple[str, str | None] | None = None
) -> tuple[str, Mapping[str, Any] | None]:
    """Return (message content, forced tool or None) for a chat request body, per the oracle.

    With a ``json_schema`` response format the content is a JSON object holding every schema property;
    with a forced tool it is that tool's JSON arguments; otherwise (text mode) it is one ``Label: value``
    line per label the prompt's "Please follow this format:" block asks for (:func:`requested_labels`),
    or the paper's four-line protocol when the prompt asks for none. ``said``: (answer, the sentence it
    rests on or None) to give instead of the oracle's (a scripted reader's own conclusion).
    """
    messages = body.get("messages")
    question, text = extract_question_and_text(messages if isinstance(messages, list) else [])
    verdict = _Verdict(*oracle_answer(question, text)) if said is None else _Verdict(said[1], 5.0, said[0])
    if hallucinate and not verdict.found:
        verdict = _Verdict(HALLUCINATION, 5.0)
    tool = _chosen_tool(body)
    if tool is not None:
        params = tool.get("parameters")
        tool_schema: Mapping[str, Any] = params if isinstance(params, Mapping) else {}
        obj = _fill_object(tool_schema, tool_schema, verdict) if "properties" in tool_schema else None
        return json.dumps(obj or _default_object(verdict), ensure_ascii=False), tool
    response_format = body.get("response_format")
    schema = _json_schema_of(response_format)
    properties = (schema or {}).get("properties") or {}
    listed = messages if isinstance(messages, list) else []
    if said is None and ("claims" in properties or (schema is None and is_verification(listed))):
        return check_content(body, verification(listed)), None  # the oracle verifying
    if schema is not None and "sentences" in properties:  # a pyramid synthesis prompt
        return json.dumps({"sentences": synthesis_sentences(text)}, ensure_ascii=False), None
    if schema is not None and "aggregates" in properties:  # a records plan: the oracle cannot plan
        return json.dumps(NO_PLAN), None
    if schema is not None and set(properties) == {"records"}:  # a records extraction: none read
        return json.dumps({"records": []}), None
    if schema is not None and set(properties) == {"question"}:  # a question generation prompt
        return json.dumps({"question": generated_question(text)}, ensure_ascii=False), None
    if schema is not None and "points" in (schema.get("properties") or {}):  # a summarise prompt
        return json.dumps({"points": summary_points(text)}, ensure_ascii=False), None
    if schema is None and _asks_for_bullets(messages if isinstance(messages, list) else []):
        return "\n".join(f"* {point}" for point in summary_points(text)), None
    if schema is not None:
        obj = _fill_object(schema, schema, verdict) if "properties" in schema else _default_object(verdict)
        return json.dumps(obj, ensure_ascii=False), None
    if isinstance(response_format, Mapping) and response_format.get("type") == "json_object":
        return json.dumps(_default_object(verdict), ensure_ascii=False), None
    if _asks_for_plan(messages if isinstance(messages, list) else []):
        return json.dumps(NO_PLAN), None
    labels = requested_labels(messages if isinstance(messages, list) else [])
    if labels:
        return _labelled_answer(labels, verdict), None
    return _text_protocol(verdict), None
