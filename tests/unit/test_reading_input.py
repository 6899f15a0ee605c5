"""The CLI's input reading and the settings checks that run before any call: each problem is a typed,
one-line error naming it (or a result with the problem recorded), never a model call on garbage."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from longgraph import files
from longgraph.errors import ConfigurationError, InputError
from longgraph.files import read_document
from longgraph.state.context import Context

TEXT = "Grandma Olga's borscht has smoked plums in it. Ünïcödé stays intact.\n"


def test_utf16_is_decoded_not_called_binary(tmp_path: Path) -> None:
    for codec in ("utf-16", "utf-16-be", "utf-32"):
        path = tmp_path / f"{codec}.txt"
        data = TEXT.encode(codec)
        if codec == "utf-16-be":
            data = b"\xfe\xff" + data
        path.write_bytes(data)
        title, text, notes = read_document(str(path))
        assert text == TEXT and notes == [] and title == path.name


def test_binary_after_the_first_8_kb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "report.txt"  # a PDF renamed: text first, binary streams later
    stream = bytes((i * 37 + 11) % 256 for i in range(8192))  # compressed-looking bytes
    path.write_bytes(b"%PDF-1.7 " + b"plain words " * 1000 + b"stream\n" + stream)
    with pytest.raises(InputError, match=r"report.txt: looks like binary data from byte 12,288 on"):
        read_document(str(path))


def test_nul_padding_in_text_is_dropped_and_said(tmp_path: Path) -> None:
    path = tmp_path / "padded.txt"
    path.write_bytes(TEXT.encode() + b"\x00" * 100 + b"trailing text.")
    _, text, notes = read_document(str(path))
    assert text == TEXT + "trailing text." and notes == ["padded.txt: 100 NUL byte(s) (padding) were dropped"]


def test_an_endless_input_is_refused_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A device is no document (refused before a byte is read); an endless stdin stops at the cap."""
    monkeypatch.setattr(files, "MAX_INPUT_BYTES", 1_000_000)
    with pytest.raises(InputError, match="/dev/zero: not a regular file"):
        read_document("/dev/zero")
    with open("/dev/zero", "rb") as endless:
        monkeypatch.setattr(files.sys, "stdin", io.TextIOWrapper(endless))
        with pytest.raises(InputError, match="stdin: larger than 1,000,000 bytes"):
            read_document("-")


def test_invalid_utf8_is_replaced_and_said(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("café au lait".encode("latin-1"))
    _, text, notes = read_document(str(path))
    assert text == "caf\ufffd au lait" and "invalid UTF-8 at byte 3" in notes[0]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"base_url": "localhost:8000/v1"}, "base_url 'localhost:8000/v1' is not an http"),
        ({"base_url": "   "}, "base_url is empty"),
        ({"base_url": ["http://a:8000/v1", "ftp://b/v1"]}, "base_url 'ftp://b/v1'"),
        ({"base_url": "gpu:8000?api_key=s3cret"}, "api_key=\\*\\*\\*|REDACTED|\\*\\*\\*"),
        ({"embedding_url": "embed-host/v1"}, "embedding_url 'embed-host/v1'"),
        ({"temperature": -0.5}, "temperature must be in \\[0, 2\\], got -0.5"),
    ],
)
def test_unusable_settings_are_named_before_any_call(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as raised:
        Context(**settings)  # type: ignore[arg-type]
    assert "s3cret" not in str(raised.value)


@pytest.mark.parametrize(
    ("documents", "question", "message"),
    [
        ("Grandma Olga's borscht " * 200, "What is in it?", "'documents' is one string: give a list"),
        ([{"text": "a"}], "", r"^invalid input: question is empty \(no visible character\)$"),
        ([{"text": "a"}], "  \n ", r"^invalid input: question is empty \(no visible character\)$"),
        (
            [{"text": "secret plums", "author": "x"}] + [7] * 9,
            "What?",
            r"^invalid input: documents\.0\.author: Extra inputs are not permitted; documents\.1: .*; and 5 more$",
        ),
    ],
)
def test_malformed_input_is_one_short_line_that_echoes_no_text(
    documents: object, question: str, message: str
) -> None:
    """pydantic's own text echoed the input and a documentation URL per problem (3,000 problems for a
    string passed as ``documents``); the error is a short line naming the fields instead."""
    from longgraph.api import graph_input_of

    with pytest.raises(InputError, match=message) as raised:
        graph_input_of(question, None, documents, [])  # type: ignore[arg-type]
    text = str(raised.value)
    assert "\n" not in text and "pydantic.dev" not in text and "plums" not in text and len(text) < 400


def test_a_list_of_plain_texts_is_a_list_of_untitled_documents() -> None:
    from longgraph.api import graph_input_of

    given = graph_input_of("What is in it?", None, ["first text", {"title": "B", "text": "second"}], [])
    assert given["documents"] == [{"title": "", "text": "first text"}, {"title": "B", "text": "second"}]


def test_progress_bars_of_a_resumed_run_reach_their_totals_saying_what_was_saved() -> None:
    """A resumed run sends progress only for the work it redoes: its bars are filled at the end, each
    saying how much came from the checkpoint."""
    import io

    from rich.console import Console
    from rich.progress import Progress

    from longgraph.cli.common import _Bars

    with Progress(console=Console(file=io.StringIO())) as progress:
        bars = _Bars(progress)
        for _ in range(6):
            bars({"stage": "map", "total": 10, "advance": 1})
        bars({"stage": "reduce", "total": 1, "advance": 1})
        bars.complete_from_checkpoint()
        shown = {task.description: (task.completed, task.total) for task in progress.tasks}
    assert shown == {"map (4 saved)": (10, 10), "reduce": (1, 1)}
