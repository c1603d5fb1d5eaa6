"""Approve links on nodes of one Redis (protocol sections 12 and 17): two
approvals through two users' links on two nodes at once both count and
complete a quorum of 2; the last approval and a denial at once on two
nodes: exactly one wins, and the other page says how it ended."""

from __future__ import annotations

import asyncio

from askd.channels import links
from tests.system.cluster.conftest import Cluster
from tests.conftest import RunningDaemon
from tests.system.links.conftest import PUBLIC_URL, link

ACTION = {"name": "deploy", "arguments": {"env": "prod"}}


async def ask(node: RunningDaemon, quorum: int) -> str:
    r = await node.http.post(
        f"{node.url}/v1/sessions/s1/questions",
        json={"to": ["alice", "bob", "carol"], "action": ACTION, "quorum": quorum},
        headers=node.agent_headers,
    )
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


async def test_two_links_on_two_nodes_fill_a_quorum_of_two(cluster: Cluster) -> None:
    a, b, c = await cluster.start(3, public_url=PUBLIC_URL)
    rid = await ask(a, 2)
    taps = await asyncio.gather(
        b.http.post(link(b, "s1", rid, "alice", links.APPROVE), data={"action": "approve"}),
        c.http.post(link(c, "s1", rid, "bob", links.APPROVE), data={"action": "approve"}),
    )
    assert [t.status_code for t in taps] == [200, 200]
    assert sorted("your approval was recorded" in t.text for t in taps) == [False, True]
    body = (await a.result("s1", rid, wait=5)).json()
    assert body["status"] == "answered" and body["approved"] is True
    assert sorted(x["by"] for x in body["approvals"]) == ["alice", "bob"]


async def test_the_last_approval_and_a_denial_at_once_one_wins(cluster: Cluster) -> None:
    a, b, c = await cluster.start(3, public_url=PUBLIC_URL)
    rid = await ask(a, 2)
    first = await a.http.post(link(a, "s1", rid, "alice"), data={"action": "approve"})
    assert first.status_code == 200 and "your approval was recorded" in first.text
    approve, deny = await asyncio.gather(
        b.http.post(link(b, "s1", rid, "bob"), data={"action": "approve"}),
        c.http.post(link(c, "s1", rid, "carol"), data={"action": "decline", "reason": "no"}),
    )
    body = (await a.result("s1", rid, wait=5)).json()
    if body["status"] == "answered":
        assert "you approved it" in approve.text and "Already approved by alice, bob." in deny.text
    else:
        assert body["status"] == "declined" and body["answeredBy"] == "carol"
        assert "You denied this action." in deny.text and "Denied by carol." in approve.text
