"""Internal state of the LLM×MapReduce graphs: the shared run state is all they need.

The map stage fills ``reads``, grounding turns them into ``notes`` and ``outcomes``, the collapse
loop works on ``notes`` (``loop_tasks``, ``combined``, ``rounds``), the reduce stage writes ``answer``
(:mod:`longgraph.state.graph_state`).
"""

from __future__ import annotations

from longgraph.state.graph_state import RunState


class MapReduceState(RunState, total=False):
    """LLM×MapReduce (and its Segment+-merge variant)."""
