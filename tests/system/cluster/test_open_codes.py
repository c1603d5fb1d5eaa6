"""A one-time code on two nodes of one Redis: taken on one, refused on the
other; raced on both, one token; Redis down, a 503 and no token."""

from __future__ import annotations

import asyncio

from tests.system.cluster.conftest import Cluster
from tests.support.open_codes import exchange, new_code, refused_as_used, user_of
from tests.support.redis_server import RedisServer


async def test_a_code_taken_on_one_node_is_refused_on_the_other(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    code = new_code()
    assert user_of(await exchange(a.http, a.url, code)) == "alice"
    assert refused_as_used(await exchange(b.http, b.url, code))
    assert refused_as_used(await exchange(a.http, a.url, code))


async def test_racing_uses_on_two_nodes_give_one_token(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    code = new_code()
    got = await asyncio.gather(*(exchange(n.http, n.url, code) for n in [a, b] * 4))
    assert sorted(r.status_code for r in got) == [200] + [401] * 7
    assert sum(refused_as_used(r) for r in got) == 7


async def test_with_redis_down_a_code_gets_503_and_no_token(cluster: Cluster, redis_server: RedisServer) -> None:
    (a,) = await cluster.start(1)
    redis_server.kill()
    r = await exchange(a.http, a.url, new_code())
    assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable", r.text
    assert "token" not in r.json()
    redis_server.start()  # the node stops cleanly
