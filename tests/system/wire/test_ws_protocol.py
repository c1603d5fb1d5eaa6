"""Spec section 3 over a real socket: each client frame of the table and the
events it causes (ping, subscribe to one session and to ``*``, unsubscribe,
answers accepted / not pending / invalid, timeouts, session cancels)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.conftest import RunningDaemon, eventually, q
from tests.receipts.independent import receipted


def asks(frames: list[dict]) -> list[str]:
    return [f["payload"]["requestId"] for f in frames if f["type"] == "ask_user_questions"]


@pytest.mark.parametrize("frame_id", [1, "p-1"])
async def test_ping_gets_pong_with_the_id_echoed(daemon: RunningDaemon, frame_id: object) -> None:
    tab = await daemon.connect("alice")
    await tab.send({"type": "ping", "id": frame_id})
    assert await tab.recv() == {"type": "pong", "id": frame_id}
    await tab.send({"type": "ping"})
    assert await tab.recv() == {"type": "pong"}


async def test_subscribe_repushes_pending_oldest_first_with_the_original_content(daemon: RunningDaemon) -> None:
    first = await daemon.ask("s1", "alice", [q("First?", "a", "b", color="red")], metadata={"tool": "x"})
    second = await daemon.ask("s1", "alice", [q("Second?")])
    await daemon.ask("s2", "alice", [q("Elsewhere?")])

    tab = await daemon.connect("alice")
    await tab.send({"type": "subscribe", "sessionId": "s1", "id": 9})
    snapshot = await tab.expect("session_snapshot")
    assert snapshot == {"type": "session_snapshot", "id": 9, "sessionId": "s1", "payload": {"active": True, "pending": 2}}
    pushed = [await tab.expect("ask_user_questions"), await tab.expect("ask_user_questions")]
    assert await tab.recv() == {"type": "ack", "id": 9, "sessionId": "s1", "payload": {"repushed": 2}}

    for frame, asked, questions, metadata in (
        (pushed[0], first, [q("First?", "a", "b", color="red")], {"tool": "x"}),
        (pushed[1], second, [q("Second?")], {}),
    ):
        assert frame["sessionId"] == "s1"
        assert frame["payload"] == {
            "requestId": asked["requestId"],
            "questions": questions,
            "metadata": metadata,
            "createdAt": asked["createdAt"],
            "expiresAt": asked["expiresAt"],
        }
    await tab.quiet()  # nothing of s2


async def test_subscribe_without_id_sends_no_ack_and_empty_session_is_inactive(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    await tab.send({"type": "subscribe", "sessionId": "fresh"})
    assert await tab.recv() == {"type": "session_snapshot", "sessionId": "fresh", "payload": {"active": False, "pending": 0}}
    await tab.quiet()


async def test_subscribe_star_restores_every_session_of_the_user_and_later_ones(daemon: RunningDaemon) -> None:
    a1 = await daemon.ask("s1", "alice", [q("One?")])
    b1 = await daemon.ask("s2", "alice", [q("Two?")])
    a2 = await daemon.ask("s1", "alice", [q("Three?")])
    done = await daemon.ask("s3", "alice", [q("Done?")])
    await daemon.admin("POST", f"/admin/v1/sessions/s3/questions/{done['requestId']}/answer", json={"answers": {"Done?": "y"}})
    await daemon.ask("bob-s", "bob", [q("Bob's?")])

    tab = await daemon.connect("alice")
    frames = await tab.subscribe("*")
    assert [(f["type"], f["sessionId"]) for f in frames] == [
        ("session_snapshot", "s1"),
        ("ask_user_questions", "s1"),
        ("ask_user_questions", "s1"),
        ("session_snapshot", "s2"),
        ("ask_user_questions", "s2"),
    ]
    assert frames[0]["payload"] == {"active": True, "pending": 2}
    assert asks(frames) == [a1["requestId"], a2["requestId"], b1["requestId"]]

    later = await daemon.ask("s4", "alice", [q("Later?")])
    pushed = await tab.expect("ask_user_questions")
    assert (pushed["sessionId"], pushed["payload"]["requestId"]) == ("s4", later["requestId"])
    await daemon.ask("bob-s", "bob", [q("Bob again?")])
    await tab.quiet()

    conns = (await daemon.admin("GET", "/admin/v1/connections", params={"userId": "alice"})).json()["connections"]
    assert conns[0]["subscriptions"] == ["*"]


async def test_unsubscribe_is_acked_and_drops_the_subscription(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    await tab.subscribe("s1")
    await tab.subscribe("s2")
    await tab.send({"type": "unsubscribe", "sessionId": "s1", "id": "u"})
    assert await tab.recv() == {"type": "ack", "id": "u", "sessionId": "s1", "payload": {}}
    conns = (await daemon.admin("GET", "/admin/v1/connections")).json()["connections"]
    assert conns[0]["subscriptions"] == ["s2"]


class SlowPipelines:
    """A node's Redis link whose pipelines wait before they run: its
    presence writes land ``delay`` seconds after the change, as on a loaded
    machine, every time instead of by chance."""

    def __init__(self, redis: Any, delay: float) -> None:
        self._redis, self._delay = redis, delay

    def pipeline(self, *args: Any, **kw: Any) -> Any:
        pipe = self._redis.pipeline(*args, **kw)
        execute = pipe.execute

        async def slow_execute(*a: Any, **k: Any) -> Any:
            await asyncio.sleep(self._delay)
            return await execute(*a, **k)

        pipe.execute = slow_execute
        return pipe

    def __getattr__(self, name: str) -> Any:
        return getattr(self._redis, name)


async def test_after_a_subscribe_or_unsubscribe_ack_every_node_lists_it_even_with_slow_presence(
    daemon: RunningDaemon, store: str
) -> None:
    """Issue 29 item 13: the ack comes once the admin's listing shows the
    change, whichever node the admin asks (on a shared store, presence is
    written after the change: the tab's node lists its own connections from
    its registry, the ack waits until the others can read it)."""
    nodes = list(getattr(daemon, "nodes", (daemon.daemon,)))
    tab = await daemon.connect("alice")
    [home] = [d for d in nodes if d.hub.registry.connections("alice")]
    if store == "redis":
        presence = home.hub.store.presence
        presence._redis = SlowPipelines(presence._redis, 0.5)

    async def listed() -> list[list[str]]:
        out = []
        for node in nodes:
            r = await daemon.http.get(f"http://127.0.0.1:{node.admin_port}/admin/v1/connections", headers=daemon.admin_headers)
            out.append([c["subscriptions"] for c in r.json()["connections"]])
        return out

    await tab.subscribe("s1")
    await tab.subscribe("s2")
    assert await listed() == [[["s1", "s2"]]] * len(nodes)
    await tab.send({"type": "unsubscribe", "sessionId": "s1", "id": "u"})
    assert await tab.recv() == {"type": "ack", "id": "u", "sessionId": "s1", "payload": {}}
    assert await listed() == [[["s2"]]] * len(nodes)


async def test_accepted_answer_acks_before_closing_every_tab(daemon: RunningDaemon) -> None:
    tabs = [await daemon.connect("alice") for _ in range(3)]
    asked = await daemon.ask("s1", "alice", [q("Stack?", "py", "go", "rust", multi=True), q("Why?")])
    rid = asked["requestId"]
    for tab in tabs:
        await tab.expect("ask_user_questions")

    answers = {"Stack?": ["py", "zig"], "Why?": "speed"}
    ack = await tabs[1].answer("s1", rid, answers, id_="a1")
    assert ack == {"type": "ack", "id": "a1", "sessionId": "s1", "payload": {"accepted": True}}
    for tab in tabs:
        assert await tab.recv() == {
            "type": "ask_user_questions_cancelled",
            "sessionId": "s1",
            "payload": {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "ws"},
        }
    result = (await daemon.result("s1", rid)).json()
    assert receipted(result) == {
        "requestId": rid, "sessionId": "s1", "status": "answered", "answers": answers, "answeredBy": "alice", "via": "ws"
    }


async def test_resent_answer_after_a_reconnect_is_harmless(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Go?")])
    await tab.expect("ask_user_questions")
    assert (await tab.answer("s1", asked["requestId"], {"Go?": "yes"}))["payload"] == {"accepted": True}
    await tab.expect("ask_user_questions_cancelled")
    await tab.close()

    tab = await daemon.connect("alice")
    assert await tab.subscribe("s1") == [
        {"type": "session_snapshot", "id": "sub", "sessionId": "s1", "payload": {"active": False, "pending": 0}}
    ]
    again = await tab.answer("s1", asked["requestId"], {"Go?": "yes"}, id_=2)
    assert again == {"type": "ack", "id": 2, "sessionId": "s1", "payload": {"accepted": False, "reason": "not_pending"}}
    await tab.quiet()
    stats = (await daemon.admin("GET", "/admin/v1/stats")).json()
    assert (stats["asked"], stats["answered"]) == (1, 1)


async def test_answer_to_an_unknown_request_is_not_pending(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    for sid, rid in (("s1", "nope"), ("never-asked", "nope")):
        ack = await tab.answer(sid, rid, {"Q?": "a"})
        assert ack["payload"] == {"accepted": False, "reason": "not_pending"}


@pytest.mark.parametrize(
    "answers",
    [
        {},
        {"Not a question?": "x"},
        {"Color?": ["red"]},  # a list for a single-select question
        {"Color?": 3},
        {"Toppings?": ["ham", 2]},
        {"Toppings?": {"a": 1}},
    ],
    ids=["empty", "unknown-key", "list-not-multi", "number", "list-of-mixed", "object"],
)
async def test_invalid_answer_is_an_error_and_the_question_stays_pending(daemon: RunningDaemon, answers: dict) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Color?", "red", "blue"), q("Toppings?", "ham", multi=True)])
    rid = asked["requestId"]
    await tab.expect("ask_user_questions")

    reply = await tab.answer("s1", rid, answers, id_=5)
    assert reply["type"] == "error" and reply["id"] == 5
    assert reply["payload"]["code"] == "invalid_answer" and reply["payload"]["message"]
    await tab.quiet()  # no cancelled event
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"

    ok = await tab.answer("s1", rid, {"Color?": "green", "Toppings?": []})
    assert ok["payload"] == {"accepted": True}


async def test_timeout_with_fractional_seconds_closes_panels_and_fails_the_agent(daemon: RunningDaemon) -> None:
    tab1 = await daemon.connect("alice")
    tab2 = await daemon.connect("alice")
    started = time.monotonic()
    asked = await daemon.ask("s1", "alice", [q("Quick?")], timeoutSeconds=0.25)
    rid = asked["requestId"]
    slow = await daemon.ask("s1", "alice", [q("Slow?")], timeoutSeconds=30)
    for tab in (tab1, tab2):
        await tab.expect("ask_user_questions")
        await tab.expect("ask_user_questions")

    result = (await daemon.result("s1", rid, wait=5)).json()
    assert time.monotonic() - started >= 0.25
    assert receipted(result) == {
        "requestId": rid,
        "sessionId": "s1",
        "status": "timeout",
        "error": "Timed out waiting for the user's answer",
    }
    for tab in (tab1, tab2):
        closed = await tab.expect("ask_user_questions_cancelled")
        assert closed["payload"] == {"requestId": rid, "reason": "timeout"}
    assert (await tab1.answer("s1", rid, {"Quick?": "late"}))["payload"]["accepted"] is False
    assert (await daemon.result("s1", slow["requestId"])).json()["status"] == "pending"


@pytest.mark.parametrize("via", ["agent", "admin"])
async def test_session_cancel_cascades_to_child_sessions(daemon: RunningDaemon, via: str) -> None:
    tab = await daemon.connect("alice")
    root = await daemon.ask("root", "alice", [q("Root?")])
    child = await daemon.ask("child", "alice", [q("Child?")], parentSessionId="root")
    grandchild = await daemon.ask("grandchild", "alice", [q("Grandchild?")], parentSessionId="child")
    sibling = await daemon.ask("other", "alice", [q("Other?")])
    for _ in range(4):
        await tab.expect("ask_user_questions")

    # cancelling the child takes the grandchild too, not the root
    if via == "agent":
        r = await daemon.http.post(f"{daemon.url}/v1/sessions/child/cancel", headers=daemon.agent_headers)
    else:
        r = await daemon.admin("POST", "/admin/v1/sessions/child/cancel")
    assert (r.status_code, r.json()) == (200, {"cancelled": 2})
    ended = {(await tab.expect("ask_user_questions_cancelled"))["payload"]["requestId"] for _ in range(2)}
    assert ended == {child["requestId"], grandchild["requestId"]}
    for sid, asked in (("child", child), ("grandchild", grandchild)):
        result = (await daemon.result(sid, asked["requestId"])).json()
        assert (result["status"], result["error"]) == ("cancelled", "Session cancelled")
    assert (await daemon.result("root", root["requestId"])).json()["status"] == "pending"

    r = await daemon.http.post(f"{daemon.url}/v1/sessions/root/cancel", headers=daemon.agent_headers)
    assert r.json() == {"cancelled": 1}
    closed = await tab.expect("ask_user_questions_cancelled")
    assert closed == {
        "type": "ask_user_questions_cancelled",
        "sessionId": "root",
        "payload": {"requestId": root["requestId"], "reason": "cancelled"},
    }
    assert (await daemon.result("other", sibling["requestId"])).json()["status"] == "pending"
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/never/cancel", headers=daemon.agent_headers)
    assert r.json() == {"cancelled": 0}


async def test_a_waiting_agent_is_woken_by_a_cancel(daemon: RunningDaemon) -> None:
    asked = await daemon.ask("s1", "alice")
    waiting = asyncio.create_task(daemon.result("s1", asked["requestId"], wait=10))
    await eventually(lambda: daemon.agent_waiting(asked["requestId"]))
    await daemon.admin("POST", "/admin/v1/sessions/s1/cancel")
    result = (await asyncio.wait_for(waiting, 2)).json()
    assert result["status"] == "cancelled"
