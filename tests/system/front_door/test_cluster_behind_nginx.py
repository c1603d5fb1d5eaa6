"""Two nodes on one Redis behind one round-robin nginx under ``/askd/``, no
sticky sessions: tabs and the agent land on different nodes through the one
front door, and the question still goes round."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from tests.system.cluster.conftest import Cluster, cluster, redis_appendonly, redis_server  # noqa: F401  (fixtures)
from tests.conftest import eventually, q
from tests.system.front_door.conftest import NGINX, need, start_nginx


async def test_a_tab_and_an_agent_on_different_nodes_through_one_front_door(cluster: Cluster, tmp_path: Path) -> None:  # noqa: F811
    need(NGINX, "nginx")
    a, b = await cluster.start(2)
    proxy = await start_nginx(tmp_path, [a.daemon.port, b.daemon.port])
    try:
        tabs = [await proxy.connect(a.token("user", "alice")) for _ in range(4)]
        for tab in tabs:
            await tab.subscribe("*")

        async def nodes_of_tabs() -> set[str] | None:
            conns = (await a.admin("GET", "/admin/v1/connections")).json()["connections"]
            return {c["node"] for c in conns} if len(conns) == 4 else None

        assert await eventually(nodes_of_tabs, what="four tabs listed") == {"node0", "node1"}

        async with httpx.AsyncClient(base_url=proxy.url, headers=a.agent_headers, timeout=10) as agent:
            r = await agent.post("/v1/sessions/s1/questions", json={"userId": "alice", "questions": [q("Ship it?")]})
            assert r.status_code == 201, r.text
            rid = r.json()["requestId"]
            for tab in tabs:  # on both nodes
                assert (await tab.expect("ask_user_questions"))["payload"]["requestId"] == rid
            waiting = asyncio.create_task(agent.get(f"/v1/sessions/s1/questions/{rid}", params={"wait": 10}))
            await eventually(lambda: a.agent_waiting(rid) or b.agent_waiting(rid), what="the long-poll parked on a node")
            ack = await tabs[-1].answer("s1", rid, {"Ship it?": "yes"})
            assert ack["payload"] == {"accepted": True}
            for tab in tabs:
                assert (await tab.expect("ask_user_questions_cancelled"))["payload"]["reason"] == "answered"
            result = (await asyncio.wait_for(waiting, 10)).json()
            assert (result["status"], result["answers"]) == ("answered", {"Ship it?": "yes"})
    finally:
        await proxy.stop()
