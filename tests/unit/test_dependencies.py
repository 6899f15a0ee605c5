"""Every third-party module the core imports is a declared dependency of the distribution.

The core (the package root, its CLI, graphs, nodes, state, prompts) imports at module level only what
``pip install longgraph`` installs; optional features import their extras inside functions. This
caught ``openai``: imported by the chat path, installed only through ``langchain-openai`` until that
was dropped, so a fresh install without the model extra could not import ``longgraph``.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ["longgraph/*.py", "longgraph/cli/*.py", "graphs/*.py", "nodes/*.py", "state/*.py", "prompts/*.py"]


def _module_level_imports(path: Path) -> set[str]:
    """Top-level names imported at module level (not under ``if TYPE_CHECKING:`` or in a function)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        _normalise(re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0])
        for requirement in project["dependencies"]
    }


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_core_imports_only_declared_dependencies() -> None:
    imported = {
        name for pattern in CORE for path in ROOT.glob(pattern) for name in _module_level_imports(path)
    }
    third_party = imported - set(sys.stdlib_module_names) - {"longgraph", "__future__"}
    distributions = importlib.metadata.packages_distributions()
    declared = _declared()
    undeclared = {
        module: distributions.get(module, ["?"])
        for module in sorted(third_party)
        if not {_normalise(d) for d in distributions.get(module, [])} & declared
    }
    assert not undeclared, f"imported by the core but not in pyproject's dependencies: {undeclared}"
