"""The embedded server's dtype: bfloat16 only where this CPU computes it fast (measured), else float32."""

from __future__ import annotations

import sys
from pathlib import Path

from longgraph.embedded.dtype import SLOWDOWN_LIMIT, choose_dtype, decide
from longgraph.embedded.launcher import ServerSettings, server_command


def test_an_explicit_dtype_is_passed_through_without_a_probe() -> None:
    choice = choose_dtype("float16", "/nonexistent/python")
    assert (choice.dtype, choice.reason) == ("float16", "set explicitly")


def test_bfloat16_is_kept_only_while_it_is_not_much_slower() -> None:
    assert decide(0.6).dtype == "bfloat16"
    assert decide(SLOWDOWN_LIMIT).dtype == "bfloat16"
    slow = decide(38.0)
    assert slow.dtype == "float32" and "38x slower" in slow.reason


def test_a_failed_probe_falls_back_to_float32_and_says_why() -> None:
    choice = choose_dtype("auto", "/nonexistent/python")
    assert choice.dtype == "float32" and "probe failed" in choice.reason


def test_the_probe_runs_in_the_given_interpreter_and_decides() -> None:
    choice = choose_dtype("auto", sys.executable)
    assert choice.dtype in ("bfloat16", "float32") and "timed at" in choice.reason


def test_the_default_setting_is_auto_and_reaches_the_command_resolved() -> None:
    assert ServerSettings().dtype == "auto"
    command = server_command(Path("/m"), "127.0.0.1", 8000, ServerSettings(dtype="float32"))
    assert command[command.index("--dtype") + 1] == "float32"


def test_a_reproducible_server_runs_without_prefix_caching_and_records_it(tmp_path: Path) -> None:
    """``longgraph model serve --reproducible``: a prefix-cache hit gives other sums than a miss (measured),
    so reruns agree only with the cache off."""
    from longgraph.embedded.registry import ServerInfo

    assert "--no-enable-prefix-caching" not in server_command(Path("/m"), "127.0.0.1", 8000, ServerSettings())
    off = server_command(Path("/m"), "127.0.0.1", 8000, ServerSettings(prefix_caching=False))
    assert "--no-enable-prefix-caching" in off
    info = ServerInfo(
        "http://x/v1", "smollm2", 1, 2, "127.0.0.1", tmp_path, tmp_path, "now", prefix_caching=False
    )
    assert ServerInfo.from_json(info.to_json()).prefix_caching is False
    legacy = {k: v for k, v in info.to_json().items() if k != "prefix_caching"}
    assert ServerInfo.from_json(legacy).prefix_caching is None
