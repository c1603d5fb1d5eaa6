"""A node that loads a Redis store follows its change stream from the
snapshot it loaded, not from the stream's start: replaying old changes
over the snapshot made start-up read the whole stream (up to a million
entries) and could make a replayed question come due for a webhook again."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from askd.core import AskInput, Connection, Limits
from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.core.changes import Change
from askd.store.redis import RedisStore
from askd.store.redis.keys import STREAM
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")

NOW = 1_800_000_000.0


class Recording:
    node_id = "node1"

    def __init__(self) -> None:
        self.changes: list[Change] = []

    def on_changes(self, changes: list[Change]) -> None:
        self.changes.extend(changes)

    def on_failed(self, err: Exception) -> None: ...
    def on_ok(self) -> None: ...
    def on_command(self, command: dict[str, Any]) -> None: ...
    def local_connections(self) -> list[Connection]:
        return []


async def test_a_loaded_node_follows_from_its_snapshot(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis").start()
    try:
        first = RedisStore(server.url, "node0")
        first.attach(Recording())
        reg = Registry(Limits(), clock=lambda: NOW + 3600)
        restore(await first.load(), reg)
        asks = [reg.prepare_ask(AskInput(f"s{i}", "alice", [{"question": "Ship it?"}]))[1] for i in range(3)]
        assert await first.commit([a for a in asks if a is not None]) != []
        newest = (await first._redis.xrevrange(STREAM, count=1))[0][0].decode()

        second, heard = RedisStore(server.url, "node1"), Recording()
        second.attach(heard)
        restored = Registry(Limits(), clock=lambda: NOW + 3600)
        assert restore(await second.load(), restored) == 3
        await second._follower.reached(newest)
        assert second._follower.last == newest
        assert heard.changes == []  # nothing replayed over the snapshot
        await second.aclose()
        await first.aclose()
    finally:
        server.stop()
