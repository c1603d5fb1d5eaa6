"""Spec v1.1 section C over real sockets: withdrawing one question, and a
session id of ``*`` refused wherever an agent or admin names a session."""

from __future__ import annotations

import pytest

from tests.conftest import RunningDaemon, q
from tests.receipts.independent import receipted


async def withdraw(daemon: RunningDaemon, session: str, request_id: str) -> tuple[int, dict]:
    r = await daemon.http.delete(f"{daemon.url}/v1/sessions/{session}/questions/{request_id}", headers=daemon.agent_headers)
    return r.status_code, r.json()


async def test_withdraw_ends_the_question_cancelled_and_tells_every_tab(daemon: RunningDaemon) -> None:
    tab1, tab2 = await daemon.connect("alice"), await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Deploy?")])
    rid = asked["requestId"]
    for tab in (tab1, tab2):
        assert (await tab.expect("ask_user_questions"))["payload"]["requestId"] == rid

    status, body = await withdraw(daemon, "s1", rid)
    assert status == 200
    assert receipted(body) == {"requestId": rid, "sessionId": "s1", "status": "cancelled", "error": "Withdrawn by agent"}
    for tab in (tab1, tab2):
        ended = await tab.expect("ask_user_questions_cancelled")
        assert ended["payload"] == {"requestId": rid, "reason": "cancelled"}

    # The result is kept like any other, and an answer now is not_pending.
    assert (await daemon.result("s1", rid)).json()["status"] == "cancelled"
    ack = await tab1.answer("s1", rid, {"Deploy?": "yes"})
    assert ack["payload"] == {"accepted": False, "reason": "not_pending"}
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["cancelled"] == 1


async def test_withdraw_of_an_ended_question_returns_its_real_result_and_changes_nothing(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?")]))["requestId"]
    await tab.expect("ask_user_questions")
    assert (await tab.answer("s1", rid, {"Deploy?": "yes"}))["payload"] == {"accepted": True}
    await tab.expect("ask_user_questions_cancelled")

    status, body = await withdraw(daemon, "s1", rid)
    assert status == 200
    assert receipted(body) == {
        "requestId": rid, "sessionId": "s1", "status": "answered", "answers": {"Deploy?": "yes"}, "answeredBy": "alice", "via": "ws"
    }
    await tab.quiet()  # no second cancelled event
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["cancelled"] == 0


async def test_withdraw_of_an_unknown_question_is_404(daemon: RunningDaemon, store: str) -> None:
    await daemon.ask("s1", "alice")
    for sid, rid in (("s1", "nope"), ("never", "nope")):
        status, body = await withdraw(daemon, sid, rid)
        assert status == 404 and body["error"]["code"] == "not_found"
        # Unknown, with only the guesses that can be true of this daemon.
        message = body["error"]["message"]
        assert message.startswith(f"unknown question nope in session {sid}: it was never asked there, or it ended more than 600 s ago")
        assert ("store = memory keeps nothing" in message) == (store == "memory")


async def test_withdraw_needs_an_agent_token(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice"))["requestId"]
    url = f"{daemon.url}/v1/sessions/s1/questions/{rid}"
    assert (await daemon.http.delete(url)).status_code == 401
    user = {"Authorization": f"Bearer {daemon.token('user', 'alice')}"}
    assert (await daemon.http.delete(url, headers=user)).status_code == 403
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"


async def test_withdraw_wakes_a_waiting_agent(daemon: RunningDaemon) -> None:
    import asyncio

    rid = (await daemon.ask("s1", "alice"))["requestId"]
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=10))
    from tests.conftest import eventually

    await eventually(lambda: daemon.agent_waiting(rid), what="the agent's wait")
    await withdraw(daemon, "s1", rid)
    r = await asyncio.wait_for(waiting, 5)
    assert r.json()["status"] == "cancelled"


STAR = "%2A"  # "*" in a path segment


@pytest.mark.parametrize(
    "method, where, path, body",
    [
        ("POST", "agent", f"/v1/sessions/{STAR}/questions", {"userId": "alice", "questions": [q()]}),
        ("POST", "agent", "/v1/sessions/s1/questions", {"userId": "alice", "questions": [q()], "parentSessionId": "*"}),
        ("GET", "agent", f"/v1/sessions/{STAR}/questions", None),
        ("GET", "agent", f"/v1/sessions/{STAR}/questions/r1", None),
        ("DELETE", "agent", f"/v1/sessions/{STAR}/questions/r1", None),
        ("POST", "agent", f"/v1/sessions/{STAR}/cancel", None),
        ("POST", "admin", f"/admin/v1/sessions/{STAR}/cancel", None),
        ("POST", "admin", f"/admin/v1/sessions/{STAR}/questions/r1/answer", {"answers": {"a": "b"}}),
        ("GET", "admin", "/admin/v1/pending?sessionId=*", None),
        ("POST", "admin", "/admin/v1/disconnect", {"sessionId": "*"}),
    ],
)
async def test_a_session_named_star_is_refused(daemon: RunningDaemon, method: str, where: str, path: str, body: dict | None) -> None:
    base, headers = (daemon.url, daemon.agent_headers) if where == "agent" else (daemon.admin_url, daemon.admin_headers)
    r = await daemon.http.request(method, base + path, json=body, headers=headers)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid_request"
    assert "wildcard" in r.json()["error"]["message"]
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["asked"] == 0
