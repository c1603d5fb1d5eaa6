"""Spec R over real sockets: away, with delegates. A delegate's open tab
gets the away user's pending question when the away starts, and the close
(``reassigned``) when it ends: by ``DELETE`` or at ``until``."""

from __future__ import annotations

import time
from datetime import datetime, timezone

from tests.conftest import RunningDaemon


def rfc3339(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat().replace("+00:00", "Z")


async def test_an_away_is_set_shown_and_ended(daemon: RunningDaemon) -> None:
    until = rfc3339(time.time() + 3600)
    r = await daemon.admin("PUT", "/admin/v1/users/alice/away", json={"until": until, "delegates": ["bob", "group:ops"]})
    assert r.status_code == 400 and r.json()["error"]["details"] == [{"loc": "delegates.1", "msg": "no group 'ops'"}]
    await daemon.admin("PUT", "/admin/v1/groups/ops", json={"members": ["dave"]})
    r = await daemon.admin("PUT", "/admin/v1/users/alice/away", json={"until": until, "delegates": ["bob", "group:ops"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["user"] == "alice" and body["delegates"] == ["bob", "group:ops"]
    assert abs(datetime.fromisoformat(body["until"].replace("Z", "+00:00")).timestamp() - datetime.fromisoformat(until.replace("Z", "+00:00")).timestamp()) < 0.01
    shown = (await daemon.admin("GET", "/admin/v1/users/alice")).json()
    assert shown["away"] == body
    assert (await daemon.admin("DELETE", "/admin/v1/users/alice/away")).json() == {"user": "alice", "away": None}
    r = await daemon.admin("DELETE", "/admin/v1/users/alice/away")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert "away" not in (await daemon.admin("GET", "/admin/v1/users/alice")).json()


async def test_away_bodies_are_checked(daemon: RunningDaemon) -> None:
    future = rfc3339(time.time() + 3600)
    for body in (
        {"until": rfc3339(time.time() - 60), "delegates": ["bob"]},  # past
        {"until": "2026-12-24", "delegates": ["bob"]},  # a bare date: the CLI's, not the API's
        {"until": "2099-01-01T00:00:00", "delegates": ["bob"]},  # no offset
        {"until": "tomorrow", "delegates": ["bob"]},
        {"until": future, "delegates": []},
        {"until": future, "delegates": ["alice"]},  # themself
        {"until": future},
        {"until": future, "delegates": ["bob"], "x": 1},
    ):
        r = await daemon.admin("PUT", "/admin/v1/users/alice/away", json=body)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", body
    r = await daemon.http.put(
        f"{daemon.admin_url}/admin/v1/users/alice/away", json={"until": future, "delegates": ["bob"]}, headers=daemon.agent_headers
    )
    assert r.status_code == 403


async def test_a_delegates_tab_gets_the_question_and_its_close(daemon: RunningDaemon) -> None:
    alice, bob = await daemon.connect("alice"), await daemon.connect("bob")
    asked = await daemon.ask("s1", "alice")
    rid = asked["requestId"]
    await alice.expect("ask_user_questions")
    await bob.quiet()
    r = await daemon.admin("PUT", "/admin/v1/users/alice/away", json={"until": rfc3339(time.time() + 3600), "delegates": ["bob"]})
    assert r.status_code == 200, r.text
    pushed = (await bob.expect("ask_user_questions"))["payload"]
    assert (pushed["requestId"], pushed["to"]) == (rid, ["alice"])  # whose it is, not "you"
    await alice.quiet()
    await daemon.admin("DELETE", "/admin/v1/users/alice/away")
    assert (await bob.expect("ask_user_questions_cancelled"))["payload"] == {"requestId": rid, "reason": "reassigned"}
    await alice.quiet()

    # away again, ending by itself at until: the close comes then
    r = await daemon.admin("PUT", "/admin/v1/users/alice/away", json={"until": rfc3339(time.time() + 1.0), "delegates": ["bob"]})
    assert r.status_code == 200, r.text
    assert (await bob.expect("ask_user_questions"))["payload"]["requestId"] == rid
    assert (await bob.expect("ask_user_questions_cancelled", timeout=5))["payload"] == {"requestId": rid, "reason": "reassigned"}
    assert "away" not in (await daemon.admin("GET", "/admin/v1/users/alice")).json()


async def test_a_delegate_answers_on_behalf_of_the_away_user(daemon: RunningDaemon) -> None:
    alice, bob = await daemon.connect("alice"), await daemon.connect("bob")
    await daemon.admin("PUT", "/admin/v1/users/alice/away", json={"until": rfc3339(time.time() + 3600), "delegates": ["bob"]})
    rid = (await daemon.ask("s1", "alice"))["requestId"]
    await alice.expect("ask_user_questions")
    assert (await bob.expect("ask_user_questions"))["payload"]["to"] == ["alice"]
    assert (await bob.answer("s1", rid, {"Which database?": "pg"}))["payload"] == {"accepted": True}
    closed = (await alice.expect("ask_user_questions_cancelled"))["payload"]
    assert (closed["answeredBy"], closed["onBehalfOf"]) == ("bob", "alice")
    result = (await daemon.result("s1", rid)).json()
    assert (result["answeredBy"], result["onBehalfOf"]) == ("bob", "alice")


async def test_after_the_away_a_push_names_no_one(daemon: RunningDaemon) -> None:
    await daemon.admin("PUT", "/admin/v1/users/alice/away", json={"until": rfc3339(time.time() + 3600), "delegates": ["bob"]})
    rid = (await daemon.ask("s1", "alice"))["requestId"]
    await daemon.admin("DELETE", "/admin/v1/users/alice/away")
    alice = await daemon.connect("alice")  # a re-push of her own question: asked of "you" again
    [pushed] = [f["payload"] for f in await alice.subscribe("s1") if f["type"] == "ask_user_questions"]
    assert pushed["requestId"] == rid and "to" not in pushed
