"""Spec G over real sockets: groups, and questions asked of a team (``to``)."""

from __future__ import annotations

import io
import json

from tests.conftest import RunningDaemon, q


async def test_groups_are_set_listed_replaced_and_deleted(daemon: RunningDaemon) -> None:
    r = await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["bob", "alice", "bob"]})
    assert r.status_code == 200 and r.json() == {"group": "oncall", "members": ["alice", "bob"]}
    await daemon.admin("PUT", "/admin/v1/groups/leads", json={"members": ["carol"]})
    r = await daemon.admin("GET", "/admin/v1/groups")
    assert r.json() == {"groups": [{"group": "leads", "members": ["carol"]}, {"group": "oncall", "members": ["alice", "bob"]}]}

    # PUT replaces the members; an empty team is a team.
    r = await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": []})
    assert r.json() == {"group": "oncall", "members": []}
    r = await daemon.admin("DELETE", "/admin/v1/groups/leads")
    assert r.status_code == 200 and r.json() == {"deleted": True}
    r = await daemon.admin("DELETE", "/admin/v1/groups/leads")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    assert (await daemon.admin("GET", "/admin/v1/groups")).json() == {"groups": [{"group": "oncall", "members": []}]}


async def test_group_bodies_are_checked_and_need_the_admin_role(daemon: RunningDaemon) -> None:
    for body in ({}, {"members": "alice"}, {"members": [""]}, {"members": ["a\x00"]}, {"members": [], "x": 1}):
        r = await daemon.admin("PUT", "/admin/v1/groups/g", json=body)
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", body
    r = await daemon.http.put(f"{daemon.admin_url}/admin/v1/groups/g", json={"members": []}, headers=daemon.agent_headers)
    assert r.status_code == 403
    assert (await daemon.admin("GET", "/admin/v1/groups")).json() == {"groups": []}


async def ask_to(daemon: RunningDaemon, session: str, to: list[str], *, expect: int = 201, **body: object) -> dict:
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/{session}/questions",
        json={"to": to, "questions": [q("Deploy?")], **body},
        headers=daemon.agent_headers,
    )
    assert r.status_code == expect, r.text
    return r.json()


async def set_group(daemon: RunningDaemon, group: str, *members: str) -> None:
    r = await daemon.admin("PUT", f"/admin/v1/groups/{group}", json={"members": list(members)})
    assert r.status_code == 200, r.text


async def test_a_team_is_asked_any_member_answers_and_every_member_hears_the_end(daemon: RunningDaemon) -> None:
    await set_group(daemon, "oncall", "bob", "carol")
    alice, bob, carol, erin = [await daemon.connect(u) for u in ("alice", "bob", "carol", "erin")]
    asked = await ask_to(daemon, "s1", ["group:oncall", "alice"])
    rid = asked["requestId"]
    for tab in (alice, bob, carol):
        assert (await tab.expect("ask_user_questions"))["payload"]["requestId"] == rid
    await erin.quiet()
    assert (await erin.answer("s1", rid, {"Deploy?": "y"}))["payload"] == {"accepted": False, "reason": "not_pending"}

    [listed] = (await daemon.http.get(f"{daemon.url}/v1/sessions/s1/questions", headers=daemon.agent_headers)).json()["pending"]
    assert listed["to"] == ["alice", "group:oncall"] and "userId" not in listed
    [listed] = (await daemon.admin("GET", "/admin/v1/pending", params={"userId": "carol"})).json()["pending"]
    assert listed["requestId"] == rid

    assert (await carol.answer("s1", rid, {"Deploy?": "y"}))["payload"] == {"accepted": True}
    for tab in (alice, bob):
        assert (await tab.expect("ask_user_questions_cancelled"))["payload"]["reason"] == "answered"
    assert (await daemon.result("s1", rid)).json()["answers"] == {"Deploy?": "y"}


async def test_the_ask_names_exactly_one_of_user_id_and_to_and_known_groups(daemon: RunningDaemon) -> None:
    for body in ({"userId": "alice", "to": ["bob"]}, {}, {"to": []}, {"to": [f"u{i}" for i in range(21)]}, {"to": ["group:"]}):
        r = await daemon.http.post(
            f"{daemon.url}/v1/sessions/s1/questions", json={"questions": [q()], **body}, headers=daemon.agent_headers
        )
        assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", body
    r = await ask_to(daemon, "s1", ["alice", "group:nope"], expect=400)
    assert r["error"]["details"] == [{"loc": "to.1", "msg": "no group 'nope'"}]
    # "userId": U means "to": [U]: the same session audience
    await ask_to(daemon, "s2", ["alice"])
    await daemon.ask("s2", "alice")


async def test_a_session_audience_is_fixed_by_its_first_question_as_a_set(daemon: RunningDaemon) -> None:
    await set_group(daemon, "oncall", "bob")
    await ask_to(daemon, "s1", ["group:oncall", "alice"])
    await ask_to(daemon, "s1", ["alice", "group:oncall", "alice"])
    r = await ask_to(daemon, "s1", ["alice"], expect=409)
    assert r["error"]["code"] == "session_owner_mismatch"
    await daemon.ask("s1", "alice", expect=409)
    # members of the audience may subscribe; others may not
    bob, erin = await daemon.connect("bob"), await daemon.connect("erin")
    frames = await bob.subscribe("s1")
    assert [f["type"] for f in frames] == ["session_snapshot", "ask_user_questions", "ask_user_questions"]
    await erin.send({"type": "subscribe", "sessionId": "s1", "id": "sub"})
    refused = await erin.recv()
    assert (refused["type"], refused["payload"]["code"]) == ("error", "forbidden")


async def test_the_audience_follows_its_groups_while_pending(daemon: RunningDaemon) -> None:
    await set_group(daemon, "oncall", "bob")
    bob, carol = await daemon.connect("bob"), await daemon.connect("carol")
    rid = (await ask_to(daemon, "s1", ["group:oncall"]))["requestId"]
    await bob.expect("ask_user_questions")
    await set_group(daemon, "oncall", "carol")
    assert (await carol.expect("ask_user_questions"))["payload"]["requestId"] == rid
    assert (await bob.expect("ask_user_questions_cancelled"))["payload"] == {"requestId": rid, "reason": "reassigned"}
    assert (await bob.answer("s1", rid, {"Deploy?": "y"}))["payload"] == {"accepted": False, "reason": "not_pending"}
    # a member who opens a tab later gets it on subscribe to *
    carol2 = await daemon.connect("carol")
    frames = await carol2.subscribe("*")
    assert [f["payload"]["requestId"] for f in frames if f["type"] == "ask_user_questions"] == [rid]
    assert (await carol.answer("s1", rid, {"Deploy?": "y"}))["payload"] == {"accepted": True}


async def test_require_online_holds_when_any_member_is_connected(daemon: RunningDaemon) -> None:
    await set_group(daemon, "oncall", "bob", "carol")
    r = await ask_to(daemon, "s1", ["group:oncall"], expect=409, requireOnline=True)
    assert r["error"]["code"] == "user_offline"
    await daemon.connect("carol")
    await ask_to(daemon, "s1", ["group:oncall"], requireOnline=True)


async def test_an_escalation_step_adds_its_people_once_when_nobody_answers(daemon: RunningDaemon) -> None:
    await set_group(daemon, "leads", "dave")
    alice, dave = await daemon.connect("alice"), await daemon.connect("dave")
    steps = [{"afterSeconds": 0.4, "to": ["group:leads"]}]
    asked = await ask_to(daemon, "s1", ["alice"], escalate=steps, timeoutSeconds=30)
    rid = asked["requestId"]
    first = (await alice.expect("ask_user_questions"))["payload"]
    assert (first["to"], first["escalations"], first["escalatedTo"]) == (["alice"], 0, [])
    assert (await daemon.result("s1", rid)).json()["escalations"] == 0
    await dave.quiet(0.2)
    pushed = (await dave.expect("ask_user_questions", timeout=5))["payload"]
    assert (pushed["requestId"], pushed["to"], pushed["escalations"], pushed["escalatedTo"]) == (
        rid, ["alice", "group:leads"], 1, ["group:leads"]
    )
    # Earlier members keep it, and hear whom it is asked of now: once.
    step = await alice.expect("ask_user_questions_escalated")
    assert step == {
        "type": "ask_user_questions_escalated", "sessionId": "s1",
        "payload": {"requestId": rid, "to": ["alice", "group:leads"], "escalations": 1, "escalatedTo": ["group:leads"]},
    }
    await alice.quiet(0.2)
    await dave.quiet(0.1)  # new members got the question itself
    [listed] = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert (listed["to"], listed["escalations"]) == (["alice", "group:leads"], 1)
    # A re-push says the same as the step did.
    repushed = (await (await daemon.connect("alice")).subscribe("s1"))[1]["payload"]
    assert (repushed["to"], repushed["escalations"], repushed["escalatedTo"]) == (["alice", "group:leads"], 1, ["group:leads"])
    assert (await dave.answer("s1", rid, {"Deploy?": "y"}))["payload"] == {"accepted": True}
    body = (await daemon.result("s1", rid)).json()
    assert (body["status"], body["escalations"]) == ("answered", 1)


async def test_escalation_steps_are_checked(daemon: RunningDaemon) -> None:
    cases = {
        "escalate.1.afterSeconds": [{"afterSeconds": 5, "to": ["b"]}, {"afterSeconds": 5, "to": ["c"]}],
        "escalate.0.afterSeconds": [{"afterSeconds": 30, "to": ["b"]}],
        "escalate.0.to.0": [{"afterSeconds": 5, "to": ["group:nope"]}],
    }
    for loc, steps in cases.items():
        r = await ask_to(daemon, "s1", ["alice"], expect=400, escalate=steps, timeoutSeconds=30)
        assert r["error"]["details"][0]["loc"] == loc, r
    r = await ask_to(daemon, "s1", ["alice"], expect=400, escalate=[{"afterSeconds": i + 1, "to": ["b"]} for i in range(6)])
    assert r["error"]["details"][0]["loc"].startswith("escalate")


async def test_a_disconnect_by_session_names_the_star_tabs_of_its_audience(daemon: RunningDaemon) -> None:
    await set_group(daemon, "oncall", "bob")
    bob, erin = await daemon.connect("bob"), await daemon.connect("erin")
    await bob.subscribe("*")
    await erin.subscribe("*")
    await ask_to(daemon, "s1", ["group:oncall"])
    r = await daemon.admin("POST", "/admin/v1/disconnect", json={"sessionId": "s1", "mode": "close"})
    assert r.json() == {"disconnected": 1}
    assert await bob.closed() == 1001
    await erin.works()


async def test_a_push_says_whom_it_is_asked_of_only_for_a_team(daemon: RunningDaemon) -> None:
    await set_group(daemon, "oncall", "alice", "bob")
    alice = await daemon.connect("alice")
    await daemon.ask("s1", "alice")
    alone = (await alice.expect("ask_user_questions"))["payload"]
    assert set(alone) == {"requestId", "questions", "metadata", "createdAt", "expiresAt"}  # no more than v1 pushed
    await ask_to(daemon, "s2", ["group:oncall", "alice"])
    team = (await alice.expect("ask_user_questions"))["payload"]
    assert team["to"] == ["alice", "group:oncall"]  # as listings show it: a sorted set
    assert not {"escalations", "escalatedTo", "maxExtensionSeconds", "extensionLeftSeconds"} & set(team)


async def test_pending_for_a_user_lists_own_and_team_questions_in_creation_order(daemon: RunningDaemon) -> None:
    await set_group(daemon, "oncall", "alice")
    first = (await ask_to(daemon, "team-1", ["group:oncall"]))["requestId"]
    second = (await daemon.ask("own", "alice"))["requestId"]
    third = (await ask_to(daemon, "team-2", ["group:oncall", "bob"]))["requestId"]
    fourth = (await daemon.ask("own", "alice"))["requestId"]
    listed = (await daemon.admin("GET", "/admin/v1/pending", params={"userId": "alice"})).json()["pending"]
    assert [p["requestId"] for p in listed] == [first, second, third, fourth]


async def test_a_team_question_s_end_line_names_its_audience_and_who_answered(daemon: RunningDaemon, log_text: io.StringIO) -> None:
    await set_group(daemon, "oncall", "bob")
    bob = await daemon.connect("bob")
    rid = (await ask_to(daemon, "s1", ["group:oncall", "alice"]))["requestId"]
    await bob.expect("ask_user_questions")
    assert (await bob.answer("s1", rid, {"Deploy?": "y"}))["payload"] == {"accepted": True}
    [line] = [json.loads(t) for t in log_text.getvalue().splitlines() if '"question.answered"' in t]
    assert (line["to"], line["answeredBy"], line["via"]) == (["alice", "group:oncall"], "bob", "ws")
    assert "\\u001f" not in json.dumps(line)  # the audience's internal key stays inside askd
