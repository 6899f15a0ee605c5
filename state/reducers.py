"""State reducers shared by the strategy graphs.

Fan-in fields use ``operator.add``; a gather node clears one with ``langgraph.types.Overwrite([])``
(returning ``[]`` would append nothing, i.e. not clear it).
"""

from __future__ import annotations

from typing import Any


def add_usage(current: dict[str, Any] | None, update: dict[str, Any] | None) -> dict[str, Any]:
    """Sum usage counters, including the per-stage call counts."""
    out: dict[str, Any] = dict(current or {})
    for key, value in (update or {}).items():
        if isinstance(value, dict):
            merged = dict(out.get(key) or {})
            for stage, n in value.items():
                merged[stage] = merged.get(stage, 0) + n
            out[key] = merged
        else:
            out[key] = out.get(key, 0) + value
    return out
