"""Prompt templates as data: one TOML file per strategy, versioned, with a section per task family.

A template is plain ``str.format`` text; document text is substituted as a value, so braces in a
document never break rendering. The version is part of every result-cache key.
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from longgraph.errors import ConfigurationError


@dataclass(frozen=True)
class StagePrompt:
    system: str
    user: str


@dataclass(frozen=True)
class PromptSet:
    """The prompts of one strategy: a template per stage and the per-task-family fill-ins."""

    strategy: str
    version: str
    stages: dict[str, StagePrompt]
    tasks: dict[str, dict[str, str]]

    def render(self, stage: str, task: str, *, format: str, **variables: str) -> list[tuple[str, str]]:
        """Return ``[(role, content), ...]`` for one call."""
        try:
            template = self.stages[stage]
        except KeyError as exc:
            raise ConfigurationError(f"prompts/{self.strategy}: no stage {stage!r}") from exc
        fills: dict[str, Any] = dict(self.tasks.get(task) or self.tasks.get("qa") or {})
        fills.update(variables)
        fills["format"] = format
        try:
            user = template.user.format(**fills)
            system = template.system.format(**fills)
        except KeyError as exc:
            raise ConfigurationError(f"prompts/{self.strategy}/{stage}: missing variable {exc}") from exc
        return [("system", system), ("user", user)]

    def key(self, stage: str) -> str:
        """Identifies the exact template: goes into cache keys."""
        return f"{self.strategy}/{stage}@{self.version}"


@functools.lru_cache(maxsize=32)
def load_prompts(strategy: str) -> PromptSet:
    """Load ``prompts/<strategy>.toml`` from the installed package."""
    name = f"{strategy}.toml"
    try:
        raw = resources.files("longgraph.prompts").joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigurationError(f"no prompt file {name} in longgraph.prompts") from exc
    data = tomllib.loads(raw)
    stages = {
        stage: StagePrompt(system=str(body.get("system", "")), user=str(body["user"]))
        for stage, body in data.get("stages", {}).items()
    }
    tasks = {task: {k: str(v) for k, v in body.items()} for task, body in data.get("tasks", {}).items()}
    return PromptSet(strategy=strategy, version=str(data["version"]), stages=stages, tasks=tasks)


def prompts_for(strategy: str, variant: str | None) -> PromptSet:
    """The prompt set of ``strategy`` in ``variant`` ("paper" is the paper's own wording).

    A strategy without a file for the variant uses its paper prompts: a variant is an optimisation
    for some models, never a requirement.
    """
    if variant in (None, "paper"):
        return load_prompts(strategy)
    try:
        return load_prompts(f"{strategy}_{variant}")
    except ConfigurationError:
        return load_prompts(strategy)
