"""The source states contracts, not case histories: no numbered round of work ("session 45's split")
and no name from the project's own eval templates (their invented towns, guilds and people, their
template ids) in any module, prompt or docstring of the package, the README or the docs: a commit
message is where such history belongs, and code explained by the templates it was fitted to is code
fitted to them. Tests may name their own data."""

from __future__ import annotations

import functools
import itertools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("longgraph", "graphs", "nodes", "state", "prompts", "evals", "docs")
HISTORY = re.compile(r"\bsessions?[ -]\d+", re.IGNORECASE)


def _files() -> list[Path]:
    found = [ROOT / "README.md"]
    for folder in SOURCES:
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".toml", ".md") and "results" not in path.parts:
                found.append(path)
    return found


def test_no_numbered_rounds_of_work_in_the_source_or_the_docs() -> None:
    files = _files()
    assert len(files) > 100  # the walk found the package, not an empty folder
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if HISTORY.search(line)
    ]
    assert not cited, "\n".join(cited[:20])


_WORD = re.compile(r"[A-Za-z]+")
TEMPLATES_HOME = ROOT / "evals" / "data"


@functools.cache
def _template_words() -> frozenset[str]:
    """The invented words of the general suite's templates, derived from the templates themselves: every
    name its generator can make (two or three of its syllables), and the capitalised words its sentences
    and questions hold, less the words real text uses (the essays, SQuAD and HotpotQA paragraphs)."""
    from longgraph.evals.corpora import load_hotpot, load_paul_graham_text, load_squad
    from longgraph.evals.data import general

    real = {w.lower() for w in _WORD.findall(load_paul_graham_text())}
    real |= {w.lower() for p in load_squad() for w in _WORD.findall(p.context)}
    real |= {w.lower() for h in load_hotpot() for p in h.passages for w in _WORD.findall(str(p))}
    made = {"".join(c) for n in (2, 3) for c in itertools.product(general._SYLLABLES, repeat=n)}
    texts = [s for t in general.TEMPLATES for s in (t.sentence, t.question, t.paraphrase)]
    texts += [s for hop in general.HOPS for s in hop[1:] if isinstance(s, str)]
    named = {m.group(0).lower() for s in texts for m in re.finditer(r"(?<=[\w,;] )[A-Z][a-z]+", s)}
    return frozenset((made | named) - real)


def test_the_template_words_are_found_and_real_words_are_not() -> None:
    words = _template_words()
    assert len(words) > 10_000  # the generator's names: the derivation ran
    assert {"velmora", "quiganqui"} <= words  # a place written into a template, a generated name
    assert not {"guild", "bishop", "sunday", "london"} & words


def test_no_template_names_in_the_source_or_the_docs() -> None:
    from longgraph.evals.data import general

    ids = {t.name for t in general.TEMPLATES} | {hop[0] for hop in general.HOPS}
    ids = {i for i in ids if "-" in i}  # one-word ids are English words ("horses")
    id_pattern = re.compile("|".join(rf"(?<![\w-]){re.escape(i)}(?![\w-])" for i in sorted(ids)))
    words = _template_words()
    cited = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}"
        for path in _files()
        if TEMPLATES_HOME not in path.parents  # the templates themselves
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if id_pattern.search(line) or any(w.lower() in words for w in _WORD.findall(line))
    ]
    assert not cited, "\n".join(cited[:20])
