"""Nodes as real ``askd serve`` processes on one real Redis, where something
must die: a node (``kill -9``) or Redis itself (spec v1.1 B: a node that
dies loses nothing but its sockets; a node that loses Redis degrades and
catches up without losing or repeating a question)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter

import pytest
import websockets

from askd.client import AsyncAgentClient
from askd.client.http import RetryPolicy
from tests.system.cluster.conftest import Nodes
from tests.system.cluster.nodes import Failover
from tests.conftest import RunningDaemon, WsClient, eventually, q

NODE_TTL = 3.0


async def listed(node: RunningDaemon) -> list[tuple[str, str]]:
    r = await node.admin("GET", "/admin/v1/connections")
    assert r.status_code == 200, r.text
    return sorted((c["node"], c["userId"]) for c in r.json()["connections"])


async def test_kill_9_the_agent_reattaches_on_another_node_and_the_tab_answers_from_a_third(askd_nodes: Nodes) -> None:
    a, b, c = await askd_nodes.start(3, node_ttl_seconds=NODE_TTL)
    tab_a = await a.connect("alice")
    await tab_a.subscribe("*")
    await eventually(lambda: _is(listed(b), [("node-a", "alice")]), what="the tab on A listed")

    # Two agents whose client knows A then B. One is parked in its ask's own
    # long-poll on A (its retry is the same ask, by Idempotency-Key); the
    # other asked without waiting and long-polls the result on A by requestId.
    ask_route, wait_route = Failover([a.url, b.url]), Failover([a.url, b.url])
    asker = AsyncAgentClient(a.url, a.token("agent"), poll_seconds=20, transport=ask_route)
    waiter = AsyncAgentClient(a.url, a.token("agent"), poll_seconds=1, transport=wait_route)
    try:
        asking = asyncio.create_task(asker.ask("s1", "alice", q("Ship it?", "yes", "no")))
        rid1 = (await tab_a.expect("ask_user_questions"))["payload"]["requestId"]  # A pushed it, then parked the ask
        submitted = await waiter.submit("s2", "alice", q("Roll back?", "yes", "no"))
        rid2 = submitted.request_id
        assert (await tab_a.expect("ask_user_questions"))["payload"]["requestId"] == rid2
        waiting = asyncio.create_task(waiter.wait("s2", rid2))
        result_path = f"/v1/sessions/s2/questions/{rid2}"
        # One long-poll by requestId came back from A still pending: the
        # waiter is polling A when it dies.
        await eventually(lambda: (a.url, "GET", result_path, 200) in wait_route.log, what="a long-poll answered by A")

        await a.daemon.kill()
        unlisted = asyncio.create_task(_seconds_until(lambda: _none_on(listed(b), "node-a")))
        assert await tab_a.closed() is None  # no close frame: the node is gone

        tab_c = await c.connect("alice")
        frames = await tab_c.subscribe("*")
        pushed = [f["payload"]["requestId"] for f in frames if f["type"] == "ask_user_questions"]
        assert sorted(pushed) == sorted([rid1, rid2])
        for sid, rid, text in (("s1", rid1, "Ship it?"), ("s2", rid2, "Roll back?")):
            ack = await tab_c.answer(sid, rid, {text: "yes"})
            assert ack["payload"] == {"accepted": True}, ack
            assert (await tab_c.expect("ask_user_questions_cancelled"))["payload"] == {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "ws"}

        asked, waited = await asyncio.wait_for(asyncio.gather(asking, waiting), 15)
        assert (asked.request_id, asked.status, asked.answers) == (rid1, "answered", {"Ship it?": "yes"})
        assert (waited.request_id, waited.status, waited.answers) == (rid2, "answered", {"Roll back?": "yes"})
    finally:
        await asker.aclose()
        await waiter.aclose()

    # The ask's long-poll was cut on A and carried over to B: the same
    # question (its Idempotency-Key), not a second one.
    posts = [(node, outcome) for node, method, _, outcome in ask_route.log if method == "POST"]
    assert posts[0][0] == a.url and isinstance(posts[0][1], str), ask_route.log
    assert posts[-1] == (b.url, 200), ask_route.log
    # The waiter re-attached on B by requestId and got the answer there.
    gets = [(node, outcome) for node, method, path, outcome in wait_route.log if method == "GET" and path == result_path]
    cut = next(i for i, (node, outcome) in enumerate(gets) if isinstance(outcome, str))
    assert gets[cut][0] == a.url and gets[-1] == (b.url, 200), wait_route.log
    assert all(node == b.url for node, _ in gets[cut + 1 :]), wait_route.log

    for node in (b, c):
        stats = (await node.admin("GET", "/admin/v1/stats")).json()
        assert (stats["asked"], stats["answered"], stats["pending"]) == (2, 2, 0)
    # The dead node's connection left the listing within node_ttl (its
    # last heartbeat, at most node_ttl / 3 before the kill, ran out).
    assert await asyncio.wait_for(unlisted, NODE_TTL + 2) <= NODE_TTL + 0.2
    assert await listed(b) == [("node-c", "alice")]
    for node in (b, c):
        assert node.daemon.error_lines() == []


async def _is(value, expected) -> bool:  # type: ignore[no-untyped-def]
    return await value == expected


async def _none_on(listing, node: str) -> bool:  # type: ignore[no-untyped-def]
    return all(n != node for n, _ in await listing)


async def _seconds_until(check) -> float:  # type: ignore[no-untyped-def]
    start = time.monotonic()
    await eventually(check, timeout=60, every=0.05)
    return time.monotonic() - start


async def test_questions_asked_on_a_killed_node_time_out_once_on_the_others(askd_nodes: Nodes) -> None:
    a, b, c = await askd_nodes.start(3, node_ttl_seconds=NODE_TTL)
    tabs = {"B": await b.connect("alice"), "C": await c.connect("alice")}
    for tab in tabs.values():
        await tab.subscribe("*")
    timeouts = [1.0 + i / 10 for i in range(10)]
    asked = [await a.ask(f"s{i}", "alice", [q("Still there?")], timeoutSeconds=t) for i, t in enumerate(timeouts)]
    rids = {x["requestId"] for x in asked}
    for tab in tabs.values():
        assert {(await tab.expect("ask_user_questions"))["payload"]["requestId"] for _ in rids} == rids
    await a.daemon.kill()  # before the first deadline: only B and C can time them out

    for name, tab in tabs.items():
        ended = [(await tab.expect("ask_user_questions_cancelled", timeout=max(timeouts) + 3))["payload"] for _ in rids]
        assert sorted(e["requestId"] for e in ended) == sorted(rids), name  # each once
        assert {e["reason"] for e in ended} == {"timeout"}, name
        await tab.quiet(0.5)  # and no second end from the other node
    for node in (b, c):
        for x in asked:
            r = await node.result(x["sessionId"], x["requestId"])
            assert r.json()["status"] == "timeout", r.text
        stats = (await node.admin("GET", "/admin/v1/stats")).json()
        assert (stats["asked"], stats["timedOut"], stats["pending"]) == (10, 10, 0)
        assert node.daemon.error_lines() == []


class Inbox:
    """A tab that keeps reading in the background: every frame, in order."""

    def __init__(self, tab: WsClient) -> None:
        self.tab, self.frames = tab, []  # type: list[dict]
        self.closed = False
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                self.frames.append(json.loads(await self.tab.conn.recv()))
        except websockets.ConnectionClosed:
            self.closed = True

    def pushed(self) -> Counter[str]:
        return Counter(f["payload"]["requestId"] for f in self.frames if f["type"] == "ask_user_questions")

    async def works(self) -> None:
        await self.tab.send({"type": "ping", "id": "alive"})
        await eventually(lambda: {"type": "pong", "id": "alive"} in self.frames, what="a pong")


@pytest.mark.parametrize("redis_appendonly", [True])
async def test_redis_restarted_mid_traffic_loses_and_repeats_nothing(askd_nodes: Nodes) -> None:
    redis = askd_nodes.redis
    a, b = await askd_nodes.start(2, node_ttl_seconds=NODE_TTL)
    inboxes = {}
    for name, node in (("A", a), ("B", b)):
        tab = await node.connect("alice")
        await tab.subscribe("*")
        inboxes[name] = Inbox(tab)

    # Agents asking without pause, half on each node, through the agent
    # client: it retries a 503 with the same Idempotency-Key.
    stop = asyncio.Event()
    asked: list[tuple[str, str, float, float]] = []  # (node, requestId, when the ask was sent, when it returned)
    retry = RetryPolicy(retry_for=60, backoff_cap=0.5)

    async def agent(n: int, node: RunningDaemon) -> None:
        async with AsyncAgentClient(node.url, node.token("agent"), retry=retry) as client:
            i = 0
            while not stop.is_set():
                sent = time.monotonic()
                result = await client.submit(f"agent{n}-s{i // 20}", "alice", q(f"Question {n}.{i}?"))
                asked.append((node.daemon.id, result.request_id, sent, time.monotonic()))
                i += 1
                await asyncio.sleep(0.05)

    agents = [asyncio.create_task(agent(n, (a, b)[n % 2])) for n in range(4)]
    await eventually(lambda: len(asked) >= 10, what="asks before the outage")

    redis.kill()
    down_at = time.monotonic()
    before = {rid for _, rid, _, _ in asked}
    for node in (a, b):
        r = await node.http.post(
            f"{node.url}/v1/sessions/outage/questions",
            json={"userId": "alice", "questions": [q("Lost?")]},
            headers=node.agent_headers,
        )
        assert r.status_code == 503 and r.json()["error"]["code"] == "store_unavailable", r.text
        health = await eventually(lambda node=node: _degraded(node), what=f"{node.daemon.id} degraded")
        assert health["status"] == "degraded"
    assert a.daemon.alive and b.daemon.alive
    await inboxes["A"].works()
    await inboxes["B"].works()
    # Down longer than node_ttl: the nodes' heartbeats run out meanwhile.
    await asyncio.sleep(max(0.0, down_at + NODE_TTL + 0.5 - time.monotonic()))

    redis.start()  # the same port and directory: its append-only file
    up_at = time.monotonic()
    # An admin looks at once: the nodes' heartbeats ran out meanwhile, so
    # this listing forgets their connections until each node beats again.
    await listed(a)
    for node in (a, b):
        await eventually(lambda node=node: _healthy(node), timeout=15, what=f"{node.daemon.id} recovered")
    print(f"\nRedis down {up_at - down_at:.1f} s; both nodes healthy {time.monotonic() - up_at:.1f} s after it came back")
    # Each node's agents ask again once their client's backoff lets them: a
    # node's in-flight retry was sent before up_at, so count per node.
    for node_id in ("node-a", "node-b"):
        await eventually(
            lambda node_id=node_id: sum(node == node_id and sent > up_at for node, _, sent, _ in asked) >= 5,
            timeout=15,
            what=f"asks on {node_id} after the outage",
        )
    stop.set()
    await asyncio.wait_for(asyncio.gather(*agents), 30)

    rids = [rid for _, rid, _, _ in asked]
    assert len(set(rids)) == len(rids)
    # Asks sent while Redis was down that ended after it came back: the
    # client retried their 503s, and each is still one question.
    assert [rid for _, rid, sent, done in asked if down_at < sent < up_at < done]
    expected = Counter(rids)
    for name, inbox in inboxes.items():
        await eventually(lambda inbox=inbox: set(inbox.pushed()) >= set(rids), what=f"every question at {name}'s tab")
        await asyncio.sleep(0.2)  # and then nothing more
        assert inbox.pushed() == expected, name  # every question once, none that no agent was given
        assert not inbox.closed
    after_on_a = {rid for node, rid, sent, _ in asked if node == "node-a" and sent > up_at}
    assert after_on_a and after_on_a <= set(inboxes["B"].pushed())
    for node in (a, b):
        stats = (await node.admin("GET", "/admin/v1/stats")).json()
        assert (stats["asked"], stats["pending"]) == (len(rids), len(rids))
        pending = (await node.admin("GET", "/admin/v1/pending")).json()["pending"]
        assert {p["requestId"] for p in pending} == set(rids)  # the ones asked before the outage among them
        assert before <= {p["requestId"] for p in pending}
        await eventually(lambda node=node: _is(listed(node), [("node-a", "alice"), ("node-b", "alice")]), what="both tabs listed")
        errors = [json.loads(line) for line in node.daemon.error_lines()]
        assert {e["event"] for e in errors} <= {"store.failed"}, errors


async def test_each_end_is_logged_once_by_the_node_whose_step_took_effect(askd_nodes: Nodes) -> None:
    # Every node follows every change, but a question's end is one line in
    # the cluster's logs, like its ask: on the node that took the step.
    a, b, c = await askd_nodes.start(3, node_ttl_seconds=NODE_TTL)
    tab = await b.connect("alice")
    await tab.subscribe("*")
    answered = (await a.ask("s1"))["requestId"]
    await tab.expect("ask_user_questions")
    assert (await tab.answer("s1", answered, {"Which database?": "SQLite"}))["payload"] == {"accepted": True}
    timed_out = (await a.ask("s2", timeoutSeconds=0.3))["requestId"]
    cancelled = (await a.ask("s3"))["requestId"]
    r = await c.http.post(f"{c.url}/v1/sessions/s3/cancel", headers=c.agent_headers)
    assert r.json() == {"cancelled": 1}, r.text
    ends = {answered: ("s1", "answered"), timed_out: ("s2", "timeout"), cancelled: ("s3", "cancelled")}
    for node in (a, b, c):
        for rid, (sid, status) in ends.items():
            await eventually(lambda node=node, sid=sid, rid=rid, status=status: _status_is(node, sid, rid, status), what=f"{rid} {status} on {node.daemon.id}")
    # Every node has applied every end. A request logged after that (a 404
    # is an info line) marks where each node's log has been read up to.
    for node in (a, b, c):
        assert (await node.result("s1", "log-mark")).status_code == 404
        await eventually(lambda node=node: _logged_path(node, "/v1/sessions/s1/questions/log-mark"), what=f"{node.daemon.id}'s mark")

    def lines(status: str, rid: str) -> list[str]:
        return [n.daemon.id for n in (a, b, c) for e in n.daemon.proc.named(f"question.{status}") if e.get("requestId") == rid]

    assert lines("answered", answered) == ["node-b"]  # the tab's node
    assert lines("cancelled", cancelled) == ["node-c"]  # the agent's node
    assert len(lines("timeout", timed_out)) == 1  # whichever node's timer won
    assert lines("asked", answered) == lines("asked", timed_out) == ["node-a"]


def _logged_path(node: RunningDaemon, path: str) -> bool:
    return any(e.get("path") == path for e in node.daemon.proc.named("http.request"))


async def _status_is(node: RunningDaemon, sid: str, rid: str, status: str) -> bool:
    r = await node.result(sid, rid)
    return r.status_code == 200 and r.json()["status"] == status


async def _degraded(node: RunningDaemon) -> dict | None:
    r = await node.http.get(f"{node.url}/healthz")
    return r.json() if r.status_code == 503 else None


async def _healthy(node: RunningDaemon) -> bool:
    r = await node.http.get(f"{node.url}/healthz")
    return r.status_code == 200 and r.json()["status"] == "ok"
