"""What the graphs lose of a right model on real questions: the reference reader through every strategy.

``python -m longgraph.evals.bench.reference_real [--split dev] [--n 5] [--tokens 8000] [--wording bare]``

The reference reader (:mod:`longgraph.evals.readers.real`) knows each question's gold answer and
supporting sentences, so every answer it does not get back is lost by the graphs' chunking, notes,
reduction or answer checks. This prints, per kind and strategy, the share kept with its 95% interval,
every wrong answer marked ``supported`` (the one count that must be 0), and what overruled each lost
answer (the run's own notes); ``--out FILE`` writes one JSON record per run (split named in each) and
``--report FILE`` a Markdown table; ``--summarise FILE`` prints the table of a records file (every
length and wording in it, pooled over strategies: the README's table). Injected fakes, no server:
seconds per hundred runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from longgraph.evals.bench import print_figures
from longgraph.evals.data.real import KINDS, Split, build_real, score_real
from longgraph.evals.readers.real import WORDINGS, Wording, read
from longgraph.evals.report import wilson
from longgraph.state.outputs import is_no_information

STRATEGIES = ("mapreduce", "segment-plus", "mapreduce-segment-merge", "tom", "pecan")
"""Every strategy that grounds its answer (the baselines answer from one call, unchecked)."""


def checks_size() -> dict[str, object]:
    """What the answer checks weigh, printed beside the scores: the lines of ``nodes/checks`` and of
    ``nodes/finalize.py`` (docstrings included), and how many decisions they make."""
    from longgraph.nodes import checks, finalize

    folder = Path(checks.__file__).parent
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in sorted(folder.glob("*.py")))
    gate = len(Path(finalize.__file__).read_text(encoding="utf-8").splitlines())
    return {"answer check lines": lines, "finalize lines": gate, "decisions": len(checks.DECISIONS)}


def verification_calls(records: Sequence[dict[str, Any]]) -> str:
    """Verification calls per run, as a mean over ``records`` (0 when the words settle every answer)."""
    return f"{sum(int(r.get('verify_calls') or 0) for r in records) / max(1, len(records)):.2f}"


def _why_lost(notes: Sequence[str]) -> str:
    """The first of a run's notes that says why an answer did not stand, cut to its reason's start."""
    for note in notes:
        if "does not stand" in note or "not stand" in note or "runs on past" in note:
            return note.split("(", 1)[0].strip()[:70] + " … " + note.split(")", 1)[-1].strip()[:90]
    return "no note (the notes never held the answer)"


def measure(
    split: Split,
    n: int,
    tokens: int,
    strategies: Sequence[str] = STRATEGIES,
    wording: Wording = "bare",
    seed: int = 0,
    window: int | None = None,
    verifier: Literal["reference", "lenient"] = "reference",
) -> list[dict[str, Any]]:
    """One record per (instance, strategy): kept, supported, the answer, and the run's notes."""
    records: list[dict[str, Any]] = []
    for instance in build_real(target_tokens=tokens, n=n, seed=seed, split=split):
        for strategy in strategies:
            started = time.perf_counter()
            result = read(strategy, instance, wording, window, verifier=verifier)
            score = score_real(result.answer, instance.label)
            records.append(
                {
                    "id": instance.id,
                    "split": split,
                    "kind": instance.metadata["kind"],
                    "strategy": strategy,
                    "wording": wording,
                    "verifier": verifier,
                    "tokens": tokens,
                    "question": instance.question,
                    "gold": instance.gold_answers,
                    "answer": result.answer,
                    "supported": result.supported,
                    "support": result.support,
                    "verdict": result.verdict,
                    **score,
                    "notes": result.stats.notes,
                    "calls": result.stats.llm_calls,
                    "verify_calls": result.stats.calls_by_stage.get("verify", 0),
                    "seconds": round(time.perf_counter() - started, 3),
                }
            )
    return records


def table(records: Sequence[dict[str, Any]], strategies: Sequence[str]) -> list[str]:
    """A Markdown table: kept per kind and strategy (with the pooled 95% interval), wrong supported."""
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in records:
        cells[(r["kind"], r["strategy"])].append(r["correct"])
    lines = [
        "| kind | " + " | ".join(strategies) + " | pooled (95% CI) |",
        "|---|" + "---:|" * (len(strategies) + 1),
    ]
    for kind in KINDS:
        row = [f"{int(sum(cells[(kind, s)]))}/{len(cells[(kind, s)])}" for s in strategies]
        pooled = [c for s in strategies for c in cells[(kind, s)]]
        if not pooled:
            continue
        low, high = wilson(sum(pooled), len(pooled))
        row.append(f"{sum(pooled) / len(pooled):.2f} ({low:.2f}–{high:.2f})")
        lines.append(f"| {kind} | " + " | ".join(row) + " |")
    wrong = [r for r in records if r["supported"] and not r["correct"]]
    lines.append("")
    lines.append(f"Wrong answers marked `supported`: **{len(wrong)} of {len(records)}** runs.")
    lines.append("")
    lines.append("By verdict: " + verdict_counts(records) + ".")
    return lines


def verdict_counts(records: Sequence[dict[str, Any]]) -> str:
    """Right and wrong answers split by the checks' verdict (an answer shown ``unconfirmed`` is scored
    as given; NO INFORMATION for an answerable question is neither shown count)."""

    def count(correct: bool, verdict: str) -> int:
        return sum(
            1
            for r in records
            if bool(r["correct"]) == correct
            and r.get("verdict") == verdict
            and not is_no_information(str(r["answer"]))
        )

    return (
        f"right and supported {count(True, 'supported')}, right and unconfirmed {count(True, 'unconfirmed')}, "
        f"wrong and supported {count(False, 'supported')}, wrong and unconfirmed {count(False, 'unconfirmed')}, "
        f"refuted {sum(r.get('verdict') == 'refuted' for r in records)} of {len(records)} runs"
    )


def summary(records: Sequence[dict[str, Any]]) -> list[str]:
    """A Markdown table of recorded runs: per kind, the share kept pooled over strategies (95%
    interval) for each (tokens, wording) recorded, and the wrong answers marked supported."""
    columns = sorted(
        {(r["tokens"], r["wording"]) for r in records}, key=lambda c: (c[0], WORDINGS.index(c[1]))
    )
    head = [f"{tokens // 1000}K {wording}" for tokens, wording in columns]
    lines = ["| kind | " + " | ".join(head) + " |", "|---|" + "---:|" * len(columns)]
    for kind in KINDS:
        row = []
        for tokens, wording in columns:
            cell = [
                r["correct"]
                for r in records
                if (r["tokens"], r["wording"], r["kind"]) == (tokens, wording, kind)
            ]
            low, high = wilson(sum(cell), len(cell)) if cell else (0.0, 0.0)
            row.append(f"{sum(cell) / len(cell):.2f} ({low:.2f}–{high:.2f})" if cell else "—")
        lines.append(f"| {kind} | " + " | ".join(row) + " |")
    wrong = []
    for tokens, wording in columns:
        runs = [r for r in records if (r["tokens"], r["wording"]) == (tokens, wording)]
        wrong.append(f"{sum(bool(r['supported']) and not r['correct'] for r in runs)} of {len(runs)}")
    lines.append("| wrong answers marked supported | " + " | ".join(wrong) + " |")
    shown = []
    for tokens, wording in columns:
        runs = [r for r in records if (r["tokens"], r["wording"]) == (tokens, wording)]
        flagged = sum(
            r.get("verdict") == "unconfirmed" and not r["correct"] and not is_no_information(str(r["answer"]))
            for r in runs
        )
        shown.append(f"{flagged} of {len(runs)}")
    lines.append("| wrong answers shown flagged unconfirmed | " + " | ".join(shown) + " |")
    calls = [
        verification_calls([r for r in records if (r["tokens"], r["wording"]) == column])
        for column in columns
    ]
    lines.append("| verification calls per run | " + " | ".join(calls) + " |")
    return lines


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--n", type=int, default=5, help="instances per kind")
    parser.add_argument("--tokens", type=int, default=8_000, help="length of each document")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--window", type=int, default=None, help="the reader's context window (default 2,048)"
    )
    parser.add_argument(
        "--wording", choices=WORDINGS, default="bare", help="how the reader words its answers"
    )
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated")
    parser.add_argument(
        "--verifier",
        choices=("reference", "lenient"),
        default="reference",
        help="lenient: the verification call says stated whenever the answer's words are in the quotes",
    )
    parser.add_argument("--out", type=Path, default=None, help="append one JSON record per run here")
    parser.add_argument("--report", type=Path, default=None, help="write the Markdown table here")
    parser.add_argument(
        "--summarise", type=Path, default=None, help="print the table of a records file (--out) and exit"
    )
    args = parser.parse_args(argv)
    if args.summarise:
        with args.summarise.open(encoding="utf-8") as handle:
            recorded = [json.loads(line) for line in handle if line.strip()]
        print("\n".join(summary(recorded)))
        return recorded
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = sorted(set(strategies) - set(STRATEGIES))
    if unknown:
        parser.error(f"unknown strategies {', '.join(unknown)} (known: {', '.join(STRATEGIES)})")
    started = time.perf_counter()
    records = measure(
        args.split, args.n, args.tokens, strategies, args.wording, args.seed, args.window, args.verifier
    )
    lost = Counter(_why_lost(r["notes"]) for r in records if not r["correct"])
    wrong = [r for r in records if r["supported"] and not r["correct"]]
    figures: dict[str, object] = {
        "split": args.split,
        "instances per kind": args.n,
        "tokens": args.tokens,
        "wording": args.wording,
        "verifier": args.verifier,
        "runs": len(records),
        "kept": f"{sum(r['correct'] for r in records):.0f}/{len(records)}",
        "wrong answers marked supported": len(wrong),
        "verification calls per run": verification_calls(records),
        **checks_size(),
        "seconds": round(time.perf_counter() - started, 1),
    }
    print_figures("real questions, read by the reference reader", figures)
    print("\n".join(table(records, strategies)))
    for why, count in lost.most_common(8):
        print(f"  lost {count}: {why}")
    for r in wrong:
        print(f"  WRONG supported: {r['strategy']} {r['id']}: {r['question']!r} → {r['answer'][:90]!r}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a", encoding="utf-8") as handle:
            for r in records:
                handle.write(json.dumps(r, ensure_ascii=False) + "\n")
    if args.report:
        stamp = datetime.now(UTC).strftime("%Y-%m-%d")
        head = [
            f"# Reference reader on real questions ({args.split} split, {args.wording} wording)",
            "",
            f"{stamp}, commit {_commit()}, {args.n} instances per kind at {args.tokens:,} tokens, "
            f"window {args.window or 2048:,}, seed {args.seed}. Generated by "
            "`python -m longgraph.evals.bench.reference_real`.",
            "",
            f"Verification calls per run: {verification_calls(records)}. The answer checks: "
            + ", ".join(
                f"{value} {name.removeprefix('answer check ')}" for name, value in checks_size().items()
            )
            + ".",
            "",
        ]
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text("\n".join([*head, *table(records, strategies), ""]), encoding="utf-8")
    return records


if __name__ == "__main__":
    main()
