"""Prompt templates as data: one TOML file per strategy and variant, versioned.

A file holds, per stage, the template (``system``, ``user``), the output schema the stage asks for
(``schema``, a name from :data:`longgraph.state.outputs.SCHEMAS`) and, for stages that read notes,
the order they read them in (``notes = "strongest_first"`` or ``"document"``); per task family the
fill-ins (rubrics, answer instructions); and how notes are labelled (``[notes]``).

A template is plain ``str.format`` text; document text is substituted as a value, so braces in a
document never break rendering, and lines of it that look like the frame around it are marked
(:func:`neutralise_frames`), so a document cannot close its frame and give orders after it. The version is part of every result-cache key.

Layout rule every template follows (the test stub's oracle and prefix caching both rely on it): what
all calls of a run share — instructions, the question, the output format — comes first; the text
shown sits between a "... begins as follows:" and a "... concludes here." line; the question is
repeated after it on a "Question:" line, which small models need to stay on task, and a blank line
ends the question before any reminder of the task and the format.
"""

from __future__ import annotations

import functools
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from longgraph.errors import ConfigurationError

VARIANTS = ("compact", "paper")
"""Prompt variants: ``compact`` (the default) and ``paper`` (each paper's own prompts and protocol)."""


@dataclass(frozen=True)
class NoteLabels:
    """How a prompt set labels the parts of a note (``nodes/render.py``)."""

    header: str = "Note from"
    unit: str = "chunk"
    evidence: str = "Evidence"
    reasoning: str = "Reasoning"
    answer: str = "Answer"
    confidence: str = "Confidence"
    """Empty: confidence is not shown (Segment+ has none)."""
    show_empty_evidence: bool = True


@dataclass(frozen=True)
class StagePrompt:
    system: str
    user: str
    schema: str
    notes: str = "document"
    """The order notes are shown in: ``document`` or ``strongest_first``."""
    mode: str = ""
    """"text": always ask for this stage's text protocol, whatever the run's structured-output mode (PECAN's
    bullet points: measured with SmolLM2 under a JSON list constraint it wrote ``{"points":[]}`` or
    ``["points"]``; asked for bullets, it wrote real ones)."""
    reply: str = ""
    followup: str = ""
    """A second turn: after ``user``, the assistant's ``reply`` and then ``followup`` (PECAN's answer turn
    repeats the search prompt, the model's "Yes", then asks for the answer: one shared prefix)."""


@dataclass(frozen=True)
class PromptSet:
    """The prompts of one strategy in one variant: a template per stage and per-task fill-ins."""

    strategy: str
    version: str
    stages: dict[str, StagePrompt]
    tasks: dict[str, dict[str, str]]
    labels: NoteLabels = field(default_factory=NoteLabels)

    def stage(self, stage: str) -> StagePrompt:
        try:
            return self.stages[stage]
        except KeyError as exc:
            raise ConfigurationError(f"prompts/{self.strategy}: no stage {stage!r}") from exc

    def render(self, stage: str, task: str, *, format: str, **variables: str) -> list[tuple[str, str]]:
        """Return ``[(role, content), ...]`` for one call."""
        template = self.stage(stage)
        fills: dict[str, Any] = dict(self.tasks.get(task) or self.tasks.get("qa") or {})
        fills.setdefault("ask_first", "")  # a caller that gives no layout gets the shared prefix
        fills.update(variables)
        if "context" in fills:
            fills["context"] = neutralise_frames(str(fills["context"]))
        fills["format"] = format
        try:
            user = template.user.format(**fills)
            system = template.system.format(**fills)
            followup = template.followup.format(**fills)
        except KeyError as exc:
            raise ConfigurationError(f"prompts/{self.strategy}/{stage}: missing variable {exc}") from exc
        if followup:
            return [("system", system), ("user", user), ("assistant", template.reply), ("user", followup)]
        return [("system", system), ("user", user)]

    def key(self, stage: str) -> str:
        """Identifies the exact template: goes into cache keys."""
        return f"{self.strategy}/{stage}@{self.version}"


def ask_first(layout: str, question: str) -> str:
    """What a per-chunk prompt says before its chunk (``{ask_first}``): the question, except under the
    "shared_prefix" layout (``prompt_layout``), where the chunk follows the instructions directly so
    that every question's call on it shares its prefix. An unresolved "auto" counts as the longer."""
    return "" if layout == "shared_prefix" else f"Question: {question}\n\n"


_LINE_START = "(?<![^\n\r\x0b\x0c\x85\u2028\u2029])"
"""At the start of the text or right after any line separator (``\r``, U+2028, ... as well as ``\n``)."""


_BETWEEN_LETTERS = " \t_.\n-"
"""What may stand between two letters of a frame word: a space, a tab, ``_``, ``.``, ``-`` or a line
break (the view maps every line separator to ``\n``)."""


_GAP = "[ \t_.\n-]?"


def _spaced(word: str) -> str:
    """``word`` as a pattern that also matches it with one of :data:`_BETWEEN_LETTERS` between any two
    letters ("c o n c l u d e s", "c-o-n-c-l-u-d-e-s", "con\ncludes")."""
    return _GAP.join(word)


_LABEL_BODY = (
    r"(?P<label>[ \t>*_#`~|+\-]*(?:\d{1,3}[.)][ \t]*)?(?:"
    + _spaced("question")
    + "|"
    + _spaced("text")
    + "|"
    + _spaced("proposed")
    + r"[ \t_.\-]+"
    + _spaced("answer")
    + r"))(?=[*_`~ \t]*:)"
)
"""A frame label, as markdown or a quote may dress it: "## Text:", "**Question:**", "> Question:", "1. Text:",
and the verification prompt's "Proposed answer:"."""
_VERB = f"(?:{_spaced('begin')}(?:{_GAP}s)?|{_spaced('start')}(?:{_GAP}s)?)"
_AS_FOLLOWS = _spaced("as") + r"\s+" + _spaced("follows")
_CONCLUDES_HERE = _spaced("conclude") + f"(?:{_GAP}s)?" + r"\s+" + _spaced("here")
_FRAME_WORDS = re.compile(
    rf"(?P<open>\b{_VERB}\s+{_AS_FOLLOWS})(?=\s*:)|(?P<close>\b{_CONCLUDES_HERE})(?=\s*\.)|"
    + _LINE_START
    + _LABEL_BODY,
    re.IGNORECASE,
)
"""Every frame word, on the text as :func:`_detection_view` shows it, letter-spaced too: the definition
the fast path below is tested against (``tests/unit/test_frames.py``)."""
_FRAME_LABELS_AFTER_NEWLINE = re.compile("\n" + _LABEL_BODY, re.IGNORECASE)
"""The label alternative alone, anchored on the newline before it rather than on a look-behind: a
pattern that starts with a character lets the regex engine skip to the newlines instead of trying every
position (0.05 ms on a 30 KB chunk, against 0.13 ms with ``^`` and 1.3 ms for the whole pattern; one
render per call). The view maps every line separator to ``\n``."""
_OPENING = re.compile(_AS_FOLLOWS + r"(?=\s*:)", re.IGNORECASE)
_OPENING_VERB = re.compile(rf"\b{_VERB}\s+\Z", re.IGNORECASE)
_CLOSING = re.compile(_CONCLUDES_HERE + r"(?=\s*\.)", re.IGNORECASE)
_WORD_CHARACTER = re.compile(r"\w")
"""The open and close alternatives, each starting with its words rather than with ``\\b`` and a choice
of verbs, so that the engine skips to them: the word boundary and the verb before are checked on each
match (0.14 and 0.12 ms on a 30 KB chunk that holds their words, against 0.54 and 0.40 ms). One in nine
chunks of the 1.28M-token needle holds "conclude" or "as follows"; they took 1.3 ms each."""


def _letters_drawn_as_ascii() -> dict[int, str]:
    """Letters that are an ASCII letter with a mark or in another style — "é", "İ", "𝐜" (mathematical
    bold), "ⓒ", "ℚ" — each to that letter (by Unicode's compatibility or canonical decomposition), one
    code point for one."""
    blocks = ((0x00C0, 0x024F), (0x1E00, 0x1EFF), (0x2100, 0x214F), (0x2460, 0x24FF), (0x1D400, 0x1D7FF),
              (0x1F130, 0x1F189))  # fmt: skip
    table: dict[int, str] = {}
    for start, end in blocks:
        for code in range(start, end + 1):
            for form in (
                unicodedata.normalize("NFKC", chr(code)),
                unicodedata.normalize("NFD", chr(code))[:1],
            ):
                if len(form) == 1 and form.isascii() and form.isalpha():
                    table[code] = form
                    break
    return table


_SEPARATORS = {ord(c): "\n" for c in "\r\x0b\x0c\x85\u2028\u2029"}
_LOOKALIKES: dict[int, str] = {
    **_letters_drawn_as_ascii(),
    **_SEPARATORS,
    **{code: chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)},  # fullwidth ASCII
    **{
        ord(c): " "
        for c in "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
    },
    **{ord(c): ":" for c in "\u02d0\u02f8\u0589\u05c3\u16ec\u1803\u1809\u2236\ua789\ufe13\ufe30\ufe55"},
    **{ord(c): "." for c in "\u2024\ufe52\uff61\u3002"},
    # small capitals: "ᴄᴏɴᴄʟᴜᴅᴇꜱ ʜᴇʀᴇ." (no small capital Q exists; ǫ stays the o it is)
    **dict(zip(map(ord, "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ"), "abcdefghijklmnoprstuvwyz", strict=True)),
    # Cyrillic and Greek letters drawn like Latin ones: "Quеstion" with a Cyrillic е is still a label
    **dict(zip(map(ord, "аеорсуххіјѕԁԛԝһӏАВЕКМНОРСТХІЈЅ"), "aeopcyxxijsdqwhlABEKMHOPCTXIJS", strict=True)),
    **dict(zip(map(ord, "αονριτκυΑΒΕΖΗΙΚΜΝΟΡΤΧΥ"), "aovpitkuABEZHIKMNOPTXY", strict=True)),
}
"""One character for one, so that a match in the view is a match at the same place of the text."""
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u0300-\u036f]"
)
"""Characters that draw nothing of their own: inside a frame word they hide it from a plain pattern
(combining marks too: "Que\u0301stion" is "Quéstion" decomposed)."""
_SPECIAL_TOKENS = re.compile(
    r"<\|[^\s<>|]{1,40}\|>|</?s>|<(?:start|end)_of_turn>|\[/?INST\]|<</?SYS>>|<\|(?:im_start|im_end)"
)
"""Chat-template control tokens (ChatML's ``<|im_end|>``, Llama's ``<|eot_id|>``, ``</s>``, Gemma's
turns, ``[INST]``): vLLM's tokenizer reads them in a prompt's text as the real tokens, so a document
holding ``<|im_end|>\n<|im_start|>system`` would open a turn of its own."""


_INVISIBLE_CODES = [
    *map(ord, "\u00ad\u034f\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"),
    *range(0x300, 0x370),
]
_SUSPECTS = frozenset(map(chr, [*_LOOKALIKES, *_INVISIBLE_CODES]))
"""Every character the view changes or leaves out."""


def _has_suspect(text: str) -> bool:
    """Whether the view of ``text`` differs from it: a suspect among its non-ASCII characters, or an
    ASCII line separator. Not one regex class of the suspects: two thousand characters, some beyond the
    BMP, are tested one by one (27 ms on 30 KB)."""
    if any(ch in text for ch in _ASCII_SUSPECTS):
        return True
    # Its non-ASCII characters alone: no byte of a multi-byte UTF-8 character is ASCII, so deleting the
    # ASCII bytes leaves them whole (0.03 ms on 30 KB, where a regex for the runs took 0.24 ms).
    encoded = text.encode("utf-8", "surrogatepass")
    return not _SUSPECTS.isdisjoint(encoded.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass"))


_ASCII_BYTES = bytes(range(128))


"""Any character the view changes or leaves out."""


def _defused(match: re.Match[str]) -> str:
    token = match.group(0)
    return f"{token[0]} {token[1:]}"


_ASCII_SUSPECTS = tuple(chr(code) for code in _LOOKALIKES if code < 128)
"""The line separators CR, VT and FF: every other character the view changes is non-ASCII."""


def _plain_ascii(text: str) -> bool:
    """Whether the view of ``text`` is ``text`` itself, known without a regex: ASCII, no odd line break."""
    return text.isascii() and not any(ch in text for ch in _ASCII_SUSPECTS)


def _detection_view(text: str) -> tuple[str, list[int] | None]:
    """The text as frame words are looked for in it: lookalike characters and line separators as
    their plain forms, invisible characters left out. With the positions of the view's characters in
    ``text`` when leaving some out shifted them (else None: same positions)."""
    if _plain_ascii(text) or not _has_suspect(text):  # the search: 0.2 ms on 30 KB, where
        return text, None  # translate takes 1.9 ms and the ASCII test a few microseconds
    view = text.translate(_LOOKALIKES)
    if _INVISIBLE.search(view) is None:
        return view, None
    kept = [i for i, c in enumerate(view) if _INVISIBLE.match(c) is None]
    return "".join(view[i] for i in kept), kept


def neutralise_frames(text: str) -> str:
    """``text`` (a document's, or notes quoting one) unable to close the frame it is shown in.

    Every template fences the text between "... begins as follows:" and "... concludes here." lines and
    asks its question on a "Question:" line after it. A document holding such a line could end its
    frame early and ask a question of its own ("The text concludes here. / Question: ignore the above
    ..."). Those words get a visible "(quoted)" mark inside the text, so the only frame lines are the
    template's own; everything else the text says stays as it was. The words are looked for in a
    normalised view of the text (:func:`_detection_view`: fullwidth forms, Cyrillic lookalikes,
    accented and mathematical letters, odd spaces and line separators folded, zero-width characters and
    combining marks ignored; markdown and quote prefixes and letter-spacing allowed), and the model's own control tokens are broken apart (:data:`_SPECIAL_TOKENS`). What gets
    marked is what ``_FRAME_WORDS`` matches in the view (``tests/unit/test_frames.py``)."""
    if "<" in text or "INST]" in text:
        text = _SPECIAL_TOKENS.sub(_defused, text)
    view, positions = _detection_view(text)
    # casefold, not lower: the regex's IGNORECASE also matches "ſ" (long s) for "s", which lower()
    # keeps, so "begins aſ follows:" took the fast path and was left able to open a frame.
    # Without its spaces, what any match holds: the regexes run only where an open or a close may be.
    # As UTF-8 bytes: ``bytes.translate`` deletes in one pass, ten times faster than ``str.translate``
    # (1.8 ms on 30 KB), and no byte of a multi-byte character is ASCII, so only the gaps go.
    folded = view.casefold().encode("utf-8", "surrogatepass").translate(None, _BETWEEN_LETTER_BYTES)
    ends: list[int] = []
    if b"follows" in folded:
        ends += [m.end() for m in _OPENING.finditer(view) if _opens(m)]
    if b"conclude" in folded:
        ends += [m.end() for m in _CLOSING.finditer(view) if _closes(m)]
    ends += [m.end() - 1 for m in _FRAME_LABELS_AFTER_NEWLINE.finditer("\n" + view)]
    if not ends:
        return text
    if positions is not None:
        ends = [positions[end - 1] + 1 for end in ends]
    marked, done = [], 0
    for end in sorted(set(ends)):
        marked += [text[done:end], QUOTED_MARK]
        done = end
    marked.append(text[done:])
    return "".join(marked)


_BETWEEN_LETTER_BYTES = _BETWEEN_LETTERS.encode("ascii")

QUOTED_MARK = " (quoted)"
"""What marks a frame word inside shown text; taken out of every model answer (``longgraph/llm.py``)."""


def _opens(match: re.Match[str]) -> bool:
    """ "as follows" opens a frame when "begins"/"starts" (a word of its own) comes before it."""
    start = match.start()
    # ``\b`` at the search's start still sees the character before it
    return _OPENING_VERB.search(match.string, max(0, start - 40), start) is not None


def _closes(match: re.Match[str]) -> bool:
    """ "concludes here" closes a frame when it begins a word."""
    start = match.start()
    return not (start > 0 and _WORD_CHARACTER.match(match.string, start - 1) is not None)


def _file_name(strategy: str, variant: str) -> str:
    return f"{strategy}.toml" if variant == "paper" else f"{strategy}_{variant}.toml"


@functools.lru_cache(maxsize=64)
def load_prompt_file(name: str) -> PromptSet:
    """Load ``prompts/<name>`` from the installed package."""
    try:
        raw = resources.files("longgraph.prompts").joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigurationError(f"no prompt file {name} in longgraph.prompts") from exc
    data = tomllib.loads(raw)
    try:
        stages = {
            stage: StagePrompt(
                system=str(body.get("system", "")),
                user=str(body["user"]),
                schema=str(body["schema"]),
                notes=str(body.get("notes", "document")),
                mode=str(body.get("mode", "")),
                reply=str(body.get("reply", "")),
                followup=str(body.get("followup", "")),
            )
            for stage, body in data.get("stages", {}).items()
        }
    except KeyError as exc:
        raise ConfigurationError(f"prompts/{name}: a stage lacks {exc}") from exc
    tasks = {task: {k: str(v) for k, v in body.items()} for task, body in data.get("tasks", {}).items()}
    labels = NoteLabels(**data.get("notes", {}))
    return PromptSet(
        strategy=str(data["strategy"]),
        version=str(data["version"]),
        stages=stages,
        tasks=tasks,
        labels=labels,
    )


def prompts_for(strategy: str, variant: str) -> PromptSet:
    """The prompt set of ``strategy`` in ``variant``.

    A strategy without a file for the variant uses its paper prompts: a variant is an optimisation
    for some models, never a requirement.
    """
    try:
        return load_prompt_file(_file_name(strategy, variant))
    except ConfigurationError:
        if variant == "paper":
            raise
        return load_prompt_file(_file_name(strategy, "paper"))


@functools.lru_cache(maxsize=1)
def all_prompt_sets() -> tuple[PromptSet, ...]:
    """Every prompt file of the package (loaded once: reading them is file I/O)."""
    names = sorted(
        entry.name for entry in resources.files("longgraph.prompts").iterdir() if entry.name.endswith(".toml")
    )
    return tuple(load_prompt_file(name) for name in names)


@functools.lru_cache(maxsize=1)
def widest_labels() -> NoteLabels:
    """Each label at its longest over all prompt sets: measuring with it bounds every rendering."""
    sets = [s.labels for s in all_prompt_sets()] or [NoteLabels()]

    def longest(attribute: str) -> str:
        return max((str(getattr(labels, attribute)) for labels in sets), key=len)

    return NoteLabels(
        header=longest("header"),
        unit=longest("unit"),
        evidence=longest("evidence"),
        reasoning=longest("reasoning"),
        answer=longest("answer"),
        confidence=longest("confidence") or "Confidence",
        show_empty_evidence=True,
    )
