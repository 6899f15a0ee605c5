"""What an evaluation runs: the suite, strategies and lengths, the model's settings, where records go."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from longgraph.errors import ConfigurationError
from longgraph.evals.records import ORACLE_LABEL
from longgraph.strategies import STRATEGIES

Suite = Literal[
    "needle", "squad", "hotpot", "loong", "loong-synth", "infinitebench", "general", "real", "ruler"
]
SUITES: tuple[str, ...] = get_args(Suite)

FAMILY_TASK: Mapping[str, str] = {"qa": "qa", "mc": "mc", "retrieval": "retrieval", "open": "qa"}
"""Instance task family → the context's task (which picks the prompts' answer instructions)."""

PRIMARY_METRIC: Mapping[str, str] = {
    "qa": "f1",
    "mc": "accuracy",
    "retrieval": "needle_match",
    "open": "judge",
}
"""The one number a report shows per task family (all metrics stay in the record)."""


@dataclass(frozen=True)
class LoongSource:
    """Where the user's copy of the Loong benchmark is (it is not redistributed)."""

    instances: Path
    docs: Path
    sets: tuple[int, ...] | None = None
    window: int = 10_000_000
    """Assembly cap (Loong's input truncation): large by default, so a divide-and-conquer strategy
    reads every document; set it to a model's window to reproduce the paper's truncated inputs."""


@dataclass
class EvalConfig:
    """One evaluation: what to run, against which model, and where the records go."""

    suite: Suite
    strategies: tuple[str, ...]
    out_dir: Path
    lengths: tuple[int, ...] = (32_000,)
    depths: tuple[float, ...] = (0.5,)
    """Needle depths (fractions of the haystack); other suites ignore them."""
    n: int = 1
    """Instances per length (and per depth for the needle; per length set for Loong)."""
    seed: int = 0
    model_settings: dict[str, Any] = field(default_factory=dict)
    """Context fields for the model under test (base_url, model, context_window, tokenizer, ...)."""
    judge_settings: dict[str, Any] | None = None
    """Context fields for the judge of open answers (Loong); None: no judge, F1 as a labelled proxy."""
    label: str | None = None
    """The model label of the records; None: the served model name (``oracle`` with ``oracle``)."""
    concurrency: int = 2
    """(instance, strategy) runs at once; LLM calls are further capped by ``max_concurrency``."""
    oracle: bool = False
    """Use the stub server's scripted oracle as the model (plumbing checks at full length)."""
    reader: Literal["model", "reference", "extractor"] = "model"
    """A scripted reader built from the suite's gold instead of a model (:mod:`longgraph.evals.readers`):
    ``reference`` reads and combines perfectly, ``extractor`` reads perfectly and never combines;
    records labelled ``<reader>-<wording>``. ``model``: the configured model (or the oracle)."""
    wording: Literal["bare", "sentence", "chatty"] = "bare"
    """How a scripted reader words its answers."""
    retry_failed: bool = False
    loong: LoongSource | None = None
    start_embedded: bool = True
    """With no base_url: start (or reuse) the embedded model server."""
    data_dir: Path | None = None
    """InfiniteBench: the folder of its task files (not redistributed)."""
    tasks: tuple[str, ...] | None = None
    """InfiniteBench tasks, loong-synth families, the general or real suite's kinds, or RULER's tasks
    (``synthetic.yaml``'s names); None: all."""
    split: Literal["dev", "test"] | None = None
    """The general and real suites' split: "dev" to work on, "test" to report (never tuned on); None: both."""
    length_sets: tuple[int, ...] = (1,)
    """loong-synth: Loong length sets (1: 10K-50K ... 4: 200K-250K)."""
    window: int | None = None
    """loong-synth: documents that would overflow this many tokens are skipped (and recorded)."""
    pages: bool = True
    """Write a page (the answer in its documents, every chunk's fate) for each run that did not score 1."""
    given_plans: bool = False
    """loong-synth: give strategies that plan their question each instance's reference records plan
    (what a competent planner writes), so reading and computing are measured apart from planning;
    records are labelled ``<model>-given-plan``."""

    def validate(self) -> None:
        if self.given_plans and self.suite != "loong-synth":
            raise ConfigurationError("given plans are for --suite loong-synth (its instances carry them)")
        if self.suite not in SUITES:
            raise ConfigurationError(f"suite {self.suite!r}: expected one of {', '.join(SUITES)}")
        if not self.strategies:
            raise ConfigurationError("no strategy to evaluate")
        unknown = [s for s in self.strategies if s not in STRATEGIES]
        if unknown:
            raise ConfigurationError(
                f"unknown strateg{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; known: "
                f"{', '.join(sorted(STRATEGIES))}"
            )
        if len(set(self.strategies)) != len(self.strategies):
            raise ConfigurationError("a strategy is listed twice")
        if self.suite in ("needle", "squad", "hotpot") and (
            not self.lengths or any(n <= 0 for n in self.lengths)
        ):
            raise ConfigurationError(f"lengths must be positive token counts, got {self.lengths}")
        if self.suite == "needle" and (not self.depths or any(not 0 <= d <= 1 for d in self.depths)):
            raise ConfigurationError(f"needle depths must lie in [0, 1], got {self.depths}")
        if self.n <= 0 or self.concurrency <= 0:
            raise ConfigurationError("n and concurrency must be positive")
        if self.suite == "loong" and self.loong is None:
            raise ConfigurationError(
                "the loong suite needs the benchmark's instances file and documents folder"
            )
        if self.suite == "infinitebench" and self.data_dir is None:
            from longgraph.evals.data.infinitebench import DOWNLOAD_HINT, TASKS

            raise ConfigurationError(
                "the infinitebench suite needs the folder of its task files (--data DIR holding "
                f"{', '.join(f'{t}.jsonl' for t in (self.tasks or TASKS))}); {DOWNLOAD_HINT}"
            )
        if self.suite == "general":
            from longgraph.evals.data.general import KINDS

            unknown_kinds = [k for k in self.tasks or () if k not in KINDS]
            if unknown_kinds:
                raise ConfigurationError(
                    f"unknown general kind(s) {', '.join(unknown_kinds)}; known: {', '.join(KINDS)}"
                )
        if self.suite == "real":
            from longgraph.evals.data.real import KINDS as REAL_KINDS

            unknown_kinds = [k for k in self.tasks or () if k not in REAL_KINDS]
            if unknown_kinds:
                raise ConfigurationError(
                    f"unknown real kind(s) {', '.join(unknown_kinds)}; known: {', '.join(REAL_KINDS)}"
                )
        if self.suite == "loong-synth":
            from longgraph.evals.data.instance import LOONG_LENGTH_SETS
            from longgraph.evals.data.loong_synth import FAMILIES

            bad_sets = [s for s in self.length_sets if s not in LOONG_LENGTH_SETS]
            if not self.length_sets or bad_sets:
                raise ConfigurationError(f"loong-synth length sets must be among 1-4, got {self.length_sets}")
            unknown = [f for f in self.tasks or () if f not in FAMILIES]
            if unknown:
                raise ConfigurationError(
                    f"unknown loong-synth famil{'y' if len(unknown) == 1 else 'ies'} "
                    f"{', '.join(unknown)}; known: {', '.join(FAMILIES)}"
                )
        if self.suite == "ruler":
            from longgraph.evals.data.ruler import TASKS as RULER_TASKS

            unknown = [t for t in self.tasks or () if t not in RULER_TASKS]
            if unknown:
                raise ConfigurationError(
                    f"unknown RULER task(s) {', '.join(unknown)}; known: {', '.join(RULER_TASKS)}"
                )
        if self.reader != "model":
            from longgraph.evals.readers import SUITES_WITH_GOLD

            if self.oracle:
                raise ConfigurationError("--reader oracle and --reader reference/extractor are one choice")
            if self.suite not in SUITES_WITH_GOLD:
                raise ConfigurationError(
                    f"--reader {self.reader} is built for the {', '.join(SUITES_WITH_GOLD)} suites, not {self.suite}"
                )
        if self.label == ORACLE_LABEL and not self.oracle:
            raise ConfigurationError(f"the model label {ORACLE_LABEL!r} is reserved for --oracle runs")
        if self.oracle and self.label not in (None, ORACLE_LABEL):
            raise ConfigurationError(f"oracle runs are always labelled {ORACLE_LABEL!r}")


@dataclass
class EvalSummary:
    """What one invocation did."""

    records_path: Path
    label: str
    planned: int = 0
    skipped: int = 0
    """Already recorded by an earlier invocation (resumed)."""
    done: int = 0
    failed: int = 0
    seconds: float = 0.0


RecordCallback = Callable[[dict[str, Any], int, int], None]
"""Called with each new record, how many are done and how many this invocation runs."""
