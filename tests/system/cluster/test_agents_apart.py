"""Agents kept apart across nodes on one Redis: the session's agent is
checked in the commit step itself, so a node whose copy has not yet seen
another agent's ask cannot let a second agent into that session."""

from __future__ import annotations

import asyncio

from tests.system.cluster.conftest import Cluster
from tests.system.cluster.test_scenarios import lag_follower
from tests.conftest import RunningDaemon, q


def agent(node: RunningDaemon, sub: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {node.token('agent', sub)}"}


async def test_another_agent_asking_on_a_lagging_node_gets_404(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    lag_follower(b)  # B's copy is 100 ms behind: only Redis knows the session is A's
    body = {"userId": "alice", "questions": [q("Mine?")]}
    for i in range(5):
        r = await a.http.post(f"{a.url}/v1/sessions/s{i}/questions", json=body, headers=agent(a, "agent-a"))
        assert r.status_code == 201, r.text
        r = await b.http.post(f"{b.url}/v1/sessions/s{i}/questions", json=body, headers=agent(b, "agent-b"))
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found", (i, r.text)
        r = await b.http.get(f"{b.url}/v1/sessions/s{i}/questions", headers=agent(b, "agent-b"))
        assert r.status_code == 404, (i, r.text)
        r = await b.http.get(f"{b.url}/v1/sessions/s{i}/questions", headers=agent(b, "agent-a"))
        assert len(r.json()["pending"]) == 1, (i, r.text)


async def test_the_same_key_from_two_agents_on_two_nodes_asks_twice(cluster: Cluster) -> None:
    """A's key and the sub-less agent's same key, in A's session, at once on
    two nodes: two questions, each then replayed to its own agent."""
    a, b = await cluster.start(2)
    tab = await a.connect("alice")
    body = {"userId": "alice", "questions": [q("Twice?")]}
    for i in range(5):
        url = f"/v1/sessions/s{i}/questions"
        assert (await a.http.post(a.url + url, json=body, headers=agent(a, "agent-a"))).status_code == 201
        key = {"Idempotency-Key": f"k{i}"}
        first, second = await asyncio.gather(
            a.http.post(a.url + url, json=body, headers={**agent(a, "agent-a"), **key}),
            b.http.post(b.url + url, json=body, headers={**agent(b, None), **key}),
        )
        assert first.status_code == second.status_code == 201, (first.text, second.text)
        assert first.json()["requestId"] != second.json()["requestId"], i
        for node, sub, asked in ((b, "agent-a", first), (a, None, second)):
            again = await node.http.post(node.url + url, json=body, headers={**agent(node, sub), **key})
            assert again.headers.get("Idempotent-Replayed") == "true", again.text
            assert again.json()["requestId"] == asked.json()["requestId"]
        for _ in range(3):
            await tab.expect("ask_user_questions")
    await tab.quiet()
