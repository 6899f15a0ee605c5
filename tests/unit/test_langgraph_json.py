"""``langgraph.json`` is derived from the strategy registry, not kept by hand: the file is exactly what
``longgraph strategies --langgraph-json`` prints, so adding a strategy or an ablation to the registry
and regenerating the file are one step (``longgraph strategies --langgraph-json > langgraph.json``)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from typer.testing import CliRunner

from longgraph.cli import app
from longgraph.strategies import DATA_ENGINES, GRAPH_MODULES, STRATEGIES, langgraph_config

ROOT = Path(__file__).resolve().parents[2]


def test_langgraph_json_is_the_registrys_and_serves_every_strategy_from_an_existing_attribute() -> None:
    printed = CliRunner().invoke(app, ["strategies", "--langgraph-json"])
    assert printed.exit_code == 0, printed.output
    on_disk = (ROOT / "langgraph.json").read_text(encoding="utf-8")
    assert printed.output == on_disk, "regenerate it: longgraph strategies --langgraph-json > langgraph.json"
    graphs = json.loads(on_disk)["graphs"]
    assert list(graphs) == [*STRATEGIES, *DATA_ENGINES] and json.loads(on_disk) == langgraph_config()
    for name, spec in graphs.items():
        path, attribute = spec.split(":")
        assert f"{attribute} = " in (ROOT / path).read_text(encoding="utf-8"), name


def test_each_strategy_is_declared_once_in_its_graph_module_and_served_under_its_name() -> None:
    """The registry is the graph modules' declarations; what a module serves is the declared graph."""
    declared = [s for module in GRAPH_MODULES for s in importlib.import_module(module).STRATEGIES]
    assert [s.name for s in declared] == list(STRATEGIES)
    for strategy in declared:
        served = getattr(importlib.import_module(strategy.module), strategy.served)
        assert served.name == strategy.name, (strategy.name, served.name)
