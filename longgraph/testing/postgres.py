"""A real PostgreSQL server for tests and benchmarks: the distribution's own binaries, a throwaway data
folder, a free loopback port, stopped (and its data deleted) on exit.

PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` system user the
Debian package creates (``runuser``), with its folder owned by that user; pytest's own temporary folders
are private to root, so the data lives in a folder of its own under the system temp directory.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SERVER_USER = "postgres"
DATABASE_USER = "longgraph"


class PostgresUnavailable(RuntimeError):
    """PostgreSQL's server binaries are not installed (``apt-get install postgresql``)."""


def server_binaries() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``: on PATH, else Debian's versioned folder."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if versions:
        return Path(versions[-1]).parent
    raise PostgresUnavailable(
        "PostgreSQL is not installed: apt-get install postgresql (scripts/setup.sh does)"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    if shutil.which("runuser") is None:
        raise PostgresUnavailable("running as root without runuser: cannot start PostgreSQL as its own user")
    return ["runuser", "-u", SERVER_USER, "--", *command]


@contextmanager
def run_postgres(*, startup_timeout_s: int = 60) -> Iterator[str]:
    """Start a server; yield its URL (``postgresql://longgraph@127.0.0.1:PORT/postgres``)."""
    binaries = server_binaries()
    root = Path(tempfile.mkdtemp(prefix="longgraph-postgres-"))
    data, log = root / "data", root / "server.log"
    if os.geteuid() == 0:
        shutil.chown(root, SERVER_USER, SERVER_USER)
    port = _free_port()
    try:
        subprocess.run(
            _as_server_user(
                [
                    str(binaries / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    DATABASE_USER,
                    "--auth=trust",
                    "--no-sync",
                    "-E",
                    "UTF8",
                    "--locale=C",
                ]
            ),
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        options = f"-p {port} -h 127.0.0.1 -k {root} -c fsync=off"
        subprocess.run(
            _as_server_user(
                [
                    str(binaries / "pg_ctl"),
                    "-D",
                    str(data),
                    "-o",
                    options,
                    "-l",
                    str(log),
                    "-w",
                    "-t",
                    str(startup_timeout_s),
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
            text=True,
            timeout=startup_timeout_s + 30,
        )
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(root, ignore_errors=True)
        detail = (exc.stderr or exc.stdout or "").strip().splitlines()[-3:]
        raise PostgresUnavailable(f"PostgreSQL did not start: {' / '.join(detail)}") from exc
    try:
        yield f"postgresql://{DATABASE_USER}@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_server_user([str(binaries / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
            capture_output=True,
            timeout=60,
            check=False,
        )
        shutil.rmtree(root, ignore_errors=True)
