"""Approvals over real sockets (protocol section 17): an ask with ``action``
and ``quorum``, the ``approve`` frame and its acks, denial by ``decline``,
``ask_user_questions_voted``, re-pushes, the result, the admin's approve;
on every store (redis: two nodes, each request to the other one)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import RunningDaemon, WsClient, eventually, q
from tests.receipts.independent import receipted

DEPLOY = {"name": "deploy", "arguments": {"env": "prod", "replicas": 3}, "summary": "Ship the **release**"}
SCHEMA = {
    "type": "object",
    "properties": {"env": {"enum": ["prod", "staging"]}, "replicas": {"type": "integer", "minimum": 1}},
    "required": ["env"],
}


async def ask_action(
    daemon: RunningDaemon, session: str, to: list[str], *, quorum: int | None = None, expect: int = 201, **action: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"to": to, "action": {**DEPLOY, **action}}
    if quorum is not None:
        body["quorum"] = quorum
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/{session}/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == expect, r.text
    return r.json()  # type: ignore[no-any-return]


async def send_approve(tab: WsClient, sid: str, rid: str, id_: str, **extra: Any) -> None:
    await tab.send({"type": "approve", "sessionId": sid, "requestId": rid, "id": id_, **extra})


async def reply(tab: WsClient, id_: str, seen: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The reply to the frame with ``id_``; other frames go to ``seen``."""
    while True:
        frame = await tab.recv()
        if frame.get("id") == id_:
            return frame
        if seen is not None:
            seen.append(frame)


async def approve(tab: WsClient, sid: str, rid: str, id_: str = "ap", **extra: Any) -> dict[str, Any]:
    await send_approve(tab, sid, rid, id_, **extra)
    return await reply(tab, id_)


async def until(tab: WsClient, type_: str) -> dict[str, Any]:
    while True:
        frame = await tab.recv()
        if frame["type"] == type_:
            return frame


async def result(daemon: RunningDaemon, sid: str, rid: str) -> dict[str, Any]:
    async def ended() -> dict[str, Any] | None:
        body = (await daemon.result(sid, rid)).json()
        return body if body["status"] != "pending" else None

    return await eventually(ended, what=f"{rid} ended")  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"userId": "alice"}, "action"),
        ({"userId": "alice", "questions": [q()], "action": DEPLOY}, "action"),
        ({"userId": "alice", "questions": [q()], "quorum": 1}, "quorum"),
        ({"userId": "alice", "action": {**DEPLOY, "editable": True}, "quorum": 2}, "quorum"),
        ({"userId": "alice", "action": DEPLOY, "quorum": 21}, "quorum"),
        ({"userId": "alice", "action": DEPLOY, "quorum": 0}, "quorum"),
        ({"userId": "alice", "action": DEPLOY, "onTimeout": {"answers": {}}}, "onTimeout"),
        ({"userId": "alice", "action": {**DEPLOY, "name": ""}}, "action.name"),
        ({"userId": "alice", "action": {**DEPLOY, "name": "x" * 201}}, "action.name"),
        ({"userId": "alice", "action": {**DEPLOY, "arguments": ["x"]}}, "action.arguments"),
        ({"userId": "alice", "action": {**DEPLOY, "summary": "x" * 4001}}, "action.summary"),
        ({"userId": "alice", "action": {**DEPLOY, "preview": "é" * 16385}}, "action.preview"),
        ({"userId": "alice", "action": {**DEPLOY, "schema": {"type": "nope"}}}, "action.schema"),
        ({"userId": "alice", "action": {**DEPLOY, "schema": SCHEMA, "arguments": {"env": "moon"}}}, "action.arguments.env"),
        ({"userId": "alice", "action": {**DEPLOY, "schema": SCHEMA, "arguments": {}}}, "action.arguments"),
    ],
)
async def test_what_an_ask_with_an_action_may_not_be_is_refused(daemon: RunningDaemon, body: dict[str, Any], loc: str) -> None:
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_request" and error["details"][0]["loc"] == loc, error


async def test_one_approval_ends_it_approved_and_wakes_the_agent(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    asked = await ask_action(daemon, "s1", ["alice"], allowAlways=True)
    rid = asked["requestId"]
    pushed = await tab.expect("ask_user_questions")
    payload = pushed["payload"]
    assert (payload["action"], payload["quorum"], payload["approvals"]) == ({**DEPLOY, "allowAlways": True}, 1, [])
    assert "questions" not in payload
    listed = (await daemon.http.get(f"{daemon.url}/v1/sessions/s1/questions", headers=daemon.agent_headers)).json()["pending"]
    assert (listed[0]["action"]["name"], listed[0]["quorum"], listed[0]["approvals"]) == ("deploy", 1, [])
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=10))
    await eventually(lambda: daemon.agent_waiting(rid) or waiting.done())

    ack = await approve(tab, "s1", rid, scope="always")
    assert ack == {"type": "ack", "sessionId": "s1", "id": "ap", "payload": {"accepted": True, "approvals": 1, "needed": 1}}
    closed = await tab.expect("ask_user_questions_cancelled")
    assert closed["payload"] == {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "ws"}
    got = receipted((await waiting).json())
    approvals = got.pop("approvals")
    assert [(a["by"], a["via"]) for a in approvals] == [("alice", "ws")] and approvals[0]["at"].endswith("Z")
    assert got == {
        "requestId": rid, "sessionId": "s1", "status": "answered", "answeredBy": "alice", "via": "ws",
        "approved": True, "arguments": DEPLOY["arguments"], "edited": False, "scope": "always",
    }
    assert (await approve(tab, "s1", rid, "late"))["payload"] == {"accepted": False, "reason": "not_pending"}


async def test_a_quorum_of_two_counts_distinct_people_and_tells_every_tab(daemon: RunningDaemon) -> None:
    alice, bob = await daemon.connect("alice"), await daemon.connect("bob")
    rid = (await ask_action(daemon, "s1", ["alice", "bob"], quorum=2))["requestId"]
    for tab in (alice, bob):
        await tab.expect("ask_user_questions")
    ack = await approve(alice, "s1", rid, "a1")  # the ack goes before the tabs hear of it
    assert ack["payload"] == {"accepted": True, "approvals": 1, "needed": 2}
    for tab in (alice, bob):
        voted = await until(tab, "ask_user_questions_voted")
        assert voted["payload"]["requestId"] == rid and voted["payload"]["needed"] == 2
        assert [a["by"] for a in voted["payload"]["approvals"]] == ["alice"]
    assert (await approve(alice, "s1", rid, "a2"))["payload"] == {"accepted": False, "reason": "already_voted"}
    r = await daemon.result("s1", rid)
    assert r.json()["status"] == "pending" and [a["by"] for a in r.json()["approvals"]] == ["alice"]
    assert (await approve(bob, "s1", rid, "b1"))["payload"] == {"accepted": True, "approvals": 2, "needed": 2}
    done = await result(daemon, "s1", rid)
    assert (done["status"], done["approved"], done["answeredBy"]) == ("answered", True, "bob")
    assert [a["by"] for a in done["approvals"]] == ["alice", "bob"]
    for tab in (alice, bob):
        assert (await until(tab, "ask_user_questions_cancelled"))["payload"]["reason"] == "answered"


async def test_two_approvals_for_the_last_slot_end_it_once(daemon: RunningDaemon) -> None:
    for round_ in range(5):
        sid = f"race{round_}"
        tabs = [await daemon.connect(u) for u in ("alice", "bob", "carol")]
        rid = (await ask_action(daemon, sid, ["alice", "bob", "carol"], quorum=2))["requestId"]
        for tab in tabs:
            await tab.expect("ask_user_questions")
        assert (await approve(tabs[0], sid, rid, "a"))["payload"]["accepted"] is True
        await asyncio.gather(send_approve(tabs[1], sid, rid, "b"), send_approve(tabs[2], sid, rid, "c"))
        acks = [(await reply(tabs[1], "b"))["payload"], (await reply(tabs[2], "c"))["payload"]]
        assert sorted(acks, key=str) == sorted(
            [{"accepted": True, "approvals": 2, "needed": 2}, {"accepted": False, "reason": "not_pending"}], key=str
        ), acks
        winner = "bob" if acks[0]["accepted"] else "carol"
        done = await result(daemon, sid, rid)
        assert done["answeredBy"] == winner and [a["by"] for a in done["approvals"]] == ["alice", winner]
        for tab in tabs:
            await tab.close()


async def test_approvals_decided_at_once_are_all_counted_and_end_it_once(daemon: RunningDaemon) -> None:
    users = [f"u{i}" for i in range(5)]
    tabs = [await daemon.connect(u) for u in users]
    rid = (await ask_action(daemon, "s1", users, quorum=4))["requestId"]
    for tab in tabs:
        await tab.expect("ask_user_questions")
    await asyncio.gather(*(send_approve(tab, "s1", rid, f"x{i}") for i, tab in enumerate(tabs)))
    acks = [(await reply(tab, f"x{i}"))["payload"] for i, tab in enumerate(tabs)]
    accepted = [a for a in acks if a["accepted"]]
    assert sorted(a["approvals"] for a in accepted) == [1, 2, 3, 4], acks
    assert [a for a in acks if not a["accepted"]] == [{"accepted": False, "reason": "not_pending"}]
    done = await result(daemon, "s1", rid)
    assert len(done["approvals"]) == 4 and len({a["by"] for a in done["approvals"]}) == 4


async def test_the_last_approval_against_a_denial_has_one_outcome(daemon: RunningDaemon) -> None:
    outcomes = set()
    for round_ in range(6):
        sid = f"deny{round_}"
        tabs = [await daemon.connect(u) for u in ("alice", "bob", "carol")]
        rid = (await ask_action(daemon, sid, ["alice", "bob", "carol"], quorum=2))["requestId"]
        for tab in tabs:
            await tab.expect("ask_user_questions")
        await approve(tabs[0], sid, rid, "a")
        deny = {"type": "decline", "sessionId": sid, "requestId": rid, "reason": "no", "id": "d"}
        await asyncio.gather(send_approve(tabs[1], sid, rid, "b"), tabs[2].send(deny))
        approved, denied = (await reply(tabs[1], "b"))["payload"], (await reply(tabs[2], "d"))["payload"]
        done = await result(daemon, sid, rid)
        if done["status"] == "answered":
            assert approved == {"accepted": True, "approvals": 2, "needed": 2} and denied == {"accepted": False, "reason": "not_pending"}
            assert done["approved"] is True
        else:
            assert done["status"] == "declined" and denied == {"accepted": True}
            assert approved == {"accepted": False, "reason": "not_pending"}
            assert (done["approved"], done["scope"], done["answeredBy"], done["reason"]) == (False, None, "carol", "no")
        outcomes.add(done["status"])
        for tab in tabs:
            await tab.close()
    assert outcomes <= {"answered", "declined"}


async def test_one_denial_ends_a_quorum_at_once(daemon: RunningDaemon) -> None:
    alice = await daemon.connect("alice")
    rid = (await ask_action(daemon, "s1", ["alice", "bob"], quorum=2))["requestId"]
    await alice.expect("ask_user_questions")
    await approve(alice, "s1", rid, "a")
    await alice.send({"type": "decline", "sessionId": "s1", "requestId": rid, "reason": "wait", "id": "d"})
    assert (await reply(alice, "d"))["payload"] == {"accepted": True}
    done = await result(daemon, "s1", rid)
    assert (done["status"], done["approved"], done["arguments"], done["edited"]) == ("declined", False, DEPLOY["arguments"], False)
    assert [a["by"] for a in done["approvals"]] == ["alice"]


async def test_an_edit_failing_the_schema_is_refused_then_a_fix_is_taken(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    rid = (await ask_action(daemon, "s1", ["alice"], editable=True, schema=SCHEMA))["requestId"]
    await tab.expect("ask_user_questions")
    bad = await approve(tab, "s1", rid, "bad", arguments={"env": "moon", "replicas": 3})
    assert bad["type"] == "error" and bad["payload"]["code"] == "invalid_request", bad
    assert bad["payload"]["details"][0]["loc"] == "arguments.env"
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    fixed = {"env": "staging", "replicas": 2}
    assert (await approve(tab, "s1", rid, "ok", arguments=fixed))["payload"]["accepted"] is True
    done = await result(daemon, "s1", rid)
    assert (done["arguments"], done["edited"], done["approved"], done["scope"]) == (fixed, True, True, "once")


@pytest.mark.parametrize(
    ("action", "frame", "says"),
    [
        ({}, {"arguments": {"env": "staging"}}, "not editable"),
        ({}, {"scope": "always"}, "always"),
        ({"editable": True}, {"arguments": {"env": 1}}, None),  # no schema: any object is taken
    ],
)
async def test_what_an_approve_may_not_carry(daemon: RunningDaemon, action: dict[str, Any], frame: dict[str, Any], says: str | None) -> None:
    tab = await daemon.connect("alice")
    rid = (await ask_action(daemon, "s1", ["alice"], **action))["requestId"]
    await tab.expect("ask_user_questions")
    got = await approve(tab, "s1", rid, **frame)
    if says is None:
        assert got["payload"]["accepted"] is True
        return
    assert got["type"] == "error" and got["payload"]["code"] == "invalid_request" and says in got["payload"]["message"]
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"


async def test_approve_on_a_question_and_an_answer_on_an_action_are_invalid(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    question = (await daemon.ask("s1", "alice", [q("Ship?")]))["requestId"]
    action = (await ask_action(daemon, "s1", ["alice"]))["requestId"]
    await tab.expect("ask_user_questions")
    await tab.expect("ask_user_questions")
    got = await approve(tab, "s1", question)
    assert got["type"] == "error" and got["payload"]["code"] == "invalid_request"
    got = await tab.answer("s1", action, {"Ship?": "yes"})
    assert got["type"] == "error" and got["payload"]["code"] == "invalid_request"
    for rid in (question, action):
        assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    bad = await approve(tab, "s1", action, scope="sometimes")
    assert bad["type"] == "error" and bad["payload"]["code"] == "invalid_request"


async def test_a_timeout_never_approves(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    body = {"to": ["alice", "bob"], "action": DEPLOY, "quorum": 2, "timeoutSeconds": 0.5}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    rid = r.json()["requestId"]
    await tab.expect("ask_user_questions")
    await approve(tab, "s1", rid)
    done = await result(daemon, "s1", rid)
    assert (done["status"], done["approved"], done["scope"]) == ("timeout", False, None)
    assert [a["by"] for a in done["approvals"]] == ["alice"]


async def test_a_repush_after_reconnect_carries_the_approvals_so_far(daemon: RunningDaemon) -> None:
    alice = await daemon.connect("alice")
    rid = (await ask_action(daemon, "s1", ["alice", "bob", "carol"], quorum=3))["requestId"]
    await alice.expect("ask_user_questions")
    await approve(alice, "s1", rid)
    bob = await daemon.connect("bob")
    await bob.subscribe("s1")
    await approve(bob, "s1", rid, "b")
    await alice.close()
    again = await daemon.connect("alice")
    frames = await again.subscribe("s1")
    [pushed] = [f for f in frames if f["type"] == "ask_user_questions"]
    payload = pushed["payload"]
    assert payload["requestId"] == rid and payload["quorum"] == 3 and payload["action"] == DEPLOY
    assert [a["by"] for a in payload["approvals"]] == ["alice", "bob"]
    listed = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert [a["by"] for a in listed[0]["approvals"]] == ["alice", "bob"]


async def test_the_admin_approves_with_its_sub_and_without_one_fills_no_seat(daemon: RunningDaemon) -> None:
    rid = (await ask_action(daemon, "s1", ["alice"], quorum=2))["requestId"]
    path = f"/admin/v1/sessions/s1/questions/{rid}/approve"
    # Without a sub the admin token is no person: a quorum counts people (protocol section 17).
    r = await daemon.admin("POST", path, json={})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request")
    assert "an admin token without a sub cannot fill a quorum seat" in r.json()["error"]["message"]
    root = {"Authorization": f"Bearer {daemon.token('admin', 'root')}"}
    r = await daemon.http.post(f"{daemon.admin_url}{path}", json={}, headers=root)
    assert (r.status_code, r.json()) == (200, {"accepted": True, "approvals": 1, "needed": 2})
    r = await daemon.http.post(f"{daemon.admin_url}{path}", json={}, headers=root)
    assert (r.status_code, r.json()["error"]["code"]) == (409, "already_voted")
    r = await daemon.http.post(f"{daemon.admin_url}{path}", json={"scope": "always"}, headers=root)
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request")
    r = await daemon.http.post(f"{daemon.admin_url}{path}", json={"arguments": {"env": "x"}}, headers=root)
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request")
    r = await daemon.http.post(f"{daemon.admin_url}{path}", json={"scope": "once"}, headers={"Authorization": f"Bearer {daemon.token('admin', 'ops')}"})
    assert r.json() == {"accepted": True, "approvals": 2, "needed": 2}
    done = await result(daemon, "s1", rid)
    assert [(a["by"], a["via"]) for a in done["approvals"]] == [("root", "admin"), ("ops", "admin")]
    assert (done["answeredBy"], done["via"], done["approved"]) == ("ops", "admin", True)
    r = await daemon.admin("POST", path, json={})
    assert (r.status_code, r.json()["error"]["code"]) == (404, "not_pending")
    question = (await daemon.ask("s1", "alice", [q("Ship?")]))["requestId"]
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{question}/approve", json={})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request")


async def test_one_person_approving_from_two_tabs_at_once_counts_once(daemon: RunningDaemon) -> None:
    tabs = [await daemon.connect("alice"), await daemon.connect("alice")]
    rid = (await ask_action(daemon, "s1", ["alice", "bob"], quorum=2))["requestId"]
    for tab in tabs:
        await tab.expect("ask_user_questions")
    await asyncio.gather(send_approve(tabs[0], "s1", rid, "one"), send_approve(tabs[1], "s1", rid, "two"))
    acks = [(await reply(tabs[0], "one"))["payload"], (await reply(tabs[1], "two"))["payload"]]
    assert sorted(acks, key=str) == sorted(
        [{"accepted": True, "approvals": 1, "needed": 2}, {"accepted": False, "reason": "already_voted"}], key=str
    ), acks
    r = (await daemon.result("s1", rid)).json()
    assert r["status"] == "pending" and [a["by"] for a in r["approvals"]] == ["alice"]
