"""Reports of evaluation records: a Markdown table, a JSON summary and PNG plots, one set per model.

Each ``records-<label>.jsonl`` in a results folder gets its own report files (``report-<label>.md``,
``summary-<label>.json``, ``needle-heatmap-<label>.png``, ``score-vs-length-<label>.png``,
``score-vs-tokens-<label>.png``, ``family-heatmap-<label>.png``), so two models, and above all the
scripted oracle and a real model, never share a table. Oracle reports carry a banner saying what they
are. Records whose metadata names a task (Loong's families, InfiniteBench's tasks) are also broken down
by task family and length set, as the Loong paper's tables are.

Aggregation, per suite × strategy × length: the mean of each record's primary score (needle match for
the needle, token F1 for SQuAD and HotpotQA, the judge's score / 100 for Loong, or F1 as a labelled
proxy when no judge ran; an instance with a named scorer, that scorer's primary metric). A record whose run failed counts as 0 (a method that crashes does not get to
skip the hard cases) and is counted in the ``errors`` column; a Loong verdict that did not parse is left
out of the mean and shows in the judge table's parse rate. Calls, tokens and seconds are means over the
runs that finished (what a failed run spent before failing is not known).

The needle heatmap is laid out like Figure 3 of the LLM×MapReduce paper: context length across, needle
depth down (0% at the top), red (0) to green (1).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from longgraph.evals.runner import ORACLE_LABEL, read_records, slug
from longgraph.state.outputs import is_no_information

ORACLE_BANNER = (
    "ORACLE RESULTS: the model was the stub server's scripted oracle (a deterministic sentence matcher), "
    "not a language model. These numbers check the plumbing at full length; they say nothing about "
    "answer quality."
)
_PLOTS = ("needle-heatmap", "score-vs-length", "score-vs-tokens", "family-heatmap")
_METRIC_NAMES = {
    "value_match": "value found",
    "set_f1": "set F1",
    "order_f1": "order F1 (LCS)",
    "group_accuracy": "members placed right",
    "rougeLsum": "ROUGE-Lsum",
    "needle_match": "needle match",
    "f1": "token F1",
    "accuracy": "accuracy",
    "judge": "judge score / 100",
    "f1_proxy": "token F1 (proxy: no judge)",
}


class _Scored(TypedDict):
    """What every table row says of its group of records."""

    length: int
    metric: str
    n: int
    errors: int
    score: float | None


class Row(_Scored):
    """One line of the summary: a suite × strategy × length group."""

    suite: str
    strategy: str
    length_set: str
    llm_calls: float
    prompt_tokens: float
    completion_tokens: float
    read_completion: float | None
    """Completion tokens of one first-reading call (map, gather, ...): what a protocol costs per chunk."""
    seconds: float


READ_STAGES = ("map", "gather", "gather_text")


def read_call_tokens(record: Mapping[str, Any]) -> float | None:
    """Completion tokens per first-reading call of a record (None for strategies without one)."""
    calls = record.get("calls_by_stage") or {}
    tokens = record.get("completion_tokens_by_stage") or {}
    n = sum(int(calls.get(s, 0)) for s in READ_STAGES)
    return sum(int(tokens.get(s, 0)) for s in READ_STAGES) / n if n else None


def _fmt_per_call(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _score_value(record: Mapping[str, Any]) -> float | None:
    """A record's score for averaging: 0 for a failed run, None for an unparsed judge verdict."""
    if record.get("error") is not None:
        return 0.0
    score = record.get("score")
    return None if score is None else float(score)


def _length_key(records: Iterable[Mapping[str, Any]]) -> int:
    return min(int(r.get("length") or r.get("actual_tokens") or 0) for r in records)


def _scored(group: Sequence[Mapping[str, Any]]) -> _Scored:
    """What every table row says of a group of records: length, metric(s), runs, errors, mean score."""
    scores = [s for s in (_score_value(r) for r in group) if s is not None]
    metrics = sorted({str(r.get("metric")) for r in group if r.get("error") is None}) or ["-"]
    return _Scored(
        length=_length_key(group),
        metric="/".join(metrics),
        n=len(group),
        errors=sum(r.get("error") is not None for r in group),
        score=_mean(scores) if scores else None,
    )


def summarize(records: Sequence[Mapping[str, Any]]) -> list[Row]:
    """Rows per suite × strategy × length set, ordered by suite, strategy, then length."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["suite"], record["strategy"], record["length_set"])].append(record)
    rows: list[Row] = []
    for (suite, strategy, length_set), group in groups.items():
        ok = [r for r in group if r.get("error") is None]  # a failed run's cost is unknown: not averaged
        rows.append(
            Row(
                suite=suite,
                strategy=strategy,
                length_set=length_set,
                **_scored(group),
                llm_calls=_mean([float(r.get("llm_calls") or 0) for r in ok]),
                prompt_tokens=_mean([float(r.get("prompt_tokens") or 0) for r in ok]),
                completion_tokens=_mean([float(r.get("completion_tokens") or 0) for r in ok]),
                read_completion=(
                    _mean(per_read)
                    if (per_read := [v for r in ok if (v := read_call_tokens(r)) is not None])
                    else None
                ),
                seconds=_mean([float(r.get("seconds") or 0) for r in ok]),
            )
        )
    return sorted(rows, key=lambda r: (r["suite"], r["strategy"], r["length"], r["length_set"]))


def needle_grid(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """strategy → length set → depth (as a string) → mean score, for the needle suite."""
    cells: dict[str, dict[str, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(dict))
    for record in records:
        if record["suite"] != "needle" or record.get("depth") is None:
            continue
        score = _score_value(record)
        if score is None:
            continue
        depth = f"{float(record['depth']):g}"
        cells[record["strategy"]][record["length_set"]].setdefault(depth, []).append(score)
    return {
        strategy: {length: {d: _mean(v) for d, v in depths.items()} for length, depths in lengths.items()}
        for strategy, lengths in cells.items()
    }


class FamilyRow(_Scored):
    """One cell of the per-family breakdown: a suite × strategy × task family × length set."""

    suite: str
    strategy: str
    task: str
    length_set: str


def family_rows(records: Sequence[Mapping[str, Any]]) -> list[FamilyRow]:
    """Scores by task family (a record's ``metadata.task``: Loong's four families, an InfiniteBench
    task) and length set, as the Loong paper's tables break them down; records without a task are left
    to the suite tables."""
    groups: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        task = (record.get("metadata") or {}).get("task")
        if task:
            groups[(record["suite"], record["strategy"], str(task), record["length_set"])].append(record)
    rows: list[FamilyRow] = []
    for (suite, strategy, task, length_set), group in groups.items():
        rows.append(
            FamilyRow(suite=suite, strategy=strategy, task=task, length_set=length_set, **_scored(group))
        )
    return sorted(rows, key=lambda r: (r["suite"], r["strategy"], r["task"], r["length"]))


def _task_order(task: str) -> tuple[int, str]:
    """Loong's families in the paper's order, then InfiniteBench's tasks in its README's, then the rest."""
    from longgraph.evals.data.infinitebench import TASKS
    from longgraph.evals.data.loong import LOONG_TASKS

    known = [*LOONG_TASKS.values(), *TASKS]
    return (known.index(task), "") if task in known else (len(known), task)


def _family_columns(rows: Sequence[FamilyRow]) -> list[tuple[str, str]]:
    """(task, length set) columns: length sets from short to long, tasks in their benchmark's order."""
    tasks = sorted({r["task"] for r in rows}, key=_task_order)
    sets = sorted(
        {r["length_set"] for r in rows},
        key=lambda ls: min(r["length"] for r in rows if r["length_set"] == ls),
    )
    present = {(r["task"], r["length_set"]) for r in rows}
    return [(task, ls) for ls in sets for task in tasks if (task, ls) in present]


def judge_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per strategy: the Loong judge statistics (average, perfect rate, parse rate) by task and set."""
    from longgraph.evals.judge import summarize_judgements

    by_strategy: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.get("metric") != "judge" or record.get("error") is not None:
            continue
        meta = record.get("metadata") or {}
        by_strategy[record["strategy"]].append(
            {"task": meta.get("task"), "set": record["length_set"], "score": record.get("judge_score")}
        )
    return {strategy: summarize_judgements(items) for strategy, items in sorted(by_strategy.items())}


# --------------------------------------------------------------------------------------------------
# Markdown


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _fmt_count(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def markdown_table(header: Sequence[str], align: str, rows: Iterable[Sequence[object]]) -> list[str]:
    """A Markdown table's lines: ``align`` has one letter a column, ``l`` left or ``r`` right (numbers)."""
    if len(align) != len(header):
        raise ValueError(f"{len(header)} columns, {len(align)} alignments")
    rule = " | ".join("---:" if a == "r" else "---" for a in align)
    return [
        "| " + " | ".join(header) + " |",
        f"| {rule} |",
        *("| " + " | ".join(map(str, row)) + " |" for row in rows),
    ]


PLAIN_PASS = "truncate"
"""The strategy that is one plain call (``graphs/truncate.py``): every report shows it beside the rest."""


def render_markdown(label: str, records: Sequence[Mapping[str, Any]], plots: Sequence[Path]) -> str:
    """The report's Markdown: banner (oracle), tables per suite, the needle grid, judge stats, plots."""
    oracle = label == ORACLE_LABEL or any(r.get("oracle") for r in records)
    lines = [f"# Evaluation report: `{label}`", ""]
    if oracle:
        lines += [f"> **{ORACLE_BANNER}**", ""]
    lines += [
        f"{len(records)} records. Score: the mean primary metric per run; failed runs count as 0 and are "
        "also counted under *errors*. Calls, tokens and seconds are means over the runs that finished "
        "(seconds overlap when runs were concurrent).",
        "",
    ]
    if any(r.get("strategy") == PLAIN_PASS for r in records):
        lines += [
            f"`{PLAIN_PASS}` is the plain pass beside the strategies: one call over the whole document "
            "where it fits the window, over its first part where it does not.",
            "",
        ]
    rows = summarize(records)
    for suite in sorted({r["suite"] for r in rows}):
        suite_rows = [r for r in rows if r["suite"] == suite]
        metric = suite_rows[0]["metric"]
        lines += [f"## {suite} ({_METRIC_NAMES.get(metric, metric)})", ""]
        header = ["strategy", "length", "n", "score", "errors", "LLM calls", "prompt tokens"]
        header += ["completion tokens", "completion tokens per read call", "seconds"]
        cells: list[Sequence[object]] = [
            (
                r["strategy"],
                r["length_set"],
                r["n"],
                _fmt(r["score"]),
                r["errors"],
                _fmt_count(r["llm_calls"]),
                _fmt_count(r["prompt_tokens"]),
                _fmt_count(r["completion_tokens"]),
                _fmt_per_call(r["read_completion"]),
                f"{r['seconds']:.2f}",
            )
            for r in suite_rows
        ]
        lines += [*markdown_table(header, "llrrrrrrrr", cells), ""]
    grid = needle_grid(records)
    if grid:
        lines += ["## Needle: score by depth and length", ""]
        for strategy, lengths in sorted(grid.items()):
            order = sorted(lengths, key=lambda ls: _length_of(records, ls))
            depths = sorted({d for v in lengths.values() for d in v}, key=float)
            by_depth = [[f"{float(d):.0%}", *(_fmt(lengths[ls].get(d), 2) for ls in order)] for d in depths]
            lines += [
                f"**{strategy}**",
                "",
                *markdown_table(["depth", *order], "r" * (len(order) + 1), by_depth),
                "",
            ]
    lines += _family_section(family_rows(records))
    lines += _general_section(records)
    lines += _build_section(records)
    judged = judge_summary(records)
    if judged:
        header = ["strategy", "length set", "n", "parsed", "average (0–100)", "perfect rate"]
        judged_cells: list[Sequence[object]] = [
            [
                strategy,
                length_set,
                stats["n"],
                f"{stats['parse_rate']:.0%}",
                _fmt(stats["avg_score"], 1),
                _fmt(stats["perfect_rate"], 2),
            ]
            for strategy, summary in judged.items()
            for length_set, stats in summary["by_set"].items()
        ]
        lines += ["## Loong judge", "", *markdown_table(header, "llrrrr", judged_cells), ""]
    failures = [r for r in records if r.get("error") is not None]
    if failures:
        lines += ["## Failed runs", ""]
        for failure in failures[:50]:
            lines.append(
                f"- `{failure['instance_id']}` / {failure['strategy']}: {failure.get('error_type')}: "
                f"{failure['error'][:300]}"
            )
        if len(failures) > 50:
            lines.append(f"- … and {len(failures) - 50} more")
        lines.append("")
    lines += _pages_section(records)
    if plots:
        lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots] + [""]
    return "\n".join(lines)


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (sound at 0/n and n/n, unlike the normal one)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _shown_unconfirmed(record: Mapping[str, Any]) -> bool:
    """A run whose answer was shown flagged ``unconfirmed`` (not withheld as NO INFORMATION)."""
    return record.get("verdict") == "unconfirmed" and not is_no_information(str(record.get("answer") or ""))


def general_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The split suites (general, real) per split, strategy, kind and length: share correct with its 95%
    interval, the wrong answers marked supported (the count that must be zero), and the runs whose final
    answer was withheld by the checks although the model's answer was right (``withheld_right``)."""
    groups: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("suite") not in ("general", "real"):
            continue
        meta = r.get("metadata") or {}
        key = (str(meta.get("split")), str(r["strategy"]), str(meta.get("kind")), str(r["length_set"]))
        groups.setdefault(key, []).append(r)
    rows = []
    for (split, strategy, kind, length), group in sorted(groups.items()):
        correct = sum(float(r.get("score") or 0.0) for r in group)
        right = [r for r in group if r.get("score")]
        wrong = [r for r in group if not r.get("score")]
        wrong_supported = sum(1 for r in wrong if r.get("supported"))
        withheld_right = sum(1 for r in group if (r.get("scores") or {}).get("withheld_correct"))
        low, high = wilson(correct, len(group))
        rows.append(
            {
                "split": split,
                "strategy": strategy,
                "kind": kind,
                "length_set": length,
                "n": len(group),
                "correct": correct / len(group),
                "low": low,
                "high": high,
                "right_supported": sum(1 for r in right if r.get("supported")),
                "right_unconfirmed": sum(1 for r in right if _shown_unconfirmed(r)),
                "wrong_supported": wrong_supported,
                "wrong_unconfirmed": sum(1 for r in wrong if _shown_unconfirmed(r)),
                "withheld_right": withheld_right,
            }
        )
    return rows


def _general_section(records: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = general_rows(records)
    if not rows:
        return []
    header = ["split", "strategy", "kind", "length", "n", "correct", "95% interval"]
    header += ["right, supported", "right, unconfirmed", "wrong and marked supported", "wrong, unconfirmed"]
    header += ["right but withheld"]
    cells = [
        [
            r["split"],
            r["strategy"],
            r["kind"],
            r["length_set"],
            r["n"],
            f"{r['correct']:.2f}",
            f"{r['low']:.2f}–{r['high']:.2f}",
            r["right_supported"],
            r["right_unconfirmed"],
            r["wrong_supported"],
            r["wrong_unconfirmed"],
            r["withheld_right"],
        ]
        for r in rows
    ]
    return [
        "## Split suites: share correct (95% Wilson interval), by split",
        "",
        "The `test` split was never looked at while working on the answer layer; `dev` was. The counts "
        "split runs by the checks' verdict: *unconfirmed* answers are shown flagged (``on_unconfirmed`` "
        "show) and scored as given; *right but withheld*: the model's own final answer was right and the "
        "checks withheld it (refuted, or unconfirmed under ``on_unconfirmed`` withhold).",
        "",
        *markdown_table(header, "llllrrlrrrrr", cells),
        "",
    ]


def _family_section(rows: Sequence[FamilyRow]) -> list[str]:
    lines: list[str] = []
    for suite in sorted({r["suite"] for r in rows}):
        suite_rows = [r for r in rows if r["suite"] == suite]
        columns = _family_columns(suite_rows)
        cells = {(r["strategy"], r["task"], r["length_set"]): r for r in suite_rows}
        metrics = dict.fromkeys(
            f"{r['task']}: {_METRIC_NAMES.get(r['metric'], r['metric'])}"
            for r in sorted(suite_rows, key=lambda r: _task_order(r["task"]))
            if r["metric"] != "-"  # a cell whose runs all failed names no metric
        )
        lines += [
            f"## {suite}: score by task family and length set",
            "",
            "Each cell: mean score (runs); failed runs count as 0. Metrics: " + "; ".join(metrics) + ".",
            "",
            "| strategy | " + " | ".join(f"{task} ({ls})" for task, ls in columns) + " |",
            "| --- | " + " | ".join("---:" for _ in columns) + " |",
        ]
        for strategy in sorted({r["strategy"] for r in suite_rows}):
            row = [cells.get((strategy, task, ls)) for task, ls in columns]
            lines.append(
                f"| {strategy} | "
                + " | ".join("–" if c is None else f"{_fmt(c['score'], 2)} ({c['n']})" for c in row)
                + " |"
            )
        lines.append("")
    return lines


def build_summary(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (suite, strategy, length set) of the runs that built a structure (ToM's tree): mean calls
    and seconds of the build, and of the question (the rest of the run), over the fresh builds."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        build = r.get("build")
        if r.get("error") is None and build and not build.get("from_cache"):
            groups.setdefault((r["suite"], r["strategy"], r["length_set"]), []).append(r)
    rows = []
    for (suite, strategy, length_set), runs in groups.items():
        rows.append(
            {
                "suite": suite,
                "strategy": strategy,
                "length_set": length_set,
                "n": len(runs),
                "length": _length_key(runs),
                "build_calls": _mean([r["build"]["llm_calls"] for r in runs]),
                "build_seconds": _mean([r["build"]["seconds"] or 0.0 for r in runs]),
                "question_calls": _mean([r["llm_calls"] - r["build"]["llm_calls"] for r in runs]),
                "question_seconds": _mean([r["seconds"] - (r["build"]["seconds"] or 0.0) for r in runs]),
            }
        )
    return sorted(rows, key=lambda row: (row["suite"], row["strategy"], row["length"]))


def _build_section(records: Sequence[Mapping[str, Any]]) -> list[str]:
    rows = build_summary(records)
    if not rows:
        return []
    header = ["suite", "strategy", "length", "n", "build calls", "build seconds", "question calls"]
    cells = [
        [
            r["suite"],
            r["strategy"],
            r["length_set"],
            r["n"],
            _fmt_count(r["build_calls"]),
            f"{r['build_seconds']:.2f}",
            _fmt_count(r["question_calls"]),
            f"{r['question_seconds']:.2f}",
        ]
        for r in rows
    ]
    return [
        "## Structure build and question (ToM's tree)",
        "",
        "Runs that built their tree (not from the cache); the question is the rest of the run.",
        "",
        *markdown_table([*header, "question seconds"], "lllrrrrr", cells),
        "",
    ]


def _length_of(records: Sequence[Mapping[str, Any]], length_set: str) -> int:
    return _length_key([r for r in records if r["length_set"] == length_set] or [{"length": 0}])


# --------------------------------------------------------------------------------------------------
# Plots


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: never needs a display
    import matplotlib.pyplot as plt

    return plt


def _title(text: str, label: str, oracle: bool) -> str:
    return f"{text} — {label}" + (
        "\nORACLE (scripted stub model): plumbing check, not model quality" if oracle else ""
    )


def plot_needle_heatmap(
    records: Sequence[Mapping[str, Any]], path: Path, *, label: str, oracle: bool
) -> bool:
    """Length × depth heatmaps, one panel per strategy (Figure 3 layout). False if no needle records."""
    grid = needle_grid(records)
    if not grid:
        return False
    plt = _pyplot()
    from matplotlib.colors import LinearSegmentedColormap

    cmap = LinearSegmentedColormap.from_list("needle", ["#F0496E", "#EBB839", "#0CD79F"])
    strategies = sorted(grid)
    lengths = sorted({ls for v in grid.values() for ls in v}, key=lambda ls: _length_of(records, ls))
    depths = sorted({d for v in grid.values() for ds in v.values() for d in ds}, key=float)
    width = max(4.0, 0.75 * len(lengths) + 2.2)
    height = max(3.2, 0.42 * len(depths) + 1.8)
    fig, axes = plt.subplots(
        1, len(strategies), figsize=(width * len(strategies), height), squeeze=False, constrained_layout=True
    )
    image = None
    for ax, strategy in zip(axes[0], strategies, strict=True):
        values = [[grid[strategy].get(ls, {}).get(d, math.nan) for ls in lengths] for d in depths]
        image = _score_cells(ax, values, cmap)
        ax.set_xticks(range(len(lengths)), lengths)
        ax.set_yticks(range(len(depths)), [f"{float(d):.0%}" for d in depths])
        ax.set_xlabel("context length (tokens)")
        ax.set_ylabel("needle depth")
        ax.set_title(strategy)
    _save(plt, fig, axes[0].tolist(), image, _title("Needle in a haystack", label, oracle), path)
    return True


def _score_cells(ax: Any, values: list[list[float]], cmap: Any) -> Any:
    """A 0–1 heatmap of ``values`` on ``ax``, each known cell written in it (NaN: no run)."""
    image = ax.imshow(values, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    for y, row in enumerate(values):
        for x, value in enumerate(row):
            if not math.isnan(value):
                ax.text(x, y, f"{value:.2f}", ha="center", va="center", fontsize=8, color="#222222")
    return image


def _save(plt: Any, fig: Any, axes: list[Any], image: Any, title: str, path: Path) -> None:
    """One colour bar for the panels, the title, the file; the figure is closed."""
    if image is not None:
        fig.colorbar(image, ax=axes, label="score", shrink=0.9)
    fig.suptitle(title, fontsize=11)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_family_heatmap(rows: Sequence[FamilyRow], path: Path, *, label: str, oracle: bool) -> bool:
    """Strategy × (task family, length set) heatmaps, one panel per suite. False if no family rows."""
    if not rows:
        return False
    plt = _pyplot()
    suites = sorted({r["suite"] for r in rows})
    layouts: list[tuple[str, list[tuple[str, str]], list[str], list[list[float]]]] = []
    for suite in suites:
        suite_rows = [r for r in rows if r["suite"] == suite]
        columns = _family_columns(suite_rows)
        strategies = sorted({r["strategy"] for r in suite_rows})
        cells = {(r["strategy"], r["task"], r["length_set"]): r["score"] for r in suite_rows}
        grid = [[cells.get((s, t, ls)) for t, ls in columns] for s in strategies]
        values = [[math.nan if v is None else v for v in row] for row in grid]
        layouts.append((suite, columns, strategies, values))
    width = max(5.0, max(1.3 * len(c) + 3.0 for _, c, _, _ in layouts))
    height = max(3.0, max(0.4 * len(s) + 2.4 for _, _, s, _ in layouts))
    fig, axes = plt.subplots(
        len(suites), 1, figsize=(width, height * len(suites)), squeeze=False, constrained_layout=True
    )
    image = None
    for ax, (suite, columns, strategies, shown) in zip(axes[:, 0], layouts, strict=True):
        image = _score_cells(ax, shown, "RdYlGn")
        ax.set_xticks(range(len(columns)), [f"{t}\n{ls}" for t, ls in columns], fontsize=8)
        ax.set_yticks(range(len(strategies)), strategies)
        ax.set_title(suite)
    title = _title("Score by task family and length set", label, oracle)
    _save(plt, fig, axes[:, 0].tolist(), image, title, path)
    return True


def _panels(rows: Sequence[Row]) -> tuple[Any, Any, list[tuple[Any, str]]]:
    """A figure with one panel per suite of ``rows``: (pyplot, figure, [(axes, suite)])."""
    plt = _pyplot()
    suites = sorted({r["suite"] for r in rows})
    fig, axes = plt.subplots(
        1, len(suites), figsize=(5.5 * len(suites), 4.2), squeeze=False, constrained_layout=True
    )
    return plt, fig, list(zip(axes[0], suites, strict=True))


def plot_score_vs_length(rows: Sequence[Row], path: Path, *, label: str, oracle: bool) -> bool:
    """Mean score against length, one line per strategy, one panel per suite."""
    if not rows:
        return False
    plt, fig, panels = _panels(rows)
    for ax, suite in panels:
        suite_rows = [r for r in rows if r["suite"] == suite]
        order = sorted(
            {r["length_set"] for r in suite_rows},
            key=lambda ls: min(r["length"] for r in suite_rows if r["length_set"] == ls),
        )
        for strategy in sorted({r["strategy"] for r in suite_rows}):
            points = sorted(
                (order.index(r["length_set"]), r["score"])
                for r in suite_rows
                if r["strategy"] == strategy and r["score"] is not None
            )
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=strategy)
        ax.set_xticks(range(len(order)), order)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("context length (tokens)")
        ax.set_ylabel(f"score ({_METRIC_NAMES.get(suite_rows[0]['metric'], suite_rows[0]['metric'])})")
        ax.set_title(suite)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(_title("Score against length", label, oracle), fontsize=11)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_score_vs_tokens(rows: Sequence[Row], path: Path, *, label: str, oracle: bool) -> bool:
    """Mean score against mean tokens spent per run (prompt + completion, log scale), per strategy."""
    rows = [r for r in rows if r["score"] is not None and r["prompt_tokens"] + r["completion_tokens"] > 0]
    if not rows:
        return False
    plt, fig, panels = _panels(rows)
    for ax, suite in panels:
        suite_rows = [r for r in rows if r["suite"] == suite]
        for strategy in sorted({r["strategy"] for r in suite_rows}):
            mine = sorted((r for r in suite_rows if r["strategy"] == strategy), key=lambda r: r["length"])
            xs = [r["prompt_tokens"] + r["completion_tokens"] for r in mine]
            ys = [r["score"] or 0.0 for r in mine]
            ax.plot(xs, ys, marker="o", label=strategy)  # joined in order of length
            labels: dict[tuple[float, float], list[str]] = defaultdict(list)
            for x, y, r in zip(xs, ys, mine, strict=True):
                labels[(round(math.log10(x), 2), round(y, 3))].append(r["length_set"])
            for (logx, y), names in labels.items():  # runs that cost the same share one label
                ax.annotate(
                    ", ".join(names), (10**logx, y), textcoords="offset points", xytext=(4, 4), fontsize=7
                )
        ax.set_xscale("log")
        ax.set_ylim(-0.05, 1.1)
        ax.set_xlabel("tokens per run (prompt + completion)")
        ax.set_ylabel("score")
        ax.set_title(suite)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.suptitle(_title("Score against tokens spent", label, oracle), fontsize=11)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------------------------------
# Entry point


def _pages_section(records: Sequence[Mapping[str, Any]], limit: int = 200) -> list[str]:
    """Every run that did not score 1, linked to its page (the answer in its documents, each chunk's fate)."""
    paged = [r for r in records if r.get("page")]
    if not paged:
        return []
    lines = ["## Runs that missed, each with its page", ""]
    for r in sorted(paged, key=lambda r: (r["strategy"], str(r["instance_id"])))[:limit]:
        answer = " ".join(str(r.get("answer") or "").split())[:120].replace("|", "\\|")
        lines.append(
            f"- [{r['instance_id']} / {r['strategy']}]({r['page']}): score {_fmt(_score_value(r), 2)}, "
            f"support {r.get('support') or '-'}, answered {answer!r}"
        )
    if len(paged) > limit:
        lines.append(f"- … and {len(paged) - limit} more (their records name their pages)")
    return [*lines, ""]


def report_for(out_dir: Path, label: str, records: Sequence[Mapping[str, Any]]) -> list[Path]:
    """Write one model's report files; returns their paths (the Markdown and JSON first)."""
    oracle = label == ORACLE_LABEL or any(r.get("oracle") for r in records)
    name = slug(label)
    rows = summarize(records)
    plots: list[Path] = []
    heatmap, by_length, by_tokens, by_family = (out_dir / f"{stem}-{name}.png" for stem in _PLOTS)
    if plot_needle_heatmap(records, heatmap, label=label, oracle=oracle):
        plots.append(heatmap)
    if plot_family_heatmap(family_rows(records), by_family, label=label, oracle=oracle):
        plots.append(by_family)
    if plot_score_vs_length(rows, by_length, label=label, oracle=oracle):
        plots.append(by_length)
    if plot_score_vs_tokens(rows, by_tokens, label=label, oracle=oracle):
        plots.append(by_tokens)
    markdown = out_dir / f"report-{name}.md"
    markdown.write_text(render_markdown(label, records, plots), encoding="utf-8")
    summary = out_dir / f"summary-{name}.json"
    payload = {
        "model": label,
        "oracle": oracle,
        "banner": ORACLE_BANNER if oracle else None,
        "records": len(records),
        "rows": rows,
        "needle": needle_grid(records),
        "judge": judge_summary(records),
        "families": family_rows(records),
    }
    summary.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return [markdown, summary, *plots]


def write_reports(out_dir: Path) -> dict[str, list[Path]]:
    """A report per ``records-*.jsonl`` in ``out_dir``: label → the files written."""
    written: dict[str, list[Path]] = {}
    for path in sorted(out_dir.glob("records-*.jsonl")):
        records = read_records(path)
        by_model: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            by_model[str(record["model"])].append(record)
        for label, group in sorted(by_model.items()):
            # The oracle label is reserved: its records never share a table with a real model's.
            group = [r for r in group if bool(r.get("oracle")) == (label == ORACLE_LABEL)]
            if group:
                written[label] = report_for(out_dir, label, group)
    return written
