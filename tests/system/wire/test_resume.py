"""The product's promise over real sockets: a disconnect never cancels a
question; reconnecting re-pushes it; any tab answers; the others close."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import RunningDaemon, q
from tests.receipts.independent import receipted


async def test_ask_is_pushed_to_every_tab_of_the_user(daemon: RunningDaemon) -> None:
    tab1 = await daemon.connect("alice")
    tab2 = await daemon.connect("alice")
    other = await daemon.connect("bob")
    asked = await daemon.ask("s1", "alice", [q("Which database?", "PostgreSQL", "SQLite", extra={"k": 1})], metadata={"m": 1})
    for tab in (tab1, tab2):
        frame = await tab.expect("ask_user_questions")
        assert frame["sessionId"] == "s1"
        payload = frame["payload"]
        assert payload["requestId"] == asked["requestId"]
        assert payload["questions"] == [q("Which database?", "PostgreSQL", "SQLite", extra={"k": 1})]
        assert payload["metadata"] == {"m": 1}
        assert payload["createdAt"] == asked["createdAt"]
        assert payload["expiresAt"] == asked["expiresAt"]
    await other.quiet()


async def test_abort_keeps_the_question_and_resubscribe_repushes_it(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    first = await daemon.ask("s1", "alice", [q("First?")])
    second = await daemon.ask("s1", "alice", [q("Second?")])
    await tab.expect("ask_user_questions")
    await tab.expect("ask_user_questions")

    r = await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "abort"})
    assert r.json() == {"disconnected": 1}
    with pytest.raises(Exception):
        await tab.recv()  # the socket is gone, no close frame

    result = await daemon.result("s1", first["requestId"])
    assert result.json()["status"] == "pending"

    tab = await daemon.connect("alice")
    frames = await tab.subscribe("s1")
    assert [f["type"] for f in frames] == ["session_snapshot", "ask_user_questions", "ask_user_questions"]
    assert frames[0]["payload"] == {"active": True, "pending": 2}
    assert [f["payload"]["requestId"] for f in frames[1:]] == [first["requestId"], second["requestId"]]
    assert frames[1]["payload"]["questions"] == [q("First?")]


async def test_any_tab_answers_the_agent_gets_it_and_other_tabs_close(daemon: RunningDaemon) -> None:
    tab1 = await daemon.connect("alice")
    tab2 = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Deploy now?", "yes", "no")])
    rid = asked["requestId"]
    await tab1.expect("ask_user_questions")
    await tab2.expect("ask_user_questions")

    waiting = asyncio.create_task(daemon.result("s1", rid, wait=10))
    await asyncio.sleep(0)
    ack = await tab2.answer("s1", rid, {"Deploy now?": "yes"}, id_=7)
    assert ack == {"type": "ack", "id": 7, "sessionId": "s1", "payload": {"accepted": True}}
    for tab in (tab1, tab2):
        closed = await tab.expect("ask_user_questions_cancelled")
        assert closed["payload"] == {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "ws"}

    result = (await waiting).json()
    assert receipted(result) == {"requestId": rid, "sessionId": "s1", "status": "answered", "answers": {"Deploy now?": "yes"}, "answeredBy": "alice", "via": "ws"}

    # resending after a reconnect is harmless
    again = await tab1.answer("s1", rid, {"Deploy now?": "no"})
    assert again["payload"] == {"accepted": False, "reason": "not_pending"}
    await tab2.quiet()
    assert (await daemon.result("s1", rid)).json()["answers"] == {"Deploy now?": "yes"}


@pytest.mark.parametrize("settings_overrides", [{"question_timeout_seconds": 0.3}])
async def test_timeout_is_not_paused_by_a_disconnect(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice")
    await tab.expect("ask_user_questions")
    await daemon.admin("POST", "/admin/v1/disconnect", json={"all": True, "mode": "abort"})

    r = await daemon.result("s1", asked["requestId"], wait=5)
    body = r.json()
    assert body["status"] == "timeout"
    assert body["error"]
    # On two nodes (requests alternate between them) each must have applied
    # the end before the next tab connects, so the tab meets the question
    # ended rather than hearing it end as it subscribes: a plain read on a
    # node catches it up with the cluster.
    for _ in range(2):
        assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "timeout"

    tab = await daemon.connect("alice")
    frames = await tab.subscribe("s1")
    assert frames == [{"type": "session_snapshot", "id": "sub", "sessionId": "s1", "payload": {"active": False, "pending": 0}}]
