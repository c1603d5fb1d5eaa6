"""A node across a Redis restart, in process (the same over real processes
and traffic: ``test_processes.py``)."""

from __future__ import annotations

import asyncio

import pytest

from tests.system.cluster.conftest import Cluster
from tests.support.redis_server import RedisServer


@pytest.mark.parametrize("redis_appendonly", [True])
async def test_once_redis_is_back_no_call_fails_on_a_connection_from_before(cluster: Cluster, redis_server: RedisServer) -> None:
    (a,) = await cluster.start(1)

    async def list_at_once() -> list[int]:
        calls = [a.admin("GET", "/admin/v1/connections") for _ in range(5)]
        return [r.status_code for r in await asyncio.gather(*calls)]

    assert await list_at_once() == [200] * 5  # several connections in the node's pool
    redis_server.kill()
    assert 503 in await list_at_once()
    redis_server.start()
    # Each pooled connection from before the restart would fail its next call once.
    assert await list_at_once() == [200] * 5
