"""``longgraph show``: a saved result (``longgraph ask --json``) as a page, or several side by side.

A saved result names the files it read (path, SHA-256 of the text, characters) rather than holding
them: a result stays small, and the page is drawn from the documents as they are now only when they
are still the ones the run read; otherwise it shows the evidence as it was quoted and says why.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from longgraph.cli.common import Opt, claim_page, run_cli, stderr
from longgraph.cli.verdict import shown_answer
from longgraph.errors import InputError
from longgraph.inert import for_terminal
from longgraph.state.contract import DocumentIn, GraphOutput

if TYPE_CHECKING:
    from longgraph.api import Answer


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def source_records(files: Sequence[str], documents: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """What a saved result records of each file it read: enough to find it again and to know it is the
    same text (stdin has no path)."""
    return [
        {
            "title": d["title"],
            "path": None if f == "-" else str(Path(f).resolve()),
            "sha256": text_digest(d["text"]),
            "chars": len(d["text"]),
        }
        for f, d in zip(files, documents, strict=True)
    ]


def answers_page(results: Sequence[Answer], questions: Sequence[str]) -> str:
    """One page for the results of one run (one question, or several about the same files)."""
    from longgraph.answerview import AnswerView, html_page

    views = [AnswerView(q, r) for q, r in zip(questions, results, strict=True)]
    return html_page(views, results[0].source_documents)


def load_saved(path: Path) -> list[tuple[str, GraphOutput, list[dict[str, Any]]]]:
    """(question, result, sources) of each result in a ``--json`` file (one object, or a list of them
    for several questions); an :class:`InputError` naming the file and the problem otherwise. Only a
    regular file is read: a FIFO would wait for a writer that may never come, a device never end."""
    if not path.is_file():
        if not path.exists():
            raise InputError(f"{path}: no such file")
        what = "is a directory, not a file" if path.is_dir() else "not a regular file (a pipe or a device)"
        raise InputError(f"{path}: {what}")
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: not a result saved with `longgraph ask --json` (not JSON: {exc})") from exc
    items = value if isinstance(value, list) else [value]
    out = []
    for k, item in enumerate(items):
        where = f"{path}" + (f" (result {k + 1})" if len(items) > 1 else "")
        if not isinstance(item, dict) or "answer" not in item or "chunks" not in item:
            raise InputError(
                f"{where}: not a result saved with `longgraph ask --json` (no answer and chunks)"
            )
        try:
            result = GraphOutput.model_validate(item)
        except ValueError as exc:
            first = str(exc).splitlines()[:3]
            raise InputError(f"{where}: not a valid result ({' '.join(first)})") from exc
        sources = item.get("sources")
        out.append((str(item.get("question") or ""), result, sources if isinstance(sources, list) else []))
    return out


def documents_of(sources: Sequence[Mapping[str, Any]], notes: list[str]) -> list[DocumentIn] | None:
    """The documents a saved result read, if each is still there with the same text; else None, with
    the reason in ``notes``."""
    from longgraph.files import read_document

    if not sources:
        notes.append("the result does not name the files it read: showing the evidence as quoted")
        return None
    documents = []
    for s in sources:
        path = s.get("path")
        if not isinstance(path, str):
            notes.append(
                f"{s.get('title') or 'a document'} was read from stdin: showing the evidence as quoted"
            )
            return None
        try:
            title, text, _ = read_document(path)
        except InputError as exc:
            notes.append(f"{exc}: showing the evidence as quoted")
            return None
        if text_digest(text) != s.get("sha256"):
            notes.append(f"{path} changed since the run: showing the evidence as quoted")
            return None
        documents.append(DocumentIn(title=str(s.get("title") or title), text=text))
    return documents


def show(
    results: Annotated[list[Path], typer.Argument(help="Results saved with `longgraph ask --json`.")],
    html: Annotated[
        Path | None,
        Opt(
            "--html",
            help="Write a page: the answers side by side over the documents, every chunk's fate.",
            show_default=False,
        ),
    ] = None,
    debug: Annotated[bool, Opt()] = False,
) -> None:
    """Show saved results: their answers here, and with --html a page to check them on."""
    from longgraph.answerview import AnswerView, html_page

    def action() -> None:
        if html is not None:
            claim_page(html, results)
        loaded, names = [], []
        for path in results:
            for item in load_saved(path):
                loaded.append(item)
                names.append((item[1].strategy or "result", path.stem))
        digests = {tuple(s.get("sha256") for s in sources) for _, _, sources in loaded}
        if len(digests) > 1:
            raise InputError(
                "these results read different documents; side by side needs results over the same files"
            )
        for question, result, _ in loaded:
            answer = shown_answer(result).replace("\n", "\n  ")
            print(for_terminal(f"{result.strategy or 'result'}: {question}\n  {answer}"))
        if html is None:
            return
        notes: list[str] = []
        documents = documents_of(loaded[0][2], notes)
        for note in notes:
            stderr.print(for_terminal(f"note: {note}"), highlight=False, markup=False, soft_wrap=True)
        twice = {n for n, _ in names if sum(m == n for m, _ in names) > 1}
        labels = [f"{n} ({stem})" if n in twice else n for n, stem in names]
        views = [AnswerView(q, r, label) for (q, r, _), label in zip(loaded, labels, strict=True)]
        html.write_text(html_page(views, documents), encoding="utf-8")
        stderr.print(f"wrote {html}")

    run_cli(action, debug=debug)
