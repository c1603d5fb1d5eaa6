"""The seed's scenarios split across nodes on one Redis (spec v1.1 B)."""

from __future__ import annotations

import asyncio
from typing import Any

from askd.core import AskInput
from tests.system.cluster.conftest import Cluster
from tests.conftest import WsClient, eventually, q
from tests.receipts.independent import receipted


async def test_ask_on_a_tab_on_b_answer_on_c(cluster: Cluster) -> None:
    a, b, c = await cluster.start(3)
    tab_b = await b.connect("alice")
    tab_c = await c.connect("alice")
    asked = await a.ask("s1", "alice", [q("Which database?", "SQLite", "PostgreSQL")], metadata={"m": 1})
    rid = asked["requestId"]
    for tab in (tab_b, tab_c):
        pushed = await tab.expect("ask_user_questions")
        assert pushed["payload"]["requestId"] == rid and pushed["payload"]["metadata"] == {"m": 1}
    waiting = asyncio.create_task(a.result("s1", rid, wait=10))
    await eventually(lambda: a.agent_waiting(rid), what="the agent's wait on A")

    ack = await tab_c.answer("s1", rid, {"Which database?": "SQLite"})
    assert ack["type"] == "ack" and ack["payload"] == {"accepted": True}, ack
    for tab in (tab_b, tab_c):
        ended = await tab.expect("ask_user_questions_cancelled")
        assert ended["payload"] == {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "ws"}
    r = await asyncio.wait_for(waiting, 5)
    assert receipted(r.json()) == {"requestId": rid, "sessionId": "s1", "status": "answered", "answers": {"Which database?": "SQLite"}, "answeredBy": "alice", "via": "ws"}
    # A second answer, on whichever node, is not_pending.
    again = await tab_b.answer("s1", rid, {"Which database?": "PostgreSQL"})
    assert again["payload"] == {"accepted": False, "reason": "not_pending"}
    for node in (a, b, c):
        assert (await node.result("s1", rid)).json()["answers"] == {"Which database?": "SQLite"}


async def test_a_tab_that_comes_back_on_another_node_gets_its_question_again(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    tab = await a.connect("alice")
    asked = await a.ask("s1", "alice", [q("Deploy?")])
    await tab.expect("ask_user_questions")
    await tab.close()
    again = await b.connect("alice")
    frames = await again.subscribe("*")
    assert [f["type"] for f in frames] == ["session_snapshot", "ask_user_questions"]
    assert frames[1]["payload"]["requestId"] == asked["requestId"]


async def test_racing_answers_on_two_nodes_end_the_question_once(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    tab_a, tab_b = await a.connect("alice"), await b.connect("alice")
    for round_ in range(100):
        asked = await a.ask("race", "alice", [q("Which?")])
        rid = asked["requestId"]
        await tab_a.expect("ask_user_questions")
        await tab_b.expect("ask_user_questions")
        results = await asyncio.gather(
            answer_and_end(tab_a, rid, "a", f"a{round_}"),
            answer_and_end(tab_b, rid, "b", f"b{round_}"),
        )
        accepted = [who for who, ack in zip("ab", results) if ack == {"accepted": True}]
        assert len(accepted) == 1, results
        assert [ack for ack in results if ack != {"accepted": True}] == [{"accepted": False, "reason": "not_pending"}]
        winner = accepted[0]
        for node in (a, b):
            assert (await node.result("race", rid)).json()["answers"] == {"Which?": winner}
    for node in (a, b):
        stats = (await node.admin("GET", "/admin/v1/stats")).json()
        assert (stats["asked"], stats["answered"], stats["pending"]) == (100, 100, 0)


async def answer_and_end(tab: WsClient, rid: str, value: str, id_: str) -> dict:
    """Answer, and read until both the ack and the question's end came (a
    losing tab may see the winner's end before its own ack)."""
    await tab.send({"type": "ask_user_questions_result", "sessionId": "race", "requestId": rid, "answers": {"Which?": value}, "id": id_})
    ack, ended = None, False
    while ack is None or not ended:
        frame = await tab.recv()
        if frame["type"] == "ack" and frame.get("id") == id_:
            ack = frame["payload"]
        elif frame["type"] == "ask_user_questions_cancelled" and frame["payload"]["requestId"] == rid:
            assert not ended, "the end came twice"
            ended = True
        else:
            raise AssertionError(f"unexpected {frame}")
    return ack


async def test_session_cancel_cascades_across_nodes(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    tab = await b.connect("alice")
    parent = await a.ask("parent", "alice", [q("Parent?")])
    child = await b.ask("child", "alice", [q("Child?")], parentSessionId="parent")
    await tab.expect("ask_user_questions")
    await tab.expect("ask_user_questions")
    r = await a.http.post(f"{a.url}/v1/sessions/parent/cancel", headers=a.agent_headers)
    assert r.json() == {"cancelled": 2}
    for _ in range(2):
        assert (await tab.expect("ask_user_questions_cancelled"))["payload"]["reason"] == "cancelled"
    for node in (a, b):
        for sid, asked in (("parent", parent), ("child", child)):
            assert (await node.result(sid, asked["requestId"])).json()["status"] == "cancelled"


async def test_require_online_counts_tabs_on_every_node(cluster: Cluster) -> None:
    a, b = await cluster.start(2)
    r = await a.ask("s1", "alice", [q("Here?")], requireOnline=True, expect=409)
    assert r["error"]["code"] == "user_offline"
    tab = await b.connect("alice")
    await eventually(lambda: _listed(a, "alice"), what="alice's tab on B in the cluster's listing")
    asked = await a.ask("s1", "alice", [q("Here?")], requireOnline=True)
    assert (await tab.expect("ask_user_questions"))["payload"]["requestId"] == asked["requestId"]


async def _listed(node, user: str) -> bool:  # type: ignore[no-untyped-def]
    r = await node.admin("GET", "/admin/v1/connections", params={"userId": user})
    return bool(r.json()["connections"])


async def test_a_node_started_later_lists_sessions_in_the_order_they_were_made(cluster: Cluster) -> None:
    a = (await cluster.start(1))[0]
    for sid, parent in (("zz-child", "aa-parent"), ("mm", None), ("aa-parent", None)):
        await a.ask(sid, "alice", [q(f"{sid}?")], **({"parentSessionId": parent} if parent else {}))
    late = await cluster.add()
    tab = await late.connect("alice")
    frames = await tab.subscribe("*")
    order = [f["sessionId"] for f in frames if f["type"] == "ask_user_questions"]
    expected = [p["sessionId"] for p in (await a.admin("GET", "/admin/v1/pending")).json()["pending"]]
    assert order == expected == ["zz-child", "aa-parent", "mm"]  # a parent is made with its first child


async def test_one_idempotency_key_asked_on_two_nodes_at_once_is_one_question(cluster: Cluster) -> None:
    """An agent's retry that lands on another node while its first ask is
    still being taken (a proxy retried it, or the first node died before
    replying): both replies name the one question that exists."""
    a, b = await cluster.start(2)
    tab = await b.connect("alice")
    await tab.subscribe("*")
    for i in range(20):
        key = {"Idempotency-Key": f"k{i}"}
        first, second = await asyncio.gather(
            a.ask("s1", "alice", [q("Once?")], headers=key, expect=201),
            b.ask("s1", "alice", [q("Once?")], headers=key, expect=201),
        )
        assert first["requestId"] == second["requestId"], (i, first, second)
        assert (await tab.expect("ask_user_questions"))["payload"]["requestId"] == first["requestId"]
    await tab.quiet()


def lag_follower(node: Any) -> None:
    """The node's follower reads the stream 100 ms late: a slow link, a busy node."""
    reader = node.daemon.hub.store._follower._reader
    xread = reader.xread

    async def lagging(*args: Any, **kw: Any) -> Any:
        got = await xread(*args, **kw)
        await asyncio.sleep(0.1)
        return got

    reader.xread = lagging


async def test_an_agent_reads_and_cancels_on_another_node_right_after_asking(cluster: Cluster) -> None:
    """No sticky sessions: the agent's next request, a moment after its ask
    returned, lands on a node whose copy does not have that ask yet (found
    by the cluster soak: 7 of 1871 reads were 404)."""
    a, b = await cluster.start(2)
    lag_follower(b)
    for i in range(5):
        asked = await a.ask(f"s{i}", "alice", [q("Here?")])
        r = await b.result(f"s{i}", asked["requestId"])
        assert r.status_code == 200 and r.json()["status"] == "pending", (i, r.text)
        again = await a.ask(f"t{i}", "alice", [q("There?")])
        r = await b.http.post(f"{b.url}/v1/sessions/t{i}/cancel", headers=b.agent_headers)
        assert r.json() == {"cancelled": 1}, (i, r.text)
        assert (await a.result(f"t{i}", again["requestId"])).json()["status"] == "cancelled"


async def test_an_ask_on_another_node_finds_a_group_made_a_moment_ago(cluster: Cluster) -> None:
    """A group put on one node and asked of on another straight after: the
    asking node catches up with the cluster before it calls the group
    unknown (found under load in the suite: 400 "no group 'oncall'")."""
    a, b = await cluster.start(2)
    lag_follower(b)
    for i in range(3):
        r = await a.admin("PUT", f"/admin/v1/groups/g{i}", json={"members": ["bob"]})
        assert r.status_code in (200, 201), r.text
        asked = await b.http.post(
            f"{b.url}/v1/sessions/g{i}/questions", json={"to": [f"group:g{i}"], "questions": [q("Yours?")]}, headers=b.agent_headers
        )
        assert asked.status_code == 201, (i, asked.text)
    unknown = await b.http.post(
        f"{b.url}/v1/sessions/n/questions", json={"to": ["group:nobody"], "questions": [q("Whose?")]}, headers=b.agent_headers
    )
    assert unknown.status_code == 400 and "no group 'nobody'" in unknown.text


async def test_lists_on_another_node_show_a_question_asked_a_moment_ago(cluster: Cluster) -> None:
    """The agent's and the admin's pending lists catch up with the cluster
    first, as a single read does: B's follower lags, B still lists A's ask."""
    a, b = await cluster.start(2)
    lag_follower(b)
    for i in range(3):
        asked = await a.ask(f"l{i}", "alice", [q("Listed?")])
        r = await b.http.get(f"{b.url}/v1/sessions/l{i}/questions", headers=b.agent_headers)
        assert [p["requestId"] for p in r.json()["pending"]] == [asked["requestId"]], (i, r.text)
        r = await b.http.get(f"{b.admin_url}/admin/v1/pending", params={"sessionId": f"l{i}"}, headers=b.admin_headers)
        assert [p["requestId"] for p in r.json()["pending"]] == [asked["requestId"]], (i, r.text)


async def test_more_asks_at_once_than_the_pool_has_connections_all_succeed(cluster: Cluster) -> None:
    """Found by the B6 benchmark (200 agents asking at once on one node):
    redis-py's default pool (100 connections in redis-py 8) raised "Too
    many connections", which askd took for Redis being down (503, degraded)."""
    (a,) = await cluster.start(1)
    hub = a.daemon.hub
    asked = await asyncio.gather(*(hub.ask(AskInput(f"many-{i}", f"user{i}", [q("At once?")])) for i in range(250)))
    assert all(new for _, new in asked)
    assert hub.degraded is None and hub.registry.stats()["pending"] == 250
