"""Typed schemas: graph input/output/internal state, the run context, and the structured LLM outputs.

The contract every strategy shares is in :mod:`longgraph.state.contract`; the run configuration in
:mod:`longgraph.state.context`; the pydantic models of LLM outputs in :mod:`longgraph.state.outputs`.
"""
