"""Token budgets: how much text one call can carry under the window ``L``.

``budget = L − (rendered prompt template with the question) − max output tokens − margin``. The
margin (5% of L, at least 32 tokens) absorbs the chat template's own tokens and the small gap between
a tokenizer's per-piece counts and its count of the joined text; with cl100k counting for a model
that tokenizes differently, point ``tokenizer`` at the model's own for exact budgets.
"""

from __future__ import annotations

from longgraph.errors import ConfigurationError
from longgraph.prompts import PromptSet, ask_first
from longgraph.state.context import Context
from longgraph.state.outputs import StructuredOutput
from longgraph.structured import Mode, format_instructions
from longgraph.tokenizer import PER_MESSAGE_TOKENS, Tokenizer

QUESTION_ALLOWANCE = 64
"""Tokens a question is budgeted at, at least, under the "shared_prefix" layout (most questions are
shorter: the few tokens it costs a chunk buy the same chunks for every question of a document)."""


def margin(context: Context) -> int:
    return max(32, context.window // 20)


def text_budget(
    prompts: PromptSet,
    stage: str,
    *,
    context: Context,
    question: str,
    schema: type[StructuredOutput],
    tokenizer: Tokenizer,
) -> int:
    """Tokens of text one ``stage`` call can take; raises when the window cannot hold any.

    The prompt's own tokens are counted with an empty text slot, in every structured-output mode the
    run may use, and the worst is kept. Under the "shared_prefix" layout a chunk's reading (a stage
    whose prompt has ``{ask_first}``) counts a question shorter than
    :data:`QUESTION_ALLOWANCE` tokens as that long: the chunks then come out the same for
    every such question, so that their calls share each chunk's prefix in the server's cache (a
    question-sized budget cut the document at other places for each question)."""
    per_chunk = "{ask_first}" in prompts.stage(stage).user  # a chunk's reading, not a combining stage
    if (
        context.prompt_layout == "shared_prefix"
        and per_chunk
        and tokenizer.count(question) < QUESTION_ALLOWANCE
    ):
        question = " ".join(["question"] * QUESTION_ALLOWANCE)  # one token a word in the tokenizers used
    modes: tuple[Mode, ...] = (
        ("json_schema", "text")
        if context.structured_output == "auto"
        else (("text",) if context.structured_output == "text" else ("json_schema",))
    )
    overhead = 0
    for mode in modes:
        messages = prompts.render(
            stage,
            context.task,
            format=format_instructions(schema, mode),
            context="",
            question=question,
            ask_first=ask_first(context.prompt_layout, question),
        )
        tokens = sum(tokenizer.count_batch([content for _, content in messages]))
        overhead = max(overhead, tokens + PER_MESSAGE_TOKENS * len(messages))
    budget = context.window - overhead - context.max_output_tokens - margin(context)
    if budget < 64:
        raise ConfigurationError(
            f"context_window {context.window} is too small for the {stage} stage: its prompt with "
            f"the question takes {overhead} tokens, the output {context.max_output_tokens}, leaving {budget} "
            "for text (a question longer than the window, or a window smaller than the prompt)"
        )
    return budget
