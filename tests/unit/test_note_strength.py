"""``min_note_strength`` left unset follows the model: 0.5 for the embedded models, whose reduce follows
whatever note it reads, else 0 (every verified note reaches the reduce); a value set wins."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from longgraph.embedded.catalog import CATALOG
from longgraph.endpoint import resolve_context
from longgraph.state.context import Context


class NoDescription:
    async def describe(self, context: Context) -> Any:
        raise AssertionError("model and window are given: nothing to ask the server")


def resolved(**settings: Any) -> Context:
    context = Context(base_url="http://127.0.0.1:9/v1", context_window=8192, **settings)
    return asyncio.run(resolve_context(context, NoDescription()))  # type: ignore[arg-type]


@pytest.mark.parametrize("model", sorted(CATALOG))
def test_an_embedded_model_sets_aside_weak_notes(model: str) -> None:
    assert Context().min_note_strength is None
    assert resolved(model=model).min_note_strength == 0.5


def test_any_other_model_keeps_every_note_and_a_set_value_wins() -> None:
    assert resolved(model="my-70b").min_note_strength == 0.0
    assert resolved(model="smollm2", min_note_strength=0.0).min_note_strength == 0.0
    assert resolved(model="my-70b", min_note_strength=0.3).min_note_strength == 0.3


def test_a_value_out_of_range_is_refused() -> None:
    with pytest.raises(Exception, match="min_note_strength"):
        Context(min_note_strength=2.0).validate()
