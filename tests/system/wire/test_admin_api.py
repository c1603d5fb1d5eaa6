"""Spec section 6 over real sockets: pending listings, answering as the user,
connections, disconnects (abort vs close, every selector), stats, metrics,
health, and which listener serves which paths."""

from __future__ import annotations

import re

import pytest

from tests.conftest import RunningDaemon, eventually, q

PENDING_FIELDS = {"sessionId", "userId", "to", "requestId", "questions", "metadata", "createdAt", "expiresAt"}


async def test_pending_lists_every_live_question_with_filters(daemon: RunningDaemon) -> None:
    a1 = await daemon.ask("s1", "alice", [q("A1?")], metadata={"k": "v"})
    a2 = await daemon.ask("s1", "alice", [q("A2?")])
    b1 = await daemon.ask("s2", "bob", [q("B1?")])
    ended = await daemon.ask("s3", "alice", [q("Gone?")])
    await daemon.admin("POST", "/admin/v1/sessions/s3/cancel")

    async def listed(**params: str) -> list[str]:
        r = await daemon.admin("GET", "/admin/v1/pending", params=params)
        assert r.status_code == 200
        return [p["requestId"] for p in r.json()["pending"]]

    everything = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert all(set(p) == PENDING_FIELDS for p in everything)
    first = next(p for p in everything if p["requestId"] == a1["requestId"])
    assert (first["sessionId"], first["userId"], first["questions"], first["metadata"]) == ("s1", "alice", [q("A1?")], {"k": "v"})
    assert (first["createdAt"], first["expiresAt"]) == (a1["createdAt"], a1["expiresAt"])
    assert ended["requestId"] not in {p["requestId"] for p in everything}
    assert sorted(p["requestId"] for p in everything) == sorted([a1["requestId"], a2["requestId"], b1["requestId"]])

    assert await listed(sessionId="s1") == [a1["requestId"], a2["requestId"]]
    assert await listed(userId="bob") == [b1["requestId"]]
    assert await listed(userId="alice", sessionId="s2") == []
    assert await listed(sessionId="nope") == []


async def test_admin_answer_answers_as_the_user(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Ship?", "yes", "no")])
    rid = asked["requestId"]
    await tab.expect("ask_user_questions")
    path = f"/admin/v1/sessions/s1/questions/{rid}/answer"

    r = await daemon.admin("POST", path, json={"answers": {"Ship?": ["yes"]}})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_answer")
    r = await daemon.admin("POST", path, json={"answers": "yes"})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request")
    await tab.quiet()

    r = await daemon.admin("POST", path, json={"answers": {"Ship?": "yes"}})
    assert (r.status_code, r.json()) == (200, {"accepted": True})
    closed = await tab.expect("ask_user_questions_cancelled")
    # an admin token without a sub: answered by nobody named, via admin
    assert closed["payload"] == {"requestId": rid, "reason": "answered", "answeredBy": None, "via": "admin"}
    result = (await daemon.result("s1", rid)).json()
    assert (result["answers"], result["answeredBy"], result["via"]) == ({"Ship?": "yes"}, None, "admin")

    for again in (path, "/admin/v1/sessions/s1/questions/unknown/answer", "/admin/v1/sessions/nope/questions/x/answer"):
        r = await daemon.admin("POST", again, json={"answers": {"Ship?": "no"}})
        assert (r.status_code, r.json()["error"]["code"]) == (404, "not_pending")


async def test_connections_list_every_connection_with_its_fields(daemon: RunningDaemon) -> None:
    alice = await daemon.connect("alice")
    await alice.subscribe("s1")
    await alice.subscribe("*")
    await daemon.connect("bob")

    r = await daemon.admin("GET", "/admin/v1/connections")
    conns = r.json()["connections"]
    assert sorted(c["userId"] for c in conns) == ["alice", "bob"]
    for c in conns:
        assert set(c) == {"connectionId", "userId", "subscriptions", "connectedAt", "remote", "node"}
        assert c["node"] == daemon.daemon.hub.node_id
        assert c["remote"] == "127.0.0.1"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", c["connectedAt"])
    assert len({c["connectionId"] for c in conns}) == 2

    only = (await daemon.admin("GET", "/admin/v1/connections", params={"userId": "alice"})).json()["connections"]
    assert len(only) == 1 and sorted(only[0]["subscriptions"]) == ["*", "s1"]


async def test_disconnect_close_sends_1001_and_abort_sends_no_close_frame(daemon: RunningDaemon) -> None:
    closing = await daemon.connect("alice")
    aborted = await daemon.connect("bob")
    asked = await daemon.ask("s1", "alice")
    await closing.expect("ask_user_questions")

    r = await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "alice", "mode": "close"})
    assert r.json() == {"disconnected": 1}
    assert await closing.closed() == 1001

    r = await daemon.admin("POST", "/admin/v1/disconnect", json={"userId": "bob"})  # abort is the default
    assert r.json() == {"disconnected": 1}
    assert await aborted.closed() is None

    await eventually(lambda: daemon.daemon.hub.registry.stats()["connections"] == 0)
    assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "pending"


async def test_disconnect_selectors(daemon: RunningDaemon) -> None:
    a_s1 = await daemon.connect("alice")
    await a_s1.subscribe("s1")
    a_star = await daemon.connect("alice")
    await a_star.subscribe("*")
    a_none = await daemon.connect("alice")
    b_tab = await daemon.connect("bob")
    await daemon.ask("s1", "alice")
    for tab in (a_s1, a_star, a_none):
        await tab.expect("ask_user_questions")

    async def disconnect(**body: object) -> int:
        r = await daemon.admin("POST", "/admin/v1/disconnect", json={"mode": "close", **body})
        assert r.status_code == 200, r.text
        return r.json()["disconnected"]

    # sessionId: subscribers of s1 and the owner's `*` tabs; combined with AND
    assert await disconnect(sessionId="s1", userId="bob") == 0
    assert await disconnect(sessionId="s1") == 2
    assert await a_s1.closed() == 1001 and await a_star.closed() == 1001

    conns = (await daemon.admin("GET", "/admin/v1/connections")).json()["connections"]
    a_none_id = next(c["connectionId"] for c in conns if c["userId"] == "alice")
    assert await disconnect(connectionId="c_unknown") == 0
    assert await disconnect(connectionId=a_none_id) == 1
    assert await a_none.closed() == 1001
    await b_tab.works()

    assert await disconnect(all=True) == 1
    assert await b_tab.closed() == 1001

    for bad in ({}, {"all": False}, {"userId": "x", "mode": "explode"}, {"all": "yes"}):
        r = await daemon.admin("POST", "/admin/v1/disconnect", json=bad)
        assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request"), bad


async def test_stats_count_connections_users_and_outcomes(daemon: RunningDaemon) -> None:
    tab1 = await daemon.connect("alice")
    await daemon.connect("alice")
    await daemon.connect("bob")
    answered = await daemon.ask("s1", "alice", [q("A?")])
    await daemon.ask("s2", "alice", [q("B?")])
    await daemon.ask("s3", "alice", [q("C?")])
    timed = await daemon.ask("s4", "alice", [q("D?")], timeoutSeconds=0.05)
    await tab1.answer("s1", answered["requestId"], {"A?": "a"})
    await daemon.admin("POST", "/admin/v1/sessions/s2/cancel")
    await daemon.result("s4", timed["requestId"], wait=5)

    stats = (await daemon.admin("GET", "/admin/v1/stats")).json()
    assert {k: stats[k] for k in ("connections", "users", "pending", "asked", "answered", "timedOut", "cancelled")} == {
        "connections": 3,
        "users": 2,
        "pending": 1,
        "asked": 4,
        "answered": 1,
        "timedOut": 1,
        "cancelled": 1,
    }
    assert (stats["port"], stats["adminPort"]) == (daemon.daemon.port, daemon.daemon.admin_port)
    assert stats["version"] and stats["uptimeSeconds"] >= 0
    assert stats["publicUrl"] == f"http://127.0.0.1:{daemon.daemon.port}/"


@pytest.mark.parametrize("settings_overrides", [{"public_url": "https://tools.example.com/askd/"}])
async def test_stats_name_the_url_people_use(daemon: RunningDaemon) -> None:
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["publicUrl"] == "https://tools.example.com/askd/"


async def test_metrics_are_prometheus_text(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("A?")])
    await daemon.ask("s1", "alice", [q("B?")])
    await tab.answer("s1", asked["requestId"], {"A?": "a"})
    await daemon.connect("alice")
    await tab.subscribe("s1")  # re-pushes B

    r = await daemon.admin("GET", "/metrics")
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain")
    samples = {}
    for line in r.text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    assert samples["askd_connections"] == 2
    assert samples["askd_users_online"] == 1
    assert samples["askd_pending_questions"] == 1
    assert samples["askd_questions_asked_total"] == 2
    assert samples["askd_questions_answered_total"] == 1
    assert samples["askd_questions_timed_out_total"] == 0
    assert samples["askd_questions_cancelled_total"] == 0
    assert samples["askd_questions_repushed_total"] == 1
    assert samples["askd_time_to_answer_seconds_count"] == 1
    assert "# TYPE askd_time_to_answer_seconds histogram" in r.text


@pytest.mark.parametrize("listener", ["public", "admin"])
async def test_healthz_answers_without_a_token(daemon: RunningDaemon, listener: str) -> None:
    base = daemon.url if listener == "public" else daemon.admin_url
    r = await daemon.http.get(f"{base}/healthz")
    assert r.status_code == 200
    body = r.json()
    if listener == "admin":
        assert body["status"] == "ok" and body["version"] and "time" in body and body["node"]
    else:  # the public listener tells a stranger only whether askd is up
        assert body == {"status": "ok"}


async def test_healthz_tells_a_token_holder_what_runs(daemon: RunningDaemon) -> None:
    r = await daemon.http.get(f"{daemon.url}/healthz", headers={"Authorization": f"Bearer {daemon.token('user', 'al')}"})
    assert r.json()["version"] and r.json()["node"] == daemon.daemon.hub.node_id
    forged = await daemon.http.get(f"{daemon.url}/healthz", headers={"Authorization": "Bearer x.y.z"})
    assert forged.json() == {"status": "ok"}


@pytest.mark.parametrize(
    ("listener", "method", "path"),
    [
        ("public", "GET", "/admin/v1/pending"),
        ("public", "GET", "/admin/v1/stats"),
        ("public", "POST", "/admin/v1/disconnect"),
        ("public", "GET", "/metrics"),
        ("admin", "POST", "/v1/sessions/s1/questions"),
        ("admin", "GET", "/v1/sessions/s1/questions"),
        ("admin", "POST", "/v1/sessions/s1/cancel"),
        ("admin", "GET", "/ws"),
    ],
)
async def test_each_listener_serves_only_its_own_paths(daemon: RunningDaemon, listener: str, method: str, path: str) -> None:
    base = daemon.url if listener == "public" else daemon.admin_url
    # with the token that would work on the right listener
    headers = daemon.admin_headers if path.startswith(("/admin", "/metrics")) else daemon.agent_headers
    r = await daemon.http.request(method, f"{base}{path}", headers=headers, json={"all": True})
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "not_found"
