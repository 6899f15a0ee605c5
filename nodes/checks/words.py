"""Words, sentences and word forms: how every check (and every stage that weighs words) reads text.

Words are runs of letters and digits, casefolded; each CJK character is a word of its own; a decimal
number is one word ("855.7"), and a number with thousands separators is one word without them
("24,328" is "24328"). Content words leave out a short English stop list and words under three
letters (digits and non-ASCII words are always kept). :func:`stem` keys a word by its lemma in a
maintained lexicon (``lemminflect``: "held" ~ "hold", "men" ~ "man"): two forms of one word share a
key, two words do not, and a word the lexicon lacks (a name, a code) is its own key. No suffix rules.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import lemminflect

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
WORD = re.compile(
    rf"[{CJK}]|(?<![\d,])\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?![\d]|,\d)|\d+(?:\.\d+)+|[^\W_{CJK}]+"
)
"""A word: a CJK character, a number with thousands separators, a decimal number, or a run of letters
and digits."""
_BOUNDARY = re.compile(
    r"[.!?;。！？；\n](?:(?<=;)[\"'”’)\]]*(\s+)|(?<=[.!?])(?<![ \t(\[][A-Za-z]\.)[\"'”’)\]]*(\s++)(?![a-z])"
    r"|(?<=[。！？；])(\s*)|(?<=\n)[ \t\r\f\v]*\n\s*)"
)
"""Sentence ends: Latin end punctuation then whitespace (a closing quote or bracket stays with the
sentence; not a one-letter word's period, "J. Smith", nor one before a lower-case word, "e.g. the"),
CJK end punctuation, or a blank line. The group that matched starts where the sentence stops."""
_PUNCTUATION_ENDS = frozenset(".!?;。！？；")
STOP_WORDS = frozenset(
    "the and for are but not you all any can had her was one our out has his how its may who what which "  # noqa: SIM905 - a word list reads better as prose
    "when where why did does this that with from they them their there then than into were been have will "
    "would could should about also these those some such only other very just over your she him each upon "
    "more most being both after before during while because here whose whom is a an of to in on at by as "
    "it be or if so do no we he i me my us".split()
)
_PARTS_OF_SPEECH = ("VERB", "NOUN", "ADJ", "ADV", "AUX")
"""The order a form's lemmas are tried in: verbs first, whose forms vary most between a question and
the sentence that answers it ("composed", "held")."""
_LEXICON_WORD = re.compile(r"[a-z][a-z'-]*")


def word_form(written: str) -> str:
    """How a word matched by :data:`WORD` is compared: casefolded, without thousands separators."""
    return written.casefold().replace(",", "")


def words_of(text: str) -> list[str]:
    """The words of ``text``, each as :func:`word_form` compares it."""
    return [word_form(w) for w in WORD.findall(text)]


def is_content(word: str) -> bool:
    """Whether a word can carry meaning: not a stop word, and three letters or more, or any word
    holding a digit or a non-ASCII letter."""
    return word not in STOP_WORDS and (
        len(word) >= 3 or not word.isascii() or any(ch.isdigit() for ch in word)
    )


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The key of ``word`` (casefolded): the word itself when the lexicon has it as a dictionary form
    of its first part of speech, else that part's first lemma; a word the lexicon lacks is its own
    key, or the singular lemminflect's model for unknown nouns gives a word ending in "s" when that
    only takes letters off its end. The same in every process: keys are compared across runs."""
    if not _LEXICON_WORD.fullmatch(word):
        return word
    readings: dict[str, tuple[str, ...]] = lemminflect.getAllLemmas(word)
    for part in _PARTS_OF_SPEECH:
        lemmas = readings.get(part)
        if lemmas:
            return word if word in lemmas else lemmas[0].casefold()
    if len(word) >= 4 and word.endswith("s") and word.isalpha():
        guessed = lemminflect.getAllLemmasOOV(word, "NOUN").get("NOUN", ())
        lemma = guessed[0].casefold() if guessed else word
        if len(lemma) >= 3 and (
            word.startswith(lemma) or (lemma.endswith("y") and word.startswith(lemma[:-1]))
        ):
            return lemma
    return word


def content_stems(text: str | Iterable[str]) -> set[str]:
    """The keys (:func:`stem`) of the content words of ``text`` (or of words already split)."""
    words = words_of(text) if isinstance(text, str) else text
    return {stem(w) for w in words if is_content(w)}


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text[start:end]``, without surrounding whitespace. A single
    line break ends no sentence (hard-wrapped text); a blank line does."""
    stop = len(text) if end is None else end
    pieces: list[tuple[int, int]] = []
    cursor = start
    scan_from = start - 1 if start > 0 and text[start - 1] in _PUNCTUATION_ENDS else start
    for match in _BOUNDARY.finditer(text, scan_from, stop):
        pieces.append((cursor, match.start(match.lastindex) if match.lastindex else match.start()))
        cursor = match.end()
    pieces.append((cursor, stop))
    spans = []
    for a, b in pieces:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            spans.append((a, b))
    return spans
