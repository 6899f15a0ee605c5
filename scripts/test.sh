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
# Everything but the embedded-model tests on every core (each worker starts its own stub; one worker
# holds the langgraph dev servers); the tests on the embedded vLLM server after, alone: they share one
# server that uses every core. Arguments (paths, -k, …) go to both runs; a run with nothing selected
# (exit 5) is not a failure. The second phase runs even when the first failed, so one CI run shows
# every failure; the suite's exit code is the first failing phase's.
status=0
run_pytest() { python -m pytest -q --durations=25 "$@" || { rc=$?; [ "$rc" = 5 ] || { [ "$status" != 0 ] || status=$rc; }; }; }
echo "== pytest: unit, integration, langgraph dev"
run_pytest -n "${LONGGRAPH_TEST_WORKERS:-auto}" --dist loadgroup -m "not vllm" "$@"
echo "== pytest: end to end on the embedded vLLM server"
run_pytest -m vllm "$@"
exit "$status"
