"""Stage functions shared across strategies: chunk, map, collapse, reduce, finalize, ...

Each is an async function on typed state that takes the run's ``Runtime[Context]`` and has its model
injected (an :data:`longgraph.llm.LLMProvider`), so tests swap in fakes and graphs swap stages.
"""
