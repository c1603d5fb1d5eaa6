"""The wire suite runs against each local store, so that ``memory`` does
not rot behind the default. The modules in ``ON_TWO_NODES`` also run with
``store`` ``redis``: two nodes on one real Redis, where every HTTP request
and every WebSocket goes to the other node than the one before (no sticky
sessions, spec v1.1 B)."""

from __future__ import annotations

import itertools
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from askd.server.app import Daemon
from tests.conftest import RunningDaemon, daemon_settings, running_daemon
from tests.support.redis_server import RedisServer

# The modules about what crosses nodes: asks, waits, answers, races,
# resumes, withdraws, cancels. Of the others, run on two nodes, some tests
# fail only on what is each node's own: admin (its ports, node id and
# metrics), auth (the Origin rule names the node's own address), limits (the
# per-user connection cap), webhooks (per-node metrics; one sender is
# tests/system/cluster/test_webhooks.py); bad input, security and hostile peers
# pass there but test nothing across nodes.
ON_TWO_NODES = {
    "test_agent_api", "test_agents_apart", "test_group_commit", "test_groups", "test_races", "test_resume", "test_time",
    "test_withdraw", "test_ws_protocol", "test_on_behalf", "test_approvals", "test_audit", "test_history", "test_host_relay",
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store" in metafunc.fixturenames:
        stores = ["sqlite", "memory"]
        if metafunc.module.__name__.rpartition(".")[2] in ON_TWO_NODES:
            stores.append("redis")
        metafunc.parametrize("store", stores)


@dataclass
class TwoNodes(RunningDaemon[Daemon]):
    """Node A (``daemon``: what a test reads of a daemon's insides, a replica
    of the cluster) and node B; ``url``, ``admin_url`` and ``ws_url`` name
    A and B in turn, so consecutive requests and tabs alternate."""

    other: Daemon | None = None
    turn: Iterator[int] = field(default_factory=itertools.count)

    @property
    def nodes(self) -> tuple[Daemon, Daemon]:
        assert self.other is not None
        return self.daemon, self.other

    def _next(self) -> Daemon:
        return self.nodes[next(self.turn) % 2]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._next().port}"

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self._next().admin_port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self._next().port}/ws"

    def agent_waiting(self, request_id: str) -> bool:
        return any(d.hub.waiters.waiting_on(request_id) for d in self.nodes)


@pytest.fixture
async def daemon(
    tmp_path: Path, store: str, settings_overrides: dict[str, Any], client_ca: Path | None
) -> AsyncIterator[RunningDaemon[Daemon]]:
    async with daemon_on(tmp_path, store, settings_overrides, client_ca) as running:
        yield running


@asynccontextmanager
async def daemon_on(
    tmp_path: Path, store: str, settings_overrides: dict[str, Any], client_ca: Path | None = None,
    clock: Callable[[], float] = time.time,
) -> AsyncIterator[RunningDaemon[Daemon]]:
    """The ``daemon`` fixture's daemon on ``store`` (two nodes on one Redis),
    with ``clock`` as the core's (tests that move time pass their own)."""
    if store != "redis":
        async with running_daemon(tmp_path, store, settings_overrides, client_ca, clock) as running:
            yield running
        return
    redis = RedisServer(tmp_path / "redis").start()
    nodes: list[Daemon] = []
    try:
        for i in range(2):
            settings = daemon_settings(tmp_path / f"node{i}", redis.url, {"node_id": f"node{i}", **settings_overrides})
            nodes.append(Daemon(settings, clock=clock))
            await nodes[-1].start()
        async with httpx.AsyncClient(timeout=10) as http:
            two = TwoNodes(nodes[0], http, other=nodes[1])
            try:
                yield two
            finally:
                for c in two.clients:
                    await c.close()
    finally:
        for d in nodes:
            await d.stop()
        redis.stop()
