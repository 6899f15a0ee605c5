"""Loader for InfiniteBench (Zhang et al., 2024), for users who have its task files.

InfiniteBench is not redistributed with longgraph. Its release is one JSONL file per task
(``passkey.jsonl``, ``kv_retrieval.jsonl``, ... as ``scripts/download_dataset.sh`` in
OpenBMB/InfiniteBench saves them from huggingface.co/datasets/xinrongzhang2022/InfiniteBench); every line
holds ``id``, ``context``, ``input``, ``answer`` and ``options`` (empty outside the choice tasks).

Each line becomes one instance whose single document is the ``context`` and whose question is the
task's official prompt without the context (``prompts/benchmarks/infinitebench.toml``). The gold is the
label the official scorer reads: for the two choice tasks ``[answer text, option letter]``, as the
official ``get_answer`` builds it; otherwise the ``answer`` field as it is. Each instance names its
official rule (:mod:`longgraph.evals.scoring.infinitebench`) as its scorer.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from longgraph.errors import InputError
from longgraph.evals.data.instance import EvalInstance, TaskFamily, length_bucket, resolve_tokenizer
from longgraph.jsonl import iter_objects
from longgraph.tokenizer import Tokenizer

SUITE = "infinitebench"
PROMPTS_PATH = Path(__file__).resolve().parents[2] / "prompts" / "benchmarks" / "infinitebench.toml"
"""Resolves in the repository (``evals/data`` two levels below the root, next to ``prompts/``) and in an
installed wheel (``longgraph/evals/data`` next to ``longgraph/prompts``)."""

TASKS: Mapping[str, TaskFamily] = {
    "passkey": "retrieval",
    "number_string": "retrieval",
    "kv_retrieval": "retrieval",
    "longbook_sum_eng": "open",
    "longbook_qa_eng": "qa",
    "longbook_qa_chn": "qa",
    "longbook_choice_eng": "mc",
    "longdialogue_qa_eng": "qa",
    "code_debug": "mc",
    "code_run": "qa",
    "math_find": "qa",
    "math_calc": "qa",
}
"""Every task of the release, in the order the benchmark's README lists them, with the closest task
family (only for grouping: the score is always the official rule's)."""

DOWNLOAD_HINT = (
    "get them from huggingface.co/datasets/xinrongzhang2022/InfiniteBench (e.g. OpenBMB/InfiniteBench's "
    "scripts/download_dataset.sh) on a machine with network access, then point --data at that folder"
)
_CHOICE_TASKS = ("longbook_choice_eng", "code_debug")
_OPTION_LETTERS = "ABCD"


@functools.lru_cache(maxsize=1)
def official_prompts() -> dict[str, Any]:
    """The prompt file: ``version``, ``source`` and per task ``template`` and ``question``."""
    try:
        return tomllib.loads(PROMPTS_PATH.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"InfiniteBench prompts {PROMPTS_PATH} cannot be read ({exc})") from exc


def task_file(data_dir: Path, task: str) -> Path:
    return data_dir / f"{task}.jsonl"


def available_tasks(data_dir: Path, tasks: Collection[str] | None = None) -> list[str]:
    """The asked tasks (all by default) whose files are in ``data_dir``; a typed error naming the
    expected files when there are none, or when an asked task is unknown."""
    wanted = list(tasks) if tasks else list(TASKS)
    unknown = [t for t in wanted if t not in TASKS]
    if unknown:
        raise InputError(f"unknown InfiniteBench task(s) {', '.join(unknown)}; known: {', '.join(TASKS)}")
    if not data_dir.is_dir():
        raise InputError(
            f"InfiniteBench data folder {data_dir} does not exist: it should hold "
            f"{', '.join(f'{t}.jsonl' for t in wanted)}; {DOWNLOAD_HINT}"
        )
    found = [t for t in wanted if task_file(data_dir, t).is_file()]
    if not found:
        raise InputError(
            f"no InfiniteBench task file in {data_dir}: expected one or more of "
            f"{', '.join(f'{t}.jsonl' for t in wanted)}; {DOWNLOAD_HINT}"
        )
    return found


def official_label(item: Mapping[str, Any], task: str, where: str) -> Any:
    """The gold as the official scorer reads it (``get_answer`` in the benchmark's ``eval_utils.py``)."""
    answer = item.get("answer")
    if task not in _CHOICE_TASKS:
        return answer
    options = item.get("options")
    if not isinstance(options, list) or len(options) != len(_OPTION_LETTERS):
        raise InputError(f"{where}: a {task} item needs four options, got {options!r}")
    if isinstance(answer, list) and len(answer) == 2 and answer[1] in _OPTION_LETTERS:
        return list(answer)
    text = answer[0] if isinstance(answer, list) and len(answer) == 1 else answer
    if text not in options:
        raise InputError(f"{where}: answer {text!r} is not one of the options")
    return [text, _OPTION_LETTERS[options.index(text)]]


def _fill(template: str, values: Mapping[str, str]) -> str:
    """``str.replace`` per placeholder, so braces in questions and code are left alone."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def _fields(item: Mapping[str, Any], task: str, where: str) -> dict[str, str]:
    """The placeholders a task's prompt takes, derived as the official ``create_prompt`` does."""
    text = str(item.get("input") or "")
    values: dict[str, str] = {"input": text, "question": text}
    options = item.get("options") or []
    if task in _CHOICE_TASKS:
        values.update(
            {f"OPTION_{letter}": str(o) for letter, o in zip(_OPTION_LETTERS, options, strict=False)}
        )
    if task == "code_run":
        calls = re.findall(r"func_[0-9]+\(\-?[0-9]+\)", text)
        if not calls:
            raise InputError(f"{where}: a code_run input must name a call such as func_3(5), got {text!r}")
        values.update(func=calls[0].split("(")[0], func_call=calls[0])
    if task == "math_find":
        target = re.findall(r"The .+ of", text)
        if not target:
            raise InputError(f"{where}: a math_find input must say which number ('The ... of'), got {text!r}")
        values["prefix"] = f"What is {target[0].lower()[:-3]} in the following list?"
    return values


def _gold_text(label: Any) -> list[str]:
    if isinstance(label, list):
        return [json.dumps(x, ensure_ascii=False) if not isinstance(x, str) else x for x in label]
    return [label if isinstance(label, str) else json.dumps(label, ensure_ascii=False)]


def load_infinitebench(
    data_dir: Path,
    *,
    tasks: Collection[str] | None = None,
    n: int | None = None,
    tokenizer: Tokenizer | None = None,
) -> list[EvalInstance]:
    """The first ``n`` items (all when None) of each task file present, in task order then file order."""
    tok = resolve_tokenizer(tokenizer)
    prompts = official_prompts()
    instances: list[EvalInstance] = []
    for task in available_tasks(data_dir, tasks):
        path = task_file(data_dir, task)
        for taken, (where, item) in enumerate(iter_objects(path, "InfiniteBench item")):
            if n is not None and taken >= n:
                break
            if "context" not in item or "answer" not in item:
                raise InputError(f"{where}: not an InfiniteBench item (needs context and answer)")
            instances.append(_instance(item, task, where, prompts, tok))
    return instances


def _instance(
    item: Mapping[str, Any], task: str, where: str, prompts: Mapping[str, Any], tok: Tokenizer
) -> EvalInstance:
    values = _fields(item, task, where)
    label = official_label(item, task, where)
    context = str(item["context"])
    tokens = tok.count(context)
    return EvalInstance(
        id=f"{SUITE}-{task}-{item.get('id', where.rsplit(':', 1)[-1])}",
        suite=SUITE,
        question=_fill(prompts["tasks"][task]["question"], values).strip(),
        documents=[{"title": "", "text": context}],
        gold_answers=_gold_text(label),
        task_family=TASKS[task],
        target_tokens=tokens,
        actual_tokens=tokens,
        metadata={
            "task": task,
            "length_set": length_bucket(tokens),
            "infinitebench_id": item.get("id"),
            "prompt_version": prompts.get("version"),
            "official_prompt": _fill(prompts["tasks"][task]["template"], values),
        },
        scorer=f"infinitebench:{task}",
        label=label,
    )
