"""The Loong LLM-as-judge: its prompt, the parsing of its verdicts and their summary.

Loong grades free-form answers with GPT-4 against the gold answer on Accuracy, Hallucinations and
Completeness, on a 0–100 scale (paper §4.1, Appendix A). This module builds the judge's messages and
reads its replies; the model call itself belongs to longgraph's LLM layer, so nothing here talks HTTP.

The prompt lives in ``prompts/judge/loong.toml`` (versioned, so a report can say which judge prompt it
used). Reported as in the paper: the average score, the perfect rate (share of verdicts scoring 100)
and, because an unparseable verdict is excluded from both, the share of verdicts that parsed.
"""

from __future__ import annotations

import functools
import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from longgraph.errors import ConfigurationError

JUDGE_PROMPT_PATH = Path(__file__).resolve().parents[1] / "prompts" / "judge" / "loong.toml"
"""Resolves both in the repository (``evals/`` next to ``prompts/``) and in an installed wheel
(``longgraph/evals/`` next to ``longgraph/prompts/``)."""

PERFECT_SCORE = 100.0

# Most specific first: the required "Rating: [[85]]", any "[[85]]", then the single-bracket forms that
# weaker judges produce. Within a form, the last match wins: the verdict closes the reply, while the
# explanation may quote numbers in brackets.
_NUMBER = r"\s*(-?\d+(?:\.\d+)?)\s*"
_SCORE_PATTERNS = (
    re.compile(rf"rating\s*[:：]?\s*\[\[{_NUMBER}\]\]", re.IGNORECASE),
    re.compile(rf"\[\[{_NUMBER}\]\]"),
    re.compile(rf"rating\s*[:：]?\s*\[{_NUMBER}\]", re.IGNORECASE),
    re.compile(rf"(?<!\[)\[{_NUMBER}\](?!\])"),
)


class JudgePrompt(TypedDict):
    """The judge prompt as stored: its version, where it comes from, the message role and template."""

    version: str
    source: str
    role: str
    template: str


class JudgeStats(TypedDict):
    """Summary of a group of verdicts. Scores and the perfect rate are over parsed verdicts only."""

    n: int
    parsed: int
    parse_rate: float
    avg_score: float | None
    perfect: int
    perfect_rate: float | None


class JudgeSummary(TypedDict):
    """Verdict statistics overall, per task, per length set, and per task and length set."""

    prompt_version: str
    overall: JudgeStats
    by_task: dict[str, JudgeStats]
    by_set: dict[str, JudgeStats]
    by_task_and_set: dict[str, dict[str, JudgeStats]]


@functools.lru_cache(maxsize=4)
def load_judge_prompt(path: Path = JUDGE_PROMPT_PATH) -> JudgePrompt:
    """Read and check the judge prompt file (cached)."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"judge prompt {path} cannot be read ({exc})") from exc
    template = raw.get("template")
    if not isinstance(template, str) or not all(
        p in template for p in ("{question}", "{gold}", "{prediction}")
    ):
        raise ConfigurationError(
            f"judge prompt {path}: 'template' must hold {{question}}, {{gold}}, {{prediction}}"
        )
    return JudgePrompt(
        version=str(raw.get("version", "")),
        source=str(raw.get("source", "")),
        role=str(raw.get("role", "user")),
        template=template,
    )


def build_judge_messages(question: str, gold: str, prediction: str) -> list[dict[str, str]]:
    """The chat messages asking the judge to grade ``prediction`` against ``gold``.

    One user message, as Loong sends it. Placeholders are replaced one at a time, left to right in the
    template, so braces or placeholder-like text inside the answers are never re-expanded.
    """
    prompt = load_judge_prompt()
    values = {"{question}": question, "{gold}": gold, "{prediction}": prediction}
    parts = re.split(r"(\{question\}|\{gold\}|\{prediction\})", prompt["template"])
    content = "".join(values.get(part, part) for part in parts)
    return [{"role": prompt["role"], "content": content}]


def parse_judge_score(text: str) -> float | None:
    """The 0–100 score in a judge reply (``[[score]]``, else ``[score]``), or None if there is none.

    A score outside 0–100 makes the verdict unparseable (None) rather than being clamped: a judge that
    writes ``[[150]]`` did not follow the scale, and silently turning that into 100 would inflate the
    perfect rate.
    """
    for pattern in _SCORE_PATTERNS:
        matches = pattern.findall(text)
        if matches:
            score = float(matches[-1])
            if math.isfinite(score) and 0.0 <= score <= PERFECT_SCORE:
                return score
            return None
    return None


def _stats(scores: list[float | None]) -> JudgeStats:
    parsed = [s for s in scores if s is not None]
    perfect = sum(1 for s in parsed if s >= PERFECT_SCORE)
    return JudgeStats(
        n=len(scores),
        parsed=len(parsed),
        parse_rate=len(parsed) / len(scores) if scores else 0.0,
        avg_score=sum(parsed) / len(parsed) if parsed else None,
        perfect=perfect,
        perfect_rate=perfect / len(parsed) if parsed else None,
    )


def _record_score(record: Mapping[str, Any]) -> float | None:
    if "score" in record:
        score = record["score"]
        return None if score is None else float(score)
    judgement = record.get("judgement")
    return parse_judge_score(judgement) if isinstance(judgement, str) else None


def summarize_judgements(records: Iterable[Mapping[str, Any]]) -> JudgeSummary:
    """Average score, perfect rate and parse rate, overall and per task / length set.

    Each record carries ``task`` and ``set`` (any value; missing ones group as ``"all"``) and either a
    parsed ``score`` (None when unparseable) or the raw ``judgement`` text, which is parsed here.
    As in Loong's released scorer, the average and the perfect rate are over parsed verdicts; the parse
    rate and the counts make the denominator explicit.
    """
    overall: list[float | None] = []
    by_task: dict[str, list[float | None]] = {}
    by_set: dict[str, list[float | None]] = {}
    by_both: dict[str, dict[str, list[float | None]]] = {}
    for record in records:
        score = _record_score(record)
        task = str(record.get("task") if record.get("task") is not None else "all")
        length_set = str(record.get("set") if record.get("set") is not None else "all")
        overall.append(score)
        by_task.setdefault(task, []).append(score)
        by_set.setdefault(length_set, []).append(score)
        by_both.setdefault(task, {}).setdefault(length_set, []).append(score)
    return JudgeSummary(
        prompt_version=load_judge_prompt()["version"],
        overall=_stats(overall),
        by_task={task: _stats(scores) for task, scores in sorted(by_task.items())},
        by_set={key: _stats(scores) for key, scores in sorted(by_set.items())},
        by_task_and_set={
            task: {key: _stats(scores) for key, scores in sorted(sets.items())}
            for task, sets in sorted(by_both.items())
        },
    )
