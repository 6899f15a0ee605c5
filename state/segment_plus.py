"""Internal state of the Segment+ graphs: the shared run state plus the filter's fan-in."""

from __future__ import annotations

import operator
from typing import Annotated

from pydantic import BaseModel

from longgraph.state.graph_state import RunState


class FilterOutcome(BaseModel):
    """The filter's label for one note (``keep`` is True when the label could not be read)."""

    index: int
    keep: bool
    error: str | None = None


class SegmentPlusState(RunState, total=False):
    judged: Annotated[list[FilterOutcome], operator.add]
    """Fan-in of the filter: one label per note."""
