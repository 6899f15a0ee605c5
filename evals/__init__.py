"""Evaluation harness: deterministic long-context test sets built from installed corpora, and their metrics.

Installed as ``longgraph.evals``. Nothing here downloads anything: the corpora come from registry
packages (see :mod:`longgraph.evals.corpora`) and every test set is rebuilt at run time from a seed, so
no copy of a CC BY-SA corpus is ever committed and the same seed always gives the same inputs.
"""
