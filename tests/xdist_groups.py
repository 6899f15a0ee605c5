"""Make ``xdist_group`` marks reach xdist's ``loadgroup`` scheduler under pytest 9.2.

xdist 3.8 names a test's group by appending ``@group`` to ``item._nodeid`` on the worker, and its
scheduler reads the group back from the node id it is sent. pytest 9.2 keeps a node's id in ``_id`` (a
``NodeId``) and no longer reads ``_nodeid``, so the suffix is written where nothing looks: every grouped
test was spread over the workers like any other, and each worker that got one of a module's served
tests started that module's ``langgraph dev`` of its own. This hook, run after xdist's, carries the
suffix into the id pytest does read. ``tests/unit/test_xdist_groups.py`` runs a two-worker toy suite to
show grouped tests land on one worker, so a pytest or xdist upgrade that changes this again fails there.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        grouped = vars(item).get("_nodeid")
        current = getattr(item, "_id", None)
        if isinstance(grouped, str) and current is not None and str(current) != grouped:
            item._id = type(current).parse(grouped)
