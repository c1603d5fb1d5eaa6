"""Several daemons on one real Redis. In-process nodes (each a full
``Daemon`` with its own listeners, in the test's loop) for the wire
behaviour; real processes where a node must die (``askd_nodes``,
``test_processes.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from askd.server.app import Daemon
from tests.conftest import SECRET, RunningDaemon, daemon_settings
from tests.system.cluster.nodes import Node
from tests.support.redis_server import RedisServer


@pytest.fixture
def redis_appendonly() -> bool:
    """Parametrize to True for a Redis that keeps what it acknowledged across its own restart."""
    return False


@pytest.fixture
def redis_server(tmp_path: Path, redis_appendonly: bool) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path / "redis", appendonly=redis_appendonly).start()
    yield server
    server.stop()


class Cluster:
    def __init__(self, redis: RedisServer, tmp_path: Path, http: httpx.AsyncClient) -> None:
        self.redis, self.tmp_path, self.http = redis, tmp_path, http
        self.nodes: list[RunningDaemon] = []

    async def start(self, n: int, **overrides: Any) -> list[RunningDaemon]:
        for _ in range(n):
            await self.add(**overrides)
        return self.nodes

    async def add(self, **overrides: Any) -> RunningDaemon:
        i = len(self.nodes)
        daemon = Daemon(daemon_settings(self.tmp_path / f"node{i}", self.redis.url, {"node_id": f"node{i}", **overrides}))
        await daemon.start()
        node = RunningDaemon(daemon, self.http)
        self.nodes.append(node)
        return node

    async def stop(self) -> None:
        for node in self.nodes:
            for c in node.clients:
                await c.close()
            await self._end(node.daemon)

    async def _end(self, daemon: Daemon) -> None:
        await daemon.stop()


@pytest.fixture
async def cluster(redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[Cluster]:
    async with httpx.AsyncClient(timeout=10) as http:
        c = Cluster(redis_server, tmp_path, http)
        try:
            yield c
        finally:
            await c.stop()


class Nodes(Cluster):
    """``askd serve`` processes on ``redis``. ``start`` gives each node as a
    ``RunningDaemon`` (connect, ask, result, admin, tokens) whose ``daemon``
    is its ``Node`` (kill, stop, logs)."""

    async def start(self, n: int, *args: str, **settings: Any) -> list[RunningDaemon]:
        """``n`` more nodes (started together), ``askd serve ARGS`` with ``ASKD_<SETTING>``s."""
        first = len(self.nodes)
        new = [
            RunningDaemon(Node(f"node-{'abcdefgh'[i]}", self.redis.url, self.tmp_path / f"node-{i}", SECRET, *args, **settings), self.http)
            for i in range(first, first + n)
        ]
        self.nodes.extend(new)  # before they start: whatever starts is killed at the end
        await asyncio.gather(*(node.daemon.start() for node in new))
        return new

    async def _end(self, node: Any) -> None:
        await node.close()  # a Node: kills only the processes this test started


@pytest.fixture
async def askd_nodes(redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[Nodes]:
    async with httpx.AsyncClient(timeout=10) as http:
        nodes = Nodes(redis_server, tmp_path, http)
        try:
            yield nodes
        finally:
            await nodes.stop()
