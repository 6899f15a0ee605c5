"""The house reads top-down: every import, lazy and type-only ones included, runs from a layer to the
same layer or one below, and no modules import each other in a circle.

Layers, bottom first (``docs/architecture.md``, "Layers"):

0. **base**: errors, redaction, files and output claims, small concurrency and I/O helpers;
1. **state** and **prompts**: the typed schemas (the run context among them) and the prompt data;
2. **foundation**: the model client, endpoint, tokenizer, embeddings, caches, checkpoints, the
   embedded model server, the serving policy;
3. **nodes**: the stage functions;
4. **graphs**: the wiring;
5. **application**: the public API, CLI, batch, synthesis, Ray, costing, the strategy registry,
   pages, evaluation and the testing helpers.

A new module of ``longgraph/`` must be placed in :data:`BASE` or :data:`FOUNDATION`, or it counts as
application; the test names any arrow that runs upward or any circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "longgraph": "longgraph",
    "state": "longgraph.state",
    "prompts": "longgraph.prompts",
    "nodes": "longgraph.nodes",
    "graphs": "longgraph.graphs",
    "evals": "longgraph.evals",
}
BASE = {"errors", "redact", "group_commit", "http_retries", "inert", "loop_scope", "exclusive", "files", "jsonl",
        "outputs"}  # fmt: skip
FOUNDATION = {"tokenizer", "count_worker", "cache", "checkpointing", "concurrency", "openai_chat", "llm", "endpoint", "embeddings", "sentence_encoder",
              "embedded", "serving_policy", "spending", "structured", "user_share"}  # fmt: skip
LAYER_NAMES = ("base", "state", "foundation", "nodes", "graphs", "application")


def modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = [p for p in path.relative_to(ROOT / folder).with_suffix("").parts if p != "__init__"]
            found[".".join([package, *parts])] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The project modules ``path`` imports anywhere in it (inside functions and ``TYPE_CHECKING`` too)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        yield from (t for t in targets if t in known and t != name)


def layer(name: str) -> int:
    parts = name.split(".")
    if len(parts) > 1 and parts[1] in ("state", "prompts"):
        return 1
    if len(parts) > 1 and parts[1] == "nodes":
        return 3
    if len(parts) > 1 and parts[1] == "graphs":
        return 4
    if len(parts) > 1 and parts[1] in BASE:
        return 0
    if len(parts) > 1 and parts[1] in FOUNDATION:
        return 2
    return 5


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: set(imports(name, path, known)) for name, path in found.items()}


def test_every_import_runs_down_or_across() -> None:
    upward = sorted(
        f"{a} ({LAYER_NAMES[layer(a)]}) imports {b} ({LAYER_NAMES[layer(b)]})"
        for a, targets in graph().items()
        for b in targets
        if layer(b) > layer(a)
    )
    assert not upward, "\n".join(upward)


def test_no_modules_import_each_other_in_a_circle() -> None:
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for name in sorted(edges):
        if name not in index:
            visit(name)
    assert not circles, circles


def test_the_scan_sees_lazy_and_type_only_imports() -> None:
    """The checks above would pass vacuously if the scan missed imports inside functions."""
    edges = graph()
    assert "longgraph.answerview" in edges["longgraph.api"]  # imported inside Answer.to_html
    assert "longgraph.ray_batch" in edges["longgraph.batch"]  # lazy, and under TYPE_CHECKING
    assert layer("longgraph.llm") == 2 and layer("longgraph.cli.ask") == 5 and layer("longgraph.errors") == 0


CHECKS = "longgraph.nodes.checks"


def test_the_answer_checks_import_only_state_and_each_other() -> None:
    """``nodes/checks`` decides what is evidence and whether an answer stands: it reads the typed state
    and libraries only; the verification call comes in as a callable, never as the model client."""
    reaching_out = sorted(
        f"{a} imports {b}"
        for a, targets in graph().items()
        if a == CHECKS or a.startswith(f"{CHECKS}.")
        for b in targets
        if not (b.startswith("longgraph.state") or b == CHECKS or b.startswith(f"{CHECKS}."))
    )
    assert not reaching_out, "\n".join(reaching_out)


def test_nothing_reaches_inside_the_answer_checks() -> None:
    """Every module outside ``nodes/checks`` uses its one entry point, the package itself."""
    inside = sorted(
        f"{a} imports {b}"
        for a, targets in graph().items()
        if not (a == CHECKS or a.startswith(f"{CHECKS}."))
        for b in targets
        if b.startswith(f"{CHECKS}.")
    )
    assert not inside, "\n".join(inside)
    assert any(CHECKS in targets for targets in graph().values())  # the scan sees the entry point's users
