"""Payloads of ``Send`` fan-outs, and what the fanned-out tasks hand back."""

from __future__ import annotations

from typing import TypedDict

from pydantic import BaseModel

from longgraph.state.contract import Chunk
from longgraph.state.notes import Note


class ReadTask(TypedDict):
    """One read call (map, gather, parse...) on one chunk."""

    chunk: Chunk
    question: str
    total: int


class GroupTask(TypedDict):
    """One combine call of the reduction loop (collapse, merge...) on a group of notes."""

    index: int
    notes: list[Note]
    question: str
    round: int
    total: int


class NoteTask(TypedDict):
    """One call about one note (the Segment+ filter)."""

    index: int
    note: Note
    question: str
    total: int


class Combined(BaseModel):
    """What one group became: a note, or nothing (the group said NO INFORMATION), and why."""

    index: int
    sources: list[int]
    note: Note | None = None
    error: str | None = None
    """Why the combine call failed or was not trusted (the loop then keeps the group's best note)."""
    emptied: str | None = None
    """Why the group yielded no note (its chunks are reported filtered with this reason)."""


class RecordsTask(TypedDict):
    """One chunk's records extraction (``nodes/records/``): the chunk, and the question ending with the
    plan's fields."""

    chunk: Chunk
    question: str
    total: int
