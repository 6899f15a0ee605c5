"""The general suite's dev instances read by the scripted capable reader through every strategy
(``evals/bench/capable_general.py``): every kind comes back right, and nothing wrong is marked supported.

The test split is measured by the same module and reported, not asserted here: it stays held out."""

from __future__ import annotations

from typing import Any

import pytest

from longgraph.evals.bench.capable_general import STRATEGIES, measure, read, scenario_of
from longgraph.evals.data.general import KINDS, build_general
from longgraph.state.outputs import NO_INFORMATION
from longgraph.testing.capable import UNKNOWN_CHATTILY, UNKNOWN_IN_OWN_WORDS, Scenario, Style, worded


def assert_every_cell_right(found: dict[str, Any]) -> None:
    """Nothing wrong marked supported, and every (kind, strategy) cell read and right."""
    assert found["wrong_supported"] == 0, found["misses"]
    for kind in KINDS:
        for strategy in STRATEGIES:
            right = found["right"][(kind, strategy)]
            assert right and all(right), (kind, strategy, found["misses"])


def test_every_kind_comes_back_right_through_every_strategy() -> None:
    found = measure("dev", n=3, tokens=4_000)
    assert_every_cell_right(found)


def test_every_kind_comes_back_right_with_a_production_window() -> None:
    """With an 8B model's window (8,192 tokens) over 16K-token documents. Measured on dev before session
    51's fixes: PECAN's count of 4 vaults was refused (two essay sentences about program code shared
    "code"), and ToM lost an orchestra from a list of four ("Relvardor. The Lowex" read as one name)."""
    found = measure("dev", n=2, tokens=16_000, window=8_192)
    assert_every_cell_right(found)


def test_the_reader_needs_the_asked_entitys_fact_not_its_look_alikes() -> None:
    (distractors,) = build_general(target_tokens=2_000, n=1, seed=0, split="dev", kinds=["distractors"])
    scenario = scenario_of(distractors)
    assert len(distractors.metadata["facts"]) == 3 and len(scenario.facts) == 1
    assert distractors.gold_answers[0] in scenario.facts[0]
    (absent,) = build_general(target_tokens=2_000, n=1, seed=0, split="dev", kinds=["absent"])
    assert scenario_of(absent).facts == () and scenario_of(absent).conclusion == NO_INFORMATION


@pytest.mark.parametrize("style", ["sentence", "explained", "chatty"])
def test_every_kind_comes_back_right_however_the_reader_words_it(style: Style) -> None:
    """A capable model may answer with the fact's sentence, "The answer is 3.", or the answer followed
    by every fact it compared (look-alikes' values among them), and may say it does not know in its
    own words: the answer layer was built against bare answers, and must not be fitted to them."""
    found = measure("dev", n=2, tokens=4_000, style=style)
    assert_every_cell_right(found)


def test_the_reader_words_its_conclusion_as_its_style_says() -> None:
    facts = ["The Lental path narrows to 3.9 metres.", "The Marlen path narrows to 8.6 metres."]
    assert worded("3", facts, "bare") == "3"
    # A count of 3 is not the 3 of "3.9": no fact states it, so it is said as a conclusion.
    assert worded("3", facts, "sentence") == "The answer is 3."
    assert worded("Marlen", facts, "sentence") == facts[1]
    assert worded("Marlen", facts, "explained") == f"Marlen. The text says: {facts[0]} {facts[1]}"
    assert worded(NO_INFORMATION, [], "explained") == UNKNOWN_IN_OWN_WORDS
    assert worded(NO_INFORMATION, [], "sentence") == NO_INFORMATION
    assert worded("3.8", facts, "chatty") == "Based on the text, the answer is **3.8**."
    listed = worded("Lental and Marlen", facts, "chatty", "Which paths narrow?")
    assert listed == "Based on the text, the answer is:\n- **Lental**\n- **Marlen**"
    assert worded("1,438,425", [], "chatty") == "Based on the text, the answer is **1,438,425**."
    deep = "How many metres deep is the Lental path's ditch?"
    assert worded("3.8", facts, "chatty", deep) == "Based on the text, the answer is **3.8 metres**."
    assert (
        worded("4", [], "chatty", "How many paths does the text name?")
        == "Based on the text, the answer is **4 paths**."
    )
    assert (
        worded("4", [], "chatty", "How many of the paths narrow?")
        == "Based on the text, the answer is **4**."
    )
    assert worded(NO_INFORMATION, [], "chatty") == UNKNOWN_CHATTILY
    motto = worded("measure twice and sail once", [], "chatty", "What is the motto of the guildhall?")
    assert motto == "Based on the text, the answer is **measure twice and sail once**."
    # The reader knows its own list however it is laid out, and not a part of it.
    paths = Scenario("paths", "Which paths narrow?", tuple(facts), "Lental and Marlen")
    assert paths.right(listed) and not paths.right("- **Lental**")


@pytest.mark.parametrize("window", [2_048, 8_192])
def test_a_list_whose_items_are_said_by_a_verb_among_essays_on_the_same_noun_comes_back_through_pecan(
    window: int,
) -> None:
    """Dev seed 5's company debts ("For which companies does the text give the debt?" over "According to
    the ledger, the Misqui company owes 911,436 marks to its suppliers." and four more, in essays about
    companies): PECAN's search missed the company whose fact opened a chunk (its title label, embedded
    with it, diluted it), and three of the chunks it reached offered an essay sentence on companies as
    the passage the list was worked out from. The right list of five was refused on both windows."""
    (debts,) = build_general(target_tokens=16_000, n=1, seed=5, split="dev", kinds=["aggregation"])
    assert debts.metadata["template"] == "company-debt"
    result = read("pecan", debts, window)
    assert result.answer == debts.gold_answers[0] and result.supported, (result.answer, result.rationale)


def dev_instance(seed: int, kind: str, index: int, tokens: int = 4_000) -> Any:
    """The ``index``-th instance of ``kind`` among those ``capable_general --seed`` reads (8 per kind)."""
    return [
        i
        for i in build_general(target_tokens=tokens, n=8, seed=seed, split="dev")
        if i.metadata["kind"] == kind
    ][index]


@pytest.mark.parametrize(
    ("seed", "kind", "index", "template", "strategies"),
    [
        # A count over items whose noun is commoner in the document than the asked word ("quarry" in each
        # item's sentence, "stone" once in an essay's): PECAN's passage was the essay's.
        (4, "aggregation", 3, "quarry-stone", ("pecan",)),
        # A gerund's doer ("smuggling" / "Smugglers caught in Loul pay a fine …"): PECAN's passage was an
        # essay's sentence on "a fine".
        (6, "aggregation", 5, "smuggler-fine", ("pecan",)),
        # An entity named by a modifier alone, asked in other words ("the teal sitting room" for "the teal
        # parlour"): the note shared one word of six with the question and was set aside at grounding.
        (11, "paraphrase", 1, "parlour-paper", STRATEGIES),
        (8, "paraphrase", 7, "caravel-cargo", ("mapreduce", "segment-plus")),
    ],
)
def test_what_dev_seeds_six_to_eleven_found_comes_back_right(
    seed: int, kind: str, index: int, template: str, strategies: tuple[str, ...]
) -> None:
    """Session 60, the capable reader over dev seeds never read before (6-11, both windows): each of these
    was silent in the strategies named, on both windows where the strategy is not PECAN."""
    instance = dev_instance(seed, kind, index)
    assert instance.metadata["template"] == template
    for strategy in strategies:
        result = read(strategy, instance)
        assert result.answer == instance.gold_answers[0] and result.supported, (strategy, result.rationale)
