"""Helpers shared by the integration tests: stub-friendly settings and running the real CLI.

The CLI runs as the ``longgraph`` console script does, in a subprocess with a scrubbed environment (no inherited
``LONGGRAPH_*`` settings, its own ``LONGGRAPH_HOME``), so a developer's configuration or cache can
neither help nor break a test, and with a hard timeout, so a hang fails the test instead of the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from longgraph.testing.stub_server import STUB_SETTINGS


def stub_cli_args(base_url: str, **overrides: Any) -> list[str]:
    """CLI flags equivalent to :data:`STUB_SETTINGS` for the stub at ``base_url``."""
    settings = {**STUB_SETTINGS, "base_url": base_url, **overrides}
    args: list[str] = []
    for key, value in settings.items():
        if value is None:
            continue
        args += [f"--{key.replace('_', '-')}", str(value)]
    return args


def hermetic_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without ``LONGGRAPH_*`` settings, with ``LONGGRAPH_HOME=home``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LONGGRAPH_")}
    env["LONGGRAPH_HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def longgraph_command(args: Sequence[str]) -> list[str]:
    """What the ``longgraph`` console script runs, with this interpreter (no PATH lookup)."""
    return [sys.executable, "-c", "from longgraph.cli import main; main()", *args]


def run_longgraph(
    args: Sequence[str],
    *,
    home: Path,
    timeout: float = 60.0,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``longgraph <args>`` to completion; raises ``TimeoutExpired`` (after killing it) on a hang."""
    done = subprocess.run(
        longgraph_command(args),
        input=stdin if stdin is not None else b"",
        capture_output=True,
        timeout=timeout,
        env=hermetic_env(home, env),
        cwd=cwd or home,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", errors="replace"),
        done.stderr.decode("utf-8", errors="replace"),
    )


def kill_when(
    args: Sequence[str], *, home: Path, done: Callable[[], bool], what: str, timeout: float = 240
) -> None:
    """Start ``longgraph <args>`` and kill it as soon as ``done()`` holds (a run killed part-way);
    fail the test when it does not hold within ``timeout`` seconds."""
    process = subprocess.Popen(
        longgraph_command(args), env=hermetic_env(home), cwd=home,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done():
                return
            time.sleep(0.05)
        pytest.fail(f"{what} within {timeout:g} s")
    finally:
        process.kill()
        process.wait()


def json_result(completed: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The ``--json`` result of a successful run (with its stderr in the failure message)."""
    assert completed.returncode == 0, f"exit {completed.returncode}: {completed.stderr[-2000:]}"
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def comparable(result: Mapping[str, Any]) -> dict[str, Any]:
    """What two runs of the same input must agree on (not timings, costs or notes)."""
    return {
        "answer": result["answer"],
        "confidence": result.get("confidence"),
        "evidence": [(e["chunk_id"], e["start"], e["end"]) for e in result.get("evidence") or []],
        "chunks": [(c["id"], c["status"], c.get("answer")) for c in result.get("chunks") or []],
    }


REPO_ROOT = Path(__file__).resolve().parents[2]


DATA_GRAPHS: dict[str, str] = {
    "pyramid-align": "writes a training record from a document and asks no question: tested by "
    "test_pyramid_stub.py and served in test_langgraph_server.py",
}
"""Served graphs that answer no question (the shared question-answering tests do not apply), and why."""


def all_served_graphs() -> dict[str, str]:
    """``name -> path:attribute`` of every graph ``langgraph.json`` serves."""
    config = json.loads((REPO_ROOT / "langgraph.json").read_text(encoding="utf-8"))
    graphs: dict[str, str] = config["graphs"]
    return graphs


def served_graphs() -> dict[str, str]:
    """The served question-answering graphs (new graphs are covered), without :data:`DATA_GRAPHS`."""
    return {name: path for name, path in all_served_graphs().items() if name not in DATA_GRAPHS}


HEAVY: dict[str, str] = {
    "rag-embed": "embeds every chunk with a local CPU model: 15-20 s a run on two cores",
    "pecan-no-attention": "against a stub (no local model) it is `pecan` itself — embedding-similarity edges — "
    "and, like it, embeds every node with a local CPU model",
    "pecan-fixed-k": "embeds every node with a local CPU model as `pecan` does; only its search control "
    "differs (unit-tested)",
}
"""Served graphs left out of the tests that run each graph many times, and why. Each still runs in a
few cheaper tests (``heavy=True``): one fault, its secrets, asking twice through the cache, the
input errors; the end-to-end server test runs it too. Every graph not named here is covered
automatically by every test that fits its shape."""

LOCAL_MODEL: dict[str, str] = {
    "pecan-no-embedding": "reads attention from a local transformers model, which a stub cannot serve: "
    "its e2e test runs it on the embedded SmolLM2 weights",
}
"""Served graphs the stub-based shared tests cannot run at all, and why (each is tested where it can run)."""

FACT_DEPTH = 0.1
"""Where tests that run every graph plant their fact: inside the prefix the truncation baseline keeps
under a 2048-token window, so every strategy can find it."""

FACT_DOCUMENT_CHARS = 30_000
"""The length of the planted document of tests that assert every graph finds the fact (7-8 chunks under
a 2048-token window). Not any length will do for ``rag-embed``: MiniLM scores a chunk by its best
128-token piece, and whether the fact's piece outranks the essays depends on where the piece boundaries
fall (at depth 0.1 it does at 30,000 characters, not at 20,000 or 40,000)."""

CallShape = Literal["fan-out", "single-call", "graph-search"]
Reads = Literal["all", "prefix", "top-k", "searched"]


@dataclass(frozen=True)
class Shape:
    """How a served graph uses the model, as far as the shared integration tests care.

    ``calls``: ``fan-out`` graphs make one call per chunk and then at least one more stage, so a
    multi-chunk run makes many calls and a failed call fails one chunk; ``single-call`` graphs make one
    call per run over the text they selected, so a failed call fails the run (there is no "mid-run");
    ``graph-search`` graphs (PECAN) make one call per batch of chunks to build a graph, then a sequence of
    search turns and an answer, so a failed build call fails a batch (its chunks rise unchanged) and a
    failed search call fails the run.
    ``reads``: what of the input reaches the model: ``all`` of it, the ``prefix`` that fits one window,
    or the ``top-k`` chunks a retriever ranks first (a fact anywhere can be found if it is retrieved), or
    the chunks a graph search ``searched`` (visited, or reached through the edges of visited points).

    ``test_served_graphs.py`` runs each graph once and checks its declared shape against what it does.
    """

    calls: CallShape
    reads: Reads


FAN_OUT = Shape(calls="fan-out", reads="all")

SHAPES: dict[str, Shape] = {
    "auto": FAN_OUT,  # the shared tests' documents do not fit one call: mapreduce's graph
    "mapreduce": FAN_OUT,
    "records": FAN_OUT,  # the stub's oracle never plans an aggregation: mapreduce's path
    "mapreduce-segment-merge": FAN_OUT,
    "segment-plus": FAN_OUT,
    "segment-plus-no-filter": FAN_OUT,
    "segment-plus-no-structure": FAN_OUT,
    "segment-plus-plain": FAN_OUT,
    "tom": Shape(calls="fan-out", reads="top-k"),
    "tom-no-aggregation": Shape(calls="fan-out", reads="top-k"),
    "tom-no-confidence": Shape(calls="fan-out", reads="top-k"),
    "pecan": Shape(calls="graph-search", reads="searched"),
    "pecan-no-attention": Shape(calls="graph-search", reads="searched"),
    "pecan-no-embedding": Shape(calls="graph-search", reads="searched"),
    "pecan-fixed-k": Shape(calls="graph-search", reads="searched"),
    "truncate": Shape(calls="single-call", reads="prefix"),
    "rag-bm25": Shape(calls="single-call", reads="top-k"),
    "rag-embed": Shape(calls="single-call", reads="top-k"),
}
"""The shape of every served graph: a new graph must be declared here before the shared tests run."""


def shape_of(strategy: str) -> Shape:
    try:
        return SHAPES[strategy]
    except KeyError:
        raise AssertionError(
            f"served graph {strategy!r} has no declared shape: add it to SHAPES in tests/integration/support.py"
        ) from None


def served_strategies(*, heavy: bool = False, calls: CallShape | None = None) -> list[str]:
    """The served graphs that ``longgraph.ask`` can also run by name (the strategy registry), without
    the :data:`HEAVY` ones unless ``heavy``, and only those making ``calls`` when it is given."""
    from longgraph.strategies import STRATEGIES

    shapes = {name: shape_of(name) for name in served_graphs() if name in STRATEGIES}
    return sorted(
        name
        for name, shape in shapes.items()
        if (heavy or name not in HEAVY)
        and name not in LOCAL_MODEL
        and (calls is None or shape.calls == calls)
    )


def heavy_strategies(*, calls: CallShape | None = None) -> list[str]:
    """The :data:`HEAVY` served graphs (for the tests that run each graph once or twice)."""
    return [name for name in served_strategies(heavy=True, calls=calls) if name in HEAVY]
