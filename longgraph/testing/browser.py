"""A real headless Chromium for the page tests: the DOM after the browser parsed a page, and a picture
of it. Chromium comes from Debian's package (``scripts/setup.sh`` installs it); nothing is fetched."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise RuntimeError(
            "chromium is not installed: scripts/setup.sh installs it (Debian package chromium)"
        )
    return found


def dump_dom(url: str, profile: Path, *, timeout: float = 120) -> str:
    """The DOM Chromium built from ``url`` (a ``file://`` page, with a ``#fragment`` if one is wanted)."""
    command = [chromium(), *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=True).stdout


def screenshot(
    url: str, picture: Path, profile: Path, *, size: str = "1200,900", timeout: float = 120
) -> Path:
    """A PNG of ``url`` as Chromium draws it at ``size`` (width,height)."""
    command = [
        chromium(),
        *FLAGS,
        f"--user-data-dir={profile}",
        f"--window-size={size}",
        f"--screenshot={picture}",
        url,
    ]
    subprocess.run(command, capture_output=True, timeout=timeout, check=True)
    return picture
