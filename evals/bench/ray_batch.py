"""Items per second of ``longgraph batch``: the local engine, Ray with one worker and Ray with two, on the
same items, stub and global limit, side by side in one run.

``python -m longgraph.evals.bench.ray_batch [--items 300] [--latencies 1.0,0.1] [--concurrency 64]``

A local Ray cluster is started here (a head with no CPU, two worker nodes of one CPU each: separate
raylet processes), the stub in its own process. For each stub latency: the local engine, then Ray with
1 and 2 workers, each over the same distinct items with no result cache. Printed: items/s of each, the
ratios over the local engine (issue 31's targets: Ray with one worker ≥ 0.9 of local at 1.0 s; two
workers above local at 0.1 s), the stub's peak of requests in flight (never above the limit), and
the peak RSS of the worker processes (each worker's own high-water mark).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longgraph.batch import batch
from longgraph.evals.bench import load_average, print_figures
from longgraph.evals.corpora import load_paul_graham_text
from longgraph.testing.stub_server import StubConfig, run_stub_in_subprocess

FACT = "The secret ingredient of Grandma Olga's borscht is smoked plums."
QUESTION = "What is the secret ingredient of Grandma Olga's borscht?"


def write_items(path: Path, count: int) -> Path:
    """``count`` distinct items (each its own stretch of the essays and its own fact)."""
    text = load_paul_graham_text()
    rows = []
    for i in range(count):
        filler = text[(i % 40) * 6_000 : (i % 40 + 1) * 6_000]
        fact = FACT.replace(".", f" from orchard {i}.")
        rows.append(
            {
                "id": f"item-{i}",
                "question": QUESTION,
                "document": filler[:3_000] + "\n\n" + fact + "\n\n" + filler[3_000:],
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--latencies", default="1.0,0.1")
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args(argv)
    import ray as ray_module
    from ray.cluster_utils import Cluster

    ray: Any = ray_module  # untyped in places

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(2):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    figures: dict[str, Any] = {"items": args.items, "max_concurrency": args.concurrency}
    try:
        for latency in (float(x) for x in args.latencies.split(",")):
            with (
                run_stub_in_subprocess(StubConfig(model="stub", latency_s=latency)) as stub,
                tempfile.TemporaryDirectory() as tmp,
            ):
                items = write_items(Path(tmp) / "items.jsonl", args.items)
                settings: dict[str, Any] = {
                    "base_url": stub.base_url,
                    "model": "stub",
                    "cache_path": "",
                    "max_concurrency": args.concurrency,
                    "context_window": 8192,
                }
                rates: dict[str, float] = {}
                for name, extra in (
                    ("local", {}),
                    ("ray_1", {"engine": "ray", "workers": 1}),
                    ("ray_2", {"engine": "ray", "workers": 2}),
                ):
                    stub.reset()
                    summary = batch(
                        items, out=Path(tmp) / f"{name}.jsonl", start_embedded=False, **settings, **extra
                    )
                    assert summary.done == args.items and summary.failed == 0, summary.lines()
                    rates[name] = summary.done / summary.seconds
                    tag = f"{name}_at_{latency:g}s"
                    figures[f"{tag}_items_per_s"] = round(rates[name], 2)
                    figures[f"{tag}_stub_max_in_flight"] = stub.stats()["max_in_flight"]
                    if summary.cluster is not None:
                        figures[f"{tag}_worker_peak_rss_mb"] = summary.cluster["worker_peak_rss_mb"]
                for name in ("ray_1", "ray_2"):
                    figures[f"{name}_over_local_at_{latency:g}s"] = round(rates[name] / rates["local"], 2)
    finally:
        ray.shutdown()
        cluster.shutdown()  # type: ignore[no-untyped-call]
    figures["load_average"] = load_average()
    print_figures("batch on Ray: items per second against the local engine", figures)


if __name__ == "__main__":
    main()
