"""The reference reader through every grounded strategy: on real questions a right model's answer comes
back as given or not at all, and no wrong answer is ever marked supported, in every wording."""

from __future__ import annotations

import pytest

from longgraph.evals.data.real import build_real, score_real
from longgraph.state.outputs import is_no_information
from longgraph.testing.reference import WORDINGS, Wording, read

STRATEGIES = ["mapreduce", "segment-plus", "mapreduce-segment-merge", "tom", "pecan"]


@pytest.mark.parametrize("wording", WORDINGS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_wrong_answer_is_marked_supported_and_unanswerable_questions_stay_silent(
    strategy: str, wording: Wording
) -> None:
    instances = build_real(target_tokens=4_000, n=1, seed=0, split="dev")
    kept = 0
    for instance in instances:
        result = read(strategy, instance, wording)
        right = score_real(result.answer, instance.label)["correct"] == 1.0
        assert right or not result.supported, (instance.id, result.answer, result.stats.notes)
        if instance.metadata["kind"] == "squad-unanswerable":
            assert is_no_information(result.answer) and result.supported is False, result.answer
        kept += right
    assert kept >= 2, kept  # more than the unanswerable question comes back
