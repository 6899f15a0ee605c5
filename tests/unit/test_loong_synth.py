"""The synthetic Loong-style suite: deterministic, contamination-free, every family exactly scored.

Each instance's gold comes from code; these tests check that the documents really carry it (each fact
once, in the right document), that the scorers read answers written the ways models write them, and
that a window skips documents visibly.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from longgraph.errors import ConfigurationError
from longgraph.evals.corpora import load_paul_graham_text
from longgraph.evals.data.instance import count_mentions
from longgraph.evals.data.loong_synth import FAMILIES, FAMILY_TASK, build_loong_synth
from longgraph.evals.runner import EvalConfig
from longgraph.evals.scoring import get_scorer
from longgraph.evals.scoring.structured import (
    named_in_order,
    score_entity,
    score_groups,
    score_order,
    score_set,
    score_value,
)


@pytest.fixture(scope="module")
def suite() -> list[Any]:
    return build_loong_synth(length_set=1, n=3, seed=0)


def test_each_family_in_loong_order_with_lengths_in_the_set(suite: list[Any]) -> None:
    assert [i.metadata["family"] for i in suite] == [f for f in FAMILIES for _ in range(3)]
    assert {i.metadata["task"] for i in suite} == set(FAMILY_TASK.values())
    assert {i.metadata["subtask"] for i in suite if i.metadata["family"] == "comparison"} == {
        "extremum", "enumeration", "range",
    }  # fmt: skip
    for instance in suite:
        assert 10_000 <= instance.target_tokens <= 50_000
        assert abs(instance.actual_tokens - instance.target_tokens) <= 0.05 * instance.target_tokens
        assert instance.metadata["length_set"] == "10K-50K" and instance.suite == "loong-synth"
        assert len(instance.documents) >= 4 and not instance.skipped
    assert len({i.id for i in suite}) == len(suite)


def test_the_same_seed_gives_the_same_suite_and_another_seed_another(suite: list[Any]) -> None:
    assert build_loong_synth(length_set=1, n=3, seed=0) == suite
    other = build_loong_synth(length_set=1, n=3, seed=1)
    assert [i.question for i in other] != [i.question for i in suite]


def test_the_gold_is_in_the_documents_and_the_names_are_nowhere_else(suite: list[Any]) -> None:
    corpus = load_paul_graham_text()
    for instance in suite:
        context = instance.render_context()
        label = instance.label
        names = label.get("candidates") or [label["answer"]]
        for name in names:
            assert count_mentions(corpus, name) == 0, name  # invented: no model has read it
        if instance.metadata["family"] == "spotlight":
            assert count_mentions(context, label["answer"]) == 1
        elif instance.metadata["family"] == "chain":
            chain = label["answer"]
            for earlier, later in itertools.pairwise(chain):
                doc = next(d for d in instance.documents if d["title"] == earlier)
                assert f"builds directly on the earlier study {later}." in doc["text"]
        elif instance.metadata["family"] == "clustering":
            for verdict, cases in label["answer"].items():
                for case in cases:
                    doc = next(d for d in instance.documents if d["title"] == f"Case file: {case}")
                    assert (verdict if verdict != "dismissed" else "the case was dismissed") in doc["text"]
        # Whatever the family, the gold written out scores 1 with the instance's own scorer.
        scorer = get_scorer(instance.scorer)
        assert scorer.score(instance.gold_answers[0], label)[scorer.metric] == 1.0


def test_a_window_skips_documents_and_says_so() -> None:
    [instance] = build_loong_synth(length_set=1, n=1, seed=0, families=["comparison"], window=12_000)
    [full] = build_loong_synth(length_set=1, n=1, seed=0, families=["comparison"])
    assert instance.skipped and len(instance.documents) + len(instance.skipped) == len(full.documents)
    assert all("would overflow the 12000-token window" in note for note in instance.skipped)
    assert instance.actual_tokens <= 12_000
    assert instance.label == full.label  # the gold still counts every document, as Loong's does


def test_bad_settings_are_typed_errors(tmp_path: Any) -> None:
    with pytest.raises(ConfigurationError, match="length set 5"):
        build_loong_synth(length_set=5, n=1, seed=0)
    with pytest.raises(ConfigurationError, match="unknown family spotlite"):
        build_loong_synth(length_set=1, n=1, seed=0, families=["spotlite"])
    config = EvalConfig(suite="loong-synth", strategies=("truncate",), out_dir=tmp_path, tasks=("chains",))
    with pytest.raises(ConfigurationError, match="unknown loong-synth family chains"):
        config.validate()
    config = EvalConfig(suite="loong-synth", strategies=("truncate",), out_dir=tmp_path, length_sets=(0,))
    with pytest.raises(ConfigurationError, match="length sets must be among 1-4"):
        config.validate()


# --------------------------------------------------------------------------------------------------
# Exact scorers, on answers written the ways models write them

CANDIDATES = ["Vodrin Foods", "Zirkstam Pharma", "Neilsaes Textiles", "Prasskanstio Ceramics"]


def test_names_are_read_whole_in_order_of_first_mention() -> None:
    text = "Zirkstam pharma led; then VODRIN FOODS. Vodrin alone is not a name; zirkstam pharma again."
    assert named_in_order(text, CANDIDATES) == ["Zirkstam Pharma", "Vodrin Foods"]


def test_value_entity_set_and_order() -> None:
    assert score_value("Revenue was 412.7 million dollars.", {"answer": "412.7"}) == {"value_match": 1.0}
    assert score_value("Revenue was 412 million.", {"answer": "412.7"}) == {"value_match": 0.0}
    entity = {"answer": "Vodrin Foods", "candidates": CANDIDATES}
    assert score_entity("Vodrin Foods, ahead of Zirkstam Pharma.", entity) == {"accuracy": 1.0}
    assert score_entity("Zirkstam Pharma trails Vodrin Foods.", entity) == {"accuracy": 0.0}
    assert score_entity("I cannot tell.", entity) == {"accuracy": 0.0}
    gold_set = {"answer": ["Vodrin Foods", "Neilsaes Textiles"], "candidates": CANDIDATES}
    assert score_set("Neilsaes Textiles and Vodrin Foods", gold_set) == {"set_f1": 1.0, "exact_match": 1.0}
    partial = score_set("Vodrin Foods and Zirkstam Pharma", gold_set)
    assert partial == {"set_f1": pytest.approx(0.5), "exact_match": 0.0}
    order = {"answer": CANDIDATES[:3], "candidates": CANDIDATES}
    assert score_order("1. Vodrin Foods 2. Zirkstam Pharma 3. Neilsaes Textiles", order)["exact_match"] == 1.0
    swapped = score_order("Vodrin Foods, Neilsaes Textiles, Zirkstam Pharma", order)
    assert swapped == {"order_f1": pytest.approx(2 / 3), "exact_match": 0.0}


GROUPS = {"answer": {"convicted": ["Orlov v. Dane", "Baxa v. Tren"], "acquitted": ["Mirk v. Solt"],
                     "dismissed": ["Vel v. Quist"]},
          "candidates": ["Orlov v. Dane", "Baxa v. Tren", "Mirk v. Solt", "Vel v. Quist"]}  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "accuracy", "exact"),
    [
        (
            "convicted: Orlov v. Dane, Baxa v. Tren\nacquitted: Mirk v. Solt\ndismissed: Vel v. Quist",
            1.0,
            1.0,
        ),
        (
            "Convicted: Orlov v. Dane, Baxa v. Tren; acquitted: Mirk v. Solt; dismissed: Vel v. Quist",
            1.0,
            1.0,
        ),
        (
            "- Orlov v. Dane: convicted\n- Baxa v. Tren: convicted\n- Mirk v. Solt: acquitted\n- Vel v. Quist: dismissed",
            1.0,
            1.0,
        ),
        (
            "**Convicted**\n* Orlov v. Dane\n* Baxa v. Tren\n**Acquitted**\n* Mirk v. Solt\n**Dismissed**\n* Vel v. Quist",
            1.0,
            1.0,
        ),
        (
            "Orlov v. Dane and Baxa v. Tren were convicted, Mirk v. Solt was acquitted, Vel v. Quist dismissed",
            1.0,
            1.0,
        ),
        ("All four were convicted: Orlov v. Dane, Baxa v. Tren, Mirk v. Solt, Vel v. Quist", 0.5, 0.0),
        (
            "convicted: Orlov v. Dane\nacquitted: Orlov v. Dane, Mirk v. Solt",
            0.25,
            0.0,
        ),  # placed twice: wrong
        ("I do not know.", 0.0, 0.0),
    ],
)
def test_groups_are_read_from_headings_lines_and_sentences(
    answer: str, accuracy: float, exact: float
) -> None:
    assert score_groups(answer, GROUPS) == {"group_accuracy": pytest.approx(accuracy), "exact_match": exact}
