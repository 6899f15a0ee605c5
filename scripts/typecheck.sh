#!/usr/bin/env bash
# mypy --strict over the installed layout. The top-level folders install as longgraph.graphs,
# longgraph.nodes, ... through a package-dir mapping that mypy cannot follow, so type-check a link
# tree shaped like the installed package instead (.typecheck/, ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
root=.typecheck
rm -rf "$root" && mkdir -p "$root/longgraph"
for entry in longgraph/*; do ln -s "$PWD/$entry" "$root/longgraph/$(basename "$entry")"; done
for pkg in graphs nodes prompts state evals; do ln -s "$PWD/$pkg" "$root/longgraph/$pkg"; done
MYPYPATH="$root" exec "${MYPY:-mypy}" --strict -p longgraph "$@"
