"""Spec section 5 over real sockets: asking, waiting (``?wait=`` on POST and
GET), idempotency, retention, ownership, require-online and the caps."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import pytest

from tests.conftest import RunningDaemon, eventually, q
from tests.receipts.independent import receipted


def iso(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


async def test_ask_answers_201_with_the_pending_body_and_lists_it(daemon: RunningDaemon) -> None:
    asked = await daemon.ask("s1", "alice", [q("Which?")], timeoutSeconds=120)
    assert set(asked) == {"requestId", "sessionId", "status", "createdAt", "expiresAt"}
    assert (asked["sessionId"], asked["status"]) == ("s1", "pending")
    assert (iso(asked["expiresAt"]) - iso(asked["createdAt"])).total_seconds() == pytest.approx(120, abs=0.01)

    r = await daemon.http.get(f"{daemon.url}/v1/sessions/s1/questions", headers=daemon.agent_headers)
    assert r.status_code == 200
    body = r.json()
    assert body["sessionId"] == "s1"
    assert [p["requestId"] for p in body["pending"]] == [asked["requestId"]]
    assert body["pending"][0]["questions"] == [q("Which?")]
    assert body["pending"][0]["userId"] == "alice"

    r = await daemon.result("s1", asked["requestId"])
    assert r.json() == {"requestId": asked["requestId"], "sessionId": "s1", "status": "pending", "expiresAt": asked["expiresAt"]}


async def test_unknown_result_is_404(daemon: RunningDaemon) -> None:
    await daemon.ask("s1", "alice")
    for sid, rid in (("s1", "nope"), ("never", "nope")):
        r = await daemon.result(sid, rid)
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "not_found"


async def test_idempotency_key_returns_the_same_request_and_asks_once(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    key = {"Idempotency-Key": "call-42"}
    r1 = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        json={"userId": "alice", "questions": [q("Once?")]},
        headers={**daemon.agent_headers, **key},
    )
    assert r1.status_code == 201 and "Idempotent-Replayed" not in r1.headers
    r2 = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        json={"userId": "alice", "questions": [q("Once?")]},
        headers={**daemon.agent_headers, **key},
    )
    assert r2.status_code == 201
    assert r2.headers["Idempotent-Replayed"] == "true"
    assert r2.json() == r1.json()
    rid = r1.json()["requestId"]

    await tab.expect("ask_user_questions")
    await tab.quiet()  # pushed once
    pending = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert [p["requestId"] for p in pending] == [rid]

    # once it ended, a repeat gets the result
    await tab.answer("s1", rid, {"Once?": "yes"})
    r3 = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions",
        json={"userId": "alice", "questions": [q("Once?")]},
        headers={**daemon.agent_headers, **key},
    )
    assert r3.status_code == 200 and r3.headers["Idempotent-Replayed"] == "true"
    assert receipted(r3.json()) == {
        "requestId": rid, "sessionId": "s1", "status": "answered", "answers": {"Once?": "yes"}, "answeredBy": "alice", "via": "ws"
    }

    # the key is per session
    other = await daemon.ask("s2", "alice", [q("Once?")], headers=key)
    assert other["requestId"] != rid


async def test_post_with_wait_returns_the_answer_when_answered_meanwhile(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")

    async def answer_when_pushed() -> None:
        pushed = await tab.expect("ask_user_questions")
        await tab.answer("s1", pushed["payload"]["requestId"], {"Now?": "ok"})

    answering = asyncio.create_task(answer_when_pushed())
    body = await daemon.ask("s1", "alice", [q("Now?")], expect=200, params={"wait": 10})
    await answering
    assert body["status"] == "answered" and body["answers"] == {"Now?": "ok"}
    assert set(body) == {"requestId", "sessionId", "status", "answers", "answeredBy", "via", "receipt"}


async def test_post_with_wait_returns_201_pending_when_not_answered(daemon: RunningDaemon) -> None:
    started = time.monotonic()
    body = await daemon.ask("s1", "alice", params={"wait": 0.2})
    assert time.monotonic() - started >= 0.2
    assert body["status"] == "pending"


async def test_get_with_wait_returns_on_the_answer_or_after_the_wait(daemon: RunningDaemon) -> None:
    asked = await daemon.ask("s1", "alice", [q("Now?")])
    rid = asked["requestId"]

    started = time.monotonic()
    r = await daemon.result("s1", rid, wait=0.2)
    assert time.monotonic() - started >= 0.2
    assert r.json()["status"] == "pending"

    waiting = asyncio.create_task(daemon.result("s1", rid, wait=10))
    await eventually(lambda: daemon.agent_waiting(rid))
    started = time.monotonic()
    await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{rid}/answer", json={"answers": {"Now?": "yes"}})
    r = await asyncio.wait_for(waiting, 5)
    assert time.monotonic() - started < 2
    assert r.json()["answers"] == {"Now?": "yes"}


async def test_agent_hanging_up_during_wait_does_not_touch_the_question(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Still there?")])
    rid = asked["requestId"]
    await tab.expect("ask_user_questions")

    reader, writer = await asyncio.open_connection("127.0.0.1", daemon.daemon.port)
    writer.write(
        f"GET /v1/sessions/s1/questions/{rid}?wait=30 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: {daemon.agent_headers['Authorization']}\r\n\r\n".encode()
    )
    await writer.drain()
    await eventually(lambda: daemon.agent_waiting(rid))
    writer.close()  # the agent's link drops mid-wait
    await eventually(lambda: not daemon.agent_waiting(rid))

    await tab.quiet()
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    assert (await tab.answer("s1", rid, {"Still there?": "yes"}))["payload"] == {"accepted": True}
    assert (await daemon.result("s1", rid)).json()["status"] == "answered"


@pytest.mark.parametrize("settings_overrides", [{"result_ttl_seconds": 0.2}])
async def test_result_is_kept_after_the_end_then_404_after_the_retention(daemon: RunningDaemon) -> None:
    asked = await daemon.ask("s1", "alice", [q("Keep?")])
    rid = asked["requestId"]
    ended = time.monotonic()  # no later than the real end, so the bound below is safe
    await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{rid}/answer", json={"answers": {"Keep?": "y"}})
    assert (await daemon.result("s1", rid)).json()["status"] == "answered"

    async def gone() -> bool:
        return (await daemon.result("s1", rid)).status_code == 404

    await eventually(gone)
    assert time.monotonic() - ended >= 0.2
    # the forgotten session no longer has an owner
    await daemon.ask("s1", "bob")


async def test_session_owner_mismatch_is_409(daemon: RunningDaemon) -> None:
    await daemon.ask("s1", "alice")
    body = await daemon.ask("s1", "bob", expect=409)
    assert body["error"]["code"] == "session_owner_mismatch"
    body = await daemon.ask("s2", "bob", parentSessionId="s1", expect=409)
    assert body["error"]["code"] == "session_owner_mismatch"
    assert len((await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]) == 1


async def test_require_online_refuses_an_offline_user(daemon: RunningDaemon) -> None:
    body = await daemon.ask("s1", "alice", requireOnline=True, expect=409)
    assert body["error"]["code"] == "user_offline"
    assert (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"] == []

    tab = await daemon.connect("alice")
    await daemon.ask("s1", "alice", requireOnline=True)
    await tab.expect("ask_user_questions")
    await daemon.ask("s1", "alice", [q("Other?")], requireOnline=False)  # offline is fine without it

    await tab.close()
    await eventually(lambda: not daemon.daemon.hub.registry.connections("alice"))
    body = await daemon.ask("s1", "alice", [q("Third?")], requireOnline=True, expect=409)
    assert body["error"]["code"] == "user_offline"


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_pending_per_session": 2, "max_pending_total": 3}}])
async def test_pending_caps_per_session_and_global_answer_429(daemon: RunningDaemon) -> None:
    first = await daemon.ask("s1", "alice", [q("1?")])
    await daemon.ask("s1", "alice", [q("2?")])
    body = await daemon.ask("s1", "alice", [q("3?")], expect=429)
    assert body["error"]["code"] == "too_many_pending"

    await daemon.ask("s2", "alice", [q("4?")])  # another session still has room
    body = await daemon.ask("s3", "bob", [q("5?")], expect=429)  # but the daemon is full
    assert body["error"]["code"] == "too_many_pending"

    await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{first['requestId']}/answer", json={"answers": {"1?": "x"}})
    await daemon.ask("s1", "alice", [q("3?")])
    assert len((await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]) == 3


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_request_bytes": 1024}}])
async def test_oversized_body_is_413_and_the_daemon_goes_on(daemon: RunningDaemon) -> None:
    kept = await daemon.ask("s1", "alice")
    body = await daemon.ask("s1", "alice", [q("x" * 2000)], expect=413)
    assert body["error"]["code"] == "too_large"
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{kept['requestId']}/answer", content=b"{" + b" " * 2000 + b"}")
    assert r.status_code == 413
    assert (await daemon.result("s1", kept["requestId"])).json()["status"] == "pending"
    await daemon.ask("s1", "alice", [q("Small?")])
