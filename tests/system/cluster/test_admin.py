"""Admin reads and orders across the cluster: pending on every node, stats
counted once, connections with their node, disconnect obeyed everywhere."""

from __future__ import annotations

import redis.asyncio as aioredis

from tests.system.cluster.conftest import Cluster
from tests.conftest import eventually, q
from tests.support.redis_server import RedisServer


async def test_pending_and_stats_see_the_whole_cluster_once(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    await a.ask("s1", "alice", [q("One?")])
    await b.ask("s2", "bob", [q("Two?")])
    for node in (a, b):
        pending = (await node.admin("GET", "/admin/v1/pending")).json()["pending"]
        assert sorted(p["sessionId"] for p in pending) == ["s1", "s2"]
        stats = (await node.admin("GET", "/admin/v1/stats")).json()
        assert (stats["asked"], stats["pending"], stats["store"]) == (2, 2, "redis")


async def test_connections_list_every_node_and_disconnect_reaches_them(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    tab_a = await a.connect("alice")
    tab_b = await b.connect("alice")
    bob = await b.connect("bob")
    await tab_b.subscribe("s9")
    asked = await a.ask("s1", "alice", [q("Kept?")])
    await tab_a.expect("ask_user_questions")

    async def listed() -> list[dict]:
        r = await a.admin("GET", "/admin/v1/connections")
        return r.json()["connections"]

    conns = await eventually(lambda: _three(listed()), what="three connections listed")
    assert sorted((c["userId"], c["node"]) for c in conns) == [("alice", "node0"), ("alice", "node1"), ("bob", "node1")]
    stats = (await b.admin("GET", "/admin/v1/stats")).json()
    assert (stats["connections"], stats["users"]) == (3, 2)

    # By session: only B's tab subscribed to s9; ordered from A, done on B.
    r = await a.admin("POST", "/admin/v1/disconnect", json={"sessionId": "s9", "mode": "close"})
    assert r.json() == {"disconnected": 1}
    assert await tab_b.closed() == 1001
    await tab_a.works()
    # By user, from B: alice's tab on A goes too; bob stays; the question stays.
    r = await b.admin("POST", "/admin/v1/disconnect", json={"userId": "alice"})
    assert r.json() == {"disconnected": 1}
    assert await tab_a.closed() is None  # aborted: no close frame
    await bob.works()
    assert (await b.result("s1", asked["requestId"])).json()["status"] == "pending"
    await eventually(lambda: _count(listed(), 1), what="one connection left in the listing")


async def _three(listed) -> list[dict] | None:  # type: ignore[no-untyped-def]
    conns = await listed
    return conns if len(conns) == 3 else None


async def _count(listed, n: int) -> bool:  # type: ignore[no-untyped-def]
    return len(await listed) == n


async def test_a_live_node_whose_heartbeat_ran_out_is_listed_again(cluster: Cluster, redis_server: RedisServer) -> None:
    """Redis down longer than node_ttl (or restarted without its data) lets a
    live node's heartbeat run out; a listing then forgets its connections.
    Its next beat must write them again, not leave them unlisted for good."""
    a, b = await cluster.start(2, node_ttl_seconds=1)
    await b.connect("alice")
    await eventually(lambda: _listed(a, [("alice", "node1")]), what="B's tab listed")
    r = aioredis.Redis.from_url(redis_server.url)

    async def run_out() -> bool:
        """The heartbeat key goes (what its expiry does) and A's listing
        forgets B's connections; False if B beat in between."""
        await r.delete("{askd}:node:node1")
        return await _listed(a, [])

    try:
        await eventually(run_out, what="B's connections forgotten")
    finally:
        await r.aclose()
    await eventually(lambda: _listed(a, [("alice", "node1")]), timeout=2, what="B's tab listed again")


async def _listed(node, expected: list[tuple[str, str]]) -> bool:  # type: ignore[no-untyped-def]
    r = await node.admin("GET", "/admin/v1/connections")
    return sorted((c["userId"], c["node"]) for c in r.json()["connections"]) == expected


async def test_revoke_all_reaches_every_node_without_a_restart(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    old = {"Authorization": f"Bearer {a.token('agent')}"}
    tab_b = await b.connect("alice")  # opened on the other node, with a token from before
    r = await a.admin("POST", "/admin/v1/tokens/revoke-all")
    assert r.status_code == 200, r.text
    assert await tab_b.closed() == 4001

    async def refused(node: object) -> bool:
        r = await node.http.get(f"{node.url}/v1/sessions/s/questions/r", headers=old)  # type: ignore[attr-defined]
        return r.status_code == 401

    for node in (a, b):
        assert await eventually(lambda node=node: refused(node), what="the old token refused")
        await (await node.connect("alice")).works()  # tokens issued now are good
    late = await cluster.add()  # a node started afterwards reads it from Redis
    assert await refused(late)
