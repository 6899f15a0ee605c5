"""The records path's schemas: a typed plan for a question that aggregates, the records a chunk gives,
and what became of them.

A :class:`RecordPlan` is what the plan call writes (or a caller gives): the fields of one record and
their types, the field that names the entity a record is about (``key``, what reconciliation merges
on), and one operation from a closed list over the records. Our code compiles it to SQL
(``nodes/records/compile.py``); nothing the model writes is ever executed. A chunk's extraction is a
list of :class:`RecordRow` — the field values in the plan's order and a verbatim quote of the chunk
that states them — checked into :class:`Record` values (``nodes/records/check.py``) or dropped with a
reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, get_args

from pydantic import BaseModel, Field, field_validator

from longgraph.state.contract import ChunkPart
from longgraph.state.outputs import StructuredOutput, register_schema

FieldType = Literal["text", "number"]
Operation = Literal[
    "list", "count", "sum", "mean", "min", "max", "argmax", "argmin", "sort", "between", "group",
    "top_k", "chain", "closure", "union", "intersection", "difference",
]  # fmt: skip
"""What is computed over the records (``value``: the field an operation reads):

* ``list`` — every distinct ``value`` (``where`` filters), in document order;
* ``count`` — how many distinct entities (``key``); ``sum``/``mean``/``min``/``max`` — of ``value``;
* ``argmax``/``argmin`` — the ``key`` with the largest/smallest ``value``; ``sort`` — every ``key`` by
  ``value`` (``descending``); ``between`` — the ``key``s whose ``value`` lies in [``low``, ``high``];
* ``group`` — the ``key``s under each ``value`` (``labels``: the groups asked for, in that order);
* ``top_k`` — the ``limit`` most frequent ``value``s, counting every mention;
* ``chain`` — from ``start``, follow ``key`` → ``value`` while the value is another record's key;
* ``closure`` — every ``key`` whose ``value`` is ``start`` or, in turn, such a key (assignments passed on);
* ``union`` / ``intersection`` / ``difference`` — the distinct ``key``s whose ``value`` is any of the
  ``labels`` / each of them (with a record for every label) / the first and none of the others.
"""
OPERATIONS: tuple[Operation, ...] = get_args(Operation)
NUMERIC: frozenset[str] = frozenset({"sum", "mean", "min", "max", "argmax", "argmin", "sort", "between"})
"""Operations that read ``value`` as a number."""
SETS: frozenset[str] = frozenset({"union", "intersection", "difference"})
"""Set operations over ``labels``: the keys holding any, each, or the first and no other label."""
MENTIONS: frozenset[str] = frozenset({"top_k"})
"""Operations that count mentions: their records are not merged by entity."""


def json_object_in(text: str) -> dict[str, Any] | None:
    """The first JSON object written in ``text`` (a text-mode answer may wrap it in words or a fence)."""
    start = text.find("{")
    while start >= 0:
        try:
            found, _ = json.JSONDecoder().raw_decode(text[start:])
        except ValueError:
            start = text.find("{", start + 1)
            continue
        return found if isinstance(found, dict) else None
    return None


MAX_RECORD_ROWS = 200
"""The most rows one extraction gives (the schema's cap): an answer that gives as many may have more."""
FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_ ]{0,39}$")


class RecordField(BaseModel):
    """One field of a record: a name (letters, digits, spaces, ``_``) and a type."""

    name: str = Field(json_schema_extra={"maxLength": 40})
    type: FieldType = "text"

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        value = value.strip()
        if not FIELD_NAME.match(value):
            raise ValueError(f"a field name is letters, digits, spaces and _ (got {value!r})")
        return value


@register_schema
class RecordPlan(StructuredOutput):
    """How to answer a question by computing over records (the ``plan`` call's output, or given)."""

    aggregates: bool = Field(
        default=False,
        description="true when the answer needs many facts combined (count, sum, compare, rank, group, list every, follow a chain)",
    )
    fields: list[RecordField] = Field(default_factory=list, json_schema_extra={"maxItems": 4})
    key: str = Field(default="", description="the field naming what a record is about")
    operation: Operation = "list"
    value: str = Field(default="", description="the field the operation reads")
    where: str = Field(default="", description="list: keep records whose key is this (empty: all)")
    descending: bool = True
    limit: int | None = Field(default=None, ge=1, le=100)
    low: float | None = None
    high: float | None = None
    start: str = Field(default="", description="chain or closure: where it starts")
    labels: list[str] = Field(default_factory=list, json_schema_extra={"maxItems": 8})

    TEXT_FORMAT: ClassVar[str] = "Answer with the plan as one JSON object, on one line."

    @classmethod
    def parse_text(cls, text: str) -> dict[str, Any] | None:
        return json_object_in(text)

    @field_validator("operation", mode="before")
    @classmethod
    def _operation_word(cls, value: Any) -> Any:
        return value.strip().strip("\"'.").lower().replace("-", "_") if isinstance(value, str) else value

    def problems(self) -> list[str]:
        """Why this plan cannot be carried out (empty: it can)."""
        names = [f.name for f in self.fields]
        if not self.aggregates:
            return ["the question does not aggregate"]
        found: list[str] = []
        if not names:
            found.append("no record field")
        if len(set(names)) != len(names):
            found.append("a field named twice")
        for role, name in (("key", self.key), ("value", self.value)):
            if name not in names:
                found.append(f"its {role} {name!r} is not a field")
        if self.operation in NUMERIC and self.value in names and self.field(self.value).type != "number":
            found.append(f"{self.operation} needs a number field, {self.value!r} is text")
        if self.operation == "between" and (self.low is None or self.high is None):
            found.append("between needs low and high")
        if self.operation in ("chain", "closure") and not self.start.strip():
            found.append(f"{self.operation} needs a start")
        if self.operation == "top_k" and self.limit is None:
            found.append("top_k needs a limit")
        least = 1 if self.operation == "union" else 2
        if (
            self.operation in SETS
            and len({label.strip().casefold() for label in self.labels if label.strip()}) < least
        ):
            found.append(f"{self.operation} needs {least} or more distinct labels")
        return found

    def field(self, name: str) -> RecordField:
        return next(f for f in self.fields if f.name == name)


def plan_fields(
    fields: Sequence[tuple[str, FieldType]], key: str, operation: Operation, value: str, **rest: Any
) -> dict[str, Any]:
    """A records plan that aggregates, as data (what a competent planner writes; a generator's gold)."""
    return {
        "aggregates": True,
        "fields": [{"name": name, "type": kind} for name, kind in fields],
        "key": key,
        "operation": operation,
        "value": value,
        **rest,
    }


class RecordRow(BaseModel):
    """One record as the model gives it: the field values in the plan's order, and the quote."""

    values: list[str] = Field(json_schema_extra={"maxItems": 4})
    quote: str = Field(json_schema_extra={"maxLength": 400})


@register_schema
class ChunkRecords(StructuredOutput):
    """The ``extract`` call's output: the records a chunk states (none: an empty list)."""

    records: list[RecordRow] = Field(default_factory=list, json_schema_extra={"maxItems": MAX_RECORD_ROWS})

    TEXT_FORMAT: ClassVar[str] = (
        'Answer with one JSON object: {"records": [{"values": [...], "quote": "..."}, ...]}.'
    )

    @classmethod
    def parse_text(cls, text: str) -> dict[str, Any] | None:
        return json_object_in(text)


class Record(BaseModel):
    """A checked record: typed values, where its quote is in the document, and what it was merged with."""

    values: dict[str, str | float]
    quote: str
    chunk_id: int
    doc_index: int
    start: int
    end: int
    also: list[int] = Field(default_factory=list)
    """Chunks that stated the same record again (merged by key with the same values)."""


class RecordsFate(BaseModel):
    """What one chunk's extraction gave: records kept, and each dropped one with its reason."""

    chunk_id: int
    kept: int = 0
    dropped: list[str] = Field(default_factory=list)
    raw_output: str | None = None
    failed: str | None = None


class Computation(BaseModel):
    """The records path's result: the answer computed in code and what it rests on."""

    plan: RecordPlan
    answer: str
    """Worded from the computed value; empty: nothing to compute over (the run answers NO INFORMATION)."""
    value: Any = None
    sql: str = ""
    explanation: str = ""
    used: list[Record] = Field(default_factory=list)
    """The records the computed value rests on, each with its verified quote."""
    conflicts: list[str] = Field(default_factory=list)


class RecordsPiece(BaseModel):
    """The rows one extraction call gave, and the span of the chunk it read (the whole chunk, or a piece
    of it when the chunk's records did not fit one answer)."""

    parts: list[ChunkPart]
    rows: list[RecordRow] = Field(default_factory=list)


class RecordsRead(BaseModel):
    """One chunk's extraction: the rows of each piece read, or why it failed (with the raw answer)."""

    chunk_id: int
    pieces: list[RecordsPiece] = Field(default_factory=list)
    error: str | None = None
    raw: str | None = None
    splits: int = 0
    """How many times a piece was cut in two because its records did not fit the output budget."""
