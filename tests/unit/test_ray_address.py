"""A ``--ray`` address where no cluster listens is refused at once, not after Ray's minutes of waiting."""

from __future__ import annotations

import socket
import time

import pytest

from longgraph.errors import ConfigurationError
from longgraph.ray_batch import refuse_unreachable


def test_an_address_nothing_listens_on_is_refused_within_seconds() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(ConfigurationError, match="no Ray cluster answers"):
            refuse_unreachable(address)
    assert time.monotonic() - started < 10


def test_a_listening_address_and_rays_own_choices_pass() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        refuse_unreachable(f"127.0.0.1:{server.getsockname()[1]}")
    for address in (None, "auto", "local"):
        refuse_unreachable(address)


@pytest.mark.parametrize("address", ["127.0.0.1", "host:port", ":6379"])
def test_an_address_without_host_and_port_is_refused(address: str) -> None:
    with pytest.raises(ConfigurationError, match="host:port"):
        refuse_unreachable(address)
