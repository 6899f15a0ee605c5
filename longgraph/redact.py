"""Keeping secrets out of what users and logs see: endpoint URLs with credentials in them.

A base URL may carry credentials (``http://user:pass@host/v1``, ``...?api_key=...``). Every place
that names an endpoint in a message, a log line or a result goes through :func:`redact_url`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from longgraph.errors import ConfigurationError

_SECRET_PARAMS = re.compile(r"key|token|secret|password|passwd|pwd|auth|signature|sig", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` with its user info and secret-looking query values replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "[unparseable URL]"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rsplit("@", 1)[1]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if _SECRET_PARAMS.search(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_secrets(url: str) -> list[str]:
    """The secret parts of a URL (to scrub from error texts that echo the raw URL)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = []
    if parts.username:
        found.append(parts.username)
    if parts.password:
        found.append(parts.password)
    found += [v for k, v in parse_qsl(parts.query) if _SECRET_PARAMS.search(k) and len(v) >= 4]
    return found


def safe_message(exc: BaseException, secrets: Sequence[str] = ()) -> str:
    """An error message for users: one line, bounded, and never echoing request headers or keys."""
    text = " ".join(str(exc).split())
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return text[:300]


def chainable(exc: BaseException, secrets: Sequence[str]) -> BaseException | None:
    """The exception to chain: none when its text holds a secret (a logged traceback would show it)."""
    text = str(exc)
    return None if any(secret in text for secret in secrets) else exc


_URL_LIKE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.\-]+)\s*:")
"""A word of two or more letters, then a colon: how every URL scheme begins. A file path is never
written so (a drive letter is one letter, "C:")."""
_SCHEME_WITHOUT_COLON = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.\-]+)//")
"""A scheme whose colon was forgotten ("postgresql//host/db")."""
_USERINFO = re.compile(r"(^|[/\\])[^/\\]*:[^/\\]*@")
"""``user:password@`` anywhere in a path's segments: a URL's credentials, with or without its scheme."""


def refuse_url_like_path(target: str, option: str) -> None:
    """Refuse a path that looks like a database URL but does not parse as one: a scheme and a colon
    ("postgresql:/u:pw@db", "postgresql ://…"), a scheme without its colon ("postgresql//…"), a
    network path without its scheme ("//u:pw@h/db") or credentials without either ("u:pw@h:9/db").
    Taken as a file path it would create a file or folder named with the password. The message names
    at most the scheme, never the rest, which may hold a secret."""
    fix = "write postgresql://user:password@host/db, or a path to a SQLite file"
    looks = _URL_LIKE.match(target) or _SCHEME_WITHOUT_COLON.match(target)
    if looks:
        raise ConfigurationError(f"{option} starts like a URL ({looks.group(1)!r}) but is not one: {fix}")
    if target.lstrip().startswith("//"):
        raise ConfigurationError(f"{option} starts with // like a URL without its scheme: {fix}")
    if _USERINFO.search(target):
        raise ConfigurationError(f"{option} holds user:password@ like a URL without its scheme: {fix}")
