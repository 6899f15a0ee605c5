"""The command starts light: loading ``longgraph.cli`` brings in none of the model stack.

Every command's bad setting, missing file or ``--help`` is answered before any graph is built; with
LangChain, LangGraph and the OpenAI client loaded at start, a bad setting was answered in 4.7 s instead
of 1.1 s (this 2-core host, under an eval's load), and the bad-input suites start the CLI over a hundred
times. A module-level
import of a node or graph module in the CLI (a type named in an annotation is enough) would bring them back.
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("langchain_core", "langgraph", "openai", "transformers", "torch", "numpy", "tokenizers", "ray")


def test_loading_the_cli_imports_none_of_the_model_stack() -> None:
    probe = f"import sys, longgraph.cli; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
