"""Spec G and H on several nodes sharing Redis: groups seen by every node at
once, and each escalation step (with its webhook) taken exactly once."""

from __future__ import annotations

import asyncio

from askd.core.changes import Escalated
from tests.system.cluster.conftest import Cluster
from tests.conftest import QUIET, eventually, q
from tests.support.receiver import Receiver, receiver  # noqa: F401  (the fixture)


async def test_a_group_change_on_one_node_moves_the_question_on_every_node(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    await a.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["bob"]})
    bob, carol = await b.connect("bob"), await b.connect("carol")
    r = await a.http.post(
        f"{a.url}/v1/sessions/s1/questions", json={"to": ["group:oncall"], "questions": [q("Deploy?")]}, headers=a.agent_headers
    )
    rid = r.json()["requestId"]
    await bob.expect("ask_user_questions")
    r = await b.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["carol"]})
    assert r.status_code == 200
    assert (await carol.expect("ask_user_questions"))["payload"]["requestId"] == rid
    assert (await bob.expect("ask_user_questions_cancelled"))["payload"]["reason"] == "reassigned"
    assert (await a.admin("GET", "/admin/v1/groups")).json()["groups"] == [{"group": "oncall", "members": ["carol"]}]
    assert (await a.admin("DELETE", "/admin/v1/groups/oncall")).status_code == 200
    assert (await b.admin("DELETE", "/admin/v1/groups/oncall")).status_code == 404


async def test_three_nodes_take_each_step_once_and_notify_once_per_step(cluster: Cluster, receiver: Receiver) -> None:  # noqa: F811
    nodes = await cluster.start(3, notify={"webhook_url": receiver.url})
    await nodes[0].admin("PUT", "/admin/v1/groups/leads", json={"members": ["dave"]})
    taken: list[Escalated] = []
    for n in nodes:  # every change each node's store step took
        commit = n.daemon.hub.store.commit

        async def spy(changes, commit=commit):  # type: ignore[no-untyped-def]
            done = await commit(changes)
            taken.extend(c for c in done if isinstance(c, Escalated))
            return done

        n.daemon.hub.store.commit = spy  # type: ignore[method-assign]
    dave = await nodes[2].connect("dave")
    steps = [{"afterSeconds": 0.4, "to": ["group:leads"]}, {"afterSeconds": 0.8, "to": ["erin"]}]
    rid = (await nodes[1].ask("s1", "alice", [q("Deploy?")], escalate=steps, timeoutSeconds=30))["requestId"]
    assert (await dave.expect("ask_user_questions", timeout=5))["payload"]["requestId"] == rid
    await receiver.wait_for(3)
    await asyncio.sleep(QUIET)  # a second copy would come now
    bodies = [d.json() for d in receiver.got]
    assert sorted(b.get("escalation", 0) for b in bodies) == [0, 1, 2]
    assert [b["users"] for b in sorted(bodies, key=lambda b: b.get("escalation", 0))] == [
        ["alice"],
        ["alice", "dave"],
        ["alice", "dave", "erin"],
    ]
    assert sorted(c.step for c in taken) == [1, 2]
    for n in nodes:
        await eventually(lambda n=n: n.daemon.hub.registry.get("s1", rid).escalations == 2, what="every node applied both")
    # dave, added by step 1, hears of step 2 once, though every node took it in
    step = await dave.expect("ask_user_questions_escalated", timeout=5)
    assert (step["payload"]["escalations"], step["payload"]["escalatedTo"]) == (2, ["group:leads", "erin"])
    await dave.quiet()
    # a node started now loads the groups and the steps taken from Redis
    late = (await cluster.add()).daemon.hub.registry
    assert late.audiences.groups == {"leads": ("dave",)}
    kept = late.get("s1", rid)
    assert kept is not None and kept.escalate == ((0.4, ("group:leads",)), (0.8, ("erin",))) and kept.escalations == 2
