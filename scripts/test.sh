#!/usr/bin/env bash
# The whole test suite: lint, types, unit, integration (real HTTP to the fault-injecting stub) and
# end-to-end (the real vLLM CPU server and a real `langgraph dev` server). Sets up first if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
VENV=${LONGGRAPH_VENV:-.venv}
export PATH="$PWD/$VENV/bin:$PATH" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LANGGRAPH_CLI_NO_ANALYTICS=1
echo "== ruff";   ruff check .
echo "== mypy";   bash scripts/typecheck.sh
echo "== pytest"; python -m pytest -q "$@"
