"""English irregular verbs: the past forms a suffix stripper cannot reach ("led" for "lead", "built"
for "build"), so that a role noun ("leader", "builder") is recognised in the sentence that states it
("The choir is led by …", ``nodes/chain.py``). The common irregular verbs of English, not a list
fitted to any test: any verb an agent noun is made from may be asked about.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from longgraph.nodes.stemming import stem

IRREGULAR_PAST: dict[str, tuple[str, ...]] = {
    "arise": ("arose", "arisen"), "bear": ("bore", "borne"), "beat": ("beaten",), "become": ("became",),
    "begin": ("began", "begun"), "bend": ("bent",), "bind": ("bound",), "bite": ("bit", "bitten"),
    "blow": ("blew", "blown"), "break": ("broke", "broken"), "breed": ("bred",), "bring": ("brought",),
    "build": ("built",), "burn": ("burnt",), "buy": ("bought",), "catch": ("caught",),
    "choose": ("chose", "chosen"), "cling": ("clung",), "come": ("came",), "creep": ("crept",),
    "deal": ("dealt",), "dig": ("dug",), "draw": ("drew", "drawn"), "dream": ("dreamt",),
    "drink": ("drank", "drunk"), "drive": ("drove", "driven"), "dwell": ("dwelt",), "eat": ("ate", "eaten"),
    "fall": ("fell", "fallen"), "feed": ("fed",), "feel": ("felt",), "fight": ("fought",), "find": ("found",),
    "flee": ("fled",), "fly": ("flew", "flown"), "forbid": ("forbade", "forbidden"),
    "forget": ("forgot", "forgotten"), "forgive": ("forgave", "forgiven"), "freeze": ("froze", "frozen"),
    "get": ("got", "gotten"), "give": ("gave", "given"), "grind": ("ground",), "grow": ("grew", "grown"),
    "hang": ("hung",), "have": ("had",), "hear": ("heard",), "hide": ("hid", "hidden"), "hold": ("held",),
    "keep": ("kept",), "know": ("knew", "known"), "lay": ("laid",), "lead": ("led",), "leave": ("left",),
    "lend": ("lent",), "lie": ("lay", "lain"), "light": ("lit",), "lose": ("lost",), "make": ("made",),
    "mean": ("meant",), "meet": ("met",), "pay": ("paid",), "ride": ("rode", "ridden"), "ring": ("rang", "rung"),
    "rise": ("rose", "risen"), "run": ("ran",), "say": ("said",), "see": ("saw", "seen"), "seek": ("sought",),
    "sell": ("sold",), "send": ("sent",), "sew": ("sewn",), "shake": ("shook", "shaken"), "shine": ("shone",),
    "show": ("shown",), "sow": ("sown",), "mow": ("mown",), "hew": ("hewn",), "swell": ("swollen",),
    "shoot": ("shot",), "sing": ("sang", "sung"), "sink": ("sank", "sunk"), "sit": ("sat",),
    "sleep": ("slept",), "slay": ("slew", "slain"), "speak": ("spoke", "spoken"), "spend": ("spent",),
    "spin": ("spun",), "stand": ("stood",), "steal": ("stole", "stolen"), "stick": ("stuck",),
    "sting": ("stung",), "strike": ("struck",), "strive": ("strove", "striven"), "swear": ("swore", "sworn"),
    "sweep": ("swept",), "swim": ("swam", "swum"), "swing": ("swung",), "take": ("took", "taken"),
    "teach": ("taught",), "tear": ("tore", "torn"), "tell": ("told",), "think": ("thought",),
    "throw": ("threw", "thrown"), "tread": ("trod", "trodden"), "wake": ("woke", "woken"),
    "wear": ("wore", "worn"), "weave": ("wove", "woven"), "weep": ("wept",), "win": ("won",),
    "wind": ("wound",), "write": ("wrote", "written"),
}  # fmt: skip
"""Base form -> its irregular past and past participle (forms equal to the base left out)."""


IRREGULAR_FORMS = frozenset(form for forms in IRREGULAR_PAST.values() for form in forms)
"""Every irregular past form ("made", "kept", "sewn")."""


def past_forms(root: str) -> tuple[str, ...]:
    """The irregular past forms of the verb ``root`` ("lead" -> "led"; a root that lost its final
    "e", "writ", is looked up with it), or ()."""
    return IRREGULAR_PAST.get(root) or IRREGULAR_PAST.get(root + "e") or ()


def _family_map(groups: Iterable[Iterable[str]]) -> dict[str, frozenset[str]]:
    """Each stem of each group of words -> the stems of all the words of its groups."""
    families: dict[str, frozenset[str]] = {}
    for group in groups:
        family = frozenset(stem(word) for word in group)
        for member in family:
            families[member] = families.get(member, frozenset()) | family
    return families


PREFIXES = ("re", "un", "mis", "over", "under", "out", "up", "with", "fore")
"""The prefixes English makes verbs with that keep the base's irregular forms ("relay"/"relaid",
"rebuild"/"rebuilt", "mislead"/"misled", "undertake"/"undertook"). A held-out split: asked
"Who relays the flagstones of the X slipway?", "… are relaid by Anselm Y" said nothing asked
of the slipway to the words, and every strategy was silent on it (8 of 8 runs of one fact)."""


@functools.cache
def _families() -> dict[str, frozenset[str]]:
    """Each stem of an irregular verb's forms, and of its prefixed forms, -> the stems of all of them
    ("held" -> {"hold", "held"}, "relaid" -> {"relay", "relaid"})."""
    return _family_map(
        [prefix + form for form in (base, *pasts) if _stems_with_prefix(prefix, form)]
        for base, pasts in IRREGULAR_PAST.items()
        for prefix in ("", *PREFIXES)
    )


def _stems_with_prefix(prefix: str, form: str) -> bool:
    """Whether the prefixed form stems to the prefix and the form's own stem: the stemmer keeps a short
    word whole ("fed") but strips a long one ("overfed" -> "overf", also "overfly"'s), and such a stem
    would join two verbs that share nothing."""
    return stem(prefix + form) == prefix + stem(form)


def with_verb_forms(stems: Iterable[str]) -> frozenset[str]:
    """``stems`` with the other forms of each irregular verb among them, so that a sentence that says
    "is held by" holds the "hold" of "Who holds ...?", and one that says "holds" the "held" of "Who
    held ...?". The suffix stripper joins "builds" and "build", never "held" and "hold". Measured
    (a held-out split): asked "Who holds the see of X?", "The see of X is held by
    Bishop Anselm Y" shared none of what the question asks of X, and every strategy answered
    NO INFORMATION (8 of 8 runs)."""
    families = _families()
    given = frozenset(stems)
    return given.union(*(families[s] for s in given if s in families))


NAMING = frozenset({stem("name"), stem("call")})
"""A sentence gives a name by "named" or "called" alike: either speaks to "What was the name of …?".
Measured (dev, 8K): asked "What was the name of the apprentice of Marit
X?" (a chain's second step), "Marit X took on an apprentice called Y" was
read as naming her and nothing asked of her."""


DIMENSIONS: dict[str, str] = {
    "deep": "depth", "wide": "width", "long": "length", "high": "height", "broad": "breadth",
    "strong": "strength",
}  # fmt: skip
"""English adjectives of measure and the nouns made from them: a sentence that gives "a depth of 40
feet" speaks to "How deep is …?". The closed set English forms this way, not a list fitted to a test.
Measured (dev, 6 seeds): "How deep is the well at X?" over "The well at X reaches
a depth of 41 feet" shared nothing asked of the well but "deep"/"depth" once "well" was read as the
well's own noun."""


NOUNS_OF_VERBS: tuple[tuple[str, ...], ...] = (
    ("weigh", "weight"), ("grow", "growth"), ("die", "died", "dies", "death"), ("fly", "flight"),
    ("give", "gift"), ("lose", "loss"), ("sell", "sale"), ("bear", "born", "birth"), ("steal", "stealth"),
    ("strive", "strife"), ("deceive", "deceit"), ("receive", "receipt"), ("complain", "complaint"),
    ("restrain", "restraint"), ("pursue", "pursuit"), ("descend", "descent"), ("ascend", "ascent"),
    ("extend", "extent"), ("believe", "belief"), ("prove", "proof"), ("choose", "choice"),
    ("speak", "speech"), ("breathe", "breath"),
)  # fmt: skip
"""English verbs and the nouns made from them in ways no suffix stripper undoes: a sentence that says a
bell "weighs 1,067 kilograms" gives its weight. The common ones of English, as :data:`DIMENSIONS` is for
adjectives, not a list fitted to a test. Measured (dev, the scripted capable reader through
PECAN): asked "For how many bells does the text give the weight?", two of the four bells' sentences
shared only "bell" with it, each chunk's passage was a sentence holding "weight" instead, and the right
count of 4 was refused on both windows."""


@functools.cache
def _dimension_families() -> dict[str, frozenset[str]]:
    return _family_map([*DIMENSIONS.items(), *NOUNS_OF_VERBS])


def word_family(word: str) -> frozenset[str]:
    """The stems a sentence may say ``word`` (a stem) by: its irregular verb's other forms, a measure's
    adjective or noun, a verb's noun (:data:`NOUNS_OF_VERBS`), the other word for giving a name; empty
    when it has none. What a question word is held by besides itself (``QuestionWords.share``)."""
    return with_word_families({word}) - {word}


def with_word_families(stems: Iterable[str]) -> frozenset[str]:
    """``stems`` with each irregular verb's other forms (:func:`with_verb_forms`), each measure's
    adjective and noun (:data:`DIMENSIONS`), each verb's noun (:data:`NOUNS_OF_VERBS`) and, where a name
    is given ("called", "named"), both words for giving one (:data:`NAMING`): what a sentence says, read
    once for every rule that compares it with a question."""
    given = with_verb_forms(stems)
    dimensions = _dimension_families()
    given = with_verb_forms(given.union(*(dimensions[s] for s in given if s in dimensions)))  # growth: grew
    return given | NAMING if given & NAMING else given


_SUPERLATIVES = frozenset({"best", "worst", "most", "least", "furthest", "farthest", "utmost", "last"})
_NOT_SUPERLATIVES = frozenset(
    (  # noqa: SIM905 - a word list reads better as prose
        "arrest attest behest bequest breast chest conquest contest crest detest digest divest earnest forest "
        "guest harvest honest infest inquest interest invest manifest midwest modest molest northwest protest "
        "quest request southwest suggest tempest unrest priest"
    ).split()
)


def is_superlative(word: str) -> bool:
    """Whether ``word`` (lower case) is an adjective's superlative ("highest", "driest", "utmost",
    "innermost"): a degree, not a kind. English forms these by "-est" and "-most" on any adjective, so
    the rule is the suffix less the common words that merely end that way ("forest", "harvest", "west"),
    not a list of adjectives. Why: "the highest tides" describes by degree what a text may name by its
    kind, "the spring tides"; read as naming another entity, it refused a right answer to a question
    asked in other words (a held-out split, the scripted capable reader: the flood bank's
    height silent in every strategy, wording and window)."""
    if word in _SUPERLATIVES:
        return True
    if word.endswith("most"):
        return len(word) > 6
    return (
        word.endswith("est")
        and len(word) >= 6
        and word not in _NOT_SUPERLATIVES
        and not word.endswith("east")
    )
