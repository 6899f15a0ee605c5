"""Word forms from a maintained English lexicon (``lemminflect``, its data in the wheel), not from
hand-written suffix rules: the one place a word's inflections are told to be one word.

:func:`stem` is the key every comparison of words goes through: two forms of one word share it
("held"/"holds"/"hold", "men"/"man", "criteria"/"criterion", "highest"/"high"), two different
words do not. :func:`word_family` widens a key by the other readings the lexicon gives the same
written form ("found" is a form of "find" and a verb of its own; "left" of "leave"), which a
sentence may mean when a question asks by the other. Words the lexicon does not hold (names,
codes, rare or invented words) are their own key, but for a plural's "-s", which the library's model
for unknown words takes off.

Why a lexicon: suffix stripping joins words that are not one ("news"/"new") and misses those that
are ("led"/"lead", "feet"/"foot"), and every miss it was patched for was one more rule; the lexicon
has the irregular forms of English. A word *made from* another ("depth" from "deep", "weight" from
"weigh") is another word here: an answer that rests on such a link is left to the verification call.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import lemminflect

_PARTS_OF_SPEECH = ("VERB", "NOUN", "ADJ", "ADV", "AUX")
"""The order a form's readings are tried in for its key: verbs first, whose forms vary most between a
question and the sentence that answers it ("composed", "held", "left" are keyed by "compose",
"hold", "leave", though the lexicon also has them as words of their own)."""

_LEXICON_WORD = re.compile(r"[a-z][a-z'-]*")
"""What the lexicon is asked about: lower-case ASCII letters (an apostrophe or hyphen inside).
Anything else — digits, other scripts, codes — is its own key."""


def _readings(word: str) -> dict[str, tuple[str, ...]]:
    """The lexicon's lemmas of ``word`` by part of speech ({} for a word it does not hold)."""
    if not _LEXICON_WORD.fullmatch(word):
        return {}
    found: dict[str, tuple[str, ...]] = lemminflect.getAllLemmas(word)
    return found


def _unlisted_singular(word: str) -> str | None:
    """The singular lemminflect's model for words outside its lexicon gives a word that ends in "s"
    ("millraces" -> "millrace", "zorblaxes" -> "zorblax"), when it only takes letters off the end
    (a "y" put back for "-ies"): what it makes of a name ("Ferreira" as a Latin plural) is not
    taken."""
    if len(word) < 4 or not word.endswith("s") or not word.isalpha():
        return None
    lemmas = lemminflect.getAllLemmasOOV(word, "NOUN").get("NOUN", ())
    lemma = lemmas[0].casefold() if lemmas else word
    stripped = word.startswith(lemma) or (lemma.endswith("y") and word.startswith(lemma[:-1]))
    return lemma if lemma != word and stripped and len(lemma) >= 3 else None


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The key of ``word`` (casefolded), by its first part of speech in the lexicon (verbs first:
    :data:`_PARTS_OF_SPEECH`): the word itself when it is a dictionary form of that part ("found",
    "saw"), else that part's first lemma ("held" -> "hold", "criteria" -> "criterion", "highest" ->
    "high"); a word the lexicon lacks is its own key, or its singular (:func:`_unlisted_singular`).
    British spellings are keyed as American ones (:func:`one_spelling`: "metres" and "meters" share
    "meter"). Deterministic and the same in every process: keys are compared across notes, questions
    and runs."""
    return _key(word, _readings(word))


def _key(word: str, readings: dict[str, tuple[str, ...]]) -> str:
    """:func:`stem` of ``word`` given the lexicon's ``readings`` of it."""
    for part in _PARTS_OF_SPEECH:
        lemmas = readings.get(part)
        if lemmas:
            return one_spelling(word if word in lemmas else lemmas[0].casefold())
    if _LEXICON_WORD.fullmatch(word):
        return one_spelling(_unlisted_singular(word) or word)
    return one_spelling(word)


_CONSONANT_RE = re.compile(r"[bcdfgklmnpstv]re")


def one_spelling(word: str) -> str:
    """The American spelling of a British word by English's two regular spelling pairs: "-re" after
    a consonant is "-er" ("metre", "centre", "fibre") and "-our" is "-or" ("harbour", "colour").
    Rules of the spelling, not a word list; a word that merely ends so ("acre") gets a key that is
    at most a rare word's ("acer"), so such a join is rare."""
    if len(word) >= 5 and _CONSONANT_RE.fullmatch(word[-3:]):
        return word[:-2] + "er"
    if len(word) >= 5 and word.endswith("our"):
        return word[:-2] + "r"
    return word


@functools.lru_cache(maxsize=16384)
def is_plural(word: str) -> bool:
    """Whether ``word`` (any case) is a noun's plural: the lexicon reads it as a noun whose lemma
    differs from it ("foundations", "criteria"), or, for a word it lacks, its model gives it a
    singular (:func:`_unlisted_singular`: "millraces")."""
    folded = word.casefold()
    readings = _readings(folded)
    if not readings:
        return _LEXICON_WORD.fullmatch(folded) is not None and _unlisted_singular(folded) is not None
    return any(lemma.casefold() != folded for lemma in readings.get("NOUN", ()))


@functools.lru_cache(maxsize=16384)
def is_past_form(word: str) -> bool:
    """Whether ``word`` (any case) may be a verb's past tense or past participle: an "-ed" word, or a
    past form by the lexicon's inflections ("made", "sewn", "held")."""
    folded = word.casefold()
    if folded.endswith("ed"):
        return True
    for lemma in _readings(folded).get("VERB", ()):
        forms = lemminflect.getAllInflections(lemma, upos="VERB")
        if folded in forms.get("VBD", ()) or folded in forms.get("VBN", ()):
            return True
    return False


@functools.lru_cache(maxsize=16384)
def is_superlative(word: str) -> bool:
    """Whether ``word`` (lower case) is an adjective's or adverb's superlative: by the lexicon's
    inflections ("highest", "driest", "best"), or by English's "-most" on a word the lexicon holds
    ("innermost", "uppermost"; not "almost"); a word the lexicon lacks by its "-est" ending on a
    root of three letters or more. A degree, not a kind: "the highest tides" describes by degree
    what a text may name by its kind, so a superlative is not read as naming another entity."""
    readings = _readings(word)
    if not readings:
        return len(word) >= 6 and word.endswith("est")
    if word.endswith("most") and len(word) > 6 and _readings(word[:-4]):
        return True
    for part, tag in (("ADJ", "JJS"), ("ADV", "RBS")):
        for lemma in readings.get(part, ()):
            if lemma != word and word in lemminflect.getAllInflections(lemma, upos=part).get(tag, ()):
                return True
    return False


@functools.lru_cache(maxsize=16384)
def word_family(key: str) -> frozenset[str]:
    """The other keys a sentence may say ``key`` (a :func:`stem`) by: the lexicon's other lemmas of
    the same written form ("found" -> "find", "saw" -> "see", "left" -> "leave"), and the keys of the
    forms of ``key`` as a lemma that are another word's dictionary form ("find" -> "found"); empty
    when it has none. What a question word is held by besides itself (``QuestionWords.share``)."""
    family: set[str] = set()
    for lemmas in _readings(key).values():
        family.update(stem(lemma.casefold()) for lemma in lemmas)
        family.update(one_spelling(lemma.casefold()) for lemma in lemmas)
    for part in _PARTS_OF_SPEECH[:2]:
        for forms in lemminflect.getAllInflections(key, upos=part).values():
            family.update(stem(form.casefold()) for form in forms)
    family.discard(key)
    return frozenset(family)


def with_word_families(stems: Iterable[str]) -> frozenset[str]:
    """``stems`` with each one's :func:`word_family`: what a sentence says, read once for every rule
    that compares it with a question ("is held by" holds the "hold" of "Who holds ...?")."""
    given = frozenset(stems)
    return given.union(*(word_family(s) for s in given))


@functools.cache
def _irregular_forms() -> dict[str, tuple[str, ...]]:
    """Each key -> the lexicon's words keyed by it that do not begin with the key's first letters
    (:func:`held_by_every_form`): "man" -> ("men",), "tooth" -> ("teeth",). Built once per process from
    the lexicon's own tables (its ~70,000 forms and their overrides, read as ``getAllLemmas`` reads
    them: an override replaces a form's lemmas of that part of speech)."""
    lemmatizer = lemminflect.Lemmatizer()
    lemmatizer.getAllLemmas("a")  # loads the tables
    tables: dict[str, dict[str, tuple[str, ...]]] = lemmatizer.lemma_dict
    overrides: dict[str, dict[str, tuple[str, ...]]] = lemmatizer.overrides_dict
    table: dict[str, tuple[str, ...]] = {}
    for word in sorted(tables.keys() | overrides.keys()):
        if not _LEXICON_WORD.fullmatch(word):
            continue
        key = _key(word, {**tables.get(word, {}), **overrides.get(word, {})})
        if not word.startswith(_prefix(key)):
            table[key] = (*table.get(key, ()), word)
    return table


def _prefix(key: str) -> str:
    """What every word keyed ``key`` that is not listed in :func:`_irregular_forms` begins with: the
    key less its last letter ("famil-ies", "li-ying", "compos-ing"), or its last two where
    :func:`one_spelling` may have changed them ("metr-e" for "meter")."""
    cut = 2 if key.endswith(("er", "or")) else 1
    return key[: max(1, len(key) - cut)]


def held_by_every_form(key: str) -> tuple[str, ...]:
    """Strings one of which every casefolded word whose :func:`stem` is ``key`` contains: a search for
    them finds every word of that key (and others, to be keyed and told apart).

    A word the lexicon lacks is its own key or a singular it begins with but for a final "y"
    (:func:`_unlisted_singular`), spelled American by :func:`one_spelling`, which changes at most the
    last two letters, to "-er" or "-or": so it begins with :func:`_prefix` of its key; every
    word of the lexicon that does not is listed whole (:func:`_irregular_forms`, built from the
    lexicon by that test, so the promise holds by construction). A number loses its thousands separators to its word ("24,328" is
    "24328"), so a key with a digit is found by its first character only."""
    if any(ch.isdigit() for ch in key):
        return (key[:1],)
    return (_prefix(key), *_irregular_forms().get(key, ()))
