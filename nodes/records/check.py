"""Check a chunk's extracted records and reconcile the records of every chunk.

**Check** (each record on its own, against its chunk): its quote must be a verbatim span of the chunk —
whitespace, case and Unicode normalised, nothing else forgiven; it must give one value per field; a
number field must hold a number (the one number reader, ``nodes/checks: numbers_in``) and every
value must be written in the quote (a number as a number of the quote, text as words of it, or the
quote's document title: a paper's own title is not repeated in its every sentence). Rows of one chunk
giving the same quote name its successive occurrences. A record that fails is dropped with the
reason, counted in its chunk's fate.

**Reconcile** (all records): a record found at the same place of the document twice (chunks overlap)
is one mention. Unless the operation counts mentions (``top_k``), records of one entity (the same key,
compared folded; for ``list``, the same key and values: a key may hold several) are one record: those giving the same values are merged (the first kept, the other
chunks noted), and those that disagree are a conflict — the first in document order is kept and the
conflict is reported, never decided in silence.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from longgraph.nodes.checks import numbers_in
from longgraph.nodes.records.compute import fold
from longgraph.state.contract import Chunk, DocumentIn
from longgraph.state.records import MENTIONS, Record, RecordPlan, RecordRow


def _normalised(text: str) -> tuple[str, list[int]]:
    """``text`` NFKC-normalised, case-folded, whitespace runs as one space; and for each character of
    the result, the offset in ``text`` it came from."""
    out: list[str] = []
    where: list[int] = []
    space = False
    for i, char in enumerate(text):
        if char.isspace():
            space = bool(out)
            continue
        if space:
            out.append(" ")
            where.append(i)
            space = False
        for piece in unicodedata.normalize("NFKC", char).casefold():
            out.append(piece)
            where.append(i)
    return "".join(out), where


def locate(
    quote: str, chunk: Chunk, documents: Sequence[DocumentIn], nth: int = 0
) -> tuple[int, int, int, str] | None:
    """(document, start, end, the document's title) of the ``nth`` occurrence (from 0) of ``quote``
    verbatim in ``chunk`` (normalised as above), or None."""
    wanted, _ = _normalised(quote)
    if not wanted:
        return None
    for part in chunk.parts:
        if part.doc_index >= len(documents):
            continue
        text = documents[part.doc_index].text[part.start : part.end]
        folded, where = _normalised(text)
        at = folded.find(wanted)
        while at >= 0 and nth > 0:
            nth -= 1
            at = folded.find(wanted, at + len(wanted))
        if at >= 0:
            last = where[at + len(wanted) - 1]
            return part.doc_index, part.start + where[at], part.start + last + 1, part.title
    return None


def check_row(
    row: RecordRow, plan: RecordPlan, chunk: Chunk, documents: Sequence[DocumentIn], nth: int = 0
) -> Record | str:
    """The checked record, or why it is dropped; ``nth``: how many rows of this chunk gave the same
    quote before it (each names the next occurrence: a word quoted three times is three mentions only
    if the chunk writes it three times)."""
    if len(row.values) != len(plan.fields):
        return f"{len(row.values)} value(s) for {len(plan.fields)} field(s)"
    place = locate(row.quote, chunk, documents, nth)
    if place is None:
        if nth and locate(row.quote, chunk, documents) is not None:
            return f"its quote is given more often than the chunk writes it: {row.quote[:80]!r}"
        return f"its quote is not in the chunk: {row.quote[:80]!r}"
    doc, start, end, title = place
    quoted = fold(row.quote)
    values: dict[str, str | float] = {}
    for field, raw in zip(plan.fields, row.values, strict=True):
        text = raw.strip()
        if not text:
            return f"no value for {field.name}"
        if field.type == "number":
            numbers = numbers_in(text)
            if len(numbers) != 1:
                return f"{field.name} {text!r} is not one number"
            if numbers[0] not in numbers_in(row.quote):
                return f"{field.name} {text!r} is not a number of its quote"
            values[field.name] = numbers[0]
        else:  # a document's title names what it is about: a value may stand there instead
            if fold(text) not in quoted and fold(text) != fold(title):
                return f"{field.name} {text!r} is not written in its quote (nor is it its document's title)"
            values[field.name] = text
    return Record(values=values, quote=row.quote, chunk_id=chunk.id, doc_index=doc, start=start, end=end)


def reconcile(plan: RecordPlan, records: Sequence[Record]) -> tuple[list[Record], list[str]]:
    """The records to compute over, in document order, and the conflicts found (see the module)."""
    ordered = sorted(records, key=lambda r: (r.doc_index, r.start, r.chunk_id))
    mentions: dict[tuple[int, int, int], Record] = {}
    for record in ordered:
        place = (record.doc_index, record.start, record.end)
        if place in mentions:
            mentions[place].also.append(record.chunk_id)
        else:
            mentions[place] = record
    kept = list(mentions.values())
    if plan.operation in MENTIONS:
        return kept, []
    by_key: dict[str, Record] = {}
    conflicts: list[str] = []
    for record in kept:
        key = fold(str(record.values.get(plan.key, "")))
        if plan.operation == "list":  # a key may hold several values: only the same record is merged
            key += "\x00" + "\x00".join(_same(v) for v in record.values.values())
        first = by_key.get(key)
        if first is None:
            by_key[key] = record
        elif {k: _same(v) for k, v in first.values.items()} == {
            k: _same(v) for k, v in record.values.items()
        }:
            first.also.append(record.chunk_id)
        else:
            conflicts.append(
                f"{plan.key} {record.values.get(plan.key)!r}: {_shown(first)} (kept) and {_shown(record)}"
            )
    return list(by_key.values()), conflicts


def _same(value: str | float) -> str:
    return f"{value:g}" if isinstance(value, float) else fold(value)


def _shown(record: Record) -> str:
    return f"{record.quote[:80]!r} (chunk {record.chunk_id})"
