"""Building an evaluation's instances from its configuration (deterministic in suite, seed, length, depth)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from longgraph.errors import ConfigurationError
from longgraph.evals.config import EvalConfig
from longgraph.evals.data.instance import EvalInstance


def format_tokens(n: int) -> str:
    """32000 → ``32K``, 1280000 → ``1.28M`` (decimal, as the papers write lengths); a power-of-two
    multiple of 1,024 that is no round thousand as RULER writes it (8192 → ``8K``, 131072 → ``128K``)."""
    if n >= 1_024 and n % 1_024 == 0 and n % 1_000 and (n // 1_024) & (n // 1_024 - 1) == 0:
        return f"{n // 1_024}K"
    if n >= 1_000_000:
        return f"{n / 1_000_000:g}M"
    if n >= 1_000:
        return f"{n / 1_000:g}K"
    return str(n)


def parse_tokens(text: str) -> int:
    """``32K`` → 32000, ``1.28M`` → 1280000, ``128000`` → 128000."""
    raw = text.strip().upper().replace("_", "").replace(",", "")
    scale = 1
    if raw.endswith("K"):
        scale, raw = 1_000, raw[:-1]
    elif raw.endswith("M"):
        scale, raw = 1_000_000, raw[:-1]
    try:
        value = float(raw) * scale
    except ValueError as exc:
        raise ConfigurationError(f"{text!r} is not a token count (e.g. 32000, 32K, 1.28M)") from exc
    if value <= 0 or value != int(value):
        raise ConfigurationError(f"{text!r} is not a positive whole number of tokens")
    return int(value)


def _per_length(
    config: EvalConfig, build: Callable[..., list[EvalInstance]], **options: Any
) -> list[EvalInstance]:
    """``build`` at each of the configuration's lengths, ``n`` instances and its seed each, in order."""
    return [
        i
        for length in config.lengths
        for i in build(target_tokens=length, n=config.n, seed=config.seed, **options)
    ]


def build_instances(config: EvalConfig) -> list[EvalInstance]:
    """The suite's instances, deterministic in the seed (built in the same order every time)."""
    # The builders count with the project's default tokenizer, so lengths compare across models.
    if config.suite == "needle":
        from longgraph.evals.data.needle import build_needle

        return [  # each length at every depth, lengths outermost
            i
            for length in config.lengths
            for depth in config.depths
            for i in build_needle(target_tokens=length, n=config.n, seed=config.seed, depth=depth)
        ]
    if config.suite == "squad":
        from longgraph.evals.data.squad import build_squad

        return _per_length(config, build_squad)
    if config.suite == "hotpot":
        from longgraph.evals.data.hotpot import build_hotpot

        return _per_length(config, build_hotpot)
    if config.suite == "general":
        from longgraph.evals.data.general import build_general

        return _per_length(config, build_general, split=config.split, kinds=config.tasks)
    if config.suite == "real":
        from longgraph.evals.data.real import build_real

        return _per_length(config, build_real, split=config.split, kinds=config.tasks)
    if config.suite == "ruler":
        from longgraph.evals.data.ruler import build_ruler

        return _per_length(config, build_ruler, tasks=config.tasks)
    if config.suite == "loong-synth":
        from longgraph.evals.data.loong_synth import build_loong_synth

        return [
            i
            for number in config.length_sets
            for i in build_loong_synth(
                length_set=number, n=config.n, seed=config.seed, families=config.tasks, window=config.window
            )
        ]
    if config.suite == "infinitebench":
        from longgraph.evals.data.infinitebench import load_infinitebench

        assert config.data_dir is not None
        return load_infinitebench(config.data_dir, tasks=config.tasks, n=config.n)
    from longgraph.evals.data.loong import load_loong

    assert config.loong is not None
    loaded = load_loong(
        config.loong.instances,
        config.loong.docs,
        context_window=config.loong.window,
        seed=config.seed,
        sets=config.loong.sets,
    )
    per_set: dict[Any, int] = {}
    chosen: list[EvalInstance] = []
    for instance in loaded:  # the first n of each length set, in file order
        key = instance.metadata.get("set")
        if per_set.get(key, 0) < config.n:
            per_set[key] = per_set.get(key, 0) + 1
            chosen.append(instance)
    return chosen


def length_set(instance: EvalInstance) -> str:
    """The length bucket a report groups by: the instance's own (Loong's length sets, InfiniteBench's
    buckets), else its target length."""
    if instance.metadata.get("length_set"):
        return str(instance.metadata["length_set"])
    if instance.suite == "loong":
        return format_tokens(instance.actual_tokens)
    return format_tokens(instance.target_tokens)
