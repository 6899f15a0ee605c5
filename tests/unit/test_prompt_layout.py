"""Where a per-chunk prompt states the question (``prompt_layout``): under "shared_prefix" two questions
on one chunk share every token up to the end of the chunk (what vLLM's prefix cache reuses); under
"question_first" the question also precedes the chunk. The fences and the ``Question:`` line stay."""

from __future__ import annotations

import pytest

from longgraph.prompts import ask_first, prompts_for
from longgraph.state.context import Context

CHUNK = "The old mill stood by the river. Its wheel turned for a hundred years."
PER_CHUNK = [
    ("mapreduce", "map"), ("segment_plus", "gather"), ("segment_plus", "gather_text"), ("tom", "map"),
    ("tom", "map_plain"), ("records", "extract"),
]  # fmt: skip


def _user(strategy: str, stage: str, question: str, layout: str) -> str:
    prompts = prompts_for(strategy, "compact")
    messages = prompts.render(
        stage, "qa", format="FORMAT", context=CHUNK, question=question, ask_first=ask_first(layout, question),
        **({"plan": "{}"} if strategy == "records" else {}),
    )  # fmt: skip
    return "\n".join(content for _, content in messages)


def _shared(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` have in common."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


@pytest.mark.parametrize(("strategy", "stage"), PER_CHUNK)
def test_two_questions_share_the_chunk_only_under_the_shared_prefix_layout(strategy: str, stage: str) -> None:
    first, second = "Where did the mill stand?", "How long did its wheel turn?"
    shared = [_user(strategy, stage, q, "shared_prefix") for q in (first, second)]
    end_of_chunk = shared[0].index("The text concludes here.")
    assert _shared(*shared) >= end_of_chunk, shared[0]
    assert shared[0].count(f"Question: {first}") == 1  # still asked, after the text
    assert shared[0].index(f"Question: {first}") > end_of_chunk
    apart = [_user(strategy, stage, q, "question_first") for q in (first, second)]
    assert _shared(*apart) < apart[0].index("The text begins as follows:")
    assert apart[0].count(f"Question: {first}") == 2  # before and after the text


def test_the_layout_is_a_checked_setting_and_auto_follows_the_model_profile() -> None:
    from longgraph.embedded.catalog import CATALOG

    assert Context(base_url="http://x/v1", model="m").prompt_layout == "auto"
    with pytest.raises(Exception, match="prompt_layout"):
        Context(base_url="http://x/v1", model="m", prompt_layout="sideways").validate()  # type: ignore[arg-type]
    assert all(model.profile.question_first for model in CATALOG.values())  # the embedded ones


def test_under_the_shared_prefix_every_short_question_gets_the_same_chunks() -> None:
    """The chunk budget does not depend on a short question's length, so two questions cut a document
    at the same places (and their calls share each chunk's prefix); under "question_first" it does."""
    from longgraph.nodes.budget import text_budget
    from longgraph.state.outputs import ChunkAnswer
    from longgraph.tokenizer import get_tokenizer

    prompts, tokenizer = prompts_for("mapreduce", "compact"), get_tokenizer(None)

    def budget(layout: str, question: str) -> int:
        context = Context(base_url="http://x/v1", model="m", context_window=2_048, prompt_layout=layout)  # type: ignore[arg-type]
        return text_budget(
            prompts, "map", context=context, question=question, schema=ChunkAnswer, tokenizer=tokenizer
        )

    short, longer = "Where?", "Where did the miller of the old river mill keep the ledger of the harvest?"
    assert budget("shared_prefix", short) == budget("shared_prefix", longer)
    assert budget("question_first", short) > budget("question_first", longer)
