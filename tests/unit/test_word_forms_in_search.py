"""A question word is held by the other forms of it a sentence may use ("held" for "holds", "composed"
for "the composer"), wherever the words rank, bound or count sentences: a chunk's strongest passage,
PECAN's node relevance, and the items a count rests on. The forms come from the lexicon
(``nodes/word_forms.py``); a word made from another ("weight" from "weigh") is not the same word, and
an answer resting on that is left to the verification call.
"""

from __future__ import annotations

import pytest

from longgraph.nodes.answer_support import items_asked_for, judge_answer
from longgraph.nodes.graph_search import word_weights
from longgraph.nodes.lexical import content_stems, doers_of, question_words, sentence_spans, stem
from longgraph.nodes.passages import best_passage, sentence_bounds
from longgraph.nodes.word_forms import word_family
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn
from longgraph.tests.conftest import verified_notes

BELLS = "For how many bells does the text say what they weighed?"


def _chunk(text: str) -> tuple[Chunk, list[DocumentIn]]:
    part = ChunkPart(doc_index=0, title="", start=0, end=len(text))
    return Chunk(id=0, parts=[part], tokens=len(text.split()), text=text), [DocumentIn(text=text)]


@pytest.mark.parametrize(
    ("asked", "said"),
    [("hold", "held"), ("lead", "led"), ("sells", "sold"), ("dies", "died"), ("find", "found"),
     ("see", "saw"), ("man", "men"), ("tooth", "teeth"), ("criterion", "criteria"), ("metre", "meters")],
)  # fmt: skip
def test_a_word_is_held_by_its_other_forms(asked: str, said: str) -> None:
    assert stem(said) in word_family(stem(asked)) or stem(said) == stem(asked)


@pytest.mark.parametrize(("one", "other"), [("weight", "weighs"), ("news", "new"), ("depth", "deep")])
def test_words_made_from_one_another_are_different_words(one: str, other: str) -> None:
    assert stem(one) != stem(other) and stem(other) not in word_family(stem(one))


def test_a_chunks_strongest_passage_is_the_one_that_says_the_asked_thing_in_another_form() -> None:
    """Of "… weighed the advice …" (one word, in another form) and "The great bell of Pevzen weighs 3,888
    kilograms." (both words, one in another form), the bell's sentence is the passage."""
    text = (
        "Most people weighed the advice of those who have never failed. "
        "They read it and move on to other things entirely. "
        "Odds are that nobody remembers the advice a week later. "
        "The great bell of Pevzen weighs 3,888 kilograms. "
        "Then the founders went back to their work."
    )
    chunk, documents = _chunk(text)
    found = best_passage(chunk, documents, question_words(BELLS))
    assert found is not None
    sentence = text[found.sentence.start : found.sentence.end]
    assert sentence.startswith("The great bell of Pevzen weighs"), sentence
    assert found.relevance == pytest.approx(1.0)


def test_the_bound_on_a_sentence_counts_a_doer_said_by_what_is_done() -> None:
    """The bound is the most a sentence may score: below its score, the sentence would never be
    analysed. "composed by" holds "the composer"."""
    text = "Nothing here. The anthem of Sarsar was composed by Ilka Oskmissar."
    wanted = question_words("For which countries does the text give the composer?")
    spans = sentence_spans(text, 0, len(text))
    bounds = sentence_bounds(text, spans, wanted)
    scores = [wanted.share(frozenset(content_stems(text[a:b]))) for a, b in spans]
    assert scores[1] > 0
    assert all(bound >= score for bound, score in zip(bounds, scores, strict=True)), (bounds, scores)


def test_a_question_word_weighs_by_how_many_chunks_say_it_in_any_form() -> None:
    """A word said only as a verb ("composed") in the chunks is not a word no chunk holds."""
    wanted = question_words("For which countries does the text give the composer?")
    chunks = [
        content_stems("The anthem of Sarsar was composed by Ilka Oskmissar."),
        content_stems("Nothing."),
    ]
    weights = word_weights(wanted, chunks)
    composer = next(w for w in wanted if w.startswith("compos"))
    nowhere = word_weights(wanted, [content_stems("Nothing."), content_stems("Nothing at all.")])
    assert weights[composer] < nowhere[composer]


def test_a_count_rests_on_the_sentences_saying_what_is_asked_of_each_when_none_names_the_items() -> None:
    """ "For how many towns …?" over three poets' sentences that never say "town", beside an essay's
    sentence that says "town" and one word of what is asked ("name"): the count is of the poets'
    sentences, 3."""
    question = "For how many towns does the text give the pen name of its poet?"
    notes = verified_notes(
        "The poet from Oskrel wrote under the pen name Relwex.",
        "The poet from Lenvin wrote under the pen name Nevtalrel.",
        "The poet from Ulath wrote under the pen name Pevvar.",
        "In 1573 the town gave its name to the Warsaw Confederation.",
    )
    judged = judge_answer("3", notes, question)
    assert judged.kind == "derived", judged
    cited = {q.text for q in judged.quotes}
    assert len(cited) == 3 and all("poet" in t for t in cited), cited
    # Neither a count of the notes (4) nor of the sentences with numbers (1) stands.
    assert judge_answer("4", notes, question).kind == "none"
    assert judge_answer("1", notes, question).kind == "none"


def test_an_irregular_plural_has_its_singulars_stem() -> None:
    for plural, one in [
        ("fishermen", "fisherman"),
        ("criteria", "criterion"),
        ("children", "child"),
        ("theses", "thesis"),
        ("phenomena", "phenomenon"),
        ("feet", "foot"),
    ]:
        assert stem(plural) == stem(one), plural
    # A singular that ends as a plural does is left alone, and so is its own plural.
    assert stem("specimen") == stem("specimens") == "specimen"
    assert items_asked_for("For how many criteria does the text give the weight?") == stem("criterion")
    # A word the lexicon lacks is compared as written: nothing is guessed about it.
    assert stem("herbaria") == "herbaria" and stem("crossbowmen") == "crossbowmen"


def test_what_is_done_is_held_by_its_doer() -> None:
    wanted = question_words("For how many ports does the text give the smuggling fine?")
    assert wanted.held(content_stems("Smugglers caught in Loul pay a fine of 2,058 ducats.")) == {
        stem("smuggling"),
        stem("fine"),
    }
    assert stem("sailor") in doers_of(stem("sailing"))
    assert not doers_of(stem("fine")) and not doers_of(stem("composer"))  # too short; already a doer
