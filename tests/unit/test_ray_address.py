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


def test_the_spending_budget_is_split_among_workers_and_a_replacement_gets_what_is_left() -> None:
    from longgraph.ray_batch import left_after, spend_share
    from longgraph.state.context import Context

    run = Context(base_url="http://x/v1", model="m", max_calls=10, max_prompt_tokens=1_001)
    first, second = (spend_share(run, i, 2, 3) for i in range(2))
    assert (first.max_calls, second.max_calls) == (5, 5)
    assert (first.max_prompt_tokens, second.max_prompt_tokens) == (501, 500)
    assert first.max_concurrency == 3
    left = left_after(first, [3, 400, 50])
    assert left is not None and (left.max_calls, left.max_prompt_tokens) == (2, 101)
    assert left_after(first, [5, 10, 0]) is None  # nothing left of its share: no replacement
    unlimited = spend_share(Context(base_url="http://x/v1", model="m"), 0, 2, 1)
    assert unlimited.max_calls is None and left_after(unlimited, [99, 99, 0]) == unlimited
