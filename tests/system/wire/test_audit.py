"""The audit trail over real sockets (protocol section P): records for an
ask and its answer, an extension, an approval, a timeout and a cancel;
export as NDJSON and CSV with filters; the signed head; history."""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import time
from typing import Any

import pytest
import rfc8785

from askd.audit.chain import ZERO, verify
from askd.server.audit_retention import AuditRetention
from askd.store.redis import audit as redis_audit
from tests.conftest import RunningDaemon, eventually, q
from tests.receipts.independent import check
from tests.receipts.test_wire import jwks
from tests.system.wire.test_approvals import approve, ask_action, reply


async def export(daemon: RunningDaemon, **params: Any) -> list[dict[str, Any]]:
    r = await daemon.admin("GET", "/admin/v1/audit", params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in r.text.splitlines()]


def chained(records: list[dict[str, Any]]) -> None:
    """The chain, recomputed here with rfc8785 alone."""
    prev = ZERO if records and records[0]["seq"] == 1 else records[0]["prev"]
    for i, rec in enumerate(records):
        assert rec["seq"] == records[0]["seq"] + i
        assert rec["prev"] == prev
        body = {k: v for k, v in rec.items() if k != "hash"}
        assert rec["hash"] == hashlib.sha256(rfc8785.dumps(body)).hexdigest()
        prev = rec["hash"]


async def test_an_ask_and_its_answer_are_two_records_without_the_answer(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", header="Ship it")]))["requestId"]
    await tab.expect("ask_user_questions")
    assert (await tab.answer("s1", rid, {"Deploy?": "a secret yes"}))["payload"] == {"accepted": True}
    digest = (await daemon.result("s1", rid)).json()
    records = await export(daemon)
    chained(records)
    assert [(r["event"], r["requestId"], r["by"], r["via"]) for r in records] == [
        ("asked", rid, None, "agent"), ("answered", rid, "alice", "ws")
    ]
    assert records[0]["data"] == {"to": ["alice"], "audience": ["alice"]}
    assert set(records[1]["data"]) == {"digest", "defaulted"} and records[1]["data"]["defaulted"] is False
    assert "a secret yes" not in json.dumps(records)
    assert "Ship it" not in json.dumps(records)  # the history's title is its index's, never a record's
    assert digest["status"] == "answered"


async def test_an_extension_a_timeout_and_a_cancel(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?")], timeoutSeconds=0.3, maxExtensionSeconds=0.2))["requestId"]
    await tab.expect("ask_user_questions")
    for id_, granted in (("x", True), ("y", False)):  # the second is refused: it records nothing
        await tab.send({"type": "extend", "sessionId": "s1", "requestId": rid, "seconds": 0.2, "id": id_})
        assert (await reply(tab, id_))["payload"]["extended"] is granted
    await eventually(lambda: daemon.daemon.hub.get("s1", rid) is not None and not daemon.daemon.hub.get("s1", rid).pending)
    other = (await daemon.ask("s2", "alice", [q("Other?")]))["requestId"]
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s2/cancel", headers=daemon.agent_headers)
    assert r.status_code == 200, r.text
    records = await export(daemon)
    chained(records)
    events = [(r["event"], r["requestId"]) for r in records]
    assert events == [("asked", rid), ("extended", rid), ("timeout", rid), ("asked", other), ("cancelled", other)]
    ext = records[1]
    assert (ext["by"], ext["via"], ext["data"]["seconds"]) == ("alice", "ws", 0.2)
    assert records[2]["by"] is None and records[2]["data"]["defaulted"] is False
    assert records[4]["via"] == "agent" and set(records[4]["data"]) == {"digest"}


async def test_an_approval_is_a_record(daemon: RunningDaemon) -> None:
    alice, bob = await daemon.connect("alice"), await daemon.connect("bob")
    rid = (await ask_action(daemon, "s1", ["alice", "bob"], quorum=2))["requestId"]
    assert (await approve(alice, "s1", rid))["payload"]["accepted"] is True
    assert (await approve(bob, "s1", rid, "ap2"))["payload"]["accepted"] is True
    records = await export(daemon)
    chained(records)
    assert [(r["event"], r["by"]) for r in records] == [("asked", None), ("approved", "alice"), ("answered", "bob")]
    assert records[0]["data"]["action"] == "deploy"


async def test_filters_csv_and_limits(daemon: RunningDaemon) -> None:
    for sid, user in (("s1", "alice"), ("s2", "bob"), ("s3", "bob")):
        await daemon.ask(sid, user)
    everything = await export(daemon)
    assert len(everything) == 3
    assert [r["sessionId"] for r in await export(daemon, session="s2")] == ["s2"]
    assert [r["data"]["to"] for r in await export(daemon, user="bob")] == [["bob"], ["bob"]]
    assert [r["seq"] for r in await export(daemon, after_seq=1, limit=1)] == [2]
    assert await export(daemon, since="2000-01-01T00:00:00Z", until="2000-01-02T00:00:00Z") == []
    assert len(await export(daemon, since="2000-01-01T00:00:00Z")) == 3
    assert verify(await export(daemon, user="bob"), filtered=True).problem is None
    r = await daemon.admin("GET", "/admin/v1/audit", params={"limit": 100_001})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request"
    r = await daemon.admin("GET", "/admin/v1/audit", params={"format": "csv"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [int(row["seq"]) for row in rows] == [1, 2, 3]
    assert rows[0]["by"] == "" and json.loads(rows[0]["data"]) == everything[0]["data"]
    assert rows[2]["hash"] == everything[2]["hash"]


async def test_the_head_is_signed_with_the_receipts_key(daemon: RunningDaemon) -> None:
    await daemon.ask("s1", "alice")
    await daemon.ask("s2", "bob")
    head = (await daemon.admin("GET", "/admin/v1/audit/head")).json()
    records = await export(daemon)
    assert (head["seq"], head["hash"], head["at"]) == (2, records[-1]["hash"], records[-1]["at"])
    _, claims = check(head["signature"], await jwks(daemon))
    assert claims == {"seq": 2, "hash": records[-1]["hash"], "at": records[-1]["at"]}


async def test_history_is_the_users_own(daemon: RunningDaemon) -> None:
    alice = await daemon.connect("alice")
    mine = (await daemon.ask("s1", "alice", [q("Deploy?")]))["requestId"]
    theirs = (await daemon.ask("s2", "bob", [q("Secret?")]))["requestId"]
    await alice.expect("ask_user_questions")
    await alice.answer("s1", mine, {"Deploy?": "yes"})
    await daemon.admin("POST", f"/admin/v1/sessions/s2/questions/{theirs}/answer", json={"answers": {"Secret?": "x"}})
    token = daemon.token("user", "alice")
    r = await daemon.http.get(f"{daemon.url}/v1/me/history", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    [entry] = r.json()["questions"]
    assert (entry["requestId"], entry["status"], entry["answeredBy"], entry["via"]) == (mine, "answered", "alice", "ws")
    assert entry["answers"] == {"Deploy?": "yes"}
    assert entry["header"] == "Deploy?"  # no header: its question's text
    r = await daemon.http.get(f"{daemon.url}/v1/me/history", headers=daemon.agent_headers)
    assert r.status_code == 403


async def test_the_metric_and_stats_count_records(daemon: RunningDaemon) -> None:
    await daemon.ask("s1", "alice")
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["auditRecords"] == 1
    # (on two nodes the calls alternate: each node has now read the chain)
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["auditRecords"] == 1
    text = (await daemon.admin("GET", "/metrics")).text
    assert "askd_audit_records_total 1.0" in text


async def test_retention_prunes_from_the_front_and_the_rest_verifies(daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redis_audit, "READ", 2)  # Redis: a prune over several reads
    for sid in ("s1", "s2", "s3"):
        await daemon.ask(sid, "alice")
        await asyncio.sleep(0.005)  # each its own millisecond
    trail = daemon.daemon.hub.store.audit
    *first, third = await export(daemon)
    assert await trail.prune(third["at"]) == 2  # older than the third
    rest = await export(daemon)
    assert [r["seq"] for r in rest] == [3] and rest[0]["prev"] == first[-1]["hash"]
    assert verify(rest).problem is None
    await daemon.ask("s4", "alice")
    after = await export(daemon)
    assert [r["seq"] for r in after] == [3, 4] and verify(after).problem is None
    head = (await daemon.admin("GET", "/admin/v1/audit/head")).json()
    assert head["seq"] == 4
    # audit.retention_days, a year and a day later: every record goes, the head stays.
    later = AuditRetention(trail, 365, clock=lambda: time.time() + 366 * 86400)
    assert await later.prune() == 2 and await trail.count() == 0
    assert (await daemon.admin("GET", "/admin/v1/audit/head")).json()["seq"] == 4
    await daemon.ask("s5", "alice")
    assert [(r["seq"], r["prev"]) for r in await export(daemon)] == [(5, head["hash"])]


async def test_asks_at_once_on_two_nodes_make_one_gap_free_chain(
    daemon: RunningDaemon, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Redis seals on read from checkpoints: small ones, so pages cross several.
    monkeypatch.setattr(redis_audit, "CHECKPOINT", 4)
    monkeypatch.setattr(redis_audit, "READ", 3)
    await asyncio.gather(*(daemon.ask(f"s{i}", "alice") for i in range(40)))  # to both nodes in turn
    nodes = getattr(daemon, "nodes", (daemon.daemon,))
    exports = []
    for node in nodes:
        r = await daemon.http.get(f"http://127.0.0.1:{node.admin_port}/admin/v1/audit", headers=daemon.admin_headers)
        exports.append(r.text)
    records = [json.loads(line) for line in exports[0].splitlines()]
    assert [r["seq"] for r in records] == list(range(1, 41))
    chained(records)
    assert all(text == exports[0] for text in exports)  # every node serves the same chain, byte for byte
    for after in (25, 7, 38, 0):
        assert await export(daemon, after_seq=after, limit=5) == records[after : after + 5]
    head = (await daemon.admin("GET", "/admin/v1/audit/head")).json()
    assert (head["seq"], head["hash"]) == (40, records[-1]["hash"])


async def test_a_withdraw_names_the_agent_and_a_second_records_nothing(daemon: RunningDaemon) -> None:
    headers = {"Authorization": f"Bearer {daemon.token('agent', 'bot-1')}"}
    rid = (await daemon.ask("s1", "alice", headers=headers))["requestId"]
    for _ in range(2):
        r = await daemon.http.delete(f"{daemon.url}/v1/sessions/s1/questions/{rid}", headers=headers)
        assert r.status_code == 200, r.text
    records = await export(daemon)
    assert [(r["event"], r["by"], r["via"]) for r in records] == [("asked", "bot-1", "agent"), ("withdrawn", "bot-1", "agent")]


async def test_a_teams_audience_is_resolved_and_the_user_filter_follows_it(daemon: RunningDaemon) -> None:
    r = await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["bob", "carol"]})
    assert r.status_code in (200, 201), r.text
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions", json={"to": ["alice", "group:oncall"], "questions": [q()]}, headers=daemon.agent_headers
    )
    assert r.status_code == 201, r.text
    [rec] = await export(daemon, user="carol")
    assert rec["data"] == {"to": ["alice", "group:oncall"], "audience": ["alice", "bob", "carol"]}
    assert await export(daemon, user="dave") == []


async def test_an_admin_cancel_names_the_admin_and_admin(daemon: RunningDaemon) -> None:
    bot = {"Authorization": f"Bearer {daemon.token('agent', 'bot-1')}"}
    first = (await daemon.ask("s1", "alice", headers=bot))["requestId"]
    for sid, sub in (("s1", "root"), ("s2", None)):
        if sid == "s2":
            second = (await daemon.ask("s2", "alice", headers=bot))["requestId"]
        headers = {"Authorization": f"Bearer {daemon.token('admin', sub)}"}
        r = await daemon.http.post(f"{daemon.admin_url}/admin/v1/sessions/{sid}/cancel", headers=headers)
        assert r.status_code == 200 and r.json()["cancelled"] == 1, r.text
    records = await export(daemon)
    assert [(r["event"], r["requestId"], r["by"], r["via"]) for r in records] == [
        ("asked", first, "bot-1", "agent"), ("cancelled", first, "root", "admin"),
        ("asked", second, "bot-1", "agent"), ("cancelled", second, None, "admin"),
    ]


async def test_an_ask_through_askd_mcp_is_recorded_via_mcp(daemon: RunningDaemon) -> None:
    await daemon.ask("s1", "alice", headers={"Askd-Via": "mcp"})
    await daemon.ask("s2", "alice", headers={"Askd-Via": "agent"})
    await daemon.ask("s3", "alice", headers={"Askd-Via": "carrier-pigeon"}, expect=400)
    assert [(r["event"], r["via"]) for r in await export(daemon)] == [("asked", "mcp"), ("asked", "agent")]


async def test_an_escalation_to_a_group_records_its_members_and_they_see_it_in_history(daemon: RunningDaemon) -> None:
    r = await daemon.admin("PUT", "/admin/v1/groups/leads", json={"members": ["alice", "dave"]})
    assert r.status_code in (200, 201), r.text
    body = {"userId": "alice", "questions": [q("Deploy?")], "escalate": [{"afterSeconds": 0.2, "to": ["group:leads"]}]}
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s1/questions", json=body, headers=daemon.agent_headers)
    assert r.status_code == 201, r.text
    rid = r.json()["requestId"]
    await eventually(lambda: len(daemon.daemon.hub.get("s1", rid).to) == 2)
    await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{rid}/answer", json={"answers": {"Deploy?": "yes"}})
    await eventually(lambda: not daemon.daemon.hub.get("s1", rid).pending)
    records = await export(daemon)
    assert [(r["event"], r["data"].get("added")) for r in records] == [("asked", None), ("escalated", ["dave"]), ("answered", None)]
    assert [r["event"] for r in await export(daemon, user="dave")] == ["escalated", "answered"]
    token = daemon.token("user", "dave")
    r = await daemon.http.get(f"{daemon.url}/v1/me/history", headers={"Authorization": f"Bearer {token}"})
    assert [(e["requestId"], e["status"], e["via"], e["header"]) for e in r.json()["questions"]] == [
        (rid, "answered", "admin", "Deploy?")
    ]


async def history(daemon: RunningDaemon, user: str) -> list[dict[str, Any]]:
    token = daemon.token("user", user)
    r = await daemon.http.get(f"{daemon.url}/v1/me/history", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    return r.json()["questions"]  # type: ignore[no-any-return]


async def test_history_keeps_each_users_last_100_ends_newest_first(daemon: RunningDaemon) -> None:
    asked = []
    for sid, n in (("s1", 60), ("s2", 45)):
        asked += [(await daemon.ask(sid, "alice"))["requestId"] for _ in range(n)]
        assert (await daemon.admin("POST", f"/admin/v1/sessions/{sid}/cancel")).json()["cancelled"] == n
    bob = (await daemon.ask("s3", "bob"))["requestId"]
    await daemon.admin("POST", "/admin/v1/sessions/s3/cancel")
    # the trail's own order: a cancel ends its session's questions in the order asked
    ends = [r["requestId"] for r in await export(daemon, limit=1000) if r["event"] == "cancelled" and r["sessionId"] != "s3"]
    assert sorted(ends) == sorted(asked)
    mine = await history(daemon, "alice")
    assert [e["requestId"] for e in mine] == ends[::-1][:100]
    assert {(e["status"], e["via"]) for e in mine} == {("cancelled", "admin")}
    assert [e["requestId"] for e in await history(daemon, "bob")] == [bob]
    assert await history(daemon, "carol") == []


async def test_history_follows_retention_and_a_pending_question_is_not_in_it(daemon: RunningDaemon) -> None:
    old = (await daemon.ask("s1", "alice", [q("Old?")]))["requestId"]
    await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{old}/answer", json={"answers": {"Old?": "yes"}})
    await asyncio.sleep(0.005)
    new = (await daemon.ask("s2", "alice", [q("New?")]))["requestId"]
    await daemon.admin("POST", f"/admin/v1/sessions/s2/questions/{new}/answer", json={"answers": {"New?": "yes"}})
    await daemon.ask("s3", "alice")  # pending: not in the history
    assert [(e["requestId"], e["header"]) for e in await history(daemon, "alice")] == [(new, "New?"), (old, "Old?")]
    records = await export(daemon)
    asked_new = next(r for r in records if r["event"] == "asked" and r["requestId"] == new)
    assert await daemon.daemon.hub.store.audit.prune(asked_new["at"]) == 2  # old's records
    assert [(e["requestId"], e["header"]) for e in await history(daemon, "alice")] == [(new, "New?")]
    later = AuditRetention(daemon.daemon.hub.store.audit, 365, clock=lambda: time.time() + 366 * 86400)
    await later.prune()
    assert await history(daemon, "alice") == []
