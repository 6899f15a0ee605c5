"""Builders of evaluation instances, one module per suite.

* :mod:`~longgraph.evals.data.needle`: a needle sentence hidden at a chosen depth in Paul Graham essays;
* :mod:`~longgraph.evals.data.squad`: one SQuAD v2 paragraph among distractor paragraphs (single document);
* :mod:`~longgraph.evals.data.hotpot`: HotpotQA supporting passages among distractors (LongBench style);
* :mod:`~longgraph.evals.data.loong`: the Loong benchmark, for users who have its data.

Every builder returns :class:`~longgraph.evals.data.instance.EvalInstance` objects and is deterministic
given its seed.
"""
