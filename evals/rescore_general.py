"""Re-scoring the general suite's records with the current scorer, into a new file.

``python -m longgraph.evals.rescore_general RECORDS.jsonl [OUT.jsonl]``

Why: a scorer fault found after a held-out run (an earlier run: "a 5,520-crown prize" was not read as
stating 5,520) leaves that run's records scored wrong, and the run cannot be redone without looking at
the split again. The answers are in the records; each instance's label is rebuilt from its id (split,
kind, seed, index and length are in it: ``general-test-paraphrase-s0-0-t8000``) by the suite's own
builder, and every record is scored again. The records are never rewritten: the result goes to a new
file (``<name>-rescored.jsonl`` by default), refused if it exists, and every changed score is listed.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longgraph.errors import InputError
from longgraph.evals.data.general import SUITE, Split, build_general
from longgraph.evals.scoring import get_scorer
from longgraph.jsonl import read_rows

_ID = re.compile(
    rf"^{SUITE}-(?P<split>dev|test)-(?P<kind>[a-z-]+)-s(?P<seed>\d+)-(?P<index>\d+)-t(?P<tokens>\d+)$"
)


def labels_of(instance_ids: Sequence[str]) -> dict[str, Any]:
    """Each id's label, from the suite's builder run as the eval ran it: per (split, seed, length), as
    many instances per kind as the ids reach."""
    runs: dict[tuple[str, int, int], int] = defaultdict(int)
    for instance_id in instance_ids:
        match = _ID.match(instance_id)
        if match is None:
            raise InputError(f"{instance_id!r} is not an id of the general suite")
        key = (match["split"], int(match["seed"]), int(match["tokens"]))
        runs[key] = max(runs[key], int(match["index"]) + 1)
    labels: dict[str, Any] = {}
    for (split, seed, tokens), n in runs.items():
        which: Split = "test" if split == "test" else "dev"
        for instance in build_general(target_tokens=tokens, n=n, seed=seed, split=which):
            labels[instance.id] = instance.label
    return labels


def rescore(path: Path, out: Path | None = None) -> tuple[Path, list[str]]:
    """``path``'s records scored again into ``out`` (never ``path`` itself); what changed, one line each."""
    out = out or path.with_name(f"{path.stem}-rescored.jsonl")
    if out.resolve() == path.resolve() or out.exists():
        raise InputError(f"{out} exists (or is the records file itself): choose another output file")
    records = read_rows(path, "evaluation record")
    labels = labels_of([str(r["instance_id"]) for r in records])
    scorer = get_scorer(SUITE)
    changed: list[str] = []
    for record in records:
        if record.get("error") or record.get("answer") is None:
            continue
        scores = scorer.score(str(record["answer"]), labels[str(record["instance_id"])])
        score = scores[str(record["metric"])]
        if score != record["score"]:
            changed.append(
                f"{record['instance_id']} {record['strategy']}: {record['score']} -> {score} "
                f"({str(record['answer'])[:80]!r})"
            )
        record["scores"] = {**record.get("scores", {}), **scores}
        record["score"] = score
    with out.open("x", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out, changed


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("records", type=Path)
    parser.add_argument("out", type=Path, nargs="?", default=None)
    args = parser.parse_args(argv)
    try:
        out, changed = rescore(args.records, args.out)
    except (InputError, OSError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"{len(changed)} score(s) changed → {out}")
    for line in changed:
        print(f"  {line}")


if __name__ == "__main__":
    main()
