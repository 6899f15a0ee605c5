"""Builders of evaluation instances, one module per suite.

* :mod:`~longgraph.evals.data.needle`: a needle sentence hidden at a chosen depth in Paul Graham essays;
* :mod:`~longgraph.evals.data.squad`: one SQuAD v2 paragraph among distractor paragraphs (single document);
* :mod:`~longgraph.evals.data.hotpot`: HotpotQA supporting passages among distractors (LongBench style);
* :mod:`~longgraph.evals.data.loong`: the Loong benchmark, for users who have its data;
* :mod:`~longgraph.evals.data.loong_synth`: Loong's four task families built offline from generated facts;
* :mod:`~longgraph.evals.data.infinitebench`: InfiniteBench, for users who have its task files.

Every builder returns :class:`~longgraph.evals.data.instance.EvalInstance` objects and is deterministic
given its seed.
"""
