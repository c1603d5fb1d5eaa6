"""Redis's parts are the cluster's: a key claimed on one node is refused on
another, a setting kept on one is read on another, and a claim's life is
counted on the claiming node's clock (injected), not Redis's."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.store.parts import notify_key
from askd.store.redis import RedisStore
from tests.support.redis_server import RedisServer
from tests.store.test_take_effect import Quiet

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")

NOW = 1_800_000_000.0


async def test_two_nodes_share_claims_and_settings(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis").start()
    nodes = [RedisStore(server.url, f"node{i}", clock=lambda: NOW) for i in range(2)]
    try:
        for node in nodes:
            node.attach(Quiet())
            restore(await node.load(), Registry())
        a, b = nodes
        key = notify_key("r1", 0)
        won = await asyncio.gather(a.once_keys.take(key, NOW + 0.5), b.once_keys.take(key, NOW + 0.5))
        assert sorted(won) == [False, True]
        await asyncio.sleep(0.6)  # half a second on the nodes' clock, whatever Redis's says
        assert await b.once_keys.take(key, NOW + 60)
        assert not await a.once_keys.take(key, NOW + 60)
        await a.directory.set("email", "alice", "alice@example.com")
        assert await b.directory.get("email", ["alice"]) == {"alice": "alice@example.com"}
    finally:
        for node in nodes:
            await node.aclose()
        server.stop()
