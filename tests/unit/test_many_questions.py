"""``aask_many``: several questions about one document — each answered once, in order, a bounded number
at a time; an empty question refused before any work."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from longgraph import api
from longgraph.errors import InputError


class Recorder:
    """Stands in for ``aask``: records what it was asked and how many ran at once."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.running = 0
        self.most = 0

    async def __call__(self, question: str, document: Any = None, **_: Any) -> dict[str, str]:
        self.asked.append(question)
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(0.01)
        self.running -= 1
        return {"answer": f"to {question.strip()}"}


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    fake = Recorder()
    monkeypatch.setattr(api, "aask", fake)
    return fake


def test_a_question_asked_twice_is_answered_once_and_reported_twice(recorder: Recorder) -> None:
    results = asyncio.run(api.aask_many(["Who?", "When?", "  Who? ", "Who ?"], "text"))
    assert recorder.asked == ["Who?", "When?", "Who ?"]  # "  Who? " is "Who?" again; "Who ?" is not
    assert [r["answer"] for r in results] == ["to Who?", "to When?", "to Who?", "to Who ?"]  # type: ignore[index]
    assert results[0] is results[2]


def test_an_empty_question_is_refused_before_any_is_answered(recorder: Recorder) -> None:
    with pytest.raises(InputError, match="question 2, 4 of 4 is empty"):
        asyncio.run(api.aask_many(["Who?", "  ", "When?", ""], "text"))
    assert recorder.asked == []
    with pytest.raises(InputError, match="no question"):
        asyncio.run(api.aask_many([], "text"))


def test_a_thousand_questions_are_answered_a_few_at_a_time(recorder: Recorder) -> None:
    questions = [f"Question {i}?" for i in range(1_000)]
    results = asyncio.run(api.aask_many(questions, "text", questions_in_flight=5))
    assert len(results) == 1_000 and results[999]["answer"] == "to Question 999?"  # type: ignore[index]
    assert recorder.most == 5  # never more at once, and as many as allowed
    assert recorder.asked[0] == "Question 0?"  # the first alone: it builds what the others reuse


def test_each_answer_is_told_as_soon_as_it_is_settled_at_every_place_it_was_asked(recorder: Recorder) -> None:
    told: list[tuple[int, Any]] = []
    results = asyncio.run(
        api.aask_many(["Who?", "When?", " Who?"], "text", on_answer=lambda i, r: told.append((i, r)))
    )
    assert sorted(i for i, _ in told) == [0, 1, 2]
    assert told[0][0] in (0, 2) and {i for i, _ in told[:2]} == {0, 2}  # the first question, both places
    assert all(results[i] is r for i, r in told)
