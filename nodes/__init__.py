"""Stage functions shared across strategies: chunk, map, collapse, reduce, finalize, ...

Each is a function of ``(state, kit)``: typed state, and the run's :class:`~longgraph.nodes.kit.RunKit`
(the resolved context, the tokenizer, the prompts and the one call path, built per run from the model
provider the graph was given, ``nodes/kit.py``), so tests inject fakes and graphs swap stages.
"""
