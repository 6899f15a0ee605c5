"""Words as the grounding check and the provenance matcher see them: one splitter, one stop list.

Words are runs of letters and digits, casefolded; each CJK character is a word of its own (CJK text
has no spaces); a decimal number ("855.7", "3.14.2") is one word, so "85.7" and "433.1" do not share
a "7" or a "1" with it; a number with thousands separators is one word without them ("24,328" is
"24328"): measured with SmolLM2-135M, asked for an orchard's "24,328 apple trees" it answered "24328"
on every reading, and the check split the text's number into "24" and "328" and found the answer's
number in no chunk. Content words leave out a short English stop list and words under three letters
(digits and non-ASCII words are always kept: "42" and "東" carry meaning). :func:`stem` keys a word by
its lemma in a maintained lexicon (``nodes/word_forms.py``: "eating" ~ "eat", "held" ~ "hold") so an
answer that inflects the text's words still matches it; a word the lexicon lacks is compared as written
(but for a plural's "-s").
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet

from longgraph.nodes.word_forms import held_by_every_form, word_family
from longgraph.nodes.word_forms import stem as stem

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
WORD = re.compile(
    rf"[{CJK}]|(?<![\d,])\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?![\d]|,\d)|\d+(?:\.\d+)+|[^\W_{CJK}]+"
)
"""A word: a CJK character, a number with thousands separators, a decimal number, or a run of letters
and digits. A comma group must be whole ("1,2,3" and "12,34" are several words)."""
_BOUNDARY = re.compile(
    r"[.!?;。！？；\n](?:(?<=;)[\"'”’)\]]*(\s+)|(?<=[.!?])(?<![ \t(\[][A-Za-z]\.)[\"'”’)\]]*(\s++)(?![a-z])"
    r"|(?<=[。！？；])(\s*)|(?<=\n)[ \t\r\f\v]*\n\s*)"
)
"""Sentence ends: Latin end punctuation (a closing quote or bracket after it stays with the sentence)
and whitespace, CJK end punctuation, or a blank line. The group that matched (none for a blank line)
starts where the sentence stops. A one-letter word's period is not one: "Alder v. Birch" and
"J. Smith" are one name (measured: the case "Rummesmirk v. Gaersil" split in two left its verdict
sentence sharing one name of the question, relevance 0.14), and a period, "!" or "?" before a
lower-case word ends no sentence ("eight U.S. presidents", "e.g. the", "Yahoo! users"): a sentence
begins with a capital, a digit or a quote (a semicolon still ends one wherever it is). Every match
starts with one of the
characters of the leading class, which lets the regex engine skip to them: five times as fast as
the same ends written as look-behinds (0.15 against 0.79 ms on a 30 KB chunk)."""

_PUNCTUATION_ENDS = frozenset(".!?;。！？；")

STOP_WORDS = frozenset(
    "the and for are but not you all any can had her was one our out has his how its may who what which "  # noqa: SIM905 - a word list reads better as prose
    "when where why did does this that with from they them their there then than into were been have will "
    "would could should about also these those some such only other very just over your she him each upon "
    "more most being both after before during while because here whose whom is a an of to in on at by as "
    "it be or if so do no we he i me my us".split()
)


def words_of(text: str) -> list[str]:
    """The casefolded words of ``text``."""
    return [word_form(w) for w in WORD.findall(text)]


def word_form(written: str) -> str:
    """How a word matched by :data:`WORD` is compared: casefolded, a number without its thousands
    separators."""
    return written.casefold().replace(",", "")


def is_content(word: str) -> bool:
    """A word that can carry meaning: not a stop word, and three letters or more, or any number, or a
    short piece of a code that mixes letters and digits ("H6" of the mint mark "H6-KY": measured, a dev
    answer of that mark counted as no words at all and was refused as restating the question)."""
    return word not in STOP_WORDS and (
        len(word) >= 3 or not word.isascii() or any(ch.isdigit() for ch in word)
    )


def content_stems(text: str | Iterable[str]) -> set[str]:
    """Stems of the content words of ``text`` (or of already split words); of a text, each code in it
    whole as well (:func:`codes_in`)."""
    if isinstance(text, str):
        return {stem(w) for w in words_of(text) if is_content(w)} | codes_in(text)
    return {stem(w) for w in text if is_content(w)}


_CODE = re.compile(r"(?<![\w/.-])[^\W_]+(?:[-/.][^\W_]+)+(?![\w]|[-/.][^\W_])")
_DIGIT_BY_A_JOIN = re.compile(r"\d[^\W_]*[-/.][^\W_]|[^\W_][-/.][^\W_]*\d")
"""A digit in a piece joined to another: every code holds one. Most sentences do not, and are passed over
without :data:`_CODE` (measured on 2,733 essay sentences: 34 ms for every one through it, 12.6 ms with
this test first, against 97 ms for their words)."""


def codes_in(text: str) -> set[str]:
    """The codes of ``text`` as written, casefolded: runs of letters and digits joined by hyphens,
    slashes or points that hold both ("QJ-5738-H", "K12/B3", "W512.C"). Its pieces are words as any
    others, and "SJ" or "H" no content word; read as pieces, "SJ-5738-H" was held by a sentence giving "QJ-5738-H" (its one
    content word the number), and PECAN's misread code stood, marked supported (dev, SmolLM2-135M).
    Whole, a code is another code for one changed letter, as a number is for one changed digit. Ranges of
    numbers ("1990-2000"), hyphenated words and a decimal with its unit ("380.4C") are no codes."""
    if not _DIGIT_BY_A_JOIN.search(text):
        return set()
    found = (match.group().casefold() for match in _CODE.finditer(text))
    return {
        code
        for code in found
        if any(c.isdigit() for c in code)
        and any(c.isalpha() for c in code)
        and not _WITH_UNIT.fullmatch(code)
    }


_WITH_UNIT = re.compile(r"\d+(?:\.\d+)+[^\W\d_]*")
"""A decimal number with its unit written on ("380.4c"): a number, not a code."""


class QuestionWords(frozenset[str]):
    """The content stems of a question, which of them are names (:attr:`named`), and the names it offers
    as a choice (:attr:`choices`).

    A question's names say what it is about: asked for one company's revenue, a passage giving another
    company's revenue shares "total revenue ... fiscal year 2023" with the question but not its name.
    :meth:`share` therefore counts a name twice.

    Names listed as a choice ("Which of the opticians X, Y, … and Z has the highest
    lens thickness?") count as one name, held by a sentence that holds any one of them: each sentence
    gives one of them, and bears on the question as much as a sentence naming the one thing a question
    asks about. Counted one by one, six listed names outweighed every other word: the scripted capable
    reader's right answer to that question, over sentences each naming one optician and its lenses (3 of
    16 weighted words, 0.19), was silenced in every strategy on a held-out split.
    """

    named: frozenset[str]
    choices: tuple[frozenset[str], ...]
    """The stems of each name of a list of two or more the question gives (:func:`listed_names`)."""

    def __new__(
        cls, words: Iterable[str] = (), named: Iterable[str] = (), choices: Iterable[frozenset[str]] = ()
    ) -> QuestionWords:
        self = super().__new__(cls, words)
        self.named = frozenset(named) & self
        self.choices = tuple(c for c in (frozenset(c) & self.named for c in choices) if c)
        if len(self.choices) < 2:
            self.choices = ()
        return self

    @functools.cached_property
    def _single(self) -> tuple[frozenset[str], frozenset[str]]:
        """The words and the names outside the choice."""
        listed = frozenset().union(*self.choices)
        return self - listed, self.named - listed

    @property
    def weight(self) -> int:
        """The weighted number of words :meth:`share` divides by: names twice, a choice as one name."""
        words, named = self._single
        return len(words) + len(named) + (2 if self.choices else 0)

    def chosen(self, stems: AbstractSet[str]) -> bool:
        """Whether ``stems`` hold one of the names the question offers as a choice, whole."""
        return any(choice <= stems for choice in self.choices)

    @functools.cached_property
    def _other_forms(self) -> dict[str, frozenset[str]]:
        """Each word (not a name) a sentence may say in other words, and the stems of those: what a doer
        does (:func:`doing_of`) and who does what is named (:func:`doers_of`), and the lexicon's other
        readings of the word (``word_forms.word_family``)."""
        words, _ = self._single
        return {w: forms for w in words if (forms := doing_of(w) | doers_of(w) | word_family(w))}

    @functools.cached_property
    def _forms(self) -> dict[str, frozenset[str]]:
        other = self._other_forms
        return {w: other.get(w, frozenset()) | {w} for w in self}

    def forms(self, word: str) -> frozenset[str]:
        """The stems that hold ``word`` (one of these words): itself and its other forms ("weight" is
        held by "weighs", "composer" by "composed")."""
        return self._forms.get(word) or frozenset({word})

    def held(self, stems: AbstractSet[str]) -> frozenset[str]:
        """These words that ``stems`` hold, each in any of its forms: the one reading of "a sentence
        holds a question word" that scores, bounds and counts share."""
        return frozenset(w for w, forms in self._forms.items() if not forms.isdisjoint(stems))

    def share(self, stems: AbstractSet[str]) -> float:
        """The weighted share of these words in ``stems`` (names count twice, a choice as one name held
        by any of its names; a word held by its other forms, "composer" by "composed", "weight" by
        "weighs"); 1.0 for no words."""
        if not self:
            return 1.0
        words, named = self._single
        found = self.held(stems)
        held = len(words & found) + len(named & found) + (2 if self.chosen(stems) else 0)
        return held / self.weight

    def names_all(self, stems: AbstractSet[str]) -> bool:
        """Whether ``stems`` hold every name of the question, which names at least one: a sentence
        naming what the question is about, however it words the rest (of a choice, one name)."""
        _, named = self._single
        return bool(self.named) and named <= stems and (not self.choices or self.chosen(stems))


_DOER = re.compile(r"(?:ier|er|or|ar)$")


@functools.cache
def doer_roots(word: str) -> tuple[str, frozenset[str]]:
    """The verb a doer noun ``word`` (a stem) names: its root with the doer ending taken off
    ("found-er", "glaz-ier", "govern-or"), and every root the verb may have beside it ("compose-r",
    "plann-er" -> "plan"); a word that does not end as a doer does is its own root, with no other
    ("steward"). The one derivation of a doer's doing: how a question word is held in other words
    (:func:`doing_of`) and whether a sentence says a role (``answer_support.states_role``) both start
    here, each with its own bounds."""
    ending = _DOER.search(word)
    if ending is None:
        return word, frozenset()
    root = word[: ending.start()]
    roots = {root, word[:-1], root + "e"}  # "compose-r", "glaz(e)-ier"
    if len(root) >= 2 and root[-1] == root[-2]:
        roots.add(root[:-1])  # "plann-er"
    return root, frozenset(roots - {word})


@functools.cache
def doing_of(word: str) -> frozenset[str]:
    """The stems of what a doer named by ``word`` (a stem) does: "composer" composes ("compos"), "founder"
    founds, "governor" governs, "leader" leads; empty for a word that names no doer by its ending, or
    whose root would be under four letters ("owner", "tower": too short to tell a verb from a word that
    only ends so). A sentence says who the composer is by
    "composed by": measured (the capable reader over dev's anthem template), "For which
    countries does the text give the composer?" shared no word with "The anthem of X was composed
    by Ilka Y", every note was set aside as bearing on nothing, and every strategy said NO
    INFORMATION. Only how much a sentence bears on the question reads it so: whether a sentence that
    says "rung by P" speaks to what is asked of "the ringer" is another matter (it says who the ringer
    is, a chain's first step: measured on dev with the doer joined to every sentence's words, 6 of 516
    bridges stood by words), read by ``states_role`` where a chain is followed."""
    if len(word) < 6:
        return frozenset()
    _, roots = doer_roots(word)
    return frozenset(stem(root) for root in roots if len(root) >= 4) - {word}


@functools.cache
def doers_of(word: str) -> frozenset[str]:
    """The stems of the doers of what ``word`` (a stem) names being done: "smuggling" ("smuggl") is done
    by a smuggler, "sailing" by a sailor; empty for a root under four letters ("fin", "port": too short
    to tell a verb from a noun that only ends so) or a word that already names a doer. The other way
    round from :func:`doing_of`: asked "For how many ports does the text give the smuggling fine?",
    "Smugglers caught in X pay a fine of 8,046 ducats." shared "fine" alone, as much as an
    essay's "avoid imprisonment or a fine", which came first; PECAN's passage was the essay's and the
    scripted capable reader's right count of 6 was refused (dev seed 6, 2,048)."""
    if len(word) < 4 or _DOER.search(word):
        return frozenset()
    endings = ("r",) if word.endswith("e") else ("er", "or")  # "smuggle-r", "sail-or"
    return frozenset(stem(word + ending) for ending in endings) - {word}


_NAME = r"[A-Z][\w'’-]*(?:\s+(?:(?:of|de|van|von|the)\s+)?[A-Z][\w'’-]*)*"
_LISTED = re.compile(rf"(?<![\w'’-]){_NAME}(?:\s*,\s*{_NAME})*,?\s+(?:and|or)\s+{_NAME}")
"""Two or more names joined by commas and a final "and" or "or" ("X, Y and Z";
"Denfur Foods or Vekla Corp")."""


def listed_names(text: str, names: AbstractSet[str]) -> list[frozenset[str]]:
    """The stems of each name of the lists of names in ``text`` (:data:`_LISTED`), those of a list's
    words among ``names`` (:func:`names_in` of ``text``); a list whose items are not all names is no
    list."""
    items: list[frozenset[str]] = []
    for match in _LISTED.finditer(text):
        parts = re.split(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", match.group())
        stems = [frozenset(content_stems(part)) & names for part in parts]
        if len(stems) >= 2 and all(stems):
            items.extend(stems)
    return items


def names_in(text: str) -> set[str]:
    """Stems of the capitalised content words of ``text`` that do not open a sentence or line
    (proper names: "Denfur Foods", "Port Vekla")."""
    named = set()
    for start, end in sentence_spans(text):
        for line in text[start:end].splitlines():
            for match in list(WORD.finditer(line))[1:]:
                word = match.group()
                if word[0].isupper() and is_content(word.casefold()):
                    named.add(stem(word.casefold()))
    return named


_NO_SENTENCE_SAYS = re.compile(
    r"\b(?:according\s+to\s+)?(?:the|this)\s+(?:texts?|documents?|passages?|articles?)\b"
    r"(?:\s+(?:gives?|says?|states?|mentions?|lists?|names?|reports?|provides?)\b)?(?!\s+of\b)"
    r"|\bhow\s+(?:many|much)\b",
    re.IGNORECASE,
)
"""Words of a question that no sentence of the text says: those about the text itself ("For how many
ferries does *the text give* the departure time?") and the "how many" or "how much" that asks for a
quantity. They only dilute how much of the question a sentence shares, or worse, tie filler to it.
Measured with the scripted capable reader (``evals/bench/capable_general.py``, dev): "The X ferry
leaves at 7:15 each morning." shared 1 of the question's 6 words (0.17, under the 0.2 a note needs),
and a right count of the ferries was silenced in every strategy; and "many", common in any text, made
filler passages join those PECAN counted 4 families over."""


def rarity_weight(holding: int, total: int) -> float:
    """How much a word weighs for being rare: its inverse frequency, ``log(1 + total / (1 + holding))``
    over ``total`` places (chunks, sentences) of which ``holding`` hold it (a word held nowhere weighs
    most). The one weighting of rarer words (PECAN's node relevance, a passage's tie-break)."""
    return math.log(1 + total / (1 + holding))


def without_the_text(question: str) -> str:
    """``question`` without the words no sentence of the text says (:data:`_NO_SENTENCE_SAYS`): "For how
    many ferries does the text give the departure time?" asks of "ferries" and "the departure time", not
    of "the text give"."""
    return _NO_SENTENCE_SAYS.sub(" ", question)


def question_words(question: str) -> QuestionWords:
    """The content stems of a question (what a relevant sentence should share with it), its names marked;
    not the words no sentence of the text says (:func:`without_the_text`)."""
    asked = without_the_text(question)
    names = names_in(asked)
    return QuestionWords(content_stems(asked), names, listed_names(asked, names))


def overlap(text: str, wanted: frozenset[str]) -> int:
    """How many of ``wanted`` (content stems) occur in ``text``."""
    return len(wanted.intersection(content_stems(text)))


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text[start:end]``, stripped of surrounding whitespace.

    A sentence ends at Latin or CJK end punctuation (a closing quote or bracket stays with it) or at a
    blank line; a single line break does not end one (essays and reports are often hard-wrapped).
    """
    stop = len(text) if end is None else end
    pieces: list[tuple[int, int]] = []
    cursor = start
    # A sentence end just before ``start`` still decides where the window's first sentence stops (";)"
    # at its start: the ")" closes the sentence before); the regex must begin on that end to see it.
    scan_from = start - 1 if start > 0 and text[start - 1] in _PUNCTUATION_ENDS else start
    for match in _BOUNDARY.finditer(text, scan_from, stop):
        pieces.append((cursor, match.start(match.lastindex) if match.lastindex else match.start()))
        cursor = match.end()
    pieces.append((cursor, stop))
    spans = []
    for start, end in pieces:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((start, end))
    return spans


def sentence_frequencies(texts: Iterable[str], wanted: AbstractSet[str]) -> tuple[dict[str, int], int]:
    """In how many sentences of ``texts`` each stem of ``wanted`` occurs, and how many sentences there
    are: how common a question's word is in the document it asks about ("year" in 13 of 284 sentences
    of an encyclopedia text, "abbey" in 3).

    Linear in the text, and cheap per word because most words are never looked at: the casefolded text
    is searched (``str.find``) for what every form of each wanted stem holds
    (:func:`~longgraph.nodes.word_forms.held_by_every_form`), and only the whitespace-bounded pieces found
    are split into words and stemmed (no word of :data:`WORD` holds whitespace or looks past it, so a
    sentence's words are its pieces' words). Measured over 1.28M tokens: 0.8 s for stemming every word
    of every sentence, 0.1 s this way, the same counts (a test holds the two equal)."""
    counts = dict.fromkeys(wanted, 0)
    seeds = {seed for key in wanted for seed in held_by_every_form(key)}
    stems_of: dict[str, frozenset[str]] = {}
    sentences = 0
    for text in texts:
        spans = sentence_spans(text)
        sentences += len(spans)
        folded = text.casefold()
        if len(folded) != len(text):  # a letter that folds to two ("ß"): positions would not agree
            for start, end in spans:
                for key in {stem(w) for w in words_of(text[start:end]) if is_content(w)} & counts.keys():
                    counts[key] += 1
            continue
        hits: set[int] = set()
        for seed in seeds:
            at = folded.find(seed)
            while at >= 0:
                hits.add(at)
                at = folded.find(seed, at + 1)
        if not hits:
            continue
        starts = [start for start, _ in spans]
        pieces: dict[int, int] = {}
        """Where each piece holding a hit starts, and its sentence: a piece is cut at whitespace and at
        its sentence's ends (a CJK sentence may end with no whitespace after it)."""
        for at in hits:
            sentence = bisect.bisect_right(starts, at) - 1
            pieces.setdefault(max(_piece_start(folded, at), starts[sentence]), sentence)
        found: set[tuple[int, str]] = set()
        for at, sentence in pieces.items():
            piece = folded[at : min(_piece_end(folded, at), spans[sentence][1])]
            held = stems_of.get(piece)
            if held is None:
                held = stems_of[piece] = frozenset(
                    {stem(w) for w in words_of(piece) if is_content(w)} & counts.keys()
                )
            found.update((sentence, key) for key in held)
        for _, key in found:
            counts[key] += 1
    return counts, sentences


_SPACE = re.compile(r"\s")


def _piece_start(text: str, at: int) -> int:
    """Where the whitespace-bounded piece holding ``text[at]`` begins."""
    while at > 0 and not text[at - 1].isspace():
        at -= 1
    return at


def _piece_end(text: str, at: int) -> int:
    """Where the piece beginning at ``at`` ends (the next whitespace, or the text's end)."""
    match = _SPACE.search(text, at)
    return len(text) if match is None else match.start()
