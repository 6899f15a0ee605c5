"""What every ``longgraph`` command shares: the error line and exit codes, progress bars, reading files.

Errors are one line on stderr and a non-zero exit (see :data:`EXIT_CODES`), never a traceback
(``--debug`` shows one). Progress goes to stderr as ``rich`` bars; results go to stdout, so they can be
piped. Nothing here imports a command module, so the command groups import this freely.
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from longgraph.errors import BudgetExhausted, EndpointError, LonggraphError
from longgraph.files import read_document
from longgraph.inert import for_terminal
from longgraph.state.contract import GraphOutput

if TYPE_CHECKING:
    from longgraph.nodes.runtime import Progress as ProgressEvent

T = TypeVar("T")
Opt = typer.Option
stderr = Console(stderr=True)

# The endpoint and run settings that `ask` and `batch` share (:data:`RUN_OPTIONS`, :func:`with_run_options`).
BaseUrlOption = Annotated[list[str] | None, Opt(help="OpenAI-compatible base URL(s); repeat for replicas.")]
ApiKeyOption = Annotated[
    str | None, Opt(envvar="LONGGRAPH_API_KEY", help="Bearer token.", show_default=False)
]
ModelOption = Annotated[str | None, Opt(help="Served model name (default: the endpoint's first).")]
ContextWindowOption = Annotated[int | None, Opt(help="L: tokens one call may use.")]
ChunkSizeOption = Annotated[int | None, Opt(help="Tokens of text per chunk (default: derived from L).")]
MaxOutputTokensOption = Annotated[int | None, Opt()]
TemperatureOption = Annotated[float | None, Opt()]
MaxConcurrencyOption = Annotated[int | None, Opt(help="Requests in flight per endpoint.")]
TaskOption = Annotated[str | None, Opt(help="qa, mc, retrieval, code, math or summary.")]
TimeoutOption = Annotated[float | None, Opt("--timeout", help="Seconds per request.")]
RetriesOption = Annotated[int | None, Opt("--retries", help="Retries per request.")]
StructuredOutputOption = Annotated[str | None, Opt(help="auto, json_schema or text.")]
TokenizerOption = Annotated[str | None, Opt(help="Path to the model's tokenizer (default cl100k_base).")]
CacheOption = Annotated[
    str | None,
    Opt(
        help="SQLite file caching model answers across runs, so asking again costs no calls "
        "(default: $LONGGRAPH_CACHE_PATH, else results.sqlite in $LONGGRAPH_HOME or ~/.cache/longgraph).",
        show_default=False,
    ),
]
MaxCallsOption = Annotated[
    int | None,
    Opt(help="Most model calls to send (batch: for the whole corpus); the run stops before passing it."),
]
MaxPromptTokensOption = Annotated[
    int | None, Opt(help="Most prompt tokens to send; the run stops before the call that would pass it.")
]
NoCacheOption = Annotated[
    bool, Opt("--no-cache", help="Neither read nor write the result cache (fresh samples).")
]


RUN_OPTIONS: tuple[tuple[str, Any, Any], ...] = (
    ("base_url", BaseUrlOption, None),
    ("api_key", ApiKeyOption, None),
    ("model", ModelOption, None),
    ("context_window", ContextWindowOption, None),
    ("chunk_size", ChunkSizeOption, None),
    ("max_output_tokens", MaxOutputTokensOption, None),
    ("temperature", TemperatureOption, None),
    ("max_concurrency", MaxConcurrencyOption, None),
    ("max_calls", MaxCallsOption, None),
    ("max_prompt_tokens", MaxPromptTokensOption, None),
    ("task", TaskOption, None),
    ("request_timeout", TimeoutOption, None),
    ("max_retries", RetriesOption, None),
    ("structured_output", StructuredOutputOption, None),
    ("tokenizer", TokenizerOption, None),
    ("cache", CacheOption, None),
    ("no_cache", NoCacheOption, False),
)
"""The options every command that runs a graph takes (``ask``, ``batch``): name, type, default."""

_NAMES = tuple(name for name, _, _ in RUN_OPTIONS)
_CONTEXT_FIELDS = tuple(name for name in _NAMES if name not in ("base_url", "cache", "no_cache"))
"""The run options that are context fields as they are."""


@dataclass(frozen=True)
class RunOptions:
    """The run options a command was given (:data:`RUN_OPTIONS`), by name."""

    given: Mapping[str, Any]

    @property
    def budgeted(self) -> bool:
        """A spending limit was set (``--max-calls``, ``--max-prompt-tokens``)."""
        return bool(self.given.get("max_calls") or self.given.get("max_prompt_tokens"))

    def settings(self) -> dict[str, Any]:
        """Context settings: the options given, the endpoint(s), the result cache (its default file
        unless ``--no-cache``)."""
        import os

        from longgraph.cache import default_cache_path

        cache = self.given.get("cache")
        if self.given.get("no_cache"):
            cache = ""  # not None: that would fall back to $LONGGRAPH_CACHE_PATH
        elif cache is None and not os.environ.get("LONGGRAPH_CACHE_PATH"):
            cache = str(default_cache_path())
        base_url = self.given.get("base_url")
        settings: dict[str, Any] = {
            **{name: self.given.get(name) for name in _CONTEXT_FIELDS},
            "base_url": (base_url[0] if len(base_url) == 1 else base_url) if base_url else None,
            "cache_path": cache,
        }
        return {k: v for k, v in settings.items() if v is not None}


Command = TypeVar("Command", bound=Callable[..., None])


def with_run_options(command: Command) -> Command:
    """``command`` with :data:`RUN_OPTIONS` on its command line where its keyword-only ``run:
    RunOptions`` parameter stands; it receives them as that one value. Declared once, so every command
    that runs a graph takes the same options with the same help, and a new option reaches all of them."""
    own = inspect.signature(command, eval_str=True)
    run = own.parameters.get("run")
    if run is None or run.kind is not inspect.Parameter.KEYWORD_ONLY:
        raise TypeError(f"{command.__name__} has no keyword-only `run: RunOptions` parameter")
    shared = [
        inspect.Parameter(name, run.kind, default=default, annotation=annotation)
        for name, annotation, default in RUN_OPTIONS
    ]
    params = [q for p in own.parameters.values() for q in (shared if p is run else [p])]

    @functools.wraps(command)
    def with_options(**kwargs: Any) -> None:
        given = {name: kwargs.pop(name) for name in _NAMES}
        command(run=RunOptions(given), **kwargs)

    with_options.__signature__ = own.replace(parameters=params)  # type: ignore[attr-defined]
    with_options.__annotations__ = {p.name: p.annotation for p in params}
    return cast(Command, with_options)


class _Bars:
    """A rich progress bar per stage, fed by the graph's custom stream events."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, TaskID] = {}

    def __call__(self, event: ProgressEvent) -> None:
        stage = event.get("stage", "?")
        label = stage if not event.get("message") or stage != "collapse" else f"{stage} ({event['message']})"
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(label, total=event.get("total", 1))
        task = self.tasks[stage]
        self.progress.update(task, total=event.get("total"), description=label)
        self.progress.advance(task, event.get("advance", 1))

    def complete_from_checkpoint(self) -> None:
        """After a resumed run finished: the work its checkpoint held sent no progress event, so each
        bar short of its total is filled, saying how much of it came from the checkpoint."""
        for task in self.progress.tasks:
            if task.total is not None and task.completed < task.total:
                saved = int(task.total - task.completed)
                self.progress.update(
                    task.id, completed=task.total, description=f"{task.description} ({saved} saved)"
                )


def corpus_progress(*, disable: bool, label: str = "{task.description}") -> Progress:
    """The bars of a run, on stderr and kept when done: ``label``, the bar, done of total, time. A corpus
    run (``batch``, ``synth``) has one; a question one per stage (:func:`progress_bars`)."""
    columns = (TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=stderr, transient=False, disable=disable)


@contextmanager
def progress_bars(enabled: bool) -> Iterator[_Bars | None]:
    if not enabled:
        yield None
        return
    with corpus_progress(disable=False, label="{task.description:<22}") as progress:
        yield _Bars(progress)


EXIT_PARTIAL = 4
"""The run answered, but some chunks failed (within the failure budget): the answer may miss what
they held. The answer is printed as usual; stderr says which chunks."""


def coverage_line(result: GraphOutput) -> str | None:
    """ "answered from U of N chunks; …" when any chunk failed or was set aside, else None."""
    total = len(result.chunks)
    failed = [c for c in result.chunks if c.status == "failed"]
    filtered = [c for c in result.chunks if c.status == "filtered"]
    if not failed and not filtered:
        return None
    parts = []
    if failed:
        ids = ", ".join(str(c.id) for c in failed[:10]) + ("…" if len(failed) > 10 else "")
        parts.append(
            f"{len(failed)} failed (chunks {ids}; first: {' '.join((failed[0].reason or '').split())[:200]})"
        )
    if filtered:
        parts.append(f"{len(filtered)} set aside (reasons per chunk with --json)")
    return f"answered from {total - len(failed) - len(filtered)} of {total} chunks; " + "; ".join(parts)


def run_cli(action: Callable[[], T], *, debug: bool, hint: str | Callable[[], str | None] | None = None) -> T:
    """Run ``action``; turn every failure into one line and an exit code.

    ``hint`` (or what it returns, once the action has failed) is appended to endpoint failures and
    exhausted budgets (e.g. how to resume a checkpointed run). Logging is set up here, once for every
    command: warnings, and the embedded model server's notes (starting it takes up to a minute and a
    half: the user should see why they wait); everything else (httpx logs every request at INFO, over
    the progress bars; failovers) only with ``--debug``.
    """
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s: %(message)s",
    )
    logging.getLogger("longgraph.embedded").setLevel(logging.DEBUG if debug else logging.INFO)
    try:
        return action()
    except LonggraphError as exc:
        if debug:  # the traceback too, and the same exit code: a script's checks must not change
            traceback.print_exc(file=sys.stderr)
        message = " ".join(str(exc).split())
        said = hint() if callable(hint) else hint
        if said and isinstance(exc, EndpointError | BudgetExhausted):
            message += f"; {said}"
        say_error(message)
        raise typer.Exit(exc.exit_code) from None
    except typer.Exit:
        raise  # a command's own exit code (e.g. EXIT_PARTIAL)
    except KeyboardInterrupt:
        stderr.print("interrupted")
        raise typer.Exit(130) from None
    except Exception as exc:
        if debug:
            traceback.print_exc(file=sys.stderr)
        message = " ".join(str(exc).split())[:400]
        say_error(f"unexpected {type(exc).__name__}: {message}" + ("" if debug else " (rerun with --debug)"))
        raise typer.Exit(1) from None


def say_error(message: str) -> None:
    """The one error line on stderr, its text inert (a file name or a document's words may hold
    terminal escape sequences)."""
    stderr.print(
        f"[red]error:[/red] {escape(for_terminal(message))}", highlight=False, markup=True, soft_wrap=True
    )


def build_structure(
    files: list[str], graph: Any, *, settings: dict[str, Any], what: str, progress: bool
) -> dict[str, Any]:
    """Run a structure-building graph (ToM's tree, PECAN's graph) over FILES with a progress bar; its
    final state. ``settings`` are context fields (the embedded server is started when none is given)."""
    import asyncio

    from longgraph.api import prepare_context

    documents = []
    for path in files:
        title, text, _ = read_document(path)
        documents.append({"title": title, "text": text})
    context = prepare_context(None, settings, on_notice=lambda m: stderr.print(m))
    values: dict[str, Any] = {}

    async def run() -> None:
        with progress_bars(progress and stderr.is_terminal) as on_progress:
            async for mode, payload in graph.astream(
                {"question": f"({what})", "documents": documents},
                context=context,
                stream_mode=["custom", "values"],
            ):
                if mode == "custom" and on_progress is not None:
                    on_progress(payload)
                elif mode == "values":
                    values.update(payload)

    asyncio.run(run())
    values["documents"] = documents
    return values


def endpoint_settings(cache: str | None, base_url: list[str] | None, model: str | None) -> dict[str, Any]:
    """The settings `tree show` and `graph show` share: the result cache (default file), the endpoint."""
    from longgraph.cache import default_cache_path

    settings: dict[str, Any] = {"cache_path": cache or str(default_cache_path()), "temperature": 0.0}
    if base_url:
        settings["base_url"] = base_url[0] if len(base_url) == 1 else base_url
    if model:
        settings["model"] = model
    return settings


def claim_page(page: Path, inputs: Sequence[str | Path]) -> None:
    """``--html PAGE``, once it is safe to write: not a folder, not an input of the command (``-`` is
    stdin), not an existing file that is not a page longgraph wrote (``longgraph/outputs.py``)."""
    from longgraph.errors import InputError
    from longgraph.outputs import claim_output, longgraph_page

    files = [Path(f) for f in inputs if str(f) != "-"]
    claim_output(page, option="--html", kind="page", ours=longgraph_page, inputs=files)
    if not page.parent.is_dir():  # found before the run, not after it
        raise InputError(f"--html {page}: its folder {page.parent} does not exist")


RayOption = Annotated[
    str | None,
    Opt(
        "--ray",
        is_flag=False,
        flag_value="auto",
        metavar="[ADDRESS]",
        help="Run on a Ray cluster: --ray ADDRESS, or --ray alone for Ray's own choice (RAY_ADDRESS, else a "
        "local cluster). The output files are written here, as without it.",
        show_default=False,
    ),
]
WorkersOption = Annotated[
    int | None,
    Opt(help="With --ray: worker actors (default one per CPU of the cluster).", show_default=False),
]


def ray_address(given: str) -> str | None:
    """``--ray``'s value as ``ray.init`` takes it (None: Ray's own choice)."""
    return None if given == "auto" else given


def print_cluster(figures: Mapping[str, int] | None) -> None:
    """A Ray run's line on stderr: its workers, those lost (and the calls they took with them, counted
    in the run's calls), its budget of requests in flight."""
    if figures is not None:
        lost_calls = figures.get("lost_calls", 0)
        spent = f" ({lost_calls} call(s) of unfinished items spent on lost workers)" if lost_calls else ""
        stderr.print(
            f"ray: {figures['workers']} worker(s), {figures['workers_lost']} lost, "
            f"{figures.get('workers_replaced', 0)} replaced{spent}; {figures['budget']} "
            "request(s) in flight at most across the cluster",
            highlight=False,
            markup=False,
        )
