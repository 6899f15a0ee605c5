#!/usr/bin/env bash
# Fresh machine to first answer: set up, then read a long real document (Paul Graham essays with a
# planted fact) with LLM×MapReduce on the embedded model server, and print the answer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/longgraph demo "$@"
echo
echo "The embedded model server is still running (about 3 GB of memory), so the next question starts at"
echo "once. Stop it with:  .venv/bin/longgraph model stop"
