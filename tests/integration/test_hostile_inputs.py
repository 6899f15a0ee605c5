"""Every command against hostile and mistaken settings, each through the real CLI in a subprocess: one
error line on stderr naming the problem (its control characters shown, never acted on), the documented
exit code (``--debug`` adds the traceback and keeps the code), nothing on stdout, and every file the user
had left exactly as it was. Together with ``test_bad_input.py`` (documents, questions, the API) this is
the bad-input suite of 150+ distinct inputs.

No case reaches a model: each fails before its first call (the endpoint named is a closed port, so one
that got further would fail with exit 3 and another message).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from longgraph.tests.conftest import QUESTION, planted
from longgraph.tests.integration.support import run_longgraph

pytestmark = pytest.mark.integration

DEAD = "http://127.0.0.1:9/v1"
"""Nothing listens on the discard port: a case that got as far as a call would end with exit 3."""
ESC = "\x1b"


def _files(home: Path) -> None:
    """The user's folder every case starts from."""
    (home / "doc.txt").write_text(planted(3_000), encoding="utf-8")
    (home / "note.txt").write_text("my precious notes\n", encoding="utf-8")
    (home / "binary.bin").write_bytes(os.urandom(8192))
    (home / "empty.txt").write_text("  \n", encoding="utf-8")
    (home / "page.html").write_text("<html><body>my page</body></html>", encoding="utf-8")
    (home / "other.jsonl").write_text('{"name": "a"}\n{"name": "b"}\n', encoding="utf-8")
    (home / "torn.jsonl").write_text('{"id": "1", "input_digest": "x"}\nnot a row', encoding="utf-8")
    (home / "sub").mkdir()
    (home / "sub" / "inner.txt").write_text("inner", encoding="utf-8")
    (home / "emptydir").mkdir()
    (home / "outside.txt").write_text("the machine's secret", encoding="utf-8")
    (home / "items").mkdir()
    item = {"id": "1", "question": QUESTION, "files": ["../doc.txt"]}
    (home / "items" / "bad-path.jsonl").write_text(json.dumps(item) + "\n", encoding="utf-8")
    (home / "items.jsonl").write_text(
        json.dumps({"id": "1", "question": QUESTION, "files": ["doc.txt"]}) + "\n"
    )
    (home / "results.checkpoints.sqlite").write_text("not a database", encoding="utf-8")
    (home / "data.card.md").write_text("# My own card\n", encoding="utf-8")
    (home / "mine.progress.jsonl").write_text('{"step": 1}\n', encoding="utf-8")


def _items(home: Path, *rows: object, raw: bytes | None = None) -> str:
    path = home / f"case-{hashlib.sha256(repr(rows).encode() + (raw or b'')).hexdigest()[:8]}.jsonl"
    path.write_bytes(raw if raw is not None else "\n".join(json.dumps(r) for r in rows).encode() + b"\n")
    return str(path)


def _ask(*extra: str, endpoint: bool = True) -> Callable[[Path], list[str]]:
    base = ["ask", "doc.txt", "-q", QUESTION, "--model", "m", "--context-window", "2048", "--no-cache"]
    return lambda home: [*base, *(["--base-url", DEAD] if endpoint else []), *extra]


def _batch(items: Callable[[Path], str] | str, *extra: str) -> Callable[[Path], list[str]]:
    def args(home: Path) -> list[str]:
        source = items(home) if callable(items) else items
        out = [] if "--out" in extra else ["--out", "results.jsonl"]
        return [
            "batch",
            source,
            *out,
            *extra,
            "--base-url",
            DEAD,
            "--model",
            "m",
            "--no-cache",
            "--no-progress",
        ]

    return args


def _synth(*args: str) -> Callable[[Path], list[str]]:
    return lambda home: ["synth", *args, "--base-url", DEAD, "--model", "m", "--context-window", "2048"]


def _q(question: str) -> Callable[[Path], list[str]]:
    return lambda home: ["ask", "doc.txt", "-q", question, "--base-url", DEAD, "--model", "m"]


Q = QUESTION
CASES: dict[str, tuple[Callable[[Path], list[str]], int, str]] = {
    # name: (home -> arguments, exit code, words the one error line must hold)
    # --- ask: endpoint URLs
    "base-url unclosed IPv6": (_ask("--base-url", "http://[::1", endpoint=False), 2, "base_url"),
    "base-url port not a number": (_ask("--base-url", "http://h:abc/v1", endpoint=False), 2, "base_url"),
    "base-url ftp": (_ask("--base-url", "ftp://h/v1", endpoint=False), 2, "not an http(s) URL"),
    "base-url without scheme": (_ask("--base-url", "localhost:8000", endpoint=False), 2, "base_url"),
    "base-url empty": (_ask("--base-url", "", endpoint=False), 2, "base_url"),
    "base-url no host": (_ask("--base-url", "http://", endpoint=False), 2, "base_url"),
    "base-url with a space": (_ask("--base-url", "http:// h/v1", endpoint=False), 2, "spaces"),
    "base-url port 0": (_ask("--base-url", "http://h:0/v1", endpoint=False), 2, "port"),
    "base-url port too large": (_ask("--base-url", "http://h:99999/v1", endpoint=False), 2, "base_url"),
    "base-url javascript": (_ask("--base-url", "javascript:alert(1)", endpoint=False), 2, "base_url"),
    "base-url file": (_ask("--base-url", "file:///etc/passwd", endpoint=False), 2, "base_url"),
    "base-url escape sequence": (_ask("--base-url", f"http://h/v1{ESC}[2J", endpoint=False), 2, "control"),
    "base-url credentials not shown": (_ask("--base-url", "ftp://user:hunter22@h/v1", endpoint=False), 2, "***"),
    # --- ask: numbers
    "window zero": (_ask("--context-window", "0"), 2, "context_window"),
    "window negative": (_ask("--context-window", "-1"), 2, "context_window"),
    "window a trillion": (_ask("--context-window", "1000000000000"), 2, "context_window"),
    "window just over the cap": (_ask("--context-window", "16777217"), 2, "context_window"),
    "output tokens zero": (_ask("--max-output-tokens", "0"), 2, "max_output_tokens"),
    "output tokens negative": (_ask("--max-output-tokens", "-5"), 2, "max_output_tokens"),
    "output tokens absurd": (_ask("--max-output-tokens", "99999999999"), 2, "max_output_tokens"),
    "chunk size absurd": (_ask("--chunk-size", "1000000000000"), 2, "chunk_size"),
    "temperature negative": (_ask("--temperature", "-1"), 2, "temperature"),
    "temperature too high": (_ask("--temperature", "3"), 2, "temperature"),
    "temperature nan": (_ask("--temperature", "nan"), 2, "temperature"),
    "temperature inf": (_ask("--temperature", "inf"), 2, "temperature"),
    "concurrency zero": (_ask("--max-concurrency", "0"), 2, "max_concurrency"),
    "concurrency negative": (_ask("--max-concurrency", "-1"), 2, "max_concurrency"),
    "concurrency absurd": (_ask("--max-concurrency", "100000"), 2, "max_concurrency"),
    "timeout zero": (_ask("--timeout", "0"), 2, "request_timeout"),
    "timeout negative": (_ask("--timeout", "-1"), 2, "request_timeout"),
    "timeout nan": (_ask("--timeout", "nan"), 2, "request_timeout"),
    "timeout a billion seconds": (_ask("--timeout", "1e9"), 2, "request_timeout"),
    "retries negative": (_ask("--retries", "-1"), 2, "max_retries"),
    "retries a thousand": (_ask("--retries", "1000"), 2, "max_retries"),
    "max calls zero": (_ask("--max-calls", "0"), 2, "max_calls"),
    "max calls negative": (_ask("--max-calls", "-3"), 2, "max_calls"),
    "max prompt tokens zero": (_ask("--max-prompt-tokens", "0"), 2, "max_prompt_tokens"),
    "structured output xml": (_ask("--structured-output", "xml"), 2, "structured_output"),
    "strategy empty": (_ask("--strategy", ""), 2, "strategy"),
    "strategy with shell words": (_ask("--strategy", "mapreduce; rm -rf ~"), 2, "strategy"),
    "task empty": (_ask("--task", ""), 2, "task"),
    # --- ask: files as settings
    "tokenizer binary file": (_ask("--tokenizer", "binary.bin"), 2, "tokenizer"),
    "tokenizer missing": (_ask("--tokenizer", "nope/tokenizer.json"), 2, "tokenizer"),
    "tokenizer folder without one": (_ask("--tokenizer", "sub"), 2, "tokenizer"),
    "tokenizer empty file": (_ask("--tokenizer", "empty.txt"), 2, "tokenizer"),
    "tokenizer text file": (_ask("--tokenizer", "note.txt"), 2, "tokenizer"),
    "checkpoint mysql": (_ask("--resume", "t", "--checkpoint-db", "mysql://u:hunter22@h/db"), 2, "mysql"),
    "checkpoint sqlite url": (_ask("--resume", "t", "--checkpoint-db", "sqlite:///x.db"), 2, "sqlite"),
    "checkpoint psycopg url": (_ask("--resume", "t", "--checkpoint-db", "postgresql+psycopg://u:hunter22@h/db"), 2, "scheme"),
    "checkpoint empty": (_ask("--resume", "t", "--checkpoint-db", ""), 2, "empty"),
    "checkpoint url with one slash": (_ask("--resume", "t", "--checkpoint-db", "postgresql:/u:hunter22@db/x"), 2, "not one"),
    "checkpoint url with a space": (_ask("--resume", "t", "--checkpoint-db", "postgresql ://u:hunter22@db/x"), 2, "not one"),
    "checkpoints list url one slash": (lambda h: ["checkpoints", "list", "--checkpoint-db", "postgres:/u:hunter22@h/db"], 2, "not one"),
    "checkpoint url without its colon": (_ask("--resume", "t", "--checkpoint-db", "postgresql//u:hunter22@h:9/db"), 2, "not one"),
    "checkpoint url without its scheme": (_ask("--resume", "t", "--checkpoint-db", "//u:hunter22@h:9/db"), 2, "without its scheme"),
    "checkpoint credentials alone": (_ask("--resume", "t", "--checkpoint-db", "u:hunter22@h:9/db"), 2, "user:password@"),
    "cache url with one slash": (_ask("@env:LONGGRAPH_CACHE_PATH=postgresql:/u:hunter22@db/x"), 2, "not one"),
    "checkpoint a text file": (_ask("--resume", "t", "--checkpoint-db", "note.txt"), 2, "cannot be used"),
    "checkpoint a folder": (_ask("--resume", "t", "--checkpoint-db", "sub"), 2, "directory"),
    # --- ask: documents and names
    "document /dev/null": (lambda h: ["ask", "/dev/null", "-q", Q, "--base-url", DEAD], 2, "regular"),
    "file name with escapes": (lambda h: ["ask", f"{ESC}]0;pwned\a.txt", "-q", Q, "--base-url", DEAD], 2, "no such file"),
    "file name with bidi override": (lambda h: ["ask", "evil\u202etxt.exe", "-q", Q, "--base-url", DEAD], 2, "\\u202e"),
    "question only control characters": (_q("\x01\x02\x03"), 2, "question"),
    "question only a newline": (_q("\n"), 2, "question"),
    # --- environment settings
    "env window not a number": (lambda h: ["ask", "doc.txt", "-q", Q, "--base-url", DEAD, "@env:LONGGRAPH_CONTEXT_WINDOW=abc"], 2, "LONGGRAPH_CONTEXT_WINDOW"),
    "env temperature words": (lambda h: ["ask", "doc.txt", "-q", Q, "--base-url", DEAD, "@env:LONGGRAPH_TEMPERATURE=hot"], 2, "LONGGRAPH_TEMPERATURE"),
    "env concurrency zero": (lambda h: ["ask", "doc.txt", "-q", Q, "--base-url", DEAD, "@env:LONGGRAPH_MAX_CONCURRENCY=0"], 2, "max_concurrency"),
    "env base url ftp": (lambda h: ["ask", "doc.txt", "-q", Q, "@env:LONGGRAPH_BASE_URL=ftp://x/v1"], 2, "base_url"),
    "env boolean maybe": (lambda h: ["ask", "doc.txt", "-q", Q, "--base-url", DEAD, "@env:LONGGRAPH_REREAD=maybe"], 2, "LONGGRAPH_REREAD"),
    "env task poetry": (lambda h: ["ask", "doc.txt", "-q", Q, "--base-url", DEAD, "@env:LONGGRAPH_TASK=poetry"], 2, "task"),
    # --- --debug keeps the exit code
    "debug window zero": (_ask("--context-window", "0", "--debug"), 2, "context_window"),
    "debug missing file": (lambda h: ["ask", "nope.txt", "-q", Q, "--base-url", DEAD, "--debug"], 2, "no such file"),
    "debug checkpoint mysql": (_ask("--resume", "t", "--checkpoint-db", "mysql://u:p@h/db", "--debug"), 2, "mysql"),
    # --- batch: where results go
    "batch out is the items file": (_batch("items.jsonl", "--out", "items.jsonl"), 2, "an input"),
    "batch out is a note": (_batch("items.jsonl", "--out", "note.txt"), 2, "not a batch results file"),
    "batch out is a folder": (_batch("items.jsonl", "--out", "sub"), 2, "folder"),
    "batch out is other JSONL": (_batch("items.jsonl", "--out", "other.jsonl"), 2, "not a batch results file"),
    "batch out is a page": (_batch("items.jsonl", "--out", "page.html"), 2, "not a batch results file"),
    "batch out is an item's file": (_batch("items.jsonl", "--out", "doc.txt"), 2, "an input"),
    "batch out beside a foreign checkpoint file": (_batch("items.jsonl", "--out", "results.jsonl"), 2, "checkpoint file"),
    "batch out ends in a line not ours": (_batch("items.jsonl", "--out", "torn.jsonl"), 2, "not a batch results file"),
    # --- batch: items
    "batch items missing": (_batch("nope.jsonl"), 2, "no such file"),
    "batch items a folder": (_batch("sub"), 2, "sub"),
    "batch items not JSON": (_batch(lambda h: _items(h, raw=b"{not json\n")), 2, "not JSON"),
    "batch items not UTF-8": (_batch(lambda h: _items(h, raw=b'{"question": "\xff\xfe"}\n')), 2, "UTF-8"),
    "batch items binary": (_batch("binary.bin"), 2, "binary.bin"),
    "batch item an array": (_batch(lambda h: _items(h, [1, 2])), 2, "not a batch item"),
    "batch item a string": (_batch(lambda h: _items(h, "question")), 2, "not a batch item"),
    "batch items empty": (_batch("empty.txt"), 2, "no item"),
    "batch item unknown key": (_batch(lambda h: _items(h, {"question": Q, "document": "x", "secret": 1})), 2, "unknown key"),
    "batch item no question": (_batch(lambda h: _items(h, {"document": "text"})), 2, "no question"),
    "batch item blank question": (_batch(lambda h: _items(h, {"question": "  ", "document": "text"})), 2, "no question"),
    "batch item two sources": (_batch(lambda h: _items(h, {"question": Q, "document": "x", "files": ["doc.txt"]})), 2, "exactly one"),
    "batch item unknown strategy": (_batch(lambda h: _items(h, {"question": Q, "document": "x", "strategy": "nope"})), 2, "strategy"),
    "batch item duplicate id": (_batch(lambda h: _items(h, {"id": 1, "question": Q, "document": "x"}, {"id": 1, "question": Q, "document": "y"})), 2, "also the id"),
    "batch item id an object": (_batch(lambda h: _items(h, {"id": {"a": 1}, "question": Q, "document": "x"})), 2, "id must be"),
    "batch item files not a list": (_batch(lambda h: _items(h, {"question": Q, "files": "doc.txt"})), 2, "files must be"),
    "batch item files empty": (_batch(lambda h: _items(h, {"question": Q, "files": []})), 2, "files must be"),
    "batch item file missing": (_batch(lambda h: _items(h, {"question": Q, "files": ["nope.txt"]})), 2, "no such file"),
    "batch item file outside": (_batch("items/bad-path.jsonl"), 2, "outside"),
    "batch item file absolute": (_batch(lambda h: _items(h, {"question": Q, "files": ["/etc/hostname"]})), 2, "outside"),
    "batch item file binary": (_batch(lambda h: _items(h, {"question": Q, "files": ["binary.bin"]})), 2, "binary"),
    "batch item file empty": (_batch(lambda h: _items(h, {"question": Q, "files": ["empty.txt"]})), 2, "no text"),
    "batch item file a folder": (_batch(lambda h: _items(h, {"question": Q, "files": ["sub"]})), 2, "no such file"),
    "batch item title only": (_batch(lambda h: _items(h, {"question": Q, "documents": [{"title": "t"}]})), 2, "text"),
    "batch item numbers as documents": (_batch(lambda h: _items(h, {"question": Q, "documents": [3, 4]})), 2, "documents"),
    "batch item blank document": (_batch(lambda h: _items(h, {"question": Q, "document": " \n\t"})), 2, "no text"),
    "batch item document a number": (_batch(lambda h: _items(h, {"question": Q, "document": 42})), 2, "document must be"),
    "batch item documents a string": (_batch(lambda h: _items(h, {"question": Q, "documents": "text"})), 2, "documents must be"),
    # --- synth
    "synth out is a source": (_synth("doc.txt", "--out", "doc.txt"), 2, "an input"),
    "synth out is a note": (_synth("doc.txt", "--out", "note.txt"), 2, "not a dataset"),
    "synth out is a folder": (_synth("doc.txt", "--out", "sub"), 2, "folder"),
    "synth out beside a foreign card": (_synth("doc.txt", "--out", "data.jsonl"), 2, "dataset card"),
    "synth out beside a foreign progress file": (_synth("doc.txt", "--out", "mine.jsonl"), 2, "progress file"),
    "synth out is other JSONL": (_synth("doc.txt", "--out", "other.jsonl"), 2, "not a dataset"),
    "synth source missing": (_synth("nope.txt", "--out", "d.jsonl"), 2, "no such file"),
    "synth source an empty folder": (_synth("emptydir", "--out", "d.jsonl"), 2, "no text file"),
    "synth source binary": (_synth("binary.bin", "--out", "d.jsonl"), 2, "binary"),
    # --- pages and pictures
    "tree page over a note": (lambda h: ["tree", "show", "doc.txt", "--html", "note.txt", "--base-url", DEAD], 2, "not a page"),
    "ask a fifo as input": (lambda h: (os.mkfifo(h / "in.fifo"), ["ask", "in.fifo", "-q", QUESTION, "--base-url", DEAD])[1], 2, "regular"),
    "ask a device as input": (lambda h: ["ask", "/dev/zero", "-q", QUESTION, "--base-url", DEAD], 2, "regular"),
    "show a fifo": (lambda h: (os.mkfifo(h / "saved.json"), ["show", "saved.json"])[1], 2, "regular"),
    "show a device": (lambda h: ["show", "/dev/zero"], 2, "regular"),
    "show a folder": (lambda h: ["show", "sub"], 2, "directory"),
    "ask page in a missing folder": (_ask("--html", "missing/dir/p.html"), 2, "does not exist"),
    "ask page a fifo": (lambda h: (os.mkfifo(h / "fifo.html"), _ask("--html", "fifo.html")(h))[1], 2, "regular"),
    "ask page a device": (_ask("--html", "/dev/full"), 2, "regular"),
    "tree page a folder": (lambda h: ["tree", "show", "doc.txt", "--html", "sub", "--base-url", DEAD], 2, "folder"),
    "tree page over its input": (lambda h: ["tree", "show", "doc.txt", "--html", "doc.txt", "--base-url", DEAD], 2, "an input"),
    "tree page over a user's page": (lambda h: ["tree", "show", "doc.txt", "--html", "page.html", "--base-url", DEAD], 2, "not a page"),
    "graph page over a note": (lambda h: ["graph", "show", "doc.txt", "--html", "note.txt", "--base-url", DEAD], 2, "not a page"),
    "graph picture over a note": (lambda h: ["graph", "show", "doc.txt", "--png", "note.txt", "--base-url", DEAD], 2, "not a picture"),
    "graph picture over its input": (lambda h: ["graph", "show", "doc.txt", "--png", "doc.txt", "--base-url", DEAD], 2, "an input"),
    # --- checkpoints and eval
    "checkpoints list mysql": (lambda h: ["checkpoints", "list", "--checkpoint-db", "mysql://u:hunter22@h/db"], 2, "mysql"),
    "checkpoints list a note": (lambda h: ["checkpoints", "list", "--checkpoint-db", "note.txt"], 2, "cannot be used"),
    "checkpoints prune negative age": (lambda h: ["checkpoints", "prune", "--older-than", "-1"], 2, "older-than"),
    "eval unknown suite": (lambda h: ["eval", "--suite", "nope", "--base-url", DEAD], 2, "suite"),
    "eval lengths not numbers": (lambda h: ["eval", "--lengths", "abc", "--base-url", DEAD], 2, "abc"),
    "eval setting without a value": (lambda h: ["eval", "--set", "nokey", "--base-url", DEAD], 2, "nokey"),
    "eval unknown setting": (lambda h: ["eval", "--set", "no_such_field=1", "--base-url", DEAD], 2, "no_such_field"),
}  # fmt: skip


def _snapshot(home: Path) -> dict[str, str]:
    return {
        str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in home.rglob("*")
        if p.is_file()
    }


def run_case(
    case: str, home: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, str], dict[str, str]]:
    """One case in its own folder: what the CLI did, and the folder's files before and after. Each case
    is its own test, so xdist spreads them over its workers (a module fixture running every case ran
    them all on each worker that took one: 630 s of setup, twice, in session 48's CI)."""
    _files(home)
    args = CASES[case][0](home)
    env = dict(a.removeprefix("@env:").split("=", 1) for a in args if a.startswith("@env:"))
    before = _snapshot(home)
    done = run_longgraph([a for a in args if not a.startswith("@env:")], home=home, timeout=90, env=env)
    return done, before, _snapshot(home)


@pytest.mark.parametrize(
    "case",
    [
        "checkpoint url with one slash", "checkpoint url with a space", "cache url with one slash",
        "checkpoint url without its colon", "checkpoint url without its scheme", "checkpoint credentials alone",
    ],
)  # fmt: skip
def test_a_malformed_database_url_creates_nothing(case: str, tmp_path: Path) -> None:
    """A setting that starts like a database URL but does not parse as one is refused before anything
    is created: no file or folder named after it, so no secret ever becomes part of a path."""
    _files(tmp_path)
    before = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")}
    args = CASES[case][0](tmp_path)
    env = dict(a.removeprefix("@env:").split("=", 1) for a in args if a.startswith("@env:"))
    done = run_longgraph([a for a in args if not a.startswith("@env:")], home=tmp_path, timeout=90, env=env)
    assert done.returncode == 2, done.stderr[-2000:]
    created = {p.relative_to(tmp_path) for p in tmp_path.rglob("*")} - before
    assert not created, created
    assert "hunter22" not in done.stderr


def test_the_suite_holds_150_distinct_inputs() -> None:
    from longgraph.tests.integration import test_bad_input

    total = (
        len(CASES)
        + len(test_bad_input.ERRORS)
        + len(test_bad_input.GRAPH_INPUT_ERRORS)
        + len(test_bad_input.CLI_ERRORS)
    )
    assert total >= 150, total


@pytest.mark.parametrize("case", list(CASES))
def test_one_clear_line_the_exit_code_and_no_file_touched(case: str, tmp_path: Path) -> None:
    code, word = CASES[case][1], CASES[case][2]
    done, before, after = run_case(case, tmp_path)
    assert done.returncode == code, done.stderr[-2000:]
    assert ESC not in done.stderr and "\u202e" not in done.stderr and "\a" not in done.stderr
    assert "hunter22" not in done.stderr
    assert not done.stdout
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and word in errors[0], done.stderr[-2000:]
    if "--debug" in done.args:
        assert "Traceback" in done.stderr
    else:
        assert done.stderr.strip().splitlines() == errors, done.stderr[-2000:]
    changed = sorted(name for name in before if after.get(name) != before[name])
    assert not changed, f"files changed or removed: {changed}"
