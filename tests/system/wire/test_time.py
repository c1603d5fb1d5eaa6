"""More time, a safe default and declining (protocol section "Time and
refusal") over real sockets, and who answered how (``answeredBy``, ``via``)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import pytest

from tests.conftest import RunningDaemon, WsClient, eventually, q
from tests.receipts.independent import receipted


def at(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


async def extend(tab: WsClient, rid: str, seconds: Any, id_: str = "x") -> dict[str, Any]:
    await tab.send({"type": "extend", "sessionId": "s1", "requestId": rid, "seconds": seconds, "id": id_})
    return await tab.recv()


async def decline(tab: WsClient, rid: str, reason: str | None = None, id_: str = "d") -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "decline", "sessionId": "s1", "requestId": rid, "id": id_}
    if reason is not None:
        frame["reason"] = reason
    await tab.send(frame)
    return await tab.recv()


async def agent_extend(daemon: RunningDaemon, rid: str, body: Any, session: str = "s1") -> Any:
    return await daemon.http.post(
        f"{daemon.url}/v1/sessions/{session}/questions/{rid}/extend", json=body, headers=daemon.agent_headers
    )


async def test_decline_acks_first_closes_every_tab_and_wakes_the_agent(daemon: RunningDaemon) -> None:
    tab1, tab2 = await daemon.connect("alice"), await daemon.connect("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?")]))["requestId"]
    for tab in (tab1, tab2):
        await tab.expect("ask_user_questions")
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=10))
    await eventually(lambda: daemon.agent_waiting(rid), what="the agent waits")

    assert await decline(tab1, rid, "not mine to decide") == {
        "type": "ack", "id": "d", "sessionId": "s1", "payload": {"accepted": True}
    }
    for tab in (tab1, tab2):
        closed = await tab.expect("ask_user_questions_cancelled")
        assert closed["payload"] == {
            "requestId": rid, "reason": "declined", "answeredBy": "alice", "via": "ws", "declineReason": "not mine to decide"
        }
    result = (await waiting).json()
    assert receipted(result) == {
        "requestId": rid, "sessionId": "s1", "status": "declined",
        "answeredBy": "alice", "via": "ws", "reason": "not mine to decide",
    }
    # Once only: a second decline, an answer, an extension are all not_pending.
    assert (await decline(tab2, rid))["payload"] == {"accepted": False, "reason": "not_pending"}
    assert (await tab2.answer("s1", rid, {"Deploy?": "yes"}))["payload"] == {"accepted": False, "reason": "not_pending"}
    assert (await extend(tab2, rid, 5))["payload"] == {"extended": False, "reason": "not_pending"}
    await tab1.quiet()


async def test_decline_of_another_users_question_is_not_pending_and_reason_is_bounded(daemon: RunningDaemon) -> None:
    bob, alice = await daemon.connect("bob"), await daemon.connect("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?")]))["requestId"]
    await alice.expect("ask_user_questions")
    assert (await decline(bob, rid))["payload"] == {"accepted": False, "reason": "not_pending"}
    too_long = await decline(alice, rid, "x" * 1001)
    assert too_long["type"] == "error" and too_long["payload"]["code"] == "invalid_request"
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    # Without a reason: none in the result.
    assert (await decline(alice, rid))["payload"] == {"accepted": True}
    result = (await daemon.result("s1", rid)).json()
    assert result["status"] == "declined" and "reason" not in result


async def test_admin_decline_names_the_admin_sub_and_counts(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?")]))["requestId"]
    await tab.expect("ask_user_questions")
    path = f"/admin/v1/sessions/s1/questions/{rid}/decline"
    headers = {"Authorization": f"Bearer {daemon.token('admin', 'ops-carol')}"}
    r = await daemon.http.post(f"{daemon.admin_url}{path}", json={"reason": "out of scope"}, headers=headers)
    assert (r.status_code, r.json()) == (200, {"accepted": True})
    closed = await tab.expect("ask_user_questions_cancelled")
    assert closed["payload"] == {
        "requestId": rid, "reason": "declined", "answeredBy": "ops-carol", "via": "admin", "declineReason": "out of scope"
    }
    result = (await daemon.result("s1", rid)).json()
    assert (result["status"], result["answeredBy"], result["via"], result["reason"]) == (
        "declined", "ops-carol", "admin", "out of scope"
    )
    r = await daemon.admin("POST", path, json={})
    assert (r.status_code, r.json()["error"]["code"]) == (404, "not_pending")
    r = await daemon.admin("POST", path, json={"reason": 5})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request")
    stats = (await daemon.admin("GET", "/admin/v1/stats")).json()
    assert stats["declined"] == 1
    assert "askd_questions_declined_total 1.0" in (await daemon.admin("GET", "/metrics")).text


async def test_the_person_extends_within_the_allowance_and_every_tab_hears(daemon: RunningDaemon) -> None:
    tab1, tab2 = await daemon.connect("alice"), await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Deploy?")], timeoutSeconds=60, maxExtensionSeconds=100)
    rid, first = asked["requestId"], at(asked["expiresAt"])
    for tab in (tab1, tab2):
        pushed = (await tab.expect("ask_user_questions"))["payload"]
        assert (pushed["maxExtensionSeconds"], pushed["extensionLeftSeconds"]) == (100, 100)  # so a page offers it

    ack = await extend(tab1, rid, 70)
    assert ack["type"] == "ack" and ack["id"] == "x" and ack["payload"]["extended"] is True
    expires = ack["payload"]["expiresAt"]
    assert at(expires) == pytest.approx(first + 70, abs=0.002)
    for tab in (tab1, tab2):
        assert (await tab.expect("ask_user_questions_extended"))["payload"] == {
            "requestId": rid, "expiresAt": expires, "maxExtensionSeconds": 100, "extensionLeftSeconds": 30
        }
    assert (await daemon.result("s1", rid)).json()["expiresAt"] == expires
    listed = (await daemon.http.get(f"{daemon.url}/v1/sessions/s1/questions", headers=daemon.agent_headers)).json()
    assert listed["pending"][0]["expiresAt"] == expires

    # 30 s are left of the allowance: 50 asked, 30 given; then none.
    ack = await extend(tab2, rid, 50)
    assert at(ack["payload"]["expiresAt"]) == pytest.approx(first + 100, abs=0.002)
    for tab in (tab1, tab2):
        assert (await tab.expect("ask_user_questions_extended"))["payload"]["extensionLeftSeconds"] == 0
    assert (await extend(tab1, rid, 1))["payload"] == {"extended": False, "reason": "not_allowed"}
    await tab2.quiet()

    # A re-push carries the deadline as it is now.
    tab3 = await daemon.connect("alice")
    frames = await tab3.subscribe("s1")
    assert frames[1]["payload"]["expiresAt"] == ack["payload"]["expiresAt"]
    assert frames[1]["payload"]["extensionLeftSeconds"] == 0


async def test_extend_refusals(daemon: RunningDaemon) -> None:
    alice, bob = await daemon.connect("alice"), await daemon.connect("bob")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?")]))["requestId"]  # no allowance
    await alice.expect("ask_user_questions")
    assert (await extend(alice, rid, 10))["payload"] == {"extended": False, "reason": "not_allowed"}
    assert (await extend(bob, rid, 10))["payload"] == {"extended": False, "reason": "not_pending"}
    for bad in (0, -1, 86401, "10", None):
        err = await extend(alice, rid, bad)
        assert (err["type"], err["payload"]["code"]) == ("error", "invalid_request"), bad
    await alice.quiet()


async def test_the_agent_extends_its_own_deadline_up_to_the_cap(daemon: RunningDaemon) -> None:
    cap = daemon.daemon.settings.max_timeout_seconds
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Deploy?")], timeoutSeconds=60, maxExtensionSeconds=30)
    rid, first = asked["requestId"], at(asked["expiresAt"])
    await tab.expect("ask_user_questions")

    r = await agent_extend(daemon, rid, {"seconds": 120})
    assert r.status_code == 200
    body = r.json()
    assert (body["status"], body["requestId"]) == ("pending", rid)
    assert at(body["expiresAt"]) == pytest.approx(first + 120, abs=0.002)
    assert (await tab.expect("ask_user_questions_extended"))["payload"] == {
        "requestId": rid, "expiresAt": body["expiresAt"], "maxExtensionSeconds": 30, "extensionLeftSeconds": 30
    }
    # The agent's extension leaves the person's allowance whole.
    ack = await extend(tab, rid, 30)
    assert at(ack["payload"]["expiresAt"]) == pytest.approx(first + 150, abs=0.002)
    await tab.expect("ask_user_questions_extended")

    # Past max_timeout_seconds + maxExtensionSeconds from creation: refused whole.
    r = await agent_extend(daemon, rid, {"seconds": cap})
    assert (r.status_code, r.json()["error"]["code"]) == (409, "not_allowed")
    assert (await daemon.result("s1", rid)).json()["expiresAt"] == ack["payload"]["expiresAt"]
    await tab.quiet()

    for bad in ({"seconds": 0}, {"seconds": 86401}, {}, {"seconds": 5, "more": 1}):
        r = await agent_extend(daemon, rid, bad)
        assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request"), bad
    r = await agent_extend(daemon, "nope", {"seconds": 5})
    assert (r.status_code, r.json()["error"]["code"]) == (404, "not_found")

    # Ended: the real result, nothing moves.
    await tab.answer("s1", rid, {"Deploy?": "yes"})
    await tab.expect("ask_user_questions_cancelled")
    r = await agent_extend(daemon, rid, {"seconds": 5})
    assert (r.status_code, r.json()["status"], r.json()["answers"]) == (200, "answered", {"Deploy?": "yes"})


async def test_an_extension_moves_the_timeout(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?")], timeoutSeconds=0.4, maxExtensionSeconds=0.6))["requestId"]
    await tab.expect("ask_user_questions")
    assert (await extend(tab, rid, 0.6))["payload"]["extended"] is True
    await tab.expect("ask_user_questions_extended")
    await asyncio.sleep(0.6)  # past the first deadline, before the new one
    assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    assert (await tab.expect("ask_user_questions_cancelled"))["payload"]["reason"] == "timeout"
    assert (await daemon.result("s1", rid)).json()["status"] == "timeout"


async def test_on_timeout_ends_with_the_default(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask(
        "s1", "alice", [q("Deploy now?", "Yes", "No")], timeoutSeconds=0.3, onTimeout={"answers": {"Deploy now?": "No"}}
    )
    await tab.expect("ask_user_questions")
    result = (await daemon.result("s1", asked["requestId"], wait=10)).json()
    assert receipted(result) == {
        "requestId": asked["requestId"], "sessionId": "s1", "status": "timeout",
        "answers": {"Deploy now?": "No"}, "defaulted": True, "error": "Timed out waiting for the user's answer",
    }
    closed = await tab.expect("ask_user_questions_cancelled")
    # The tab is told which default stood for the person, so its page can say so.
    assert closed["payload"] == {
        "requestId": asked["requestId"], "reason": "timeout", "answers": {"Deploy now?": "No"}, "defaulted": True
    }


async def test_a_plain_timeout_tells_the_tab_no_answers(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Deploy now?", "Yes", "No")], timeoutSeconds=0.3)
    await tab.expect("ask_user_questions")
    closed = await tab.expect("ask_user_questions_cancelled")
    assert closed["payload"] == {"requestId": asked["requestId"], "reason": "timeout"}


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"onTimeout": {"answers": {"Other?": "No"}}}, "onTimeout.answers"),
        ({"onTimeout": {"answers": {}}}, "onTimeout.answers"),
        ({"onTimeout": {"answers": {"Deploy now?": ["No"]}}}, "onTimeout.answers"),
        ({"onTimeout": {"answers": {"Deploy now?": "No"}, "x": 1}}, "onTimeout.x"),
        ({"maxExtensionSeconds": -1}, "maxExtensionSeconds"),
    ],
)
async def test_bad_time_fields_are_refused_at_ask_time(daemon: RunningDaemon, body: dict[str, Any], loc: str) -> None:
    err = (await daemon.ask("s1", "alice", [q("Deploy now?", "Yes", "No")], expect=400, **body))["error"]
    assert err["code"] == "invalid_request"
    assert err["details"][0]["loc"] == loc


async def test_an_allowance_above_the_cap_is_refused(daemon: RunningDaemon) -> None:
    cap = daemon.daemon.settings.max_timeout_seconds
    err = (await daemon.ask("s1", "alice", [q("Deploy?")], expect=400, maxExtensionSeconds=cap + 1))["error"]
    assert err["code"] == "invalid_request" and "maxExtensionSeconds" in err["message"]


async def test_extensions_at_once_from_two_tabs_each_take_effect_once(daemon: RunningDaemon) -> None:
    """On two nodes the tabs sit on different nodes: each extension is decided
    against the deadline it saw, and the one that lost is decided again."""
    tab1, tab2 = await daemon.connect("alice"), await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Deploy?")], timeoutSeconds=60, maxExtensionSeconds=100)
    rid, first = asked["requestId"], at(asked["expiresAt"])
    for tab in (tab1, tab2):
        pushed = (await tab.expect("ask_user_questions"))["payload"]
        assert (pushed["maxExtensionSeconds"], pushed["extensionLeftSeconds"]) == (100, 100)  # so a page offers it
    for tab, id_ in ((tab1, "x1"), (tab2, "x2")):
        await tab.send({"type": "extend", "sessionId": "s1", "requestId": rid, "seconds": 70, "id": id_})
    acks = []
    for tab in (tab1, tab2):
        while True:
            frame = await tab.recv()
            if frame["type"] == "ack":
                acks.append(frame["payload"])
                break
            assert frame["type"] == "ask_user_questions_extended"
    assert all(a["extended"] for a in acks), acks
    # 70 and then the 30 left: the whole allowance, no more, no less.
    final = (await daemon.result("s1", rid)).json()["expiresAt"]
    assert at(final) == pytest.approx(first + 100, abs=0.002)
    assert sorted(at(a["expiresAt"]) - first for a in acks) == pytest.approx([70, 100], abs=0.002)
