"""The generalisation suite: facts of many shapes, asked in ways nobody tuned for, with a held-out split.

The needle suite plants one sentence of one shape; every strategy now finds it, and that says little
about a fact phrased another way, a fact among look-alikes, or a question about something the text
never mentions. This suite plants made-up facts from :data:`TEMPLATES` (values with separators,
decimals, dates, money, names, places, codes, phrases, times, percentages, years; entities named by
names, adjectives and titles) into filler from two corpora (Paul Graham essays, SQuAD paragraphs), and
asks of each:

* ``one``: the fact alone;
* ``distractors``: the fact among two facts of the same template about other entities;
* ``absent``: three such facts, none about the entity asked (right answer: NO INFORMATION);
* ``paraphrase``: the fact, asked in other words than its sentence's;
* ``two-hop``: a bridge across chunks ("X was founded by P" ... "P was born in T");
* ``aggregation``: three to six facts of one template, asked for a sum, a count, the highest or a list.

**Splits.** Templates are split once, by name: the ``dev`` templates are the ones to look at while
working on the answer layer; the ``test`` templates are for reporting only. Each instance records its
split (``metadata.split``), template and kind, so a report never mixes them. A test template whose
failures were read while working joins ``dev`` and a new one takes its place (session 35 renewed the
split this way: results before it name the old templates).

Scored by :func:`longgraph.evals.scoring.structured.score_general` (``correct``: the gold value in the
answer and no look-alike's; NO INFORMATION for an absent entity; the exact total, count, top entity or
every listed entity for aggregation), together with whether the run marked the answer supported.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from longgraph.errors import ConfigurationError
from longgraph.evals.corpora import load_paul_graham_text, load_squad
from longgraph.evals.data.instance import EvalInstance, count_mentions, resolve_tokenizer
from longgraph.evals.data.needle import split_sentences
from longgraph.tokenizer import Tokenizer

SUITE = "general"
Kind = Literal["one", "distractors", "absent", "paraphrase", "two-hop", "aggregation"]
KINDS: tuple[Kind, ...] = ("one", "distractors", "absent", "paraphrase", "two-hop", "aggregation")
Split = Literal["dev", "test"]

_SYLLABLES = ("var", "len", "dor", "mis", "tal", "qui", "bren", "osk", "ath", "rel", "vin", "cor", "hal",
              "zen", "mar", "ul", "pev", "tris", "gan", "lo", "nev", "sar", "thim", "wex")  # fmt: skip
_ADJECTIVES = (
    "crimson",
    "amber",
    "violet",
    "silver",
    "ochre",
    "teal",
    "scarlet",
    "ivory",
    "cobalt",
    "saffron",
)
_TITLES = ("Duke", "Abbess", "Harbourmaster", "Chancellor", "Warden", "Provost", "Bailiff", "Archivist")
_GIVEN = ("Odile", "Bram", "Ysolde", "Casimir", "Petra", "Anselm", "Ilka", "Teodor", "Marit", "Leocadia")


def made_up_name(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def person_name(rng: random.Random) -> str:
    return f"{rng.choice(_GIVEN)} {made_up_name(rng)}"


@dataclass(frozen=True)
class Template:
    """One fact shape: its sentence, its question and a paraphrase of it, how entities are named and how
    values are drawn."""

    name: str
    split: Split
    sentence: str
    question: str
    paraphrase: str
    entity: Callable[[random.Random], str]
    value: Callable[[random.Random], str]
    number: bool = False
    """Its values are numbers (aggregation asks for sums and maxima of those)."""
    collective: str = "entries"
    """What its entities are, in the plural ("towns"), for aggregation questions."""
    measure: str = "value"
    """What its value is ("population"), for aggregation questions."""


def _int(lo: int, hi: int, sep: bool = True) -> Callable[[random.Random], str]:
    return lambda rng: f"{rng.randint(lo, hi):,}" if sep else str(rng.randint(lo, hi))


TEMPLATES: tuple[Template, ...] = (
    Template("population", "dev", "The town of {e} has a population of {v} residents.",
             "What is the population of the town of {e}?", "How many people live in {e}?",
             made_up_name, _int(1_200, 980_000), number=True, collective="towns", measure="population"),
    Template("melting", "dev", "The {e} alloy melts at {v} degrees Celsius.",
             "At what temperature does the {e} alloy melt?", "What is the melting point of the {e} alloy?",
             made_up_name, lambda r: f"{r.uniform(150, 990):.1f}", number=True, collective="alloys", measure="melting point"),
    Template("bridge-date", "dev", "The {e} bridge was opened on {v}.",
             "When was the {e} bridge opened?", "On what date did traffic first cross the {e} bridge?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('March', 'June', 'October', 'January'))} {r.randint(1820, 1990)}", collective="bridges", measure="opening date"),
    Template("keeper", "dev", "The lighthouse at {e} is kept by a woman named {v}.",
             "Who keeps the lighthouse at {e}?", "What is the name of the keeper of the {e} lighthouse?",
             made_up_name, person_name, collective="lighthouses", measure="keeper"),
    Template("ship-cargo", "dev", "The {e} ship carries {v} crates of tea.",
             "How many crates of tea does the {e} ship carry?", "What number of tea crates is aboard the {e} ship?",
             lambda r: r.choice(_ADJECTIVES), _int(120, 9_800), number=True, collective="ships", measure="number of tea crates"),
    Template("vault-code", "dev", "The access code for the {e} vault is {v}.",
             "What is the access code for the {e} vault?", "Which code opens the {e} vault?",
             made_up_name, lambda r: f"{r.choice('QXKZ')}{r.choice('VWJ')}-{r.randint(1000, 9999)}-{r.choice('BDFH')}", collective="vaults", measure="access code"),
    Template("grant", "dev", "The {e} foundation received a grant of ${v}.",
             "How much was the grant the {e} foundation received?", "What sum was awarded to the {e} foundation?",
             made_up_name, _int(12_000, 4_900_000), number=True, collective="foundations", measure="grant"),
    Template("orchestra-city", "dev", "The {e} orchestra was founded in the city of {v}.",
             "In which city was the {e} orchestra founded?", "Where did the {e} orchestra begin?",
             made_up_name, made_up_name, collective="orchestras", measure="founding city"),
    Template("dish", "dev", "The favourite dish of the {e} family is {v}.",
             "What is the favourite dish of the {e} family?", "Which meal do the {e} family like best?",
             made_up_name, lambda r: r.choice(("roasted chestnuts with honey", "barley soup with smoked eel",
                                             "pickled quince on rye", "saffron dumplings in broth",
                                             "baked carp with sorrel", "plum dumplings with poppy seed")), collective="families", measure="favourite dish"),
    Template("horses", "dev", "The {e} of Varnholm owns {v} horses.",
             "How many horses does the {e} of Varnholm own?", "What is the size of the herd the {e} of Varnholm keeps?",
             lambda r: r.choice(_TITLES), _int(3, 640, sep=False), number=True, collective="officials of Varnholm", measure="number of horses"),
    Template("reservoir", "dev", "The {e} reservoir is {v} percent full.",
             "How full is the {e} reservoir?", "What share of the {e} reservoir's capacity is filled?",
             lambda r: r.choice(_ADJECTIVES), lambda r: f"{r.uniform(5, 99):.1f}", number=True, collective="reservoirs", measure="fill level"),
    Template("ferry-time", "dev", "The {e} ferry leaves at {v} each morning.",
             "At what time does the {e} ferry leave each morning?", "When does the morning {e} ferry depart?",
             made_up_name, lambda r: f"{r.randint(5, 9)}:{r.choice(('05', '15', '25', '40', '55'))}", collective="ferries", measure="departure time"),
    Template("abbey-year", "dev", "The {e} abbey was built in {v}.",
             "In which year was the {e} abbey built?", "When was the {e} abbey constructed?",
             made_up_name, _int(1050, 1790, sep=False), number=True, collective="abbeys", measure="year of building"),
    # Session 35's test templates (rainfall ... river, architect-port, captain-cat): their wrong answers
    # were read after their one run, so they joined dev in session 36 (as session 34's had in 35).
    Template("rainfall", "dev", "The village of {e} receives {v} millimetres of rain a year.",
             "How much rain does the village of {e} receive in a year?", "What is the annual precipitation in {e}?",
             made_up_name, _int(240, 3_900), number=True, collective="villages", measure="yearly rainfall"),
    Template("portrait", "dev", "The portrait of the {e} of Osterlin was painted by {v}.",
             "Who painted the portrait of the {e} of Osterlin?", "Which artist made the likeness of the {e} of Osterlin?",
             lambda r: r.choice(_TITLES), person_name, collective="officials of Osterlin", measure="portrait painter"),
    Template("tunnel", "dev", "The {e} tunnel is {v} kilometres long.",
             "How long is the {e} tunnel?", "What distance does the {e} tunnel span from end to end?",
             lambda r: r.choice(_ADJECTIVES), lambda r: f"{r.randint(1, 57)}.{r.randint(1, 9)}{r.randint(1, 9)}", number=True, collective="tunnels", measure="length"),
    Template("treaty", "dev", "The treaty of {e} was signed on {v}.",
             "When was the treaty of {e} signed?", "On which day did the parties put their names to the {e} accord?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('April', 'July', 'September', 'December'))} {r.randint(1500, 1899)}", collective="treaties", measure="signing date"),
    Template("ticket", "dev", "A ticket to the {e} museum costs {v} crowns.",
             "How much does a ticket to the {e} museum cost?", "What is the admission fee of the {e} museum?",
             made_up_name, lambda r: f"{r.randint(3, 90)}.{r.choice(('15', '35', '65', '85'))}", number=True, collective="museums", measure="ticket price"),
    Template("motto", "dev", "The motto of the {e} guildhall is {v}.",
             "What is the motto of the {e} guildhall?", "Which saying is carved over the door of the {e} guildhall?",
             made_up_name, lambda r: r.choice(("steady hands and open doors", "by lamp and ledger", "salt before silver",
                                             "the tide keeps no debts", "measure twice and sail once",
                                             "bread for the road", "quiet water runs cold", "no key without a hand")),
             collective="guildhalls", measure="motto"),
    Template("observatory", "dev", "The {e} observatory files its reports under the reference {v}.",
             "Under which reference does the {e} observatory file its reports?", "What number do the {e} observatory's papers carry?",
             made_up_name, lambda r: f"{r.choice('RTMN')}{r.choice('AEU')}/{r.randint(100, 999)}/{r.randint(10, 99)}", collective="observatories", measure="report reference"),
    Template("river", "dev", "The river {e} rises near the village of {v}.",
             "Near which village does the river {e} rise?", "Where is the source of the {e}?",
             made_up_name, made_up_name, collective="rivers", measure="source"),
    # Session 36's test split: run at 8K and 32K and its failures read, so it joined dev (session 37).
    Template("harbour-depth", "dev", "The harbour of {e} is {v} metres deep.",
             "How deep is the harbour of {e}?", "What depth of water does the {e} anchorage offer?",
             made_up_name, lambda r: f"{r.randint(3, 40)}.{r.randint(1, 9)}", number=True, collective="harbours", measure="depth"),
    Template("mayor", "dev", "The mayor of {e} is a man named {v}.",
             "Who is the mayor of {e}?", "Which person governs the town of {e}?",
             made_up_name, person_name, collective="towns", measure="mayor"),
    Template("estate-sale", "dev", "The {e} estate was sold for {v} pounds.",
             "For how much was the {e} estate sold?", "What price did the {e} property fetch?",
             made_up_name, _int(40_000, 9_000_000), number=True, collective="estates", measure="sale price"),
    Template("canal", "dev", "The {e} canal was completed in {v}.",
             "When was the {e} canal completed?", "In what month did work on the {e} waterway finish?",
             made_up_name, lambda r: f"{r.choice(('February', 'May', 'August', 'November'))} {r.randint(1700, 1930)}", collective="canals", measure="completion date"),
    Template("locomotive", "dev", "The {e} locomotive bears the serial number {v}.",
             "What serial number does the {e} locomotive bear?", "Which number identifies the {e} engine?",
             lambda r: r.choice(_ADJECTIVES), lambda r: f"{r.choice('LMPS')}{r.choice('XYR')}-{r.randint(1000, 9999)}", collective="locomotives", measure="serial number"),
    Template("monastery", "dev", "The {e} monastery is famous for its {v}.",
             "What is the {e} monastery famous for?", "For which feature do visitors know the {e} cloister?",
             made_up_name, lambda r: r.choice(("copper bells", "rose garden", "painted ceiling", "herb cellar",
                                             "iron gate", "stone library", "bee hives", "slate sundial")),
             collective="monasteries", measure="famous feature"),
    Template("languages", "dev", "The {e} of Brannock speaks {v} languages.",
             "How many languages does the {e} of Brannock speak?", "In how many tongues is the {e} of Brannock fluent?",
             lambda r: r.choice(_TITLES), _int(2, 14, sep=False), number=True, collective="officials of Brannock", measure="number of languages"),
    Template("expedition", "dev", "The {e} expedition set out from the town of {v}.",
             "From which town did the {e} expedition set out?", "Where did the {e} party begin its journey?",
             made_up_name, made_up_name, collective="expeditions", measure="starting town"),
    # Session 37's test split: run at 8K and 32K and its silenced answers read, so it joined dev (session 38).
    Template("lock-lift", "dev", "The {e} lock raises boats by {v} metres.",
             "By how many metres does the {e} lock raise boats?", "What lift does the {e} lock give a vessel?",
             made_up_name, lambda r: f"{r.randint(1, 25)}.{r.randint(1, 9)}", number=True, collective="locks", measure="lift"),
    Template("ambassador", "dev", "The ambassador to {e} is {v}.",
             "Who is the ambassador to {e}?", "Which envoy represents the crown in {e}?",
             made_up_name, person_name, collective="countries", measure="ambassador"),
    Template("vineyard", "dev", "The {e} vineyard produced {v} bottles of wine last year.",
             "How many bottles of wine did the {e} vineyard produce last year?", "What was the output of the {e} estate's vines in the previous season?",
             made_up_name, _int(2_000, 400_000), number=True, collective="vineyards", measure="bottles produced"),
    Template("cloak", "dev", "The {e} of Quellin wears a cloak of {v}.",
             "What is the cloak of the {e} of Quellin made of?", "Which cloth is the garment of the {e} of Quellin cut from?",
             lambda r: r.choice(_TITLES), lambda r: r.choice(("grey wool", "green velvet", "undyed linen", "black silk",
                                                             "red felt", "blue damask", "brown leather")),
             collective="officials of Quellin", measure="cloak"),
    Template("school-opening", "dev", "The {e} school opened its doors on {v}.",
             "When did the {e} school open its doors?", "On what day did the {e} academy admit its first pupils?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('March', 'June', 'September', 'December'))} {r.randint(1780, 1960)}",
             collective="schools", measure="opening date"),
    Template("patent", "dev", "The {e} patent was registered under the code {v}.",
             "Under which code was the {e} patent registered?", "What identifier does the filing of the {e} invention carry?",
             lambda r: r.choice(_ADJECTIVES), lambda r: f"PT-{r.randint(1000, 9999)}-{r.choice('QWKZ')}",
             collective="patents", measure="registration code"),
    Template("bridge-toll", "dev", "The toll for crossing the {e} bridge is {v} dollars.",
             "How much is the toll for crossing the {e} bridge?", "What does a trip over the {e} span cost?",
             made_up_name, lambda r: f"{r.randint(1, 19)}.{r.randint(10, 95)}", number=True, collective="bridges", measure="toll"),
    Template("festival", "dev", "The {e} festival is held every summer in the village of {v}.",
             "In which village is the {e} festival held?", "Where does the {e} celebration take place?",
             made_up_name, made_up_name, collective="festivals", measure="village"),
    # Session 38's test split: run at 8K, 32K and 128K and its misses read, so it joined dev (session 39).
    Template("glacier", "dev", "The {e} glacier retreated {v} metres in the last decade.",
             "How far did the {e} glacier retreat in the last decade?", "By what distance has the {e} ice field shrunk over the past ten years?",
             made_up_name, _int(40, 2_900), number=True, collective="glaciers", measure="retreat"),
    Template("anthem", "dev", "The anthem of {e} was composed by {v}.",
             "Who composed the anthem of {e}?", "Which musician wrote the national song of {e}?",
             made_up_name, person_name, collective="countries", measure="composer"),
    Template("library-books", "dev", "The {e} library holds {v} books.",
             "How many books does the {e} library hold?", "What is the size of the {e} library's collection?",
             made_up_name, _int(5_000, 2_400_000), number=True, collective="libraries", measure="books held"),
    Template("steamship", "dev", "The {e} steamship was launched on {v}.",
             "When was the {e} steamship launched?", "On which day did the {e} vessel first take to the water?",
             lambda r: r.choice(_ADJECTIVES), lambda r: f"{r.randint(1, 28)} {r.choice(('February', 'April', 'August', 'November'))} {r.randint(1820, 1935)}",
             collective="steamships", measure="launch date"),
    Template("seal", "dev", "The {e} of Dunmarrow keeps the seal numbered {v}.",
             "Which seal number does the {e} of Dunmarrow keep?", "What identifier is on the seal held by the {e} of Dunmarrow?",
             lambda r: r.choice(_TITLES), lambda r: f"S{r.randint(10, 99)}/{r.choice('ABCD')}{r.randint(100, 999)}",
             collective="officials of Dunmarrow", measure="seal number"),
    Template("saffron-price", "dev", "Saffron from {e} sells for {v} florins an ounce.",
             "How much does saffron from {e} sell for an ounce?", "What is the price per ounce of {e} saffron?",
             made_up_name, lambda r: f"{r.randint(2, 60)}.{r.choice(('10', '40', '75', '90'))}", number=True,
             collective="saffron regions", measure="price per ounce"),
    Template("inn-sign", "dev", "The inn at {e} has a sign showing {v}.",
             "What does the sign of the inn at {e} show?", "Which picture hangs above the door of the {e} tavern?",
             made_up_name, lambda r: r.choice(("a golden swan", "three red keys", "a sleeping fox", "a ship in a bottle",
                                             "two crossed oars", "a blue lantern", "a laughing moon")),
             collective="inns", measure="sign"),
    Template("island-ferry", "dev", "The ferry to the island of {e} leaves from the harbour town of {v}.",
             "From which harbour town does the ferry to the island of {e} leave?", "Where does one board the boat to {e}?",
             made_up_name, made_up_name, collective="islands", measure="ferry port"),
    # Session 39's test split: run at 8K and 32K and its failures read, so it joined dev (session 40).
    Template("well-depth", "dev", "The well at {e} reaches a depth of {v} feet.",
             "How deep is the well at {e}?", "To what depth does the {e} well go down?",
             made_up_name, _int(120, 4_800), number=True, collective="wells", measure="depth"),
    Template("charter", "dev", "The charter of {e} was granted on {v}.",
             "When was the charter of {e} granted?", "On what day did {e} receive its charter?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('January', 'May', 'July', 'October'))} {r.randint(1200, 1780)}",
             collective="towns", measure="charter date"),
    Template("violin", "dev", "The {e} violin was made by {v}.",
             "Who made the {e} violin?", "Which craftsman built the {e} instrument?",
             lambda r: r.choice(_ADJECTIVES), person_name, collective="violins", measure="maker"),
    Template("bell-weight", "dev", "The great bell of {e} weighs {v} kilograms.",
             "How much does the great bell of {e} weigh?", "What is the mass of the {e} bell?",
             made_up_name, _int(300, 27_000), number=True, collective="bells", measure="weight"),
    Template("banner", "dev", "The banner of the {e} of Harrowgate reads {v}.",
             "What does the banner of the {e} of Harrowgate read?", "Which words are written on the standard of the {e} of Harrowgate?",
             lambda r: r.choice(_TITLES), lambda r: r.choice(("faith and fire", "first to the wall", "the river remembers",
                                                             "hold the ford", "light in the marsh", "iron and oak", "no tide turns us")),
             collective="officials of Harrowgate", measure="banner"),
    Template("mine-earnings", "dev", "The {e} mine earned {v} ducats last year.",
             "How much did the {e} mine earn last year?", "What were the {e} mine's takings in the previous year?",
             made_up_name, _int(9_000, 3_500_000), number=True, collective="mines", measure="earnings"),
    Template("manuscript", "dev", "The {e} manuscript is catalogued as {v}.",
             "How is the {e} manuscript catalogued?", "Under which shelfmark is the {e} codex kept?",
             made_up_name, lambda r: f"{r.choice('BCGH')}{r.choice('LNR')}.{r.randint(10, 99)}.{r.randint(100, 999)}",
             collective="manuscripts", measure="catalogue mark"),
    Template("mountain-pass", "dev", "The {e} pass leads down to the village of {v}.",
             "To which village does the {e} pass lead down?", "Where does one arrive after crossing the {e} pass?",
             made_up_name, made_up_name, collective="passes", measure="village below"),
    # Session 40's test split: run at 8K and 32K and its failures read, so it joined dev (session 41).
    Template("lighthouse-range", "dev", "The light of the {e} lighthouse can be seen {v} nautical miles away.",
             "How far away can the light of the {e} lighthouse be seen?", "From what distance is the {e} beacon visible?",
             made_up_name, _int(8, 44, sep=False), number=True, collective="lighthouses", measure="range"),
    Template("orchard-trees", "dev", "The {e} orchard has {v} apple trees.",
             "How many apple trees does the {e} orchard have?", "What number of apple trees grow in the {e} grove?",
             made_up_name, _int(200, 48_000), number=True, collective="orchards", measure="apple trees"),
    Template("regiment-colonel", "dev", "The {e} regiment is commanded by {v}.",
             "Who commands the {e} regiment?", "Which officer leads the {e} troops?",
             lambda r: r.choice(_ADJECTIVES), person_name, collective="regiments", measure="commander"),
    Template("dam-height", "dev", "The {e} dam stands {v} metres tall.",
             "How tall is the {e} dam?", "What is the height of the {e} barrage?",
             made_up_name, lambda r: f"{r.randint(20, 250)}.{r.randint(1, 9)}", number=True, collective="dams", measure="height"),
    Template("guild-fee", "dev", "Membership of the {e} guild costs {v} shillings a year.",
             "How much does membership of the {e} guild cost a year?", "What is the yearly fee to join the {e} guild?",
             made_up_name, lambda r: f"{r.randint(2, 95)}.{r.choice(('20', '45', '60', '80'))}", number=True,
             collective="guilds", measure="yearly fee"),
    Template("archive-code", "dev", "The {e} archive stores its maps under the code {v}.",
             "Under which code does the {e} archive store its maps?", "What label do the maps of the {e} archive carry?",
             made_up_name, lambda r: f"MA-{r.randint(100, 999)}{r.choice('XYZ')}", collective="archives", measure="map code"),
    Template("coronation", "dev", "The {e} of Velmora was crowned on {v}.",
             "When was the {e} of Velmora crowned?", "On what date did the {e} of Velmora receive the crown?",
             lambda r: r.choice(_TITLES), lambda r: f"{r.randint(1, 28)} {r.choice(('March', 'June', 'August', 'November'))} {r.randint(1300, 1850)}",
             collective="officials of Velmora", measure="coronation date"),
    Template("quarry-stone", "dev", "The {e} quarry yields {v}.",
             "What does the {e} quarry yield?", "Which stone is cut at the {e} pit?",
             made_up_name, lambda r: r.choice(("grey granite", "white marble", "red sandstone", "blue slate",
                                             "yellow limestone", "black basalt", "green serpentine")),
             collective="quarries", measure="stone"),
    # Session 41's test split: run at 8K and 32K and its failures read, so it joined dev (session 42).
    Template("farm-sheep", "dev", "Some {v} sheep graze on the {e} farm.",
             "How many sheep graze on the {e} farm?", "What is the size of the flock kept at the {e} farm?",
             made_up_name, _int(300, 25_000), number=True, collective="farms", measure="number of sheep"),
    Template("castle-architect", "dev", "It was {v} who drew the plans for the {e} castle.",
             "Who drew the plans for the {e} castle?", "Which architect designed the {e} fortress?",
             made_up_name, person_name, collective="castles", measure="architect"),
    Template("comet-period", "dev", "The {e} comet returns every {v} years.",
             "How often does the {e} comet return?", "What is the orbital period of the {e} comet?",
             made_up_name, lambda r: f"{r.randint(3, 180)}.{r.randint(1, 9)}", number=True, collective="comets", measure="period"),
    Template("market-day", "dev", "In {e}, the weekly market is held on {v}.",
             "On which day is the weekly market held in {e}?", "When do the traders of {e} gather each week?",
             made_up_name, lambda r: r.choice(("Tuesday mornings", "Thursday afternoons", "Saturday evenings",
                                             "Monday mornings", "Friday afternoons", "Wednesday evenings")),
             collective="towns", measure="market day"),
    Template("bank-loan", "dev", "The {e} bank lent the city {v} guilders.",
             "How much did the {e} bank lend the city?", "What sum did the city borrow from the {e} bank?",
             made_up_name, _int(10_000, 8_000_000), number=True, collective="banks", measure="loan"),
    Template("frigate-wreck", "dev", "The {e} frigate sank off the coast of {v}.",
             "Off which coast did the {e} frigate sink?", "Where was the {e} warship wrecked?",
             lambda r: r.choice(_ADJECTIVES), made_up_name, collective="frigates", measure="wreck site"),
    Template("decree-cipher", "dev", "The {e} of Aldermoor signs every decree with the cipher {v}.",
             "Which cipher does the {e} of Aldermoor sign decrees with?", "What mark appears on the decrees of the {e} of Aldermoor?",
             lambda r: r.choice(_TITLES), lambda r: f"{r.choice('DKTV')}{r.randint(10, 99)}-{r.choice('XQJ')}{r.choice('AEO')}",
             collective="officials of Aldermoor", measure="cipher"),
    Template("university-founding", "dev", "Founded on {v}, the {e} university is the oldest in the province.",
             "When was the {e} university founded?", "On what date did the {e} college begin?",
             made_up_name, lambda r: f"{r.choice(('April', 'July', 'October', 'January'))} {r.randint(1, 28)}, {r.randint(1400, 1880)}",
             collective="universities", measure="founding date"),
    # Session 42's test split: run at 8K and its wrong answers read, so it joined dev (session 43).
    Template("spring-heat", "dev", "Water from the {e} spring comes out at {v} degrees.",
             "At what temperature does water come out of the {e} spring?", "How warm is the water that rises at the {e} fountainhead?",
             made_up_name, lambda r: f"{r.randint(12, 95)}.{r.randint(1, 9)}", number=True, collective="springs", measure="water temperature"),
    Template("company-debt", "dev", "According to the ledger, the {e} company owes {v} marks to its suppliers.",
             "How much does the {e} company owe its suppliers?", "What is the debt of the {e} firm to those who supply it?",
             made_up_name, _int(5_000, 3_000_000), number=True, collective="companies", measure="debt"),
    Template("ferry-skipper", "dev", "The ferry to {e} is skippered by {v}.",
             "Who skippers the ferry to {e}?", "Which sailor is in charge of the boat that crosses to {e}?",
             made_up_name, person_name, collective="ferries", measure="skipper"),
    Template("mint-mark", "dev", "Coins struck at the {e} mint carry the mark {v}.",
             "Which mark do coins struck at the {e} mint carry?", "How is a coin made by the {e} mint stamped?",
             lambda r: r.choice(_ADJECTIVES), lambda r: f"{r.choice('RGHW')}{r.randint(2, 9)}-{r.choice('KQZ')}{r.choice('UIY')}",
             collective="mints", measure="mint mark"),
    Template("stadium-match", "dev", "On {v} the {e} stadium hosted its first match.",
             "When did the {e} stadium host its first match?", "On what date was a game first played at the {e} arena?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('January', 'April', 'September', 'December'))} {r.randint(1860, 1990)}",
             collective="stadiums", measure="first match date"),
    Template("infirmary-beds", "dev", "Patients at the {e} infirmary share {v} beds.",
             "How many beds does the {e} infirmary have?", "What is the bed count of the {e} hospital?",
             made_up_name, _int(40, 2_400), number=True, collective="infirmaries", measure="number of beds"),
    Template("poet-pen-name", "dev", "The poet from {e} wrote under the pen name {v}.",
             "Under which pen name did the poet from {e} write?", "What name appeared on the books of the poet from {e}?",
             made_up_name, made_up_name, collective="towns", measure="pen name of its poet"),
    Template("salt-levy", "dev", "The {e} of Kestrow collects a salt tax of {v} florins.",
             "How large a salt tax does the {e} of Kestrow collect?", "What levy on salt is charged by the {e} of Kestrow?",
             lambda r: r.choice(_TITLES), _int(1_000, 90_000), number=True, collective="officials of Kestrow", measure="salt tax"),
    # Session 43's test split: run at 8K and its wrong answers read, so it joined dev (session 43's end).
    Template("cathedral-spire", "dev", "The spire of the {e} cathedral rises {v} feet above the square.",
             "How high does the spire of the {e} cathedral rise?", "What is the height of the {e} church's steeple?",
             made_up_name, _int(90, 540, sep=False), number=True, collective="cathedrals", measure="spire height"),
    Template("press-typeface", "dev", "Books from the {e} press are printed in the typeface {v}.",
             "In which typeface are books from the {e} press printed?", "What lettering does the {e} printing house use?",
             made_up_name, made_up_name, collective="presses", measure="typeface"),
    Template("scholarship", "dev", "Every year the {e} academy awards a scholarship worth €{v}.",
             "How much is the scholarship the {e} academy awards each year worth?", "What is the value of the yearly award given by the {e} school?",
             made_up_name, _int(500, 60_000), number=True, collective="academies", measure="scholarship"),
    Template("eclipse", "dev", "The last eclipse seen from {e} was recorded on {v}.",
             "On what date was the last eclipse seen from {e} recorded?", "When did observers in {e} last note an eclipse?",
             made_up_name, lambda r: f"{r.choice(('February', 'May', 'August', 'November'))} {r.randint(1, 28)}, {r.randint(1600, 1950)}",
             collective="towns", measure="last eclipse date"),
    Template("supper", "dev", "The {e} of Harrowgate dines each evening on {v}.",
             "What does the {e} of Harrowgate dine on each evening?", "Which supper is served nightly to the {e} of Harrowgate?",
             lambda r: r.choice(_TITLES), lambda r: r.choice(("boiled mutton and turnips", "trout with almonds", "lentil stew and black bread",
                                                             "roast pigeon with cherries", "oysters and brown ale", "cabbage pie with cream")),
             collective="officials of Harrowgate", measure="supper"),
    Template("telegraph", "dev", "The {e} telegraph line is listed in the registry as {v}.",
             "How is the {e} telegraph line listed in the registry?", "What registry entry belongs to the {e} wire?",
             lambda r: r.choice(_ADJECTIVES), lambda r: f"TL{r.randint(10, 99)}.{r.choice('ABC')}{r.randint(1, 9)}",
             collective="telegraph lines", measure="registry entry"),
    Template("forest-share", "dev", "Of the land around {e}, {v} percent is forest.",
             "What percentage of the land around {e} is forest?", "How much of the {e} countryside is covered by woodland?",
             made_up_name, lambda r: f"{r.uniform(4, 88):.1f}", number=True, collective="districts", measure="forest share"),
    Template("lorwick-office", "dev", "Since the spring, {v} has served as the {e} of Lorwick.",
             "Who serves as the {e} of Lorwick?", "Which person holds the office of {e} in Lorwick?",
             lambda r: r.choice(_TITLES), person_name, collective="offices of Lorwick", measure="holder"),
    # Session 44's held-out split (written at the end of session 43): run once and its misses read, so
    # it joined dev (session 44's end).
    Template("anchor-weight", "dev", "The anchor of the {e} galleon weighs {v} tonnes.",
             "How much does the anchor of the {e} galleon weigh?", "What is the mass of the {e} ship's anchor?",
             made_up_name, lambda r: f"{r.randint(2, 30)}.{r.randint(1, 9)}", number=True, collective="galleons", measure="anchor weight"),
    Template("bishop-see", "dev", "The see of {e} is held by Bishop {v}.",
             "Who holds the see of {e}?", "Which bishop presides over the diocese of {e}?",
             made_up_name, person_name, collective="sees", measure="bishop"),
    Template("flood-day", "dev", "The great flood reached {e} on {v}.",
             "On what day did the great flood reach {e}?", "When did the waters of the great flood arrive in {e}?",
             made_up_name, lambda r: f"{r.choice(('Monday', 'Wednesday', 'Friday', 'Sunday'))}, {r.randint(1, 28)} {r.choice(('March', 'July', 'October'))} {r.randint(1650, 1920)}",
             collective="towns", measure="flood date"),
    Template("smuggler-fine", "dev", "Smugglers caught in {e} pay a fine of {v} ducats.",
             "How large is the fine smugglers caught in {e} pay?", "What penalty is charged to contrabandists arrested in {e}?",
             made_up_name, _int(50, 9_000), number=True, collective="ports", measure="smuggling fine"),
    Template("stew-spice", "dev", "The stew they cook in {e} is seasoned with {v}.",
             "What is the stew cooked in {e} seasoned with?", "Which flavouring goes into the {e} stew?",
             made_up_name, lambda r: r.choice(("smoked paprika", "juniper berries", "black cardamom", "dried sumac",
                                             "wild thyme", "long pepper", "fennel pollen")),
             collective="towns", measure="stew spice"),
    Template("ledger-folio", "dev", "The accounts of the {e} counting house are kept on folio {v}.",
             "On which folio are the accounts of the {e} counting house kept?", "Where in the ledger are the {e} merchants' books recorded?",
             made_up_name, lambda r: f"F{r.randint(100, 999)}-{r.choice('RSTU')}{r.randint(1, 9)}", collective="counting houses", measure="folio"),
    Template("aqueduct-arches", "dev", "The {e} aqueduct stands on {v} arches.",
             "How many arches does the {e} aqueduct stand on?", "What is the number of spans carrying the {e} water bridge?",
             lambda r: r.choice(_ADJECTIVES), _int(7, 240, sep=False), number=True, collective="aqueducts", measure="number of arches"),
    Template("house-heir", "dev", "The heir of the {e} house of Morvale is {v}.",
             "Who is the heir of the {e} house of Morvale?", "Which person will inherit the {e} house of Morvale?",
             lambda r: r.choice(_ADJECTIVES), person_name, collective="houses of Morvale", measure="heir"),
    # Session 45's held-out split (written at the end of session 44): run once and its misses read, so it
    # joined dev (session 45's end).
    Template("organ-pipes", "dev", "The great organ of the {e} cathedral has {v} pipes.",
             "How many pipes does the great organ of the {e} cathedral have?", "What is the pipe count of the {e} cathedral's organ?",
             made_up_name, _int(400, 12_000), number=True, collective="cathedrals", measure="number of organ pipes"),
    Template("pass-altitude", "dev", "Travellers crossing the {e} pass climb to {v} metres above the sea.",
             "To what altitude do travellers crossing the {e} pass climb?", "How high does the road over the {e} saddle rise?",
             made_up_name, _int(900, 4_800), number=True, collective="passes", measure="altitude"),
    Template("stagecoach-fare", "dev", "A seat on the {e} stagecoach costs {v}.",
             "How much does a seat on the {e} stagecoach cost?", "What fare do travellers pay to ride the {e} coach?",
             made_up_name, lambda r: f"{r.randint(2, 19)} shillings and {r.randint(1, 11)} pence", collective="stagecoaches", measure="fare"),
    Template("tapestry-scene", "dev", "The {e} tapestry depicts {v}.",
             "What does the {e} tapestry depict?", "Which scene is woven into the {e} wall hanging?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("a stag hunt in winter", "the siege of a harbour town", "a wedding feast",
                                                                 "the founding of a monastery", "a shipwreck at dawn", "a tournament of knights")),
             collective="tapestries", measure="scene"),
    Template("shaft-depth", "dev", "The main shaft of the {e} colliery descends {v} fathoms.",
             "How far does the main shaft of the {e} colliery descend?", "What is the depth of the pit at the {e} colliery?",
             made_up_name, lambda r: f"{r.randint(30, 400)}.{r.randint(1, 9)}", number=True, collective="collieries", measure="shaft depth"),
    Template("armistice-date", "dev", "The armistice at {e} took effect at dawn on {v}.",
             "On what date did the armistice at {e} take effect?", "When did the fighting stop under the {e} truce?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('April', 'September', 'December'))} {r.randint(1400, 1880)}",
             collective="armistices", measure="date"),
    Template("herbarium-sheet", "dev", "The {e} herbarium files its dried orchids on sheet {v}.",
             "On which sheet does the {e} herbarium file its dried orchids?", "Where are the pressed orchids of the {e} herbarium stored?",
             made_up_name, lambda r: f"HB-{r.randint(100, 999)}/{r.choice('cdfg')}", collective="herbaria", measure="sheet"),
    Template("rose-varieties", "dev", "In the rose garden of the {e} of Arnholt grow {v} varieties.",
             "How many varieties grow in the rose garden of the {e} of Arnholt?", "What number of kinds of rose does the {e} of Arnholt cultivate?",
             lambda r: r.choice(_TITLES), _int(12, 480, sep=False), number=True, collective="officials of Arnholt", measure="number of rose varieties"),
    # Session 45's test split, run once at d434a0a (session 46) and read: dev from then on.
    Template("footbridge-span", "dev", "The {e} footbridge spans {v} metres of the gorge.",
             "How long is the span of the {e} footbridge?", "Across what distance does the {e} walkway reach over the ravine?",
             made_up_name, lambda r: f"{r.randint(20, 300)}.{r.randint(1, 9)}", number=True, collective="footbridges", measure="span"),
    Template("watermill-grain", "dev", "The {e} watermill grinds {v}.",
             "What does the {e} watermill grind?", "Which crop is milled at the {e} water wheel?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("rye", "barley", "buckwheat", "spelt", "oats", "millet")),
             collective="watermills", measure="grain"),
    Template("canal-locks", "dev", "The {e} canal climbs through {v} locks.",
             "How many locks does the {e} canal climb through?", "What number of lock chambers lift boats along the {e} waterway?",
             made_up_name, _int(3, 90, sep=False), number=True, collective="canals", measure="number of locks"),
    Template("charter-witness", "dev", "The charter of {e} was witnessed by {v}.",
             "Who witnessed the charter of {e}?", "Which person signed as witness to the {e} grant?",
             made_up_name, person_name, collective="charters", measure="witness"),
    Template("bell-casting", "dev", "The great bell of {e} was cast in the year {v}.",
             "In which year was the great bell of {e} cast?", "When was the big bell of {e} poured at the foundry?",
             made_up_name, _int(1200, 1890, sep=False), collective="towns", measure="casting year"),
    Template("owner-tithe", "dev", "The {e} of Wendmoor pays a yearly tithe of {v} crowns.",
             "What yearly tithe does the {e} of Wendmoor pay?", "How much does the {e} of Wendmoor owe the church annually?",
             lambda r: r.choice(_TITLES), _int(40, 9_000), number=True, collective="officials of Wendmoor", measure="tithe"),
    Template("brig-figurehead", "dev", "The figurehead of the {e} brig is carved as {v}.",
             "What is the figurehead of the {e} brig carved as?", "Which figure adorns the bow of the {e} vessel?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("a mermaid", "a lion rampant", "a crowned queen",
                                                                 "a sea serpent", "an eagle with spread wings", "a bearded sea god")),
             collective="brigs", measure="figurehead"),
    Template("station-callsign", "dev", "The {e} signal station transmits under call sign {v}.",
             "Under which call sign does the {e} signal station transmit?", "What identifier does the {e} semaphore post use on the air?",
             made_up_name, lambda r: f"{r.choice('KQWZ')}{r.randint(10, 99)}{r.choice('ABCX')}", collective="signal stations", measure="call sign"),
    # Session 46's test split (written before any run of them; run once in session 47, then moved to dev): a granary's capacity in
    # bushels, a lifeboat's coxswain, a kiln's firing heat, a planetarium dome's width (a decimal), a titled
    # official's date of stepping down, a caravel's cargo (named by colour, a phrase), a strongroom's
    # combination (a code), and a fair's licence fee in ducats.
    Template("granary-capacity", "dev", "The {e} granary holds {v} bushels of wheat.",
             "How many bushels of wheat does the {e} granary hold?", "What quantity of grain can be stored in the {e} storehouse?",
             made_up_name, _int(800, 90_000), number=True, collective="granaries", measure="capacity"),
    Template("lifeboat-coxswain", "dev", "The {e} lifeboat puts to sea under its coxswain, {v}.",
             "Who is the coxswain of the {e} lifeboat?", "Which sailor commands the rescue boat stationed at {e}?",
             made_up_name, person_name, collective="lifeboats", measure="coxswain"),
    Template("kiln-temperature", "dev", "The {e} kiln fires its stoneware at {v} degrees.",
             "At what temperature does the {e} kiln fire its stoneware?", "How hot does the {e} furnace get when baking clay pots?",
             made_up_name, _int(900, 1_400, sep=False), number=True, collective="kilns", measure="firing temperature"),
    Template("planetarium-dome", "dev", "The dome of the {e} planetarium measures {v} metres across.",
             "How wide is the dome of the {e} planetarium?", "What is the diameter of the roof of the {e} star theatre?",
             made_up_name, lambda r: f"{r.randint(8, 40)}.{r.randint(1, 9)}", number=True, collective="planetaria", measure="dome width"),
    Template("stepping-down", "dev", "The {e} of Felsmark stepped down from office on {v}.",
             "On what date did the {e} of Felsmark step down from office?", "When did the {e} of Felsmark resign the post?",
             lambda r: r.choice(_TITLES), lambda r: f"{r.randint(1, 28)} {r.choice(('February', 'May', 'August', 'November'))} {r.randint(1600, 1950)}",
             collective="officials of Felsmark", measure="date of stepping down"),
    Template("caravel-cargo", "dev", "The {e} caravel carried a cargo of {v}.",
             "What cargo did the {e} caravel carry?", "Which goods were loaded aboard the {e} sailing ship?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("pepper and cloves", "raw silk", "salted cod", "tin ingots",
                                                                 "olive oil in jars", "cedar planks")),
             collective="caravels", measure="cargo"),
    Template("strongroom-combination", "dev", "The strongroom of the {e} treasury opens to the combination {v}.",
             "Which combination opens the strongroom of the {e} treasury?", "What sequence unlocks the vault beneath the {e} exchequer?",
             made_up_name, lambda r: f"{r.randint(10, 99)}-{r.randint(10, 99)}-{r.randint(10, 99)}", collective="treasuries", measure="combination"),
    Template("fair-licence", "dev", "A licence to trade at the {e} fair costs {v} ducats.",
             "How much does a licence to trade at the {e} fair cost?", "What must a merchant pay to sell goods at the {e} market?",
             made_up_name, _int(12, 2_400), number=True, collective="fairs", measure="licence fee"),
    # Session 47's test split (written before any run of them; run once in sessions 47 and 48, then moved to dev): a causeway's length in yards,
    # a hospice's matron, a distillery's first cask (a date), a titled official's stipend in florins, a
    # pavilion's roofing (named by colour, a phrase), a telescope mirror's width (a decimal), a jetty's
    # chart mark (a code), and the place a glasshouse buys its sand from.
    Template("causeway-length", "dev", "The {e} causeway runs for {v} yards across the salt marsh.",
             "For how many yards does the {e} causeway run across the salt marsh?", "How long is the raised road over the marsh at {e}?",
             made_up_name, _int(400, 12_000), number=True, collective="causeways", measure="length"),
    Template("hospice-matron", "dev", "The {e} hospice is run by its matron, {v}.",
             "Who is the matron of the {e} hospice?", "Which nurse is in charge of the house for the sick at {e}?",
             made_up_name, person_name, collective="hospices", measure="matron"),
    Template("distillery-cask", "dev", "The {e} distillery filled its first cask on {v}.",
             "On what date did the {e} distillery fill its first cask?", "When did the {e} whisky works begin production?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('January', 'April', 'July', 'October'))} {r.randint(1700, 1990)}",
             collective="distilleries", measure="date of the first cask"),
    Template("official-stipend", "dev", "The {e} of Drummel is paid a stipend of {v} florins.",
             "What stipend is the {e} of Drummel paid?", "How much does the {e} of Drummel earn in wages?",
             lambda r: r.choice(_TITLES), _int(50, 8_000), number=True, collective="officials of Drummel", measure="stipend"),
    Template("pavilion-roof", "dev", "The {e} pavilion is roofed with {v}.",
             "What is the {e} pavilion roofed with?", "Which material covers the top of the {e} summer house?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("copper sheets", "slate tiles", "thatched reed", "cedar shingles",
                                                                 "lead panels", "painted tin")),
             collective="pavilions", measure="roofing"),
    Template("telescope-mirror", "dev", "The mirror of the {e} telescope is {v} inches wide.",
             "How wide is the mirror of the {e} telescope?", "What is the aperture of the {e} spyglass?",
             made_up_name, lambda r: f"{r.randint(6, 60)}.{r.randint(1, 9)}", number=True, collective="telescopes", measure="mirror width"),
    Template("jetty-mark", "dev", "The {e} jetty is marked on the charts as {v}.",
             "How is the {e} jetty marked on the charts?", "Under what designation does the {e} pier appear on maritime maps?",
             made_up_name, lambda r: f"{r.choice('JKRT')}{r.choice('XYZ')}-{r.randint(100, 999)}", collective="jetties", measure="chart mark"),
    Template("glasshouse-sand", "dev", "The {e} glasshouse buys its sand from the pits at {v}.",
             "From where does the {e} glasshouse buy its sand?", "Which quarry supplies the {e} glassworks with sand?",
             made_up_name, made_up_name, collective="glasshouses", measure="sand source"),
    # Session 48's test split (written before any run of them; run once in session 48, then moved to dev): an orchard's harvest in crates,
    # the master of the ironworks at a place, a ferry's fare in pence, an observatory's first comet (a date),
    # a titled official's herd (a possessive paraphrase), a banner's device (named by colour, a phrase), a
    # reservoir's height above the sea (a decimal), a lighthouse's light pattern (a code), and the springs
    # a tannery draws its water from (a place).
    Template("orchard-harvest", "dev", "The {e} orchard yielded {v} crates of apples last autumn.",
             "How many crates of apples did the {e} orchard yield last autumn?", "What was the size of the apple crop at {e} last autumn?",
             made_up_name, _int(200, 20_000), number=True, collective="orchards", measure="harvest"),
    Template("ironworks-master", "dev", "The ironworks at {e} answers to its foundry master, {v}.",
             "Who is the foundry master of the ironworks at {e}?", "Which man runs the metal works in {e}?",
             made_up_name, person_name, collective="ironworks", measure="foundry master"),
    Template("ferry-fare", "dev", "The {e} ferry charges a fare of {v} pence per crossing.",
             "What fare does the {e} ferry charge per crossing?", "How much does it cost to ride the boat across at {e}?",
             made_up_name, _int(2, 480, sep=False), number=True, collective="ferries", measure="fare"),
    Template("observatory-comet", "dev", "The {e} observatory recorded its first comet on {v}.",
             "On what date did the {e} observatory record its first comet?", "When was a comet first logged by the {e} stargazing station?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('March', 'June', 'September', 'December'))} {r.randint(1650, 1960)}",
             collective="observatories", measure="date of the first comet"),
    Template("official-goats", "dev", "The {e} of Ostervald keeps a herd of {v} goats.",
             "How many goats does the {e} of Ostervald keep?", "What is the size of the {e} of Ostervald's flock?",
             lambda r: r.choice(_TITLES), _int(5, 900, sep=False), number=True, collective="officials of Ostervald", measure="herd"),
    Template("banner-device", "dev", "The {e} banner bears the device of {v}.",
             "What device does the {e} banner bear?", "Which emblem is shown on the {e} flag?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("a silver stag", "three golden keys", "a black tower",
                                                                 "a crescent moon", "a red griffin", "two crossed oars")),
             collective="banners", measure="device"),
    Template("reservoir-height", "dev", "The {e} reservoir lies {v} metres above the sea.",
             "How high above the sea does the {e} reservoir lie?", "At what altitude is the {e} water store?",
             made_up_name, lambda r: f"{r.randint(100, 2000)}.{r.randint(1, 9)}", number=True, collective="reservoirs", measure="height above the sea"),
    Template("lighthouse-pattern", "dev", "The {e} lighthouse flashes the pattern {v} every night.",
             "Which pattern does the {e} lighthouse flash?", "What light signal does the {e} beacon show after dark?",
             made_up_name, lambda r: f"{r.choice(('Fl', 'Oc', 'Iso'))}({r.randint(2, 5)}) {r.randint(5, 30)}s", collective="lighthouses", measure="light pattern"),
    Template("tannery-springs", "dev", "The {e} tannery draws its water from the springs of {v}.",
             "From which springs does the {e} tannery draw its water?", "Where does the {e} leather works get its water?",
             made_up_name, made_up_name, collective="tanneries", measure="water source"),
    # Session 49's test split (written before any run of them; run once in session 49, then moved to dev): an apiary's honey in pounds,
    # the person who hands out alms at an almonry (the entity inside a prepositional phrase), a tramway's
    # stops, the date a fire gutted a guildhall (the event first), a titled official's rent in crowns, a
    # carriage's paint (named by colour, a phrase), a bathhouse pool's temperature (a decimal), a
    # warehouse's lot mark (a code), and the forest a sawmill floats its timber down from (a place).
    Template("apiary-honey", "dev", "The {e} apiary gathered {v} pounds of honey this summer.",
             "How many pounds of honey did the {e} apiary gather this summer?", "What weight of honey came from the {e} beehives this summer?",
             made_up_name, _int(40, 6_000), number=True, collective="apiaries", measure="honey gathered"),
    Template("almonry-almoner", "dev", "Alms at the {e} almonry are handed out by {v}.",
             "Who hands out alms at the {e} almonry?", "Which person distributes charity at the {e} poorhouse?",
             made_up_name, person_name, collective="almonries", measure="almoner"),
    Template("tramway-stops", "dev", "The {e} tramway serves {v} stops between its two depots.",
             "How many stops does the {e} tramway serve between its two depots?", "At how many places does the {e} streetcar line halt?",
             made_up_name, _int(3, 120, sep=False), number=True, collective="tramways", measure="number of stops"),
    Template("guildhall-fire", "dev", "A fire gutted the {e} guildhall on {v}.",
             "On what date did a fire gut the {e} guildhall?", "When did flames destroy the {e} hall of the merchants?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('February', 'May', 'August', 'November'))} {r.randint(1600, 1950)}",
             collective="guildhalls", measure="date of the fire"),
    Template("official-rent", "dev", "The {e} of Kessary pays a rent of {v} crowns a year.",
             "What rent does the {e} of Kessary pay a year?", "How much does the {e} of Kessary owe the landlord each year?",
             lambda r: r.choice(_TITLES), _int(20, 3_000), number=True, collective="officials of Kessary", measure="rent"),
    Template("carriage-paint", "dev", "The {e} carriage is painted in {v}.",
             "What is the {e} carriage painted in?", "Which colours does the {e} coach wear?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("green and gold", "black lacquer", "royal blue", "cream with red trim",
                                                                 "plain walnut", "silver leaf")),
             collective="carriages", measure="paint"),
    Template("bathhouse-pool", "dev", "The hot pool of the {e} bathhouse is kept at {v} degrees.",
             "At what temperature is the hot pool of the {e} bathhouse kept?", "How warm is the water in the {e} baths?",
             made_up_name, lambda r: f"{r.randint(30, 45)}.{r.randint(1, 9)}", number=True, collective="bathhouses", measure="pool temperature"),
    Template("warehouse-lot", "dev", "Bales from the {e} warehouse are stamped with the lot mark {v}.",
             "Which lot mark are bales from the {e} warehouse stamped with?", "What label identifies the bundles stored at the {e} depot?",
             made_up_name, lambda r: f"{r.choice('MNPW')}{r.randint(10, 99)}{r.choice('ACEG')}", collective="warehouses", measure="lot mark"),
    Template("sawmill-forest", "dev", "The {e} sawmill floats its timber down from the forest of {v}.",
             "From which forest does the {e} sawmill float its timber down?", "Where do the logs cut at the {e} lumber yard come from?",
             made_up_name, made_up_name, collective="sawmills", measure="timber source"),
    # Session 50's test split (written before any run of them; run once in session 50, then moved to dev): a ropewalk's weekly rope in
    # fathoms, who signs a customs house's ledgers (the entity inside a possessive phrase), the date the
    # first train reached a junction (the event first), a belfry's repair bill in pounds sterling, a
    # parlour's wallpaper (named by colour, a phrase), a weir's winter depth (a decimal), a cannery's batch
    # number (a code), the market town drovers take their cattle to (a place), and a titled official's
    # hounds.
    Template("ropewalk-rope", "dev", "The {e} ropewalk turns out {v} fathoms of rope a week.",
             "How many fathoms of rope does the {e} ropewalk turn out a week?", "What length of cordage does the {e} rope works make each week?",
             made_up_name, _int(150, 9_000), number=True, collective="ropewalks", measure="weekly rope"),
    Template("customs-signer", "dev", "The ledgers of the {e} customs house are signed by {v}.",
             "Who signs the ledgers of the {e} customs house?", "Which official puts a name to the account books at the {e} tax office?",
             made_up_name, person_name, collective="customs houses", measure="signer of the ledgers"),
    Template("junction-train", "dev", "The first train reached the {e} junction on {v}.",
             "On what date did the first train reach the {e} junction?", "When did a railway engine first arrive where the lines meet at {e}?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('April', 'July', 'September', 'December'))} {r.randint(1830, 1930)}",
             collective="junctions", measure="date of the first train"),
    Template("belfry-repairs", "dev", "Repairs to the {e} belfry cost £{v}.",
             "How much did repairs to the {e} belfry cost?", "What was the bill for mending the {e} bell tower?",
             made_up_name, _int(300, 48_000), number=True, collective="belfries", measure="repair cost"),
    Template("parlour-paper", "dev", "The {e} parlour is papered with {v}.",
             "What is the {e} parlour papered with?", "Which wallpaper covers the walls of the {e} sitting room?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("green damask", "printed peacocks", "striped silk", "hand-painted birds",
                                                                 "plain linen", "gilded lilies")),
             collective="parlours", measure="wallpaper"),
    Template("weir-depth", "dev", "The water at the {e} weir runs {v} metres deep in winter.",
             "How deep does the water at the {e} weir run in winter?", "What depth does the river reach at the {e} barrier in the cold months?",
             made_up_name, lambda r: f"{r.randint(1, 9)}.{r.randint(1, 9)}", number=True, collective="weirs", measure="winter depth"),
    Template("cannery-batch", "dev", "Crates leaving the {e} cannery bear the batch number {v}.",
             "What batch number do crates leaving the {e} cannery bear?", "Which code is printed on the boxes shipped from the {e} tin factory?",
             made_up_name, lambda r: f"{r.choice('BCLT')}{r.choice('RSU')}/{r.randint(100, 999)}", collective="canneries", measure="batch number"),
    Template("drovers-market", "dev", "The {e} drovers drive their cattle to market at {v}.",
             "To which market do the {e} drovers drive their cattle?", "Where do the herdsmen of {e} take their cows to sell?",
             made_up_name, made_up_name, collective="drovers", measure="market town"),
    Template("official-hounds", "dev", "The {e} of Tollemarch rides to the hunt with {v} hounds.",
             "With how many hounds does the {e} of Tollemarch ride to the hunt?", "How big is the pack the {e} of Tollemarch takes hunting?",
             lambda r: r.choice(_TITLES), _int(4, 90, sep=False), number=True, collective="officials of Tollemarch", measure="hounds"),
    # Session 50's second test split (written before any run of them; run in session 50, then moved to
    # dev): a cooperage's barrels, who mixes a dispensary's medicines, the date a storm flooded docks
    # (the event first), a share's price in guilders, a gondola's upholstery (named by colour, a phrase),
    # a brine lake's salinity (a decimal), a post office's franking mark (a code), the shrine pilgrims
    # set out for (a place), and a titled official's footmen.
    Template("cooperage-barrels", "dev", "The {e} cooperage made {v} barrels last winter.",
             "How many barrels did the {e} cooperage make last winter?", "What number of casks came out of the {e} barrel works last winter?",
             made_up_name, _int(120, 7_500), number=True, collective="cooperages", measure="barrels made"),
    Template("dispensary-chemist", "dev", "Medicines at the {e} dispensary are mixed by {v}.",
             "Who mixes the medicines at the {e} dispensary?", "Which chemist prepares the remedies at the {e} pharmacy?",
             made_up_name, person_name, collective="dispensaries", measure="chemist"),
    Template("docks-storm", "dev", "A great storm flooded the {e} docks on {v}.",
             "On what date did a great storm flood the {e} docks?", "When was the {e} wharf swamped by the tempest?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('January', 'March', 'October', 'November'))} {r.randint(1700, 1950)}",
             collective="docks", measure="date of the storm"),
    Template("syndicate-share", "dev", "A share in the {e} whaling syndicate sold for {v} guilders.",
             "For how much did a share in the {e} whaling syndicate sell?", "What price did one stake in the {e} whale-hunting venture fetch?",
             made_up_name, _int(80, 25_000), number=True, collective="whaling syndicates", measure="share price"),
    Template("gondola-upholstery", "dev", "The {e} gondola is upholstered in {v}.",
             "What is the {e} gondola upholstered in?", "Which fabric covers the seats of the {e} boat?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("red velvet", "black leather", "gold brocade", "blue plush",
                                                                 "green felt", "white linen")),
             collective="gondolas", measure="upholstery"),
    Template("brine-salinity", "dev", "The {e} brine lake has a salinity of {v} percent.",
             "What is the salinity of the {e} brine lake?", "How salty is the water of the {e} salt lake?",
             made_up_name, lambda r: f"{r.randint(3, 30)}.{r.randint(1, 9)}", number=True, collective="brine lakes", measure="salinity"),
    Template("postoffice-frank", "dev", "Parcels posted at the {e} post office are franked {v}.",
             "How are parcels posted at the {e} post office franked?", "Which stamp marks the packages sent from the {e} mail counter?",
             made_up_name, lambda r: f"PO-{r.choice('DGHK')}{r.randint(10, 99)}", collective="post offices", measure="franking mark"),
    Template("pilgrims-shrine", "dev", "The {e} pilgrims set out each spring for the shrine at {v}.",
             "For which shrine do the {e} pilgrims set out each spring?", "Where do the worshippers of {e} travel to every spring?",
             made_up_name, made_up_name, collective="pilgrim bands", measure="shrine"),
    Template("official-footmen", "dev", "The {e} of Brackwater employs {v} footmen.",
             "How many footmen does the {e} of Brackwater employ?", "How many liveried servants wait on the {e} of Brackwater?",
             lambda r: r.choice(_TITLES), _int(2, 60, sep=False), number=True, collective="officials of Brackwater", measure="footmen"),
    # Session 51's test split (written before any run of them; run twice in session 51, then moved to
    # dev): a hatchery's eggs, who shoes a smithy's horses, the date a siege ended (the event first), a
    # tollgate's takings in ducats, a sleigh's harness (named by colour, a phrase), a hot spring's pH (a
    # decimal), a powder magazine's keg stamp (a code), the summer pasture shepherds take their flocks to
    # (a place), and a titled official's hawks.
    Template("hatchery-eggs", "dev", "The {e} hatchery hatched {v} eggs this season.",
             "How many eggs did the {e} hatchery hatch this season?", "What number of chicks came out of the {e} incubation house this season?",
             made_up_name, _int(200, 12_000), number=True, collective="hatcheries", measure="eggs hatched"),
    Template("smithy-farrier", "dev", "Horses at the {e} smithy are shod by {v}.",
             "Who shoes the horses at the {e} smithy?", "Which blacksmith fits the horseshoes at the {e} forge?",
             made_up_name, person_name, collective="smithies", measure="farrier"),
    Template("fortress-siege", "dev", "The siege of the {e} fortress ended on {v}.",
             "On what date did the siege of the {e} fortress end?", "When was the blockade of the {e} stronghold lifted?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('February', 'May', 'August', 'December'))} {r.randint(1500, 1850)}",
             collective="fortresses", measure="date the siege ended"),
    Template("tollgate-takings", "dev", "The {e} tollgate took in {v} ducats last year.",
             "How much did the {e} tollgate take in last year?", "What were last year's receipts at the {e} turnpike?",
             made_up_name, _int(90, 30_000), number=True, collective="tollgates", measure="takings"),
    Template("sleigh-harness", "dev", "The {e} sleigh is harnessed with {v}.",
             "What is the {e} sleigh harnessed with?", "Which tack is fitted to the {e} sledge?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("silver bells", "red leather straps", "brass buckles", "plaited rope",
                                                                 "black webbing", "woven ribbons")),
             collective="sleighs", measure="harness"),
    Template("spring-ph", "dev", "The {e} hot spring bubbles up at a pH of {v}.",
             "What is the pH of the {e} hot spring?", "How acidic is the water of the {e} geyser pool?",
             made_up_name, lambda r: f"{r.randint(2, 8)}.{r.randint(1, 9)}", number=True, collective="hot springs", measure="pH"),
    Template("magazine-keg", "dev", "Kegs from the {e} powder magazine are stamped {v}.",
             "What are kegs from the {e} powder magazine stamped?", "Which mark is printed on the barrels kept at the {e} gunpowder store?",
             made_up_name, lambda r: f"{r.choice('FJRV')}{r.randint(1, 9)}-{r.randint(100, 999)}", collective="powder magazines", measure="keg stamp"),
    Template("shepherds-pasture", "dev", "The {e} shepherds take their flocks to summer pasture at {v}.",
             "Where do the {e} shepherds take their flocks to summer pasture?", "To which upland grazing do the herders of {e} move their sheep in summer?",
             made_up_name, made_up_name, collective="shepherds' bands", measure="summer pasture"),
    Template("official-hawks", "dev", "The {e} of Quillmere keeps {v} hawks.",
             "How many hawks does the {e} of Quillmere keep?", "How large is the mews of birds of prey the {e} of Quillmere maintains?",
             lambda r: r.choice(_TITLES), _int(2, 70, sep=False), number=True, collective="officials of Quillmere", measure="hawks"),
    # Session 51's second test split (written before any run of them; run twice in session 51, then moved
    # to dev): a creamery's cheeses, who cuts a chancery's seals, the date a mill pond froze (the event
    # first), a racecourse's prize money in crowns, a bedchamber's hangings (named by colour, a phrase),
    # a pendulum clock's daily loss (a decimal), a freight line's wagon number (a code), where merchants
    # winter their caravans (a place), and a titled official's Sunday beggars.
    Template("creamery-cheeses", "dev", "The {e} creamery pressed {v} cheeses in the spring.",
             "How many cheeses did the {e} creamery press in the spring?", "What number of wheels did the {e} dairy turn out in spring?",
             made_up_name, _int(150, 9_500), number=True, collective="creameries", measure="cheeses pressed"),
    Template("chancery-seals", "dev", "Seals at the {e} chancery are cut by {v}.",
             "Who cuts the seals at the {e} chancery?", "Which engraver makes the stamps of the {e} records office?",
             made_up_name, person_name, collective="chanceries", measure="seal cutter"),
    Template("millpond-frost", "dev", "The {e} mill pond froze solid on {v}.",
             "On what date did the {e} mill pond freeze solid?", "When did the water behind the {e} mill turn to ice?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('January', 'February', 'November', 'December'))} {r.randint(1600, 1900)}",
             collective="mill ponds", measure="date it froze"),
    Template("racecourse-prizes", "dev", "The {e} racecourse paid out {v} crowns in prizes.",
             "How much did the {e} racecourse pay out in prizes?", "What was the purse offered at the {e} horse-racing track?",
             made_up_name, _int(100, 40_000), number=True, collective="racecourses", measure="prize money"),
    Template("bedchamber-hangings", "dev", "The {e} bedchamber is hung with {v}.",
             "What is the {e} bedchamber hung with?", "Which drapes cover the walls of the {e} sleeping room?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("blue tapestries", "gold curtains", "embroidered silk", "faded velvet",
                                                                 "plain muslin", "heavy damask")),
             collective="bedchambers", measure="hangings"),
    Template("pendulum-loss", "dev", "The {e} pendulum clock loses {v} seconds a day.",
             "How many seconds a day does the {e} pendulum clock lose?", "By how much does the {e} long-case timepiece fall behind each day?",
             made_up_name, lambda r: f"{r.randint(1, 9)}.{r.randint(1, 9)}", number=True, collective="pendulum clocks", measure="daily loss"),
    Template("freight-wagon", "dev", "Wagons of the {e} freight line carry the number {v}.",
             "What number do wagons of the {e} freight line carry?", "Which identifier is painted on the trucks of the {e} goods railway?",
             made_up_name, lambda r: f"{r.choice('GKMT')}{r.choice('AEU')}-{r.randint(10, 99)}{r.choice('XYZ')}", collective="freight lines", measure="wagon number"),
    Template("merchants-winter", "dev", "The {e} merchants winter their caravans at {v}.",
             "Where do the {e} merchants winter their caravans?", "In which place do the traders of {e} keep their wagon trains in the cold season?",
             made_up_name, made_up_name, collective="merchant companies", measure="winter quarters"),
    Template("official-beggars", "dev", "The {e} of Dunmarrow feeds {v} beggars each Sunday.",
             "How many beggars does the {e} of Dunmarrow feed each Sunday?", "How many of the poor get a meal from the {e} of Dunmarrow on Sundays?",
             lambda r: r.choice(_TITLES), _int(3, 80, sep=False), number=True, collective="officials of Dunmarrow", measure="beggars fed"),
    # Session 51's third test split (written before any run of them; run once in session 51, then moved to
    # dev): a tannery's hides, who trims a topiary garden, the date a lock gate burst (the event
    # first), a salvage crew's reward in marks, a barge's awning (named by colour, a phrase), a wine
    # cellar's humidity (a decimal), a quarantine station's pass (a code), where charcoal burners sell
    # their charcoal (a place), and a titled official's trumpeters.
    Template("tannery-hides", "dev", "The {e} tannery cured {v} hides over the summer.",
             "How many hides did the {e} tannery cure over the summer?", "What number of skins did the {e} leather works treat during the summer?",
             made_up_name, _int(130, 8_800), number=True, collective="tanneries", measure="hides cured"),
    Template("topiary-gardener", "dev", "The hedges of the {e} topiary garden are trimmed by {v}.",
             "Who trims the hedges of the {e} topiary garden?", "Which groundsman clips the shaped bushes at the {e} ornamental grounds?",
             made_up_name, person_name, collective="topiary gardens", measure="hedge trimmer"),
    Template("lockgate-burst", "dev", "The {e} lock gate burst on {v}.",
             "On what date did the {e} lock gate burst?", "When did the sluice barrier at {e} give way?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('March', 'April', 'September', 'October'))} {r.randint(1650, 1920)}",
             collective="lock gates", measure="date it burst"),
    Template("salvage-reward", "dev", "The {e} salvage crew was paid a reward of {v} marks.",
             "What reward was the {e} salvage crew paid?", "How much did the wreck-recovery team of {e} receive for its work?",
             made_up_name, _int(60, 35_000), number=True, collective="salvage crews", measure="reward"),
    Template("barge-awning", "dev", "The {e} barge is shaded by {v}.",
             "What is the {e} barge shaded by?", "Which canopy covers the deck of the {e} river boat?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("a striped canvas awning", "green oilcloth", "a patched sail",
                                                                 "red bunting", "woven reeds", "a tarred tarpaulin")),
             collective="barges", measure="awning"),
    Template("cellar-humidity", "dev", "The {e} wine cellar is kept at {v} percent humidity.",
             "At what humidity is the {e} wine cellar kept?", "How damp is the air in the {e} vault where the wine is stored?",
             made_up_name, lambda r: f"{r.randint(50, 90)}.{r.randint(1, 9)}", number=True, collective="wine cellars", measure="humidity"),
    Template("quarantine-pass", "dev", "Sailors leaving the {e} quarantine station carry the pass {v}.",
             "Which pass do sailors leaving the {e} quarantine station carry?", "What permit do seamen released from the {e} isolation post hold?",
             made_up_name, lambda r: f"Q{r.randint(100, 999)}-{r.choice('HLNR')}{r.choice('AEIO')}", collective="quarantine stations", measure="pass"),
    Template("charcoal-market", "dev", "The {e} charcoal burners sell their charcoal at {v}.",
             "Where do the {e} charcoal burners sell their charcoal?", "At which town do the colliers of the {e} woods trade their fuel?",
             made_up_name, made_up_name, collective="charcoal burners' bands", measure="market"),
    Template("official-trumpeters", "dev", "The {e} of Welkenbrae keeps {v} trumpeters.",
             "How many trumpeters does the {e} of Welkenbrae keep?", "How many horn players serve the {e} of Welkenbrae?",
             lambda r: r.choice(_TITLES), _int(2, 40, sep=False), number=True, collective="officials of Welkenbrae", measure="trumpeters"),
    # Session 52's test split (written before any run of them, every noun checked absent from dev's
    # templates; run once in session 52, then moved to dev): a chandlery's candles, who weaves a weaving
    # hall's tapestries, the date an ice fair opened (the event first), a cider mill's sale in guilders,
    # how a cutter is rigged (named by colour, a phrase), a windmill's sail speed (a decimal), a pottery's
    # brand (a code with a slash), where fishermen land their catch (a place), and a titled official's clerks.
    Template("chandlery-candles", "dev", "The {e} chandlery dipped {v} candles before the feast.",
             "How many candles did the {e} chandlery dip before the feast?", "What number of tapers did the {e} wax works make ahead of the banquet?",
             made_up_name, _int(110, 7_700), number=True, collective="chandleries", measure="candles dipped"),
    Template("hall-weaver", "dev", "The tapestries of the {e} weaving hall are woven by {v}.",
             "Who weaves the tapestries of the {e} weaving hall?", "Which craftswoman makes the wall hangings at the {e} loom house?",
             made_up_name, person_name, collective="weaving halls", measure="weaver"),
    Template("icefair-opening", "dev", "The {e} ice fair opened on {v}.",
             "On what date did the {e} ice fair open?", "When did the frost festival at {e} begin?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('January', 'February', 'December'))} {r.randint(1600, 1850)}",
             collective="ice fairs", measure="opening date"),
    Template("cidermill-sale", "dev", "The {e} cider mill sold its autumn pressing for {v} guilders.",
             "For how much did the {e} cider mill sell its autumn pressing?", "What did the {e} apple-juice works earn for the fall's yield?",
             made_up_name, _int(70, 26_000), number=True, collective="cider mills", measure="sale price"),
    Template("cutter-rig", "dev", "The {e} cutter is rigged with {v}.",
             "What is the {e} cutter rigged with?", "Which canvas does the {e} sailing vessel carry?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("two square sails", "a single lugsail", "a gaff mainsail",
                                                                 "three jibs", "a patched spritsail", "a tan mainsail and jib")),
             collective="cutters", measure="rig"),
    Template("windmill-sails", "dev", "The sails of the {e} windmill turn at {v} revolutions a minute.",
             "At how many revolutions a minute do the sails of the {e} windmill turn?", "How fast does the {e} wind-driven grain mill spin its vanes?",
             made_up_name, lambda r: f"{r.randint(8, 20)}.{r.randint(1, 9)}", number=True, collective="windmills", measure="sail speed"),
    Template("pottery-brand", "dev", "Crates from the {e} potteries are branded {v}.",
             "How are crates from the {e} potteries branded?", "Which mark is burned into the boxes shipped by the {e} ceramics works?",
             made_up_name, lambda r: f"K{r.randint(10, 99)}/{r.choice('BDGT')}{r.randint(1, 9)}", collective="potteries", measure="brand"),
    Template("fishermen-landing", "dev", "The {e} fishermen land their catch at {v}.",
             "Where do the {e} fishermen land their catch?", "At which harbour do the anglers of {e} bring in their haul?",
             made_up_name, made_up_name, collective="fishing crews", measure="landing place"),
    Template("official-clerks", "dev", "The {e} of Brindlemoor employs {v} clerks.",
             "How many clerks does the {e} of Brindlemoor employ?", "How many scribes work for the {e} of Brindlemoor?",
             lambda r: r.choice(_TITLES), _int(2, 60, sep=False), number=True, collective="officials of Brindlemoor", measure="clerks"),
    # Session 52's second test split (written before any run of them, every noun checked absent from dev's
    # templates; run once in session 52, then moved to dev): a smelter's copper ingots, who audits an orphanage's
    # accounts, the date a dyke was breached (the event first), what kennels were sold for in thalers, what
    # a kite is strung with (named by colour, a phrase), how pure an assay office found the silver (a
    # decimal), a saddlery's maker's mark (a code), where woodcutters haul their logs (a place), and a
    # titled official's lamplighters.
    Template("smelter-ingots", "dev", "The {e} smelter poured {v} ingots of copper last year.",
             "How many ingots of copper did the {e} smelter pour last year?", "What number of metal bars did the {e} ore works cast last year?",
             made_up_name, _int(140, 9_300), number=True, collective="smelters", measure="ingots poured"),
    Template("orphanage-auditor", "dev", "The accounts of the {e} orphanage are audited by {v}.",
             "Who audits the accounts of the {e} orphanage?", "Which bookkeeper checks the books of the {e} children's home?",
             made_up_name, person_name, collective="orphanages", measure="auditor"),
    Template("dyke-breach", "dev", "The {e} dyke was breached on {v}.",
             "On what date was the {e} dyke breached?", "When did the {e} sea wall give way?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('May', 'July', 'November'))} {r.randint(1500, 1800)}",
             collective="dykes", measure="date of the breach"),
    Template("kennels-sale", "dev", "The {e} kennels were sold for {v} thalers.",
             "For how much were the {e} kennels sold?", "What price did the {e} hound stables fetch?",
             made_up_name, _int(80, 31_000), number=True, collective="kennels", measure="sale price"),
    Template("kite-string", "dev", "The {e} kite is strung with {v}.",
             "What is the {e} kite strung with?", "What line holds the {e} paper flyer?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("waxed linen thread", "braided horsehair", "a silk cord",
                                                                 "hemp twine", "fine copper wire", "gut string")),
             collective="kites", measure="string"),
    Template("assay-purity", "dev", "The {e} assay office found the silver {v} percent pure.",
             "How pure did the {e} assay office find the silver?", "What fineness did the {e} metal testers report for the silver?",
             made_up_name, lambda r: f"{r.randint(80, 99)}.{r.randint(1, 9)}", number=True, collective="assay offices", measure="purity"),
    Template("saddlery-mark", "dev", "Saddles from the {e} saddlery carry the maker's mark {v}.",
             "Which maker's mark do saddles from the {e} saddlery carry?", "What stamp is pressed into the leather seats made by the {e} tack shop?",
             made_up_name, lambda r: f"S{r.randint(1, 9)}{r.choice('XYZ')}-{r.randint(10, 99)}", collective="saddleries", measure="maker's mark"),
    Template("woodcutters-haul", "dev", "The {e} woodcutters haul their logs to {v}.",
             "Where do the {e} woodcutters haul their logs?", "To which town do the foresters of {e} drag their timber?",
             made_up_name, made_up_name, collective="woodcutters' gangs", measure="destination"),
    Template("official-lamplighters", "dev", "The {e} of Ostravel keeps {v} lamplighters.",
             "How many lamplighters does the {e} of Ostravel keep?", "How many men light the street lamps for the {e} of Ostravel?",
             lambda r: r.choice(_TITLES), _int(2, 50, sep=False), number=True, collective="officials of Ostravel", measure="lamplighters"),
    # Session 52's third test split (written before any run of them and before the change that followed
    # its second split was made, every noun checked absent from dev's templates; run once in session 52,
    # then moved to dev): a bakery's loaves, who mixes an apothecary's tinctures, the date a quay collapsed
    # (the event first), a bindery's charge in groats, what a pantry is stocked with (named by colour, a
    # phrase), an optician's lens thickness (a decimal), a shearing shed's bale tag (a code with a point),
    # where scriveners send their parchments (a place), and a titled official's cobblers.
    Template("bakery-loaves", "dev", "The {e} bakery baked {v} loaves for the wedding.",
             "How many loaves did the {e} bakery bake for the wedding?", "What number of breads came out of the {e} bread oven for the nuptials?",
             made_up_name, _int(120, 6_600), number=True, collective="bakeries", measure="loaves baked"),
    Template("apothecary-mixer", "dev", "Tinctures at the {e} apothecary are mixed by {v}.",
             "Who mixes the tinctures at the {e} apothecary?", "Which chemist prepares the remedies sold by the {e} drug shop?",
             made_up_name, person_name, collective="apothecaries", measure="tincture mixer"),
    Template("quay-collapse", "dev", "The {e} quay collapsed on {v}.",
             "On what date did the {e} quay collapse?", "When did the {e} landing stage fall into the water?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('February', 'June', 'August'))} {r.randint(1550, 1880)}",
             collective="quays", measure="date of the collapse"),
    Template("bindery-charge", "dev", "The {e} bindery charged {v} groats for the hymnals.",
             "How much did the {e} bindery charge for the hymnals?", "What fee did the {e} book-covering workshop ask for the song books?",
             made_up_name, _int(50, 24_000), number=True, collective="binderies", measure="charge"),
    Template("pantry-stock", "dev", "The {e} pantry is stocked with {v}.",
             "What is the {e} pantry stocked with?", "Which provisions fill the {e} larder?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("smoked hams", "pickled herring", "jars of plum jam",
                                                                 "sacks of barley", "wheels of cheese", "dried figs")),
             collective="pantries", measure="stock"),
    Template("optician-lenses", "dev", "The {e} optician grinds lenses {v} millimetres thick.",
             "How thick does the {e} optician grind lenses?", "What thickness are the eyeglasses made by the {e} spectacle maker?",
             made_up_name, lambda r: f"{r.randint(1, 9)}.{r.randint(1, 9)}", number=True, collective="opticians", measure="lens thickness"),
    Template("shed-bales", "dev", "Bales from the {e} shearing shed are tagged {v}.",
             "How are bales from the {e} shearing shed tagged?", "Which label marks the wool packs leaving the {e} fleece barn?",
             made_up_name, lambda r: f"W{r.randint(100, 999)}.{r.choice('CFJP')}", collective="shearing sheds", measure="bale tag"),
    Template("scriveners-parchments", "dev", "The {e} scriveners send their parchments to {v}.",
             "Where do the {e} scriveners send their parchments?", "To which town do the copyists of {e} dispatch their documents?",
             made_up_name, made_up_name, collective="scriveners' guilds", measure="destination"),
    Template("official-cobblers", "dev", "The {e} of Crosswater retains {v} cobblers.",
             "How many cobblers does the {e} of Crosswater retain?", "How many shoemakers work for the {e} of Crosswater?",
             lambda r: r.choice(_TITLES), _int(2, 45, sep=False), number=True, collective="officials of Crosswater", measure="cobblers"),
    # Session 53's test split (written before any run of them and before any change of the session, every
    # noun checked absent from dev's templates; run once in session 53, then moved to dev): a tile works'
    # tiles, who guards a citadel's gates, the date a chapel was consecrated (the event first), what an
    # alehouse was sold for in sovereigns, what a market stall sells (named by colour, a phrase), how high
    # a balloon rose (a decimal), the ring code of a pigeon loft's birds (letters then digits), where
    # peddlers carry their wares (a place), and a titled official's stonemasons.
    Template("tileworks-tiles", "dev", "The {e} tile works fired {v} tiles for the new schoolhouse.",
             "How many tiles did the {e} tile works fire for the new schoolhouse?", "What number of baked clay slabs did the {e} kiln yard make for the fresh school building?",
             made_up_name, _int(130, 8_400), number=True, collective="tile works", measure="tiles fired"),
    Template("citadel-guard", "dev", "The gates of the {e} citadel are guarded by {v}.",
             "Who guards the gates of the {e} citadel?", "Which sentry watches the entrance to the {e} stronghold?",
             made_up_name, person_name, collective="citadels", measure="gate guard"),
    Template("chapel-consecration", "dev", "The {e} chapel was consecrated on {v}.",
             "On what date was the {e} chapel consecrated?", "When was the small church at {e} blessed for worship?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('March', 'April', 'October'))} {r.randint(1450, 1820)}",
             collective="chapels", measure="date of consecration"),
    Template("alehouse-sale", "dev", "The {e} alehouse changed hands for {v} sovereigns.",
             "For how much did the {e} alehouse change hands?", "What price did the {e} beer parlour fetch when it was sold?",
             made_up_name, _int(60, 19_000), number=True, collective="alehouses", measure="sale price"),
    Template("stall-goods", "dev", "The {e} stall sells {v}.",
             "What does the {e} stall sell?", "Which goods are offered at the {e} market booth?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("woollen mittens", "tin whistles", "gingerbread men",
                                                                 "brass buttons", "pewter spoons", "rag dolls")),
             collective="stalls", measure="goods"),
    Template("balloon-ascent", "dev", "The {e} balloon rose to {v} kilometres above the fields.",
             "To how many kilometres did the {e} balloon rise?", "What height did the {e} hot-air craft reach over the meadows?",
             made_up_name, lambda r: f"{r.randint(1, 7)}.{r.randint(1, 9)}", number=True, collective="balloons", measure="height reached"),
    Template("loft-rings", "dev", "Pigeons from the {e} loft wear rings marked {v}.",
             "Which marking is on the rings worn by pigeons from the {e} loft?", "What code identifies the birds raised in the {e} dovecote?",
             made_up_name, lambda r: f"{r.choice('BKTV')}{r.choice('DLMS')}{r.randint(100, 999)}", collective="pigeon lofts", measure="ring marking"),
    Template("peddlers-wares", "dev", "The {e} peddlers carry their wares to {v}.",
             "Where do the {e} peddlers carry their wares?", "To which town do the travelling sellers of {e} bring their goods?",
             made_up_name, made_up_name, collective="peddlers' bands", measure="destination"),
    Template("official-stonemasons", "dev", "The {e} of Ketterfold pays {v} stonemasons.",
             "How many stonemasons does the {e} of Ketterfold pay?", "How many builders in stone work for the {e} of Ketterfold?",
             lambda r: r.choice(_TITLES), _int(2, 55, sep=False), number=True, collective="officials of Ketterfold", measure="stonemasons"),
    # Session 53's second test split (written before any run of them and before the session's first change
    # was committed, every noun checked absent from dev's templates; run once in session 53, then moved to
    # dev): a printworks' pamphlets, who paints a playhouse's scenery, the date a gasworks exploded (the
    # event first), what a haberdashery was bought for in livres, what a stove burns (named by colour, a
    # phrase), how far a watchtower leans (a decimal), a flour mill's stencil on its bags (a code with a
    # slash), where tinsmiths sell their pans (a place), and a titled official's ostlers.
    Template("printworks-pamphlets", "dev", "The {e} printworks ran off {v} pamphlets for the election.",
             "How many pamphlets did the {e} printworks run off for the election?", "What number of leaflets did the {e} press shop produce for the vote?",
             made_up_name, _int(150, 9_900), number=True, collective="printworks", measure="pamphlets run off"),
    Template("playhouse-scenery", "dev", "The scenery of the {e} playhouse is painted by {v}.",
             "Who paints the scenery of the {e} playhouse?", "Which artist decorates the stage backdrops of the {e} music hall?",
             made_up_name, person_name, collective="playhouses", measure="scene painter"),
    Template("gasworks-explosion", "dev", "The {e} gasworks exploded on {v}.",
             "On what date did the {e} gasworks explode?", "When did the blast at the {e} gas plant happen?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('January', 'September', 'December'))} {r.randint(1812, 1899)}",
             collective="gasworks", measure="date of the explosion"),
    Template("haberdashery-purchase", "dev", "The {e} haberdashery was bought for {v} livres.",
             "For how much was the {e} haberdashery bought?", "What did the buyer pay for the {e} sewing-goods shop?",
             made_up_name, _int(90, 27_000), number=True, collective="haberdasheries", measure="purchase price"),
    Template("stove-fuel", "dev", "The {e} stove burns {v}.",
             "What does the {e} stove burn?", "What is fed into the {e} hearth to keep it going?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("peat turves", "beech logs", "pine cones",
                                                                 "dried dung", "sea coal", "tallow scraps")),
             collective="stoves", measure="fuel"),
    Template("watchtower-lean", "dev", "The {e} watchtower leans {v} degrees to the east.",
             "How many degrees does the {e} watchtower lean to the east?", "By what angle does the {e} lookout post tilt eastward?",
             made_up_name, lambda r: f"{r.randint(1, 6)}.{r.randint(1, 9)}", number=True, collective="watchtowers", measure="lean"),
    Template("flourmill-stencil", "dev", "Bags from the {e} flour mill are stencilled {v}.",
             "How are bags from the {e} flour mill stencilled?", "Which lettering is painted on the sacks leaving the {e} grain grinder?",
             made_up_name, lambda r: f"F{r.randint(10, 99)}/{r.choice('MNRW')}{r.choice('AEU')}", collective="flour mills", measure="stencil"),
    Template("tinsmiths-pans", "dev", "The {e} tinsmiths sell their pans at {v}.",
             "Where do the {e} tinsmiths sell their pans?", "In which town do the metalworkers of {e} market their cookware?",
             made_up_name, made_up_name, collective="tinsmiths' workshops", measure="market town"),
    Template("official-ostlers", "dev", "The {e} of Oxmeade feeds {v} ostlers.",
             "How many ostlers does the {e} of Oxmeade feed?", "How many stable hands eat at the table of the {e} of Oxmeade?",
             lambda r: r.choice(_TITLES), _int(2, 48, sep=False), number=True, collective="officials of Oxmeade", measure="ostlers"),
    # Session 54's test split (written before any run of them and before any change of the session, every
    # noun checked absent from dev's templates; run once in session 54, then moved to dev): an umbrella works' umbrellas, who trains a
    # circus's ponies, the date a bandstand burned (the event first), what a snuff mill sold for in
    # guineas, what a hamper holds (named by colour, a phrase), how far a chimney sways (a decimal), a
    # luggage maker's stamp on its trunks (digits, a letter, digits), where tinkers mend their pots (a
    # place), and a titled official's falconers.
    Template("umbrellaworks-umbrellas", "dev", "The {e} umbrella works stitched {v} umbrellas for the railway.",
             "How many umbrellas did the {e} umbrella works stitch for the railway?", "What number of parasols did the {e} rain-gear factory sew for the train company?",
             made_up_name, _int(140, 9_600), number=True, collective="umbrella works", measure="umbrellas stitched"),
    Template("circus-ponies", "dev", "The ponies of the {e} circus are trained by {v}.",
             "Who trains the ponies of the {e} circus?", "Which handler schools the small horses of the {e} big top?",
             made_up_name, person_name, collective="circuses", measure="pony trainer"),
    Template("bandstand-fire", "dev", "The {e} bandstand burned down on {v}.",
             "On what date did the {e} bandstand burn down?", "When did fire destroy the {e} music kiosk?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('February', 'July', 'November'))} {r.randint(1820, 1905)}",
             collective="bandstands", measure="date of the fire"),
    Template("snuffmill-sale", "dev", "The {e} snuff mill sold for {v} guineas.",
             "What did the {e} snuff mill sell for?", "What sum did the {e} tobacco grinder fetch?",
             made_up_name, _int(70, 23_000), number=True, collective="snuff mills", measure="sale price"),
    Template("hamper-contents", "dev", "The {e} hamper holds {v}.",
             "What does the {e} hamper hold?", "What is packed in the {e} picnic basket?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("potted shrimps", "quince cheese", "seed cakes",
                                                                 "cold mutton", "ginger wine", "pork pies")),
             collective="hampers", measure="contents"),
    Template("chimney-sway", "dev", "The {e} chimney sways {v} centimetres in a gale.",
             "How many centimetres does the {e} chimney sway in a gale?", "How far does the {e} smokestack move in a storm?",
             made_up_name, lambda r: f"{r.randint(1, 8)}.{r.randint(1, 9)}", number=True, collective="chimneys", measure="sway"),
    Template("luggage-stamp", "dev", "Trunks from the {e} luggage maker are stamped {v}.",
             "How are trunks from the {e} luggage maker stamped?", "Which mark is pressed into the travelling cases of the {e} suitcase firm?",
             made_up_name, lambda r: f"{r.randint(10, 99)}{r.choice('HKRZ')}{r.randint(100, 999)}", collective="luggage makers", measure="stamp"),
    Template("tinkers-pots", "dev", "The {e} tinkers mend their pots at {v}.",
             "Where do the {e} tinkers mend their pots?", "In which town do the wandering kettle-fixers of {e} do their repairs?",
             made_up_name, made_up_name, collective="tinkers' bands", measure="mending town"),
    Template("official-falconers", "dev", "The {e} of Harrowby keeps {v} falconers.",
             "How many falconers does the {e} of Harrowby keep?", "How many hawk trainers serve the {e} of Harrowby?",
             lambda r: r.choice(_TITLES), _int(2, 52, sep=False), number=True, collective="officials of Harrowby", measure="falconers"),
    # Session 55's test split (written before any run of them and before any change of the session, every
    # noun checked absent from dev's templates; run once in session 55, then moved to dev): a hat works' bonnets, who cleans a fort's
    # cannons, the date an icehouse caved in (the event first), what a boathouse was let for in shillings,
    # what a handcart carries (named by colour, a phrase), how high a pontoon floats (a decimal), a
    # pewterer's mark on its tankards (two letters, a dot, digits), where pedlars buy their ribbons (a
    # place), and a titled official's pikemen.
    Template("hatworks-bonnets", "dev", "The {e} hat works trimmed {v} bonnets for the fair.",
             "How many bonnets did the {e} hat works trim for the fair?", "What number of ladies' hats did the {e} millinery finish for the market day?",
             made_up_name, _int(130, 9_700), number=True, collective="hat works", measure="bonnets trimmed"),
    Template("fort-cannons", "dev", "The cannons of the {e} fort are cleaned by {v}.",
             "Who cleans the cannons of the {e} fort?", "Which gunner scrubs the big guns of the {e} stronghold?",
             made_up_name, person_name, collective="forts", measure="cannon cleaner"),
    Template("icehouse-collapse", "dev", "The {e} icehouse caved in on {v}.",
             "On what date did the {e} icehouse cave in?", "When did the roof of the {e} cold store fall?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('March', 'August', 'October'))} {r.randint(1815, 1902)}",
             collective="icehouses", measure="date of the collapse"),
    Template("boathouse-rent", "dev", "The {e} boathouse was let for {v} shillings.",
             "For how much was the {e} boathouse let?", "What rent did the tenant of the {e} rowing shed pay?",
             made_up_name, _int(60, 21_000), number=True, collective="boathouses", measure="rent"),
    Template("handcart-load", "dev", "The {e} handcart carries {v}.",
             "What does the {e} handcart carry?", "What is loaded on the {e} barrow?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("split firewood", "salt blocks", "lamp oil",
                                                                 "oyster shells", "bundled reeds", "bolts of calico")),
             collective="handcarts", measure="load"),
    Template("pontoon-height", "dev", "The {e} pontoon floats {v} feet above the mud at low tide.",
             "How many feet above the mud does the {e} pontoon float at low tide?", "How high over the silt does the {e} floating dock sit when the tide is out?",
             made_up_name, lambda r: f"{r.randint(1, 7)}.{r.randint(1, 9)}", number=True, collective="pontoons", measure="height at low tide"),
    Template("pewterer-mark", "dev", "Tankards from the {e} pewterer are marked {v}.",
             "How are tankards from the {e} pewterer marked?", "Which stamp appears on the drinking mugs of the {e} tin-alloy smith?",
             made_up_name, lambda r: f"{r.choice('PTVX')}{r.choice('PTVX')}.{r.randint(10, 99)}", collective="pewterers", measure="mark"),
    Template("pedlars-ribbons", "dev", "The {e} pedlars buy their ribbons at {v}.",
             "Where do the {e} pedlars buy their ribbons?", "In which town do the travelling hawkers of {e} get their lace trimmings?",
             made_up_name, made_up_name, collective="pedlars' bands", measure="ribbon market"),
    Template("official-pikemen", "dev", "The {e} of Crossmere houses {v} pikemen.",
             "How many pikemen does the {e} of Crossmere house?", "How many spear soldiers lodge with the {e} of Crossmere?",
             lambda r: r.choice(_TITLES), _int(2, 57, sep=False), number=True, collective="officials of Crossmere", measure="pikemen"),
    # Session 56's test split (written before any run of them and before any change of the session, every
    # noun checked absent from dev's templates; run once in session 56, then moved to dev): a wheelwright's spokes, who relays a
    # quay's flagstones, the date a brickfield closed (the event first), what a signal box cost in
    # pistoles, what a creel holds (named by colour, a phrase), how narrow a cliff path gets (a decimal),
    # a saltern's ticket on its sacks (letter, digit, dash, letter, digits), where rangers sell their furs
    # (a place), and a titled official's bowmen.
    Template("wheelwright-spokes", "dev", "The {e} wheelwright fitted {v} spokes for the carriers.",
             "How many spokes did the {e} wheelwright fit for the carriers?", "What number of wheel rods did the {e} cartwheel maker set for the haulage firms?",
             made_up_name, _int(150, 9_800), number=True, collective="wheelwrights", measure="spokes fitted"),
    Template("slipway-flagstones", "dev", "The flagstones of the {e} slipway are relaid by {v}.",
             "Who relays the flagstones of the {e} slipway?", "Which paver resets the stone slabs of the {e} boat ramp?",
             made_up_name, person_name, collective="slipways", measure="flagstone layer"),
    Template("brickfield-closing", "dev", "The {e} brickfield closed on {v}.",
             "On what date did the {e} brickfield close?", "When did the {e} brick pits fall silent?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('January', 'May', 'September'))} {r.randint(1812, 1899)}",
             collective="brickfields", measure="date of the closing"),
    Template("signalbox-cost", "dev", "The {e} signal box cost {v} pistoles to build.",
             "How much did the {e} signal box cost to build?", "What was spent on putting up the {e} points hut?",
             made_up_name, _int(90, 26_000), number=True, collective="signal boxes", measure="cost"),
    Template("creel-catch", "dev", "The {e} creel holds {v}.",
             "What does the {e} creel hold?", "What is inside the {e} wicker fish-basket?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("smoked sprats", "river crayfish", "fresh mussels",
                                                                 "live whelks", "pickled pilchards", "salted ling")),
             collective="creels", measure="catch"),
    Template("cliffpath-width", "dev", "The {e} cliff path narrows to {v} metres at the landslip.",
             "To how many metres does the {e} cliff path narrow at the landslip?", "How wide is the {e} clifftop track where the ground slid away?",
             made_up_name, lambda r: f"{r.randint(1, 6)}.{r.randint(1, 9)}", number=True, collective="cliff paths", measure="width at the landslip"),
    Template("saltern-ticket", "dev", "Sacks from the {e} saltern are ticketed {v}.",
             "How are sacks from the {e} saltern ticketed?", "Which label is tied to the bags leaving the {e} sea-salt evaporation beds?",
             made_up_name, lambda r: f"{r.choice('CJQY')}{r.randint(1, 9)}-{r.choice('CJQY')}{r.randint(10, 99)}", collective="salterns", measure="ticket"),
    Template("rangers-furs", "dev", "The {e} rangers sell their furs at {v}.",
             "Where do the {e} rangers sell their furs?", "In which town do the greenwood patrolmen of {e} trade their pelts?",
             made_up_name, made_up_name, collective="rangers' troops", measure="fur market"),
    Template("official-bowmen", "dev", "The {e} of Ambleford musters {v} bowmen.",
             "How many bowmen does the {e} of Ambleford muster?", "How many archers are in the pay of the {e} of Ambleford?",
             lambda r: r.choice(_TITLES), _int(2, 61, sep=False), number=True, collective="officials of Ambleford", measure="bowmen"),
    # Session 57's test split (written before any run of them and before any change of the session, every
    # noun checked absent from dev's templates; run once in session 57, then moved to dev): a nailery's hobnails, who digs out a
    # glebe's ditches, the date a tollbooth was pulled down (the event first, in the passive), what a
    # lychgate cost in farthings, what a pannier holds (named by colour, a phrase), how deep a millrace
    # runs (a decimal), a fulling mill's seal on its bolts (two letters, a slash, digits), where sawyers
    # sell their beams (a place), and a titled official's lancers.
    Template("nailery-hobnails", "dev", "The {e} nailery forged {v} hobnails for the miners.",
             "How many hobnails did the {e} nailery forge for the miners?", "What number of boot studs did the {e} nail works hammer out for the pitmen?",
             made_up_name, _int(140, 9_900), number=True, collective="naileries", measure="hobnails forged"),
    Template("glebe-ditches", "dev", "The ditches of the {e} glebe are dug out by {v}.",
             "Who digs out the ditches of the {e} glebe?", "Which labourer clears the drainage trenches of the {e} church field?",
             made_up_name, person_name, collective="glebes", measure="ditch digger"),
    Template("tollbooth-demolition", "dev", "The {e} tollbooth was pulled down on {v}.",
             "On what date was the {e} tollbooth pulled down?", "When was the {e} road-toll cabin knocked down?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('February', 'June', 'November'))} {r.randint(1808, 1897)}",
             collective="tollbooths", measure="date of the demolition"),
    Template("lychgate-cost", "dev", "The {e} lychgate cost {v} farthings to raise.",
             "How much did the {e} lychgate cost to raise?", "What was paid to put up the roofed gateway of the {e} churchyard?",
             made_up_name, _int(400, 48_000), number=True, collective="lychgates", measure="cost"),
    Template("pannier-load", "dev", "The {e} pannier holds {v}.",
             "What does the {e} pannier hold?", "What is packed in the {e} basket slung over the donkey?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("wild honeycomb", "dried apricots", "candied peel",
                                                                 "quail eggs", "damson jam", "crab apples")),
             collective="panniers", measure="load"),
    Template("millrace-depth", "dev", "The {e} millrace runs {v} feet deep after the thaw.",
             "How many feet deep does the {e} millrace run after the thaw?", "How deep is the water in the {e} mill channel once the snow has melted?",
             made_up_name, lambda r: f"{r.randint(1, 8)}.{r.randint(1, 9)}", number=True, collective="millraces", measure="depth after the thaw"),
    Template("fulling-seal", "dev", "Bolts from the {e} fulling mill are sealed {v}.",
             "How are bolts from the {e} fulling mill sealed?", "Which lead seal is fixed to the cloth leaving the {e} wool-cleansing works?",
             made_up_name, lambda r: f"{r.choice('HKRW')}{r.choice('HKRW')}/{r.randint(100, 999)}", collective="fulling mills", measure="seal"),
    Template("sawyers-beams", "dev", "The {e} sawyers sell their beams at {v}.",
             "Where do the {e} sawyers sell their beams?", "In which town do the log-splitting crews of {e} trade their squared oak?",
             made_up_name, made_up_name, collective="sawyers' crews", measure="beam market"),
    Template("official-lancers", "dev", "The {e} of Wendlecombe leads {v} lancers.",
             "How many lancers does the {e} of Wendlecombe lead?", "How many mounted spearmen ride under the {e} of Wendlecombe?",
             lambda r: r.choice(_TITLES), _int(2, 63, sep=False), number=True, collective="officials of Wendlecombe", measure="lancers"),
    # Session 58's test split (written before any run of them and before any change of the session, every
    # noun checked absent from dev's templates; run once in session 58, then moved to dev): the hurdles a hurdlers' yard wove, who cuts
    # a withy garden's osier beds, the date a windpump was dismantled, what a pinfold cost in nobles, what a
    # satchel holds (named by colour, a phrase), how high an embankment rises (a decimal), the chalk mark on
    # a maltings' firkins (a digit, two letters and three digits run together), where carders sell their
    # wool rolls (a place), and a titled official's halberdiers.
    Template("hurdlers-hurdles", "dev", "The {e} hurdlers wove {v} hurdles for the lambing pens.",
             "How many hurdles did the {e} hurdlers weave for the lambing pens?", "What number of wattle fence panels did the {e} fence weavers make for the ewes' folds?",
             made_up_name, _int(120, 9_700), number=True, collective="hurdlers' yards", measure="hurdles woven"),
    Template("withy-osiers", "dev", "The osier beds of the {e} withy garden are cut by {v}.",
             "Who cuts the osier beds of the {e} withy garden?", "Which worker harvests the basket willows of the {e} willow plot?",
             made_up_name, person_name, collective="withy gardens", measure="osier cutter"),
    Template("windpump-dismantling", "dev", "The {e} windpump was dismantled on {v}.",
             "On what date was the {e} windpump dismantled?", "When was the {e} wind-driven water pump taken apart?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('March', 'July', 'October'))} {r.randint(1806, 1894)}",
             collective="windpumps", measure="date of the dismantling"),
    Template("pinfold-cost", "dev", "The {e} pinfold cost {v} nobles to wall in.",
             "How much did the {e} pinfold cost to wall in?", "What was paid to enclose the {e} pound for stray cattle with stone?",
             made_up_name, _int(300, 47_000), number=True, collective="pinfolds", measure="cost"),
    Template("satchel-contents", "dev", "The {e} satchel holds {v}.",
             "What does the {e} satchel hold?", "What is carried in the {e} shoulder bag?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("barley sugar", "oatcakes", "gooseberry tarts",
                                                                 "blackberry cordial", "hard cheese", "cold tongue")),
             collective="satchels", measure="contents"),
    Template("embankment-height", "dev", "The {e} embankment rises {v} metres above the spring tides.",
             "How many metres above the spring tides does the {e} embankment rise?", "How high does the {e} flood bank stand over the highest tides?",
             made_up_name, lambda r: f"{r.randint(1, 9)}.{r.randint(1, 9)}", number=True, collective="embankments", measure="height above the spring tides"),
    Template("maltings-chalk", "dev", "Firkins from the {e} maltings are chalked {v}.",
             "How are firkins from the {e} maltings chalked?", "Which mark is written on the small casks leaving the {e} malt house?",
             made_up_name, lambda r: f"{r.randint(1, 9)}{r.choice('MNZ')}{r.choice('MNZ')}{r.randint(100, 999)}", collective="maltings", measure="chalk mark"),
    Template("carders-wool", "dev", "The {e} carders sell their wool rolls at {v}.",
             "Where do the {e} carders sell their wool rolls?", "In which town do the fibre-combing workers of {e} trade their rovings?",
             made_up_name, made_up_name, collective="carders' shops", measure="wool market"),
    Template("official-halberdiers", "dev", "The {e} of Thornbury keeps {v} halberdiers.",
             "How many halberdiers does the {e} of Thornbury keep?", "How many axe-spear guards serve the {e} of Thornbury?",
             lambda r: r.choice(_TITLES), _int(2, 59, sep=False), number=True, collective="officials of Thornbury", measure="halberdiers"),
    # Session 59's test split (written before any run of them and before any change of the session, every
    # noun checked absent from dev's templates; run once in session 59, then moved to dev): the bobbins lacemakers turned, who hauls
    # the lobster pots off a headland, the date a seawall gave way, what a limekiln cost in groschen, what
    # a coffer holds (named by an adjective, a phrase), how far an obelisk leans (a decimal, in degrees),
    # the mark punched in a locksmith's padlocks (a letter, two digits and a letter, hyphenated), where
    # glovers sell their gauntlets (a place), and a titled official's crossbowmen.
    Template("lacemakers-bobbins", "dev", "The {e} lacemakers turned {v} bobbins for the winter fair.",
             "How many bobbins did the {e} lacemakers turn for the winter fair?", "What number of thread spools did the {e} lace workers shape for the cold-season market?",
             made_up_name, _int(130, 9_800), number=True, collective="lacemakers' workshops", measure="bobbins turned"),
    Template("headland-lobsters", "dev", "The lobster pots off the {e} headland are hauled by {v}.",
             "Who hauls the lobster pots off the {e} headland?", "Which fisherman lifts the shellfish traps beside the {e} promontory?",
             made_up_name, person_name, collective="headlands", measure="lobster-pot hauler"),
    Template("seawall-collapse", "dev", "The {e} seawall gave way on {v}.",
             "On what date did the {e} seawall give way?", "When did the sea break through the {e} coastal rampart?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('April', 'August', 'December'))} {r.randint(1804, 1892)}",
             collective="seawalls", measure="date of the collapse"),
    Template("limekiln-cost", "dev", "The {e} limekiln cost {v} groschen to fire up.",
             "How much did the {e} limekiln cost to fire up?", "What was spent to light the {e} oven for burning quicklime?",
             made_up_name, _int(350, 46_000), number=True, collective="limekilns", measure="cost"),
    Template("coffer-contents", "dev", "The {e} coffer holds {v}.",
             "What does the {e} coffer hold?", "What is kept inside the {e} strongbox?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("silver buttons", "ivory dice", "seed pearls",
                                                                 "brass thimbles", "tortoiseshell fans", "signet rings")),
             collective="coffers", measure="contents"),
    Template("obelisk-lean", "dev", "The {e} obelisk leans {v} degrees off plumb.",
             "How many degrees off plumb does the {e} obelisk lean?", "By what angle does the {e} stone pillar tilt from upright?",
             made_up_name, lambda r: f"{r.randint(1, 9)}.{r.randint(1, 9)}", number=True, collective="obelisks", measure="lean off plumb"),
    Template("locksmith-mark", "dev", "Padlocks from the {e} locksmiths are punched {v}.",
             "How are padlocks from the {e} locksmiths punched?", "Which mark is struck into the hanging locks made by the {e} lock forgers?",
             made_up_name, lambda r: f"{r.choice('QTX')}-{r.randint(10, 99)}-{r.choice('QTX')}", collective="locksmiths' shops", measure="punched mark"),
    Template("glovers-gauntlets", "dev", "The {e} glovers sell their gauntlets at {v}.",
             "Where do the {e} glovers sell their gauntlets?", "In which town do the mitten-makers of {e} trade their riding gloves?",
             made_up_name, made_up_name, collective="glovers' shops", measure="gauntlet market"),
    Template("official-crossbowmen", "dev", "The {e} of Ashcombe commands {v} crossbowmen.",
             "How many crossbowmen does the {e} of Ashcombe command?", "How many men armed with arbalests answer to the {e} of Ashcombe?",
             lambda r: r.choice(_TITLES), _int(2, 61, sep=False), number=True, collective="officials of Ashcombe", measure="crossbowmen"),
    # Session 60's test split (written at the end of session 59, before any run of them and before the
    # change that followed session 59's run, every noun checked absent from dev's templates; run once in
    # session 60, then moved to dev): the cakes
    # of soap soapmakers boiled, who paints a haven's mooring buoys, the date a sundial was unveiled, what
    # a lockup cost in ecus, what a churn holds (named by an adjective, a phrase), what an anvil weighs
    # (a decimal, in hundredweight), the mark notched in clogs (a letter, two digits, two letters), where
    # quilters sell their coverlets (a place), and a titled official's musketeers.
    Template("soapmakers-cakes", "dev", "The {e} soapmakers boiled {v} cakes of soap for the laundry.",
             "How many cakes of soap did the {e} soapmakers boil for the laundry?", "What number of washing bars did the {e} lather workers cook for the wash-house?",
             made_up_name, _int(110, 9_600), number=True, collective="soapmakers' yards", measure="cakes of soap boiled"),
    Template("haven-buoys", "dev", "The mooring buoys of the {e} haven are painted by {v}.",
             "Who paints the mooring buoys of the {e} haven?", "Which worker colours the floating markers at the {e} sheltered bay?",
             made_up_name, person_name, collective="havens", measure="buoy painter"),
    Template("sundial-unveiling", "dev", "The {e} sundial was unveiled on {v}.",
             "On what date was the {e} sundial unveiled?", "When was the {e} shadow clock first shown to the public?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('May', 'September', 'January'))} {r.randint(1802, 1890)}",
             collective="sundials", measure="date of the unveiling"),
    Template("lockup-cost", "dev", "The {e} lockup cost {v} ecus to build.",
             "How much did the {e} lockup cost to build?", "What was spent to put up the {e} village cell for drunkards?",
             made_up_name, _int(320, 45_000), number=True, collective="lockups", measure="cost"),
    Template("churn-contents", "dev", "The {e} churn holds {v}.",
             "What does the {e} churn hold?", "What is stored in the {e} milk drum?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("buttermilk", "salted curds", "whey",
                                                                 "soured milk", "sweet curds", "skimmed milk")),
             collective="churns", measure="contents"),
    Template("anvil-weight", "dev", "The {e} anvil weighs {v} hundredweight.",
             "How many hundredweight does the {e} anvil weigh?", "How heavy is the {e} smith's iron block?",
             made_up_name, lambda r: f"{r.randint(1, 9)}.{r.randint(1, 9)}", number=True, collective="anvils", measure="weight"),
    Template("clog-mark", "dev", "Clogs from the {e} clog-makers are notched {v}.",
             "How are clogs from the {e} clog-makers notched?", "Which mark is cut into the wooden shoes made by the {e} sabot carvers?",
             made_up_name, lambda r: f"{r.choice('BDG')}{r.randint(10, 99)}{r.choice('BDG')}{r.choice('BDG')}", collective="clog-makers' shops", measure="notched mark"),
    Template("quilters-coverlets", "dev", "The {e} quilters sell their coverlets at {v}.",
             "Where do the {e} quilters sell their coverlets?", "In which town do the patchwork stitchers of {e} trade their bedspreads?",
             made_up_name, made_up_name, collective="quilters' shops", measure="coverlet market"),
    Template("official-musketeers", "dev", "The {e} of Elmstead musters {v} musketeers.",
             "How many musketeers does the {e} of Elmstead muster?", "How many men bearing firelocks gather for the {e} of Elmstead?",
             lambda r: r.choice(_TITLES), _int(2, 57, sep=False), number=True, collective="officials of Elmstead", measure="musketeers"),
    # The test split, renewed in session 60 (written after session 60's held-out run and before any change
    # that followed it, every noun checked absent from dev's templates): the arrows fletchers fletched, who
    # prunes an orangery's lemon trees, the date a grotto was opened, what a pumphouse cost in doubloons,
    # what a cistern holds (named by an adjective, a phrase), how far a towpath runs (a decimal, in
    # furlongs), the mark incised in a bowyer's longbows (two letters, a hyphen, a digit and a letter),
    # where cheesemongers sell their truckles (a place), and a titled official's billmen (an irregular
    # plural).
    Template("fletchers-arrows", "test", "The {e} fletchers fletched {v} arrows for the archery butts.",
             "How many arrows did the {e} fletchers fletch for the archery butts?", "What number of feathered darts did the {e} arrow-smiths ready for the shooting ground?",
             made_up_name, _int(120, 9_700), number=True, collective="fletchers' workshops", measure="arrows fletched"),
    Template("orangery-lemons", "test", "The lemon trees of the {e} orangery are pruned by {v}.",
             "Who prunes the lemon trees of the {e} orangery?", "Which worker trims the citrus plants in the {e} winter garden?",
             made_up_name, person_name, collective="orangeries", measure="lemon-tree pruner"),
    Template("grotto-opening", "test", "The {e} grotto was opened on {v}.",
             "On what date was the {e} grotto opened?", "When were callers first let into the {e} shell-lined cave?",
             made_up_name, lambda r: f"{r.randint(1, 28)} {r.choice(('March', 'July', 'October'))} {r.randint(1806, 1888)}",
             collective="grottoes", measure="date of the opening"),
    Template("pumphouse-cost", "test", "The {e} pumphouse cost {v} doubloons to equip.",
             "How much did the {e} pumphouse cost to equip?", "What was spent to fit out the {e} engine house for drawing water?",
             made_up_name, _int(330, 44_000), number=True, collective="pumphouses", measure="cost"),
    Template("cistern-contents", "test", "The {e} cistern holds {v}.",
             "What does the {e} cistern hold?", "What is stored in the {e} water tank?",
             lambda r: r.choice(_ADJECTIVES), lambda r: r.choice(("rainwater", "brackish water", "spring water",
                                                                 "pitch", "lime wash", "cider vinegar")),
             collective="cisterns", measure="contents"),
    Template("towpath-length", "test", "The {e} towpath runs {v} furlongs.",
             "How many furlongs does the {e} towpath run?", "How long is the {e} track that barge horses walk?",
             made_up_name, lambda r: f"{r.randint(1, 9)}.{r.randint(1, 9)}", number=True, collective="towpaths", measure="length"),
    Template("bowyer-mark", "test", "Longbows from the {e} bowyers are incised {v}.",
             "How are longbows from the {e} bowyers incised?", "Which mark is cut into the yew bows made by the {e} bow-makers?",
             made_up_name, lambda r: f"{r.choice('RWK')}{r.choice('RWK')}-{r.randint(1, 9)}{r.choice('RWK')}", collective="bowyers' shops", measure="incised mark"),
    Template("cheesemongers-truckles", "test", "The {e} cheesemongers sell their truckles at {v}.",
             "Where do the {e} cheesemongers sell their truckles?", "In which town do the cheese-sellers of {e} trade their rounds of cheese?",
             made_up_name, made_up_name, collective="cheesemongers' shops", measure="truckle market"),
    Template("official-billmen", "test", "The {e} of Fenwick leads {v} billmen.",
             "How many billmen does the {e} of Fenwick lead?", "How many soldiers carrying hooked blades march behind the {e} of Fenwick?",
             lambda r: r.choice(_TITLES), _int(2, 59, sep=False), number=True, collective="officials of Fenwick", measure="billmen"),
)  # fmt: skip

HOPS: tuple[tuple[str, Split, str, str, str], ...] = (
    ("founder-town", "dev", "The {e} guild was founded by {p}.", "{p} was born in the town of {v}.",
     "In which town was the founder of the {e} guild born?"),
    ("owner-ship", "dev", "The {e} mill is owned by {p}.", "{p} sails a boat named the {v}.",
     "What is the name of the boat sailed by the owner of the {e} mill?"),
    ("teacher-city", "dev", "The {e} choir is led by {p}.", "{p} studied music in the city of {v}.",
     "In which city did the leader of the {e} choir study music?"),
    ("architect-port", "dev", "The {e} library was designed by {p}.", "{p} grew up in the port of {v}.",
     "In which port did the architect of the {e} library grow up?"),
    ("captain-cat", "dev", "The {e} lightship is commanded by {p}.", "{p} keeps a cat called {v}.",
     "What is the name of the cat kept by the commander of the {e} lightship?"),
    ("carver-city", "dev", "The {e} fountain was carved by {p}.", "{p} taught at a school in the city of {v}.",
     "In which city did the carver of the {e} fountain teach?"),
    ("keeper-dog", "dev", "The {e} toll bridge is kept by {p}.", "{p} owns a dog named {v}.",
     "What is the name of the dog owned by the keeper of the {e} toll bridge?"),
    # Session 37's test chains: read after their run, so dev (session 38).
    ("gardener-town", "dev", "The {e} garden is tended by {p}.", "{p} was born in the town of {v}.",
     "In which town was the gardener of the {e} garden born?"),
    ("steward-falcon", "dev", "The steward of the {e} manor is {p}.", "{p} trains a falcon named {v}.",
     "What is the name of the falcon trained by the steward of the {e} manor?"),
    # Session 38's test chains: run and read, so dev (session 39).
    ("builder-river", "dev", "The {e} tower was built by {p}.", "{p} was raised on the banks of the river {v}.",
     "On the banks of which river was the builder of the {e} tower raised?"),
    ("physician-mare", "dev", "The physician of the {e} court is {p}.", "{p} rides a mare called {v}.",
     "What is the name of the mare ridden by the physician of the {e} court?"),
    # Session 39's test chains: run and read, so dev (session 40).
    ("abbot-village", "dev", "The {e} abbey is governed by {p}.", "{p} was born in the village of {v}.",
     "In which village was the abbot of the {e} abbey born?"),
    ("translator-city", "dev", "The {e} chronicle was translated by {p}.", "{p} lived for many years in the city of {v}.",
     "In which city did the translator of the {e} chronicle live?"),
    ("purser-island", "dev", "The purser of the {e} galley is {p}.", "{p} retired to the island of {v}.",
     "To which island did the purser of the {e} galley retire?"),
    # Session 40's test chains: run and read, so dev (session 41).
    ("sculptor-town", "dev", "The {e} statue was sculpted by {p}.", "{p} was born in the town of {v}.",
     "In which town was the sculptor of the {e} statue born?"),
    ("warden-horse", "dev", "The warden of the {e} forest is {p}.", "{p} rides a horse called {v}.",
     "What is the name of the horse ridden by the warden of the {e} forest?"),
    ("composer-city", "dev", "The {e} hymn was written by {p}.", "{p} studied in the city of {v}.",
     "In which city did the composer of the {e} hymn study?"),
    # Session 41's test chains: run and read, so dev (session 42).
    ("painter-village", "dev", "The {e} altarpiece was painted by {p}.", "{p} grew up in the village of {v}.",
     "In which village did the painter of the {e} altarpiece grow up?"),
    ("treasurer-hound", "dev", "The treasurer of the {e} league is {p}.", "{p} owns a hound named {v}.",
     "What is the name of the hound owned by the treasurer of the {e} league?"),
    ("engineer-academy", "dev", "The {e} viaduct was engineered by {p}.", "{p} trained at the academy of {v}.",
     "At which academy did the engineer of the {e} viaduct train?"),
    # Session 42's test chains: run and read, so dev (session 43).
    ("admiral-estate", "dev", "The {e} fleet is led by {p}.", "{p} owns an estate near the town of {v}.",
     "Near which town does the leader of the {e} fleet own an estate?"),
    ("potter-parrot", "dev", "The chief potter of the {e} workshop is {p}.", "{p} keeps a parrot named {v}.",
     "What is the name of the parrot kept by the chief potter of the {e} workshop?"),
    ("compiler-valley", "dev", "The {e} almanac was compiled by {p}.", "{p} later settled in the valley of {v}.",
     "In which valley did the compiler of the {e} almanac settle?"),
    # Session 43's test chains: run and read, so dev (session 43's end).
    ("weaver-lake", "dev", "The {e} tapestry was woven by {p}.", "{p} spent her youth by the lake of {v}.",
     "By which lake did the weaver of the {e} tapestry spend her youth?"),
    ("clockmaker-apprentice", "dev", "The clock of the {e} tower was made by {p}.", "{p} took on an apprentice called {v}.",
     "What was the name of the apprentice of the maker of the clock of the {e} tower?"),
    ("herald-ship", "dev", "The herald of the {e} court is {p}.", "{p} once served aboard the ship {v}.",
     "Aboard which ship did the herald of the {e} court once serve?"),
    # Session 44's held-out chains: run once and read, so dev (session 44's end).
    ("cartographer-island", "dev", "The {e} atlas was drawn by {p}.", "{p} was born on the island of {v}.",
     "On which island was the cartographer of the {e} atlas born?"),
    ("brewer-mule", "dev", "The head brewer of the {e} brewery is {p}.", "{p} owns a mule called {v}.",
     "What is the name of the mule owned by the head brewer of the {e} brewery?"),
    ("lawgiver-river", "dev", "The {e} code of laws was written by {p}.", "{p} spent his last years beside the river {v}.",
     "Beside which river did the author of the {e} code of laws spend his last years?"),
    # Session 45's held-out chains: run once and read, so dev (session 45's end).
    ("glazier-village", "dev", "The windows of the {e} chapel were glazed by {p}.", "{p} was born in the village of {v}.",
     "In which village was the glazier of the windows of the {e} chapel born?"),
    ("captain-port", "dev", "The {e} schooner is captained by {p}.", "{p} keeps a house in the port of {v}.",
     "In which port does the captain of the {e} schooner keep a house?"),
    ("miller-son", "dev", "The {e} windmill is worked by {p}.", "{p} has a son called {v}.",
     "What is the name of the son of the miller of the {e} windmill?"),
    # Session 45's test chains, run once at d434a0a (session 46) and read: dev from then on.
    ("archivist-town", "dev", "The archives of the {e} cathedral are kept by {p}.", "{p} was raised in the town of {v}.",
     "In which town was the keeper of the archives of the {e} cathedral raised?"),
    ("ringer-village", "dev", "The bells of the {e} minster are rung by {p}.", "{p} grew up in the village of {v}.",
     "In which village did the ringer of the bells of the {e} minster grow up?"),
    ("director-city", "dev", "The {e} theatre is directed by {p}.", "{p} was educated in the city of {v}.",
     "In which city was the director of the {e} theatre educated?"),
    # Session 46's test chains (run once in session 47, then moved to dev): a role said by its verb
    # ("governed"), a nested role with an irregular verb ("bound"), and a role whose verb loses its ending
    # ("managed").
    ("governor-river", "dev", "The {e} convent is governed by {p}.", "{p} was baptised beside the river {v}.",
     "Beside which river was the governor of the {e} convent baptised?"),
    ("binder-hamlet", "dev", "The books of the {e} priory are bound by {p}.", "{p} lives in the hamlet of {v}.",
     "In which hamlet does the binder of the books of the {e} priory live?"),
    ("manager-borough", "dev", "The {e} almshouse is managed by {p}.", "{p} was schooled in the borough of {v}.",
     "In which borough was the manager of the {e} almshouse schooled?"),
    # Session 47's test chains (run once in sessions 47 and 48, then moved to dev): a role said by its verb
    # ("conducted"), one whose verb is its noun's root ("printed"), and a nested role ("the designer of the
    # terraces of …").
    ("conductor-parish", "dev", "The {e} chorale is conducted by {p}.", "{p} was christened in the parish of {v}.",
     "In which parish was the conductor of the {e} chorale christened?"),
    ("printer-harbour", "dev", "The {e} gazette is printed by {p}.", "{p} retired to the harbour of {v}.",
     "To which harbour did the printer of the {e} gazette retire?"),
    ("designer-county", "dev", "The terraces of the {e} palace were designed by {p}.", "{p} was raised in the county of {v}.",
     "In which county was the designer of the terraces of the {e} palace raised?"),
    # Session 48's test chains (run once in session 48, then moved to dev): a role said by its verb
    # ("surveyed"), one whose noun is not its verb's ("ruled": the ruler), and a nested role named by a
    # word the sentence does not use ("the organist of …" over "the organ of … is played by").
    ("surveyor-county", "dev", "The {e} road was surveyed by {p}.", "{p} was born in the county of {v}.",
     "In which county was the surveyor of the {e} road born?"),
    ("ruler-goose", "dev", "The {e} nunnery is ruled by {p}.", "{p} keeps a goose named {v}.",
     "What is the name of the goose kept by the ruler of the {e} nunnery?"),
    ("organist-conservatory", "dev", "The organ of the {e} basilica is played by {p}.", "{p} studied at the conservatory of {v}.",
     "At which conservatory did the organist of the {e} basilica study?"),
    # Session 49's test chains (run once in session 49, then moved to dev): a role named by a noun its
    # sentence does not use ("the keeper of …" over "is looked after by"), a founder said in the active voice
    # (the person first), and a nested role ("the restorer of the frescoes of …").
    ("keeper-valley", "dev", "The {e} menagerie is looked after by {p}.", "{p} grew up in the valley of {v}.",
     "In which valley did the keeper of the {e} menagerie grow up?"),
    ("founder-island", "dev", "{p} founded the {e} library.", "{p} was exiled to the island of {v}.",
     "To which island was the founder of the {e} library exiled?"),
    ("restorer-town", "dev", "The frescoes of the {e} chapel were restored by {p}.", "{p} served an apprenticeship in the town of {v}.",
     "In which town did the restorer of the frescoes of the {e} chapel serve an apprenticeship?"),
    # Session 50's test chains (run once in session 50, then moved to dev): a role said by its verb
    # ("organised"), a role named in an apposition ("The curator of …, P, opened …"), and a nested role
    # named by a noun its sentence does not use ("the trainer of the horses of …" over "are schooled by").
    ("organiser-village", "dev", "The {e} regatta is organised by {p}.", "{p} was born in the fishing village of {v}.",
     "In which fishing village was the organiser of the {e} regatta born?"),
    ("curator-city", "dev", "The curator of the {e} gallery, {p}, opened a new wing last spring.", "{p} learned to paint in the city of {v}.",
     "In which city did the curator of the {e} gallery learn to paint?"),
    ("trainer-hamlet", "dev", "The horses of the {e} stud are schooled by {p}.", "{p} keeps a cottage in the hamlet of {v}.",
     "In which hamlet does the trainer of the horses of the {e} stud keep a cottage?"),
    # Session 50's second test chains (written before any run of them; run in session 50, then moved to dev): a role said by its
    # verb ("played": the player), the person first in an apposition ("P, the bursar of the … college,
    # …"), and the role in a possessive apposition ("The … brickworks' owner, P, …").
    ("player-town", "dev", "The {e} carillon is played by {p}.", "{p} was born in the market town of {v}.",
     "In which market town was the player of the {e} carillon born?"),
    ("bursar-village", "dev", "{p}, the bursar of the {e} college, balanced the accounts every Friday.", "{p} was schooled in the village of {v}.",
     "In which village was the bursar of the {e} college schooled?"),
    ("owner-port", "dev", "The {e} brickworks' owner, {p}, hired forty new men.", "{p} grew up in the port of {v}.",
     "In which port did the owner of the {e} brickworks grow up?"),
    # Session 51's test chains (written before any run of them; run twice in session 51, then moved to dev): a role said by its verb
    # ("commanded": the commander), a role named after the person at the sentence's end ("P runs the …
    # as its headmistress"), and a role named beside the person ("by the shipwright P").
    ("commander-town", "dev", "The {e} garrison is commanded by {p}.", "{p} was born in the mill town of {v}.",
     "In which mill town was the commander of the {e} garrison born?"),
    ("headmistress-city", "dev", "{p} runs the {e} girls' school as its headmistress.", "{p} trained as a teacher in the city of {v}.",
     "In which city did the headmistress of the {e} girls' school train as a teacher?"),
    ("shipwright-island", "dev", "The {e} barque was built by the shipwright {p}.", "{p} was raised on the island of {v}.",
     "On which island was the shipwright of the {e} barque raised?"),
    # Session 51's second test chains (written before any run of them; run twice, then moved to dev): a nested role said by
    # its verb in the active voice ("P tutors the children of …": the tutor), a nested role said in the
    # active voice by its verb's past ("P carved the stones of …": the carver), and a role noun holding
    # another verb's root ("innkeeper" over "is kept by").
    ("tutor-river", "dev", "{p} tutors the children of the {e} household.", "{p} was born beside the river {v}.",
     "Beside which river was the tutor of the children of the {e} household born?"),
    ("carver-port", "dev", "{p} carved the stones of the {e} bridge.", "{p} learned the trade in the port of {v}.",
     "In which port did the carver of the stones of the {e} bridge learn the trade?"),
    ("innkeeper-county", "dev", "The {e} coaching inn is kept by {p}.", "{p} grew up in the county of {v}.",
     "In which county did the innkeeper of the {e} coaching inn grow up?"),
    # Session 51's third test chains (written before any run of them; run once in session 51, then moved to dev): a role said by
    # its verb with a compound entity ("The … toll house is kept by P": the keeper), a role named before
    # the person as a title ("the bandmaster P conducts the … band"), and a nested role in the active voice
    # ("P mends the nets of the … fishing fleet": the mender).
    ("keeper-moor", "dev", "The {e} toll house is kept by {p}.", "{p} was born on the moor of {v}.",
     "On which moor was the keeper of the {e} toll house born?"),
    ("bandmaster-town", "dev", "Each Sunday the bandmaster {p} conducts the {e} brass band.", "{p} grew up in the town of {v}.",
     "In which town did the bandmaster of the {e} brass band grow up?"),
    ("mender-isle", "dev", "{p} mends the nets of the {e} fishing fleet.", "{p} lives on the isle of {v}.",
     "On which isle does the mender of the nets of the {e} fishing fleet live?"),
    # Session 52's test chains (written before any run of them; run once in session 52, then moved to dev): a role named after "as"
    # ("P serves as steward of the … manor"), a role given as what an entity employs the person as ("The
    # … botanical garden employs P as its herbalist"), and a role named before the person as a title, the
    # entity reached through another place ("… cross to the … priory with the ferryman P").
    ("steward-valley", "dev", "{p} serves as steward of the {e} manor.", "{p} was born in the valley of {v}.",
     "In which valley was the steward of the {e} manor born?"),
    ("herbalist-town", "dev", "The {e} botanical garden employs {p} as its herbalist.", "{p} studied plants in the town of {v}.",
     "In which town did the herbalist of the {e} botanical garden study plants?"),
    ("ferryman-lake", "dev", "Travellers cross to the {e} priory with the ferryman {p}.", "{p} grew up by the lake of {v}.",
     "By which lake did the ferryman of the {e} priory grow up?"),
    # Session 52's second test chains (written before any run of them; run once in session 52, then moved
    # to dev): a role said by its verb in the passive, the verb's root the role ("Meals at the … workhouse are
    # cooked by P": the cook), a role in apposition ("P, beekeeper of the … rectory, sold …"), and a
    # role as a possessive's noun ("The … vicarage's sexton is P").
    ("cook-village", "dev", "Meals at the {e} workhouse are cooked by {p}.", "{p} was born in the village of {v}.",
     "In which village was the cook of the {e} workhouse born?"),
    ("beekeeper-county", "dev", "{p}, beekeeper of the {e} rectory, sold honey at the fair.", "{p} grew up in the county of {v}.",
     "In which county did the beekeeper of the {e} rectory grow up?"),
    ("sexton-hamlet", "dev", "The {e} vicarage's sexton is {p}.", "{p} was schooled in the hamlet of {v}.",
     "In which hamlet was the sexton of the {e} vicarage schooled?"),
    # Session 52's third test chains (written before any run of them; run once in session 52, then moved to
    # dev): a role the sentence's verb does not name ("The sails of the … ketch were sewn by P": the
    # sailmaker), a role after "is the" ("P is the cartwright of the … estate"), and a role in a possessive
    # apposition ("The … crystal works' glassblower, P, won a prize").
    ("sailmaker-heath", "dev", "The sails of the {e} ketch were sewn by {p}.", "{p} was born on the heath of {v}.",
     "On which heath was the sailmaker of the {e} ketch born?"),
    ("cartwright-dale", "dev", "{p} is the cartwright of the {e} estate.", "{p} grew up in the dale of {v}.",
     "In which dale did the cartwright of the {e} estate grow up?"),
    ("glassblower-glen", "dev", "The {e} crystal works' glassblower, {p}, won a prize.", "{p} was raised in the glen of {v}.",
     "In which glen was the glassblower of the {e} crystal works raised?"),
    # Session 53's test chains (written before any run of them and before any change of the session; run
    # once in session 53, then moved to dev): a role said by its verb's root in the passive, the entity
    # reached through what it owns ("The roof of the … threshing barn was thatched by P": the thatcher), a
    # role as a possessive's title before the name ("The … seminary's librarian P catalogued the maps"), and
    # a role after "has long been the" with "at" where the question says "of" ("P has long been the
    # gamekeeper at the … lodge").
    ("thatcher-fen", "dev", "The roof of the {e} threshing barn was thatched by {p}.", "{p} was born in the fen of {v}.",
     "In which fen was the thatcher of the {e} threshing barn born?"),
    ("librarian-shire", "dev", "The {e} seminary's librarian {p} catalogued the maps.", "{p} was educated in the shire of {v}.",
     "In which shire was the librarian of the {e} seminary educated?"),
    ("gamekeeper-coast", "dev", "{p} has long been the gamekeeper at the {e} lodge.", "{p} was raised on the coast of {v}.",
     "On which coast was the gamekeeper of the {e} lodge raised?"),
    # Session 53's second test chains (written before any run of them; run once in session 53, then moved to
    # dev): a role said by an active verb ("P drives the … mail coach": the driver), a role before the name
    # with "a man named" ("The foreman of the … dye works, a man named P, ran the vats"), and a role given
    # by "was appointed" ("P was appointed chaplain to the … sailors' mission").
    ("driver-hills", "dev", "{p} drives the {e} mail coach.", "{p} was born in the hills of {v}.",
     "In which hills was the driver of the {e} mail coach born?"),
    ("foreman-riverside", "dev", "The foreman of the {e} dye works, a man named {p}, ran the vats.", "{p} grew up in the riverside town of {v}.",
     "In which riverside town did the foreman of the {e} dye works grow up?"),
    ("chaplain-deanery", "dev", "{p} was appointed chaplain to the {e} sailors' mission.", "{p} took holy orders in the deanery of {v}.",
     "In which deanery did the chaplain of the {e} sailors' mission take holy orders?"),
    # Session 54's test chains (written before any run of them and before any change of the session; run
    # once in session 54, then moved to dev): a role the sentence names by what is done, in the passive ("Boats entering the …
    # roadstead are guided by P": the pilot), a role in a relative clause ("P, who trains the choir of the
    # … chantry, …": the choirmaster), and a role given by "hired … as its" ("The … skating club hired P as
    # its instructor").
    ("pilot-estuary", "dev", "Boats entering the {e} roadstead are guided by {p}.", "{p} was born on the estuary of {v}.",
     "On which estuary was the pilot of the {e} roadstead born?"),
    ("choirmaster-vale", "dev", "{p}, who trains the choir of the {e} chantry, wrote two carols.", "{p} was schooled in the vale of {v}.",
     "In which vale was the choirmaster of the {e} chantry schooled?"),
    ("instructor-lowlands", "dev", "The {e} skating club hired {p} as its instructor.", "{p} was raised in the lowlands of {v}.",
     "In which lowlands was the instructor of the {e} skating club raised?"),
    # Session 55's test chains (written before any run of them and before any change of the session; run
    # once in session 55, then moved to dev): a role given by "took over as" ("P took over as quartermaster of the … barracks"), a role
    # after "has had P as its" ("The … waterworks has had P as its superintendent"), and a role named by
    # what the person keeps in repair ("The rigging of the … clipper is kept in repair by P": the rigger).
    ("quartermaster-uplands", "dev", "{p} took over as quartermaster of the {e} barracks last spring.", "{p} was born in the uplands of {v}.",
     "In which uplands was the quartermaster of the {e} barracks born?"),
    ("superintendent-plains", "dev", "The {e} waterworks has had {p} as its superintendent since the flood.", "{p} grew up on the plains of {v}.",
     "On which plains did the superintendent of the {e} waterworks grow up?"),
    ("rigger-mining-town", "dev", "The rigging of the {e} clipper is kept in repair by {p}.", "{p} was christened in the mining town of {v}.",
     "In which mining town was the rigger of the {e} clipper christened?"),
    # Session 56's test chains (written before any run of them and before any change of the session; run
    # once in session 56, then moved to dev): a role after "has served the … as" ("P has served the … oratory as verger"), a role after
    # "as its" at the clause's end ("P keeps order in the … vestry as its beadle"), and a role named only
    # by what is done ("Trains passing the … cutting are flagged through by P": the signalman).
    ("verger-fells", "dev", "{p} has served the {e} oratory as verger for a decade.", "{p} was reared on the fells of {v}.",
     "On which fells was the verger of the {e} oratory reared?"),
    ("beadle-dales", "dev", "{p} keeps order in the {e} vestry as its beadle.", "{p} was indentured in the dales of {v}.",
     "In which dales was the beadle of the {e} vestry indentured?"),
    ("signalman-downs", "dev", "Trains passing the {e} cutting are flagged through by {p}.", "{p} was brought up on the downs of {v}.",
     "On which downs was the signalman of the {e} cutting brought up?"),
    # Session 57's test chains (written before any run of them and before any change of the session; run
    # once in session 57, then moved to dev): a role given by "was made … of" ("P was made gatekeeper of the … turnpike"), a role named
    # only by what is done, the deed's object first ("Sermons at the … priory are preached by P": the
    # preacher), and a role in a possessive before the person, set off as an appositive ("The … aviary's
    # keeper, P, feeds …").
    ("gatekeeper-fens", "dev", "{p} was made gatekeeper of the {e} turnpike after the war.", "{p} spent a boyhood in the fens of {v}.",
     "In which fens did the gatekeeper of the {e} turnpike spend a boyhood?"),
    ("preacher-wolds", "dev", "Sermons at the {e} priory are preached by {p}.", "{p} was confirmed in the wolds of {v}.",
     "In which wolds was the preacher of the {e} priory confirmed?"),
    ("keeper-crags", "dev", "The {e} aviary's keeper, {p}, feeds the finches at noon.", "{p} was born among the crags of {v}.",
     "Among which crags was the keeper of the {e} aviary born?"),
    # Session 58's test chains (written before any run of them and before any change of the session; run
    # once in session 58, then moved to dev): a role given by "was appointed … of" ("P was appointed bellringer of the … collegiate
    # church"), a role named only by what is done, the deed's object first ("Boats at the … staithe are
    # caulked by P": the caulker), and a role after "its" set off before the person ("The … leper hospital
    # is run by its surgeon, P").
    ("bellringer-lochs", "dev", "{p} was appointed bellringer of the {e} collegiate church in the spring.", "{p} was raised beside the lochs of {v}.",
     "Beside which lochs was the bellringer of the {e} collegiate church raised?"),
    ("caulker-saltings", "dev", "Boats at the {e} staithe are caulked by {p}.", "{p} was apprenticed in the saltings of {v}.",
     "In which saltings was the caulker of the {e} staithe apprenticed?"),
    ("surgeon-coombes", "dev", "The {e} leper hospital is run by its surgeon, {p}.", "{p} was born in the coombes of {v}.",
     "In which coombes was the surgeon of the {e} leper hospital born?"),
    # Session 59's test chains (written before any run of them and before any change of the session; run
    # once in session 59, then moved to dev): a role given by "was sworn in as … of" ("P was sworn in as reeve of the … township"), a
    # role named only by what is done, the deed's object first ("Pianos at the … assembly rooms are tuned by
    # P": the tuner), and a role after "its" set off before the person ("The … lazaretto is overseen by its
    # sacristan, P").
    ("reeve-islets", "dev", "{p} was sworn in as reeve of the {e} township at Michaelmas.", "{p} was raised on the islets of {v}.",
     "On which islets was the reeve of the {e} township raised?"),
    ("tuner-dunes", "dev", "Pianos at the {e} assembly rooms are tuned by {p}.", "{p} grew up among the dunes of {v}.",
     "Among which dunes did the tuner of the {e} assembly rooms grow up?"),
    ("sacristan-tarns", "dev", "The {e} lazaretto is overseen by its sacristan, {p}.", "{p} was born beside the tarns of {v}.",
     "Beside which tarns was the sacristan of the {e} lazaretto born?"),
    # Session 60's test chains (written at the end of session 59, before any run of them; run once in
    # session 60, then moved to dev): a role after "its" set off before the person ("The …
    # constabulary answers to its sheriff, P"), a role named only by what is done, the deed's object
    # first ("Mailbags at the … posting house are sorted by P": the sorter), and a role given last, after
    # "as its" ("P has watched over the … scriptorium as its chamberlain since the war").
    ("sheriff-becks", "dev", "The {e} constabulary answers to its sheriff, {p}.", "{p} was raised beside the becks of {v}.",
     "Beside which becks was the sheriff of the {e} constabulary raised?"),
    ("sorter-saltmarshes", "dev", "Mailbags at the {e} posting house are sorted by {p}.", "{p} grew up in the saltmarshes of {v}.",
     "In which saltmarshes did the sorter of the {e} posting house grow up?"),
    ("chamberlain-clearings", "dev", "{p} has watched over the {e} scriptorium as its chamberlain since the war.", "{p} was schooled in the clearings of {v}.",
     "In which clearings was the chamberlain of the {e} scriptorium schooled?"),
    # The test chains, renewed in session 60 (written after session 60's held-out run and before any change
    # that followed it): a role after "its" set off before the person ("The … chase is patrolled by its
    # verderer, P"), a role named only by what is done, the deed's object first ("Frames at the … print
    # room are gilded by P": the gilder), and a role given last, after "as its" ("P has looked after the …
    # rabbit warren as its warrener since the fire").
    ("verderer-brecks", "test", "The {e} chase is patrolled by its verderer, {p}.", "{p} was raised on the brecks of {v}.",
     "On which brecks was the verderer of the {e} chase raised?"),
    ("gilder-meadows", "test", "Frames at the {e} print room are gilded by {p}.", "{p} grew up beside the water meadows of {v}.",
     "Beside which water meadows did the gilder of the {e} print room grow up?"),
    ("warrener-tors", "test", "{p} has looked after the {e} rabbit warren as its warrener since the fire.", "{p} was schooled among the tors of {v}.",
     "Among which tors was the warrener of the {e} rabbit warren schooled?"),
)  # fmt: skip


def _filler(rng: random.Random, corpus: str) -> list[str]:
    """Sentence pieces of one corpus, from a random point on (cycled)."""
    if corpus == "essays":
        pieces = split_sentences(load_paul_graham_text())
    else:
        paragraphs = load_squad()
        start = rng.randrange(len(paragraphs))
        pieces = [p.context + "\n\n" for p in (paragraphs[(start + i) % len(paragraphs)] for i in range(400))]
    start = rng.randrange(len(pieces))
    return pieces[start:] + pieces[:start]


def _haystack(
    facts: Sequence[str], target: int, rng: random.Random, corpus: str, tok: Tokenizer
) -> tuple[str, int]:
    """Filler of about ``target`` tokens with each fact as its own paragraph, spread evenly."""
    pieces = _filler(rng, corpus)
    budget = target - sum(tok.count(f) + 2 for f in facts)
    counts = tok.count_batch(pieces[: min(len(pieces), 20_000)])
    taken: list[str] = []
    used = 0
    while used < budget:  # cycles a corpus shorter than the target
        for at, (piece, count) in enumerate(zip(pieces, counts, strict=False)):
            if used + count > budget:
                # A long paragraph next must not leave the haystack short (a SQuAD paragraph can be
                # 10% of a 4K target): shorter ones after it fill the rest. Within 5%, stop as always,
                # so that those haystacks stay what they were.
                for later, fits in zip(pieces[at + 1 :], counts[at + 1 :], strict=False):
                    if budget - used <= 0.05 * target:
                        break
                    if used + fits <= budget:
                        taken.append(later)
                        used += fits
                break
            taken.append(piece)
            used += count
        else:
            continue
        break
    parts: list[str] = []
    last = 0
    for i, fact in enumerate(facts, start=1):
        cut = round(len(taken) * i / (len(facts) + 1))
        parts += [*taken[last:cut], f"\n\n{fact}\n\n"]
        last = cut
    text = "".join([*parts, *taken[last:]])
    return text, tok.count(text)


def distinct_entities(template: Template, rng: random.Random, k: int) -> list[str]:
    chosen: list[str] = []
    for _ in range(1_000 * k):
        if len(chosen) == k:
            return chosen
        e = template.entity(rng)
        if e not in chosen:
            chosen.append(e)
    raise ValueError(f"template {template.name!r} has fewer than {k} distinct entities")


def _fact_case(template: Template, kind: Kind, rng: random.Random) -> dict[str, Any]:
    """Facts, question, gold and label of one single-template kind."""
    k = {"one": 1, "paraphrase": 1, "distractors": 3, "absent": 4, "aggregation": rng.randint(3, 6)}[kind]
    names = distinct_entities(template, rng, k)
    values: list[str] = []
    for _ in range(1_000 * k):  # a template with fewer values than a kind plants is a bug, not a hang
        if len(values) == k:
            break
        v = template.value(rng)
        # An absent entity's name in a look-alike's value ("… its foundry master, Anselm Sarwex" beside the
        # absent "ironworks at Sarwex") puts it in the text (dev seed 9: the builder gave up). Only the
        # absent one: a template whose entities are colours has too few paints without a colour's name.
        if v not in values and not (kind == "absent" and (names[0] in v or v in names[0])):
            values.append(v)
    if len(values) < k:
        raise ValueError(f"template {template.name!r} has fewer than {k} distinct values")
    facts = [template.sentence.format(e=e, v=v) for e, v in zip(names, values, strict=True)]
    if kind == "absent":
        asked = names[0]
        facts = facts[1:]
        return {"facts": facts, "question": template.question.format(e=asked), "gold": ["NO INFORMATION"],
                "label": {"kind": kind, "absent": asked, "lookalikes": values[1:]}}  # fmt: skip
    if kind == "aggregation":
        return _aggregation(template, names, values, facts, rng)
    question = (template.paraphrase if kind == "paraphrase" else template.question).format(e=names[0])
    if kind == "distractors":
        order = rng.sample(range(3), 3)
        facts = [facts[i] for i in order]
    return {"facts": facts, "question": question, "gold": [values[0]],
            "label": {"kind": kind, "answer": values[0], "lookalikes": values[1:]}}  # fmt: skip


def _aggregation(
    template: Template, names: list[str], values: list[str], facts: list[str], rng: random.Random
) -> dict[str, Any]:
    listed = ", ".join(names[:-1]) + f" and {names[-1]}"
    plural, measure = template.collective, template.measure
    how = rng.choice(("sum", "highest", "count", "list") if template.number else ("count", "list"))
    label: dict[str, Any] = {"kind": "aggregation", "how": how, "candidates": names}
    if how == "sum":
        total = sum(float(v.replace(",", "")) for v in values)
        gold = f"{total:,.1f}" if any("." in v for v in values) else f"{int(total):,}"
        question = f"What is the total {measure} of the {plural} {listed}?"
        label["answer"] = total
    elif how == "highest":
        gold = names[max(range(len(values)), key=lambda i: float(values[i].replace(",", "")))]
        question = f"Which of the {plural} {listed} has the highest {measure}?"
        label["answer"] = gold
    elif how == "count":
        gold = str(len(names))
        question = f"For how many {plural} does the text give the {measure}?"
        label["answer"] = float(len(names))
    else:
        gold = listed
        question = f"For which {plural} does the text give the {measure}?"
        label["answer"] = names
    return {"facts": facts, "question": question, "gold": [gold], "label": label}


def _two_hop(hop: tuple[str, Split, str, str, str], rng: random.Random) -> dict[str, Any]:
    _, _, first, second, question = hop
    e, p, v = made_up_name(rng), person_name(rng), made_up_name(rng)
    while v in (e, *p.split()):  # "born in the village of Vinosk" beside "Leocadia Vinosk": no answer
        v = made_up_name(rng)
    facts = [first.format(e=e, p=p), second.format(p=p, v=v)]
    return {"facts": facts, "question": question.format(e=e), "gold": [v],
            "label": {"kind": "two-hop", "answer": v, "lookalikes": []}}  # fmt: skip


_TEMPLATES_PER_SEED = 13
"""How far each seed moves along a split's templates: n=8 instances per kind over six kinds read 13."""
_CHAINS_PER_SEED = 8
"""How far each seed moves along a split's chains: n=8 two-hop instances read 8."""


def build_general(
    *,
    target_tokens: int,
    n: int,
    seed: int,
    split: Split | None = None,
    kinds: Sequence[str] | None = None,
    tokenizer: Tokenizer | None = None,
) -> list[EvalInstance]:
    """``n`` instances per kind of ``split``'s templates (both splits when None), ``target_tokens`` long."""
    chosen: tuple[Kind, ...] = tuple(k for k in KINDS if kinds is None or k in kinds)
    unknown = [k for k in kinds or () if k not in KINDS]
    if unknown:
        raise ConfigurationError(
            f"unknown kind(s) {', '.join(unknown)} (the general suite has {', '.join(KINDS)})"
        )
    if target_tokens < 1_000:
        raise ConfigurationError(
            f"target_tokens={target_tokens} is too short for the general suite (min 1000)"
        )
    tok = resolve_tokenizer(tokenizer)
    splits: tuple[Split, ...] = (split,) if split else ("dev", "test")
    instances: list[EvalInstance] = []
    # Each seed reads its own run of templates and chains, seed 0 the first (the held-out runs' instances
    # are unchanged), and an instance's id (seed, kind, index) still names it whatever ``n`` (re-scoring
    # rebuilds it from the id). Found in session 57: with the run fixed at the start, the capable reader's
    # "8/8 at seeds 0-5" (n=8) had read 13 of dev's 260 templates and 8 of its 86 chains, at every seed.
    template_start, chain_start = seed * _TEMPLATES_PER_SEED, seed * _CHAINS_PER_SEED
    for which in splits:
        templates = [t for t in TEMPLATES if t.split == which]
        hops = [h for h in HOPS if h[1] == which]
        for kind in chosen:
            for i in range(n):
                rng = random.Random(f"{seed}:{which}:{kind}:{i}")
                if kind == "two-hop":
                    hop = hops[(chain_start + i) % len(hops)]
                    case, template_name = _two_hop(hop, rng), hop[0]
                else:
                    template = templates[(template_start + i + KINDS.index(kind)) % len(templates)]
                    case, template_name = _fact_case(template, kind, rng), template.name
                corpus = ("essays", "squad")[i % 2]
                text, actual = _haystack(case["facts"], target_tokens, rng, corpus, tok)
                absent = case["label"].get("absent")
                for _ in range(20):  # the absent entity must be absent: a filler word "teal" is a miss
                    if not absent or not re.search(rf"\b{re.escape(absent)}\b", text, re.IGNORECASE):
                        break
                    text, actual = _haystack(case["facts"], target_tokens, rng, corpus, tok)
                else:  # pragma: no cover - twenty random filler starts all holding one word
                    raise RuntimeError(f"the absent entity {absent!r} is in every filler drawn")
                for fact in case["facts"]:
                    if count_mentions(text, fact) != 1:  # pragma: no cover - a made-up fact is unique
                        raise RuntimeError(f"fact {fact!r} is not in the haystack exactly once")
                instances.append(
                    EvalInstance(
                        id=f"{SUITE}-{which}-{kind}-s{seed}-{i}-t{target_tokens}",
                        suite=SUITE, question=case["question"],
                        documents=[{"title": f"{corpus} with planted facts", "text": text}],
                        gold_answers=case["gold"], task_family="qa", target_tokens=target_tokens,
                        actual_tokens=actual, scorer="general", label=case["label"],
                        metadata={"split": which, "kind": kind, "template": template_name, "corpus": corpus,
                                  "facts": case["facts"], "seed": seed, "index": i},
                    )
                )  # fmt: skip
    return instances
