"""The one structured-output path: format instructions, and a tolerant parser of model answers.

Under ``json_schema`` mode the endpoint constrains decoding to the schema (vLLM), so answers are JSON.
Under ``text`` mode the model is asked for the paper's labelled protocol (``Answer: ...``) and real
small models drift from it: markdown bold labels, missing colons, "4/5" or "4 points" as a score,
code fences around JSON. The parser accepts all of those and fails loudly (with the raw text) on
anything it cannot map onto the schema; callers record that as a failed chunk, never as an answer.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import Any, Literal, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError

from longgraph.errors import StructuredOutputError, validation_problems
from longgraph.state.outputs import StructuredOutput

T = TypeVar("T", bound=StructuredOutput)
Mode = Literal["json_schema", "text"]

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _labels(schema: type[StructuredOutput]) -> dict[str, str]:
    """Field name -> the label shown to the model in text mode (the first label naming it)."""
    shown: dict[str, str] = {}
    for label, field in schema.TEXT_LABELS.items():
        shown.setdefault(field, label.title())
    for field in schema.model_fields:
        shown.setdefault(field, field.replace("_", " ").title())
    return shown


def format_instructions(schema: type[StructuredOutput], mode: Mode) -> str:
    """What the prompt's ``{format}`` slot says, matched to how the answer will be parsed."""
    if mode == "json_schema":
        # Names and types only: the prompt says what each field means, and small models copy a
        # field description ("The final answer.") into the field instead of answering.
        keys = ", ".join(
            f'"{name}" ({_json_type(info.annotation)})' for name, info in schema.model_fields.items()
        )
        return f"Respond with one JSON object with the keys {keys}."
    if schema.TEXT_FORMAT:
        return schema.TEXT_FORMAT
    lines = "\n".join(f"{label}:" for label in _labels(schema).values())
    return f"Please follow this format:\n{lines}"


def _json_type(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(f'"{value}"' for value in get_args(annotation))
    text = str(annotation)
    item = getattr(annotation, "__args__", (None,))[0]
    if isinstance(item, type) and issubclass(item, BaseModel):
        keys = ", ".join(f'"{name}"' for name in item.model_fields)
        return f"list of objects with the keys {keys}"
    if "list" in text:
        return "list of strings"
    if "float" in text or "int" in text:
        return "number"
    return "string"


def response_format(schema: type[StructuredOutput], max_output_tokens: int | None = None) -> dict[str, Any]:
    """The OpenAI ``response_format`` that makes vLLM constrain decoding to the schema.

    String fields carry ``maxLength`` weights; with ``max_output_tokens`` they are scaled so that the
    whole object fits the output budget (about 3 characters a token, 80% of it for values): a small
    model that rambles then still closes its JSON instead of being cut off mid-string.

    Built once per schema and budget (pydantic's schema generation cost ~0.3 ms per call, 4% of the
    orchestrator's CPU in a 1.28M-token run); each caller gets its own copy to send.
    """
    return copy.deepcopy(_response_format(schema, max_output_tokens))


@functools.lru_cache(maxsize=256)
def _response_format(schema: type[StructuredOutput], max_output_tokens: int | None) -> dict[str, Any]:
    json_schema = schema.model_json_schema()
    properties: dict[str, dict[str, Any]] = json_schema.get("properties", {})
    weights = {name: _char_weight(p) for name, p in properties.items()}
    weights = {name: w for name, w in weights.items() if w}
    if max_output_tokens is not None and weights:
        total_chars = max(64, int(max_output_tokens * 3 * 0.8) - 40 * len(properties))
        scale = min(1.0, total_chars / sum(weights.values()))
        for name in weights:
            prop = properties[name]
            target = prop["items"] if "maxLength" not in prop and "items" in prop else prop
            target["maxLength"] = max(16, int(int(target["maxLength"]) * scale))
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": json_schema, "strict": True},
    }


def _char_weight(prop: dict[str, Any]) -> int:
    """The most characters a property may take: its ``maxLength``, or ``maxItems`` × the items' one."""
    if "maxLength" in prop:
        return int(prop["maxLength"])
    items = prop.get("items") or {}
    if "maxLength" in items and "maxItems" in prop:
        return int(prop["maxItems"]) * int(items["maxLength"])
    return 0


def parse_structured(text: str, schema: type[T], mode: Mode = "json_schema") -> T:
    """Parse a model answer (JSON or labelled text) into ``schema``; raise with the raw text otherwise.

    In ``text`` mode a one-field schema also accepts the bare answer without its label; a reply to a
    JSON-schema request must be JSON (or labelled text), anything else is malformed.
    """
    stripped = text.strip()
    if not stripped:
        raise StructuredOutputError("the model returned an empty answer", raw=text)
    data = _try_json(stripped)
    if data is None and mode == "text":
        data = schema.parse_text(stripped)
    if data is None:
        data = _parse_labelled(stripped, schema)
        only = _single_text_field(schema)
        if not data and only is not None and mode == "text" and not stripped.startswith(("{", "[")):
            # A one-field answer without its label ("The code is 7319." for "Answer:"): the whole text
            # is the field. Small models often drop the label of a one-line format.
            data = {only: stripped}
    data = _coerce(data, schema)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise StructuredOutputError(f"answer does not fit {schema.__name__}: {problems}", raw=text) from exc


def _single_text_field(schema: type[StructuredOutput]) -> str | None:
    """The name of the schema's only field when it has one and it is text, else None."""
    fields = list(schema.model_fields.items())
    if len(fields) == 1 and fields[0][1].annotation is str:
        return fields[0][0]
    return None


def _try_json(text: str) -> dict[str, Any] | None:
    candidate = _FENCE.sub("", text).strip()
    start, end = candidate.find("{"), candidate.rfind("}")
    if start < 0:
        return None
    for attempt in (candidate[start : end + 1] if end > start else "", _close_truncated(candidate[start:])):
        try:
            value = json.loads(attempt)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _close_truncated(text: str) -> str:
    """Close a JSON object cut off by the token limit: end the open string, drop a dangling key, close
    the brackets. Whatever fields were complete (or cut inside a value) survive; validation then
    decides whether enough of the schema is there."""
    closers: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            closers.append("}" if ch == "{" else "]")
        elif ch in "}]" and closers:
            closers.pop()
    repaired = text + ('"' if in_string else "")
    repaired = re.sub(r'(?:,\s*"[^"]*"\s*:?|,|:)\s*$', "", repaired.rstrip())
    return repaired + "".join(reversed(closers))


def _parse_labelled(text: str, schema: type[StructuredOutput]) -> dict[str, Any]:
    """Split ``Label: value`` sections; a value runs until the next known label."""
    labels = {label.lower(): field for label, field in schema.TEXT_LABELS.items()}
    for field in schema.model_fields:
        labels.setdefault(field.replace("_", " ").lower(), field)
    alternatives = "|".join(sorted((re.escape(label) for label in labels), key=len, reverse=True))
    pattern = re.compile(
        rf"^[ \t>#*_-]*(?:\d+[.)]\s*)?[*_]*({alternatives})[*_]*\s*(?:\([^)\n]*\))?\s*[:：][*_]*[ \t]*",
        re.IGNORECASE | re.MULTILINE,
    )
    matches = list(pattern.finditer(text))
    data: dict[str, Any] = {}
    for i, match in enumerate(matches):
        field = labels[match.group(1).lower()]
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        value = text[match.end() : end].strip()
        if field not in data or not data[field]:
            data[field] = value
    return data


def _coerce(data: dict[str, Any], schema: type[StructuredOutput]) -> dict[str, Any]:
    """Bend near-misses into the schema's types: "4/5" -> 4.0, a bullet list -> list of strings."""
    out = dict(data)
    for name, info in schema.model_fields.items():
        if name not in out:
            continue
        value = out[name]
        if get_origin(info.annotation) is Literal:  # its values are words: "list" is not a list
            continue
        annotation = str(info.annotation)
        if ("float" in annotation or "int" in annotation) and isinstance(value, str):
            number = _NUMBER.search(value)
            out[name] = float(number.group()) if number else value
        elif "list" in annotation and isinstance(value, str):
            items = [re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip() for line in value.splitlines()]
            out[name] = [item.strip('"') for item in items if item and item.lower() not in ("none", "n/a")]
        elif annotation.endswith("str") or annotation == "<class 'str'>":
            if isinstance(value, list):
                out[name] = "\n".join(str(v) for v in value)
            elif value is not None and not isinstance(value, str):
                out[name] = str(value)
    return out
