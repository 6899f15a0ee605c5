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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

STUB_SETTINGS: dict[str, Any] = {
    "model": "stub",
    "context_window": 2048,
    "max_output_tokens": 256,
    "temperature": 0.0,
    "structured_output": "json_schema",
}
"""Small windows (many chunks from a short document), deterministic sampling, the stub's model name."""


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


def served_graphs() -> dict[str, str]:
    """``name -> path:attribute`` of every graph ``langgraph.json`` serves (new graphs are covered)."""
    config = json.loads((REPO_ROOT / "langgraph.json").read_text(encoding="utf-8"))
    graphs: dict[str, str] = config["graphs"]
    return graphs


HEAVY: dict[str, str] = {
    "rag-embed": "embeds every chunk with a local CPU model: 15-20 s a run on two cores",
}
"""Served graphs left out of the integration suite (which runs each graph many times) and why; the
end-to-end server test still runs them. Every graph not named here is covered automatically."""

FACT_DEPTH = 0.1
"""Where tests that run every graph plant their fact: inside the prefix the truncation baseline keeps
under a 2048-token window, so every strategy can find it."""


def served_strategies(*, heavy: bool = False) -> list[str]:
    """The served graphs that ``longgraph.ask`` can also run by name (the strategy registry)."""
    from longgraph.strategies import STRATEGIES

    return sorted(name for name in served_graphs() if name in STRATEGIES and (heavy or name not in HEAVY))
