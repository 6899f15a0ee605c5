"""``python -m longgraph.cli``."""

from longgraph.cli import main

main()
