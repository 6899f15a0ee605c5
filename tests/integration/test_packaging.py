"""`pip install .` and `pip install -e .` both give one `longgraph` distribution and no generic names."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import importlib, json, sys
import longgraph.graphs.mapreduce as g
from longgraph.prompts import load_prompt_file
from longgraph.state.contract import GraphOutput
found = {}
for name in ("graphs", "nodes", "state", "prompts", "evals", "tests"):
    try:
        importlib.import_module(name)
        found[name] = True
    except ModuleNotFoundError:
        found[name] = False
print(json.dumps({"graph_file": g.__file__, "prompt_version": load_prompt_file("mapreduce.toml").version,
                  "generic": found, "compiled": type(g.graph).__name__}))
"""


def _probe(env_path: str | None, cwd: Path) -> dict[str, object]:
    import json
    import os

    env = dict(os.environ)
    if env_path:
        env["PYTHONPATH"] = env_path
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_wheel_installs_under_the_longgraph_namespace_only(tmp_path: Path) -> None:
    wheel_dir = tmp_path / "wheel"
    # Build from a clean copy: setuptools reuses an in-tree build/ folder, whose stale files would
    # hide a package missing from pyproject's list.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", "build", "*.egg-info", ".git", "__pycache__",
                                                                ".typecheck", ".langgraph_api", "eval-results"))  # fmt: skip
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheel_dir), str(source)],
        check=True, timeout=300, capture_output=True,
    )  # fmt: skip
    (wheel,) = wheel_dir.glob("longgraph-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("longgraph-")}
    assert tops == {"longgraph"}, tops
    for expected in ("longgraph/graphs/mapreduce.py", "longgraph/prompts/mapreduce.toml", "longgraph/nodes/chunking.py",
                     "longgraph/state/contract.py", "longgraph/evals/metrics.py", "longgraph/py.typed",
                     "longgraph/prompts/judge/loong.toml"):  # fmt: skip
        assert expected in names
    # Every package of the source tree is in the wheel (a subpackage missing from pyproject's list
    # would install fine in editable mode and vanish from a real install).
    mapping = {"longgraph": "longgraph", "graphs": "longgraph/graphs", "nodes": "longgraph/nodes",
               "prompts": "longgraph/prompts", "state": "longgraph/state", "evals": "longgraph/evals",
               "tests": "longgraph/tests"}  # fmt: skip
    for top, installed in mapping.items():
        for init in (ROOT / top).rglob("__init__.py"):
            relative = init.relative_to(ROOT / top).as_posix()
            assert f"{installed}/{relative}" in names, f"{top}/{relative} is not packaged"
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
        check=True, timeout=300, capture_output=True,
    )  # fmt: skip
    probe = _probe(str(site), tmp_path)
    assert str(probe["graph_file"]).startswith(str(site))
    assert probe["compiled"] == "CompiledStateGraph"
    assert not any(dict(probe["generic"]).values())  # type: ignore[call-overload]


def test_editable_install_maps_the_top_level_folders(tmp_path: Path) -> None:
    probe = _probe(None, tmp_path)  # outside the repository: only the installed mapping can resolve names
    assert str(probe["graph_file"]) == str(ROOT / "graphs" / "mapreduce.py")
    assert probe["prompt_version"]
    assert not any(dict(probe["generic"]).values())  # type: ignore[call-overload]
