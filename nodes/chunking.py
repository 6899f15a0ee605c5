"""The one chunker: whole paragraphs, then sentences, then whitespace, then a hard token split.

Per LLM×MapReduce §3: fill each chunk with whole paragraphs while maximising its size; a paragraph
longer than the budget is split at sentence punctuation (Latin and CJK), a sentence longer than the
budget at whitespace, and a run with no whitespace hard at the token limit. A last chunk smaller than
half the budget is rebalanced with its neighbour (as the public implementation does). Offsets into
each document's original text are kept. Several small documents may share a chunk, each span headed
by its title, so 10,000 tiny documents cost a handful of calls, not 10,000.

Counting is done once per piece, in batches on one thread, so 1.28M tokens chunk in 0.4 s. The whole
pipeline is a stream (:func:`iter_chunks`): batches start small and double, and a chunk is given out
as soon as no later piece can change it (only the last two are held back for the tail's
rebalancing), so a run can send its first chunk to the model while the rest of a 1.28M-token input
is still being counted; the chunks are the same as all at once.

Runs of non-whitespace longer than ``_MAX_RUN`` characters are cut before counting: BPE on one
enormous "word" is quadratic, and a 5M-character line with no spaces must not hang the process.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from longgraph.count_worker import count_ahead, counter_for
from longgraph.errors import ConfigurationError
from longgraph.state.contract import Chunk, ChunkPart, DocumentIn
from longgraph.tokenizer import Tokenizer

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_SENTENCE_END = re.compile(r"(?<=[.?!;])\s+|(?<=[。！？；])\s*")
_WHITESPACE = re.compile(r"\s+")
_LONG_RUN = re.compile(r"\S{2000,}")
_MAX_RUN = 1000
_SEPARATOR_TOKENS = 1  # the blank line or space that joins two pieces
_FIRST_BATCH_CHARS = 16_000  # small, so the first chunk is out in milliseconds
_MAX_BATCH_CHARS = 64_000
"""About two chunks of a default run. At 1M characters, chunks came out 35 at a time, so their calls
reached the server in bursts and the last burst made the map round end 0.24 s after chunking instead
of 0.13 s (stub at 0.1 s per call, 1.28M tokens); counting costs the same either way (one tokenizer
call per piece)."""


@dataclass(frozen=True)
class Atom:
    """A piece that is never split further: a span of one document and its token count."""

    doc_index: int
    start: int
    end: int
    tokens: int


PART_JOIN = "\n\n"
"""What joins two parts of a chunk's text (each headed by its title label)."""


def title_label(title: str) -> str:
    """How a document's title heads its text in a chunk."""
    return f"[Document: {title}]\n" if title else ""


def _spans(text: str, start: int, end: int, pattern: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """Non-empty spans of ``text[start:end]`` between matches of ``pattern`` (stripped of whitespace)."""
    cursor = start
    for match in pattern.finditer(text, start, end):
        if match.start() > cursor:
            s, e = _strip(text, cursor, match.start())
            if e > s:
                yield s, e
        cursor = max(cursor, match.end())
    if cursor < end:
        s, e = _strip(text, cursor, end)
        if e > s:
            yield s, e


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _cut_long_runs(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split a span so that no piece holds a non-whitespace run longer than ``_MAX_RUN`` characters."""
    pieces: list[tuple[int, int]] = []
    cursor = start
    for match in _LONG_RUN.finditer(text, start, end):
        if match.start() > cursor:
            pieces.append((cursor, match.start()))
        pieces.extend(
            (s, min(s + _MAX_RUN, match.end())) for s in range(match.start(), match.end(), _MAX_RUN)
        )
        cursor = match.end()
    if cursor < end:
        pieces.append((cursor, end))
    return pieces


class _Counter:
    """Counts spans of one text in batches, guarding against pathological runs."""

    def __init__(self, text: str, tokenizer: Tokenizer) -> None:
        self.text = text
        self.tokenizer = tokenizer
        self.batch_chars = _FIRST_BATCH_CHARS
        """How much text the next batch of :func:`_counted` takes: doubles per batch, for the whole text."""

    def pieces(self, spans: Sequence[tuple[int, int]]) -> tuple[list[str], list[int]]:
        """The texts to count for ``spans`` (a span with a very long run cut into several) and the span
        each text belongs to."""
        texts: list[str] = []
        owners: list[int] = []
        for i, (s, e) in enumerate(spans):
            if e - s > 2000 and _LONG_RUN.search(self.text, s, e):
                for ps, pe in _cut_long_runs(self.text, s, e):
                    texts.append(self.text[ps:pe])
                    owners.append(i)
            else:
                texts.append(self.text[s:e])
                owners.append(i)
        return texts, owners

    @staticmethod
    def totals(spans: int, owners: Sequence[int], counts: Sequence[int]) -> list[int]:
        """Each span's tokens: the counts of its texts added up."""
        totals = [0] * spans
        for owner, n in zip(owners, counts, strict=True):
            totals[owner] += n
        return totals

    def count(self, spans: Sequence[tuple[int, int]]) -> list[int]:
        texts, owners = self.pieces(spans)
        return self.totals(len(spans), owners, self.tokenizer.count_batch(texts))


def _batches(spans: Iterable[tuple[int, int]], counter: _Counter) -> Iterator[list[tuple[int, int]]]:
    """``spans`` in batches that start small and double (for the whole text)."""
    batch: list[tuple[int, int]] = []
    chars = 0
    for span in spans:
        batch.append(span)
        chars += span[1] - span[0]
        if chars >= counter.batch_chars:
            counter.batch_chars = min(counter.batch_chars * 2, _MAX_BATCH_CHARS)
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch


def _counted(spans: Iterable[tuple[int, int]], counter: _Counter) -> Iterator[tuple[tuple[int, int], int]]:
    """Each span with its token count, counted in batches (:func:`_batches`); with the count worker,
    the next batch is cut and sent while the last is counted (:func:`count_ahead`)."""
    prepared = ((batch, *counter.pieces(batch)) for batch in _batches(spans, counter))
    for (batch, _, owners), counts in count_ahead(counter.tokenizer, prepared, lambda item: item[1]):
        yield from zip(batch, counter.totals(len(batch), owners, counts), strict=True)


def _atoms_of_document(doc_index: int, text: str, budget: int, tokenizer: Tokenizer) -> Iterator[Atom]:
    counter = _Counter(text, tokenizer)
    for (s, e), n in _counted(_spans(text, 0, len(text), _PARAGRAPH_BREAK), counter):
        if n <= budget:
            yield Atom(doc_index, s, e, n)
        else:
            yield from _split_oversized(doc_index, text, s, e, budget, counter)


def _split_oversized(
    doc_index: int, text: str, start: int, end: int, budget: int, counter: _Counter
) -> Iterator[Atom]:
    """A paragraph over budget: sentences; a sentence over budget: whitespace, then hard token cuts."""

    def pieces() -> Iterator[Atom]:
        for (s, e), n in _counted(_spans(text, start, end, _SENTENCE_END), counter):
            if n <= budget:
                yield Atom(doc_index, s, e, n)
            else:
                yield from _split_at_whitespace(doc_index, text, s, e, n, budget, counter)

    return _merge_small(pieces(), budget)


def _split_at_whitespace(
    doc_index: int, text: str, start: int, end: int, tokens: int, budget: int, counter: _Counter
) -> list[Atom]:
    """Windows of about ``budget`` tokens ending at whitespace, each counted once.

    Counting word by word would cost a tokenizer call per word (seconds for a 5M-character line
    without punctuation); instead the window's end is estimated from the sentence's characters per
    token, moved back to whitespace, and shrunk until its exact count fits. A window with no
    whitespace at all is cut hard at the token limit.
    """
    chars_per_token = max(1.0, (end - start) / max(tokens, 1))
    atoms: list[Atom] = []
    cursor = start
    while cursor < end:
        limit = min(end, cursor + int(budget * chars_per_token * 0.9) + 1)
        while True:
            cut = limit if limit == end else text.rfind(" ", cursor, limit)
            cut = limit if cut <= cursor else cut  # no space inside the window
            piece_start, piece_end = _strip(text, cursor, cut)
            if piece_end <= piece_start:
                break
            (n,) = counter.count([(piece_start, piece_end)])
            if n <= budget:
                atoms.append(Atom(doc_index, piece_start, piece_end, n))
                break
            if cut == limit and text.rfind(" ", cursor, limit) <= cursor:
                atoms.extend(_hard_split(doc_index, text, piece_start, piece_end, budget, counter.tokenizer))
                break
            limit = cursor + max(1, int((cut - cursor) * 0.85))
        cursor = cut
        while cursor < end and text[cursor].isspace():
            cursor += 1
    return atoms


def _hard_split(
    doc_index: int, text: str, start: int, end: int, budget: int, tokenizer: Tokenizer
) -> list[Atom]:
    starts = [start + offset for offset in tokenizer.token_starts(text[start:end])]
    atoms = []
    for i in range(0, len(starts), budget):
        piece_end = starts[i + budget] if i + budget < len(starts) else end
        atoms.append(Atom(doc_index, starts[i], piece_end, min(budget, len(starts) - i)))
    return atoms


def _merge_small(atoms: Iterable[Atom], budget: int) -> Iterator[Atom]:
    """Glue consecutive pieces of one oversized paragraph back together up to half the budget.

    Sentence and word pieces are atoms only for packing; merging them here keeps the packer's work
    (and the number of separators it charges for) proportional to paragraphs, not words.
    """
    last: Atom | None = None
    for atom in atoms:
        if last is not None and last.tokens + _SEPARATOR_TOKENS + atom.tokens <= budget // 2:
            last = Atom(last.doc_index, last.start, atom.end, last.tokens + _SEPARATOR_TOKENS + atom.tokens)
        else:
            if last is not None:
                yield last
            last = atom
    if last is not None:
        yield last


def _cost(atoms: Sequence[Atom], label_tokens: Sequence[int]) -> int:
    total, previous_doc = 0, -1
    for atom in atoms:
        if atom.doc_index != previous_doc:
            total += label_tokens[atom.doc_index]
            previous_doc = atom.doc_index
        total += atom.tokens + _SEPARATOR_TOKENS
    return total


def _pack(atoms: Iterable[Atom], budget: int, label_tokens: Sequence[int]) -> Iterator[list[Atom]]:
    """Greedy packing: each group is given out when the next atom does not fit it."""
    current: list[Atom] = []
    used = 0
    for atom in atoms:
        extra = atom.tokens + _SEPARATOR_TOKENS
        if not current or atom.doc_index != current[-1].doc_index:
            extra += label_tokens[atom.doc_index]
        if current and used + extra > budget:
            yield current
            current, used = [], 0
            extra = atom.tokens + _SEPARATOR_TOKENS + label_tokens[atom.doc_index]
        current.append(atom)
        used += extra
    if current:
        yield current


def _rebalance_tail(groups: list[list[Atom]], budget: int, label_tokens: Sequence[int]) -> None:
    """Even out a last chunk smaller than half the budget with its neighbour (in place)."""
    if len(groups) < 2 or _cost(groups[-1], label_tokens) >= budget // 2:
        return
    pool = groups[-2] + groups[-1]
    best: tuple[int, int] | None = None
    for cut in range(1, len(pool)):
        left, right = _cost(pool[:cut], label_tokens), _cost(pool[cut:], label_tokens)
        if left <= budget and right <= budget and (best is None or abs(left - right) < best[0]):
            best = (abs(left - right), cut)
    if best is not None:
        groups[-2:] = [pool[: best[1]], pool[best[1] :]]


def split_into_chunks(documents: Sequence[DocumentIn], budget: int, tokenizer: Tokenizer) -> list[Chunk]:
    """Chunk documents so that each chunk's text counts at most ``budget`` tokens."""
    return list(iter_chunks(documents, budget, tokenizer))


def check_budget(documents: Sequence[DocumentIn], budget: int, tokenizer: Tokenizer) -> list[int]:
    """Each document's title label in tokens; :class:`ConfigurationError` when the chunk budget holds no
    text, or a title takes half of it or more."""
    if budget < 16:
        raise ConfigurationError(f"chunk budget of {budget} tokens is too small to hold any text")
    labels = [title_label(doc.title) for doc in documents]
    label_tokens = tokenizer.count_batch(labels) if any(labels) else [0] * len(documents)
    if max(label_tokens, default=0) >= budget // 2:
        raise ConfigurationError(
            f"a document title takes {max(label_tokens)} tokens of a {budget}-token chunk budget"
        )
    return label_tokens


def iter_chunks(documents: Sequence[DocumentIn], budget: int, tokenizer: Tokenizer) -> Iterator[Chunk]:
    """:func:`split_into_chunks` as a stream: each chunk as soon as it is final.

    The budget and the titles are checked before the first chunk is given out.
    """
    label_tokens = check_budget(documents, budget, tokenizer)
    labels = [title_label(doc.title) for doc in documents]
    counter = counter_for(tokenizer, sum(len(doc.text) for doc in documents))
    atoms = (
        atom
        for index, doc in enumerate(documents)
        for atom in _atoms_of_document(
            index, doc.text, budget - label_tokens[index] - _SEPARATOR_TOKENS, counter
        )
    )
    held: list[list[Atom]] = []  # the last two groups: the tail's rebalancing may still change them
    chunk_id = 0
    for group in _pack(atoms, budget, label_tokens):
        held.append(group)
        if len(held) > 2:
            yield _to_chunk(chunk_id, held.pop(0), documents, labels, label_tokens)
            chunk_id += 1
    _rebalance_tail(held, budget, label_tokens)
    for group in held:
        yield _to_chunk(chunk_id, group, documents, labels, label_tokens)
        chunk_id += 1


MEMO_CHARS = 16_000_000
"""The most document characters whose chunks :func:`chunks_once` keeps, all entries together."""
_MEMO_ENTRIES = 4
_memo: OrderedDict[tuple[bytes, int, int], tuple[Tokenizer, tuple[Chunk, ...], int]] = OrderedDict()
_memo_lock = threading.Lock()


def chunks_once(documents: Sequence[DocumentIn], budget: int, tokenizer: Tokenizer) -> Iterator[Chunk]:
    """:func:`iter_chunks`, counted once per document set, budget and tokenizer in this process.

    Several questions about one document (``aask_many``, ``ask -q … -q …``, a batch's items on the
    same files) get the same chunks without counting the text again: under the shared-prefix layout
    the chunk budget does not depend on the question (``nodes/budget.py``), so every later question
    finds the first one's chunks. The key is a digest of the titles and texts, not the texts: a memo
    entry holds no document. Only complete chunkings are kept (a run stopped mid-way keeps nothing),
    the most recent :data:`_MEMO_ENTRIES` of at most :data:`MEMO_CHARS` characters in all; chunks are
    never changed after they are made, so runs may share them."""
    size = sum(len(doc.text) for doc in documents)
    if size > MEMO_CHARS:  # never kept: not worth a digest of the whole input either
        yield from iter_chunks(documents, budget, tokenizer)
        return
    digest = hashlib.blake2b(digest_size=16)
    for doc in documents:
        for field in (doc.title, doc.text):
            encoded = field.encode("utf-8", "surrogatepass")
            digest.update(len(encoded).to_bytes(8, "little"))
            digest.update(encoded)
    key = (digest.digest(), budget, id(tokenizer))
    with _memo_lock:
        found = _memo.get(key)
        if found is not None:
            _memo.move_to_end(key)
    if found is not None:
        yield from found[1]
        return
    made: list[Chunk] = []
    for chunk in iter_chunks(documents, budget, tokenizer):
        made.append(chunk)
        yield chunk
    with _memo_lock:  # the tokenizer is kept with its chunks, so its id is not another's meanwhile
        _memo[key] = (tokenizer, tuple(made), size)
        while len(_memo) > _MEMO_ENTRIES or sum(entry[2] for entry in _memo.values()) > MEMO_CHARS:
            _memo.popitem(last=False)


def forget_chunks() -> None:
    """Empty :func:`chunks_once`'s memo: a benchmark timing a first reading, a test starting clean."""
    with _memo_lock:
        _memo.clear()


def _to_chunk(
    chunk_id: int,
    atoms: list[Atom],
    documents: Sequence[DocumentIn],
    labels: list[str],
    label_tokens: Sequence[int],
) -> Chunk:
    runs: list[list[int]] = []  # [doc_index, start, end] of each document's run of atoms
    for atom in atoms:
        if runs and runs[-1][0] == atom.doc_index:
            runs[-1][2] = atom.end
        else:
            runs.append([atom.doc_index, atom.start, atom.end])
    parts = [
        ChunkPart(doc_index=doc_index, title=documents[doc_index].title, start=start, end=end)
        for doc_index, start, end in runs
    ]
    text = PART_JOIN.join(labels[p.doc_index] + documents[p.doc_index].text[p.start : p.end] for p in parts)
    return Chunk(id=chunk_id, parts=parts, tokens=_cost(atoms, label_tokens), text=text)


def part_spans(chunk: Chunk) -> list[tuple[int, int]]:
    """Where each part's own text lies in ``chunk.text``, its title label left out: the inverse of how
    the chunker renders a chunk (each part's span headed by its label, parts joined by a blank line)."""
    spans: list[tuple[int, int]] = []
    position = 0
    for part in chunk.parts:
        start = position + len(title_label(part.title))
        end = start + (part.end - part.start)
        spans.append((start, end))
        position = end + len(PART_JOIN)
    return spans


def chunk_bodies(chunk: Chunk) -> list[str]:
    """Each part's own text, without the title label that heads it in the chunk. Why: a chunk is embedded
    in short pieces, and the label glued to the first paragraph diluted it: a planted fact opening a
    chunk scored 0.251 against its list question where the same fact elsewhere scored 0.298, and PECAN's
    search never reached it (the general suite's dev split, the scripted capable reader: four companies
    of five). A chunk whose text is not laid out that way (built by hand) is its whole text."""
    spans = part_spans(chunk)
    labelled = all(
        chunk.text.startswith(title_label(part.title), start - len(title_label(part.title)))
        for part, (start, _) in zip(chunk.parts, spans, strict=True)
    )
    if not spans or not labelled or spans[-1][1] != len(chunk.text):
        return [chunk.text]
    return [chunk.text[start:end] for start, end in spans]


def halves(chunk: Chunk) -> tuple[Chunk, Chunk] | None:
    """``chunk`` cut in two at the whitespace nearest its middle (its parts and text cut alike, offsets
    kept), for a reading whose answer did not fit the output budget; None when it cannot be cut (a
    single word, or a chunk not laid out by the chunker)."""
    bodies = chunk_bodies(chunk)
    if len(bodies) != len(chunk.parts) or part_spans(chunk)[-1][1] != len(chunk.text):
        return None
    pieces = list(zip(chunk.parts, bodies, strict=True))
    middle, before = sum(len(b) for b in bodies) // 2, 0
    for index, (part, body) in enumerate(pieces):
        if before + len(body) <= middle and index < len(pieces) - 1:
            before += len(body)
            continue
        cuts = [m for m in re.finditer(r"\s+", body) if m.start() > 0]
        if not cuts:
            if index == 0:
                return None
            return _made(chunk, pieces[:index]), _made(chunk, pieces[index:])
        cut = min(cuts, key=lambda m: abs(m.start() - (middle - before)))
        left = ChunkPart(
            doc_index=part.doc_index, title=part.title, start=part.start, end=part.start + cut.start()
        )
        right = ChunkPart(
            doc_index=part.doc_index, title=part.title, start=part.start + cut.end(), end=part.end
        )
        return (
            _made(chunk, [*pieces[:index], (left, body[: cut.start()])]),
            _made(chunk, [(right, body[cut.end() :]), *pieces[index + 1 :]]),
        )
    return None


def _made(chunk: Chunk, pieces: Sequence[tuple[ChunkPart, str]]) -> Chunk:
    """A piece of ``chunk`` laid out as the chunker lays a chunk out, its tokens in proportion."""
    text = PART_JOIN.join(title_label(part.title) + body for part, body in pieces)
    tokens = max(1, chunk.tokens * len(text) // max(1, len(chunk.text)))
    return Chunk(id=chunk.id, parts=[part for part, _ in pieces], tokens=tokens, text=text)
