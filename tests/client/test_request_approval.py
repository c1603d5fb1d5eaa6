"""``request_approval`` (protocol section 17) through a real daemon: the
ended Result typed (approved, arguments, edited, scope, approvals, receipt),
denial, edits, ``wait=False`` with ``withdraw``, and riding through 503s and
a lost ask as ``ask`` does."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

import pytest

from askd.client import AgentClient, ApiError, AuthError, Status
from askd.receipts.jws import verify
from tests.client.proxy import FlakyProxy
from tests.client.test_agent_client import FAST_RETRY, agent
from tests.client.waiting import eventually, pending_on_daemon
from tests.conftest import RunningDaemon
from tests.receipts.test_wire import jwks

ARGS = {"service": "web", "env": "staging"}
SCHEMA = {
    "type": "object",
    "properties": {"service": {"type": "string"}, "env": {"enum": ["staging", "production"]}},
    "required": ["service", "env"],
}


async def admin_approve(daemon: RunningDaemon, **body: Any) -> dict[str, Any]:
    [item] = await pending_on_daemon(daemon)
    r = await daemon.admin(
        "POST", f"/admin/v1/sessions/{item['sessionId']}/questions/{item['requestId']}/approve", json=body
    )
    assert r.status_code == 200, r.text
    return item


async def test_approved_result_is_typed_with_a_receipt_that_verifies(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        task = asyncio.create_task(
            client.request_approval(
                "s1", "deploy", ARGS, summary="Ship it", preview="```diff\n+v2\n```", schema=SCHEMA,
                allow_always=True, user="alice", metadata={"tool": "t1"},
            )
        )
        item = await admin_approve(daemon, scope="always")
        result = await asyncio.wait_for(task, 5)
    action = item["action"]
    assert (action["name"], action["arguments"], action["summary"], action["schema"]) == ("deploy", ARGS, "Ship it", SCHEMA)
    assert (action["preview"], action["allowAlways"], item["metadata"]) == ("```diff\n+v2\n```", True, {"tool": "t1"})
    assert (result.status, result.approved, result.arguments, result.edited, result.scope) == (
        Status.answered, True, ARGS, False, "always",
    )
    assert result.via == "admin" and result.approvals and result.approvals[0]["via"] == "admin"
    assert result.receipt
    claims = verify(result.receipt, await jwks(daemon), action={"name": "deploy", "arguments": ARGS})
    assert claims["approved"] is True


async def test_an_edit_comes_back_as_the_arguments_to_run(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        task = asyncio.create_task(client.request_approval("s1", "deploy", ARGS, schema=SCHEMA, editable=True, user="alice"))
        edited = {"service": "web", "env": "production"}
        await admin_approve(daemon, arguments=edited)
        result = await asyncio.wait_for(task, 5)
    assert (result.approved, result.arguments, result.edited, result.scope) == (True, edited, True, "once")
    assert result.receipt
    verify(result.receipt, await jwks(daemon), action={"name": "deploy", "arguments": edited})


async def test_a_denial_is_a_result_not_approved(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        task = asyncio.create_task(client.request_approval("s1", "rm", {"path": "/"}, quorum=2, to=["alice", "bob"]))
        [item] = await pending_on_daemon(daemon)
        assert item["quorum"] == 2 and item["to"] == ["alice", "bob"]
        path = f"/admin/v1/sessions/s1/questions/{item['requestId']}/decline"
        assert (await daemon.admin("POST", path, json={"reason": "too risky"})).status_code == 200
        result = await asyncio.wait_for(task, 5)
    assert (result.status, result.approved, result.reason, result.scope) == (Status.declined, False, "too risky", None)
    assert result.arguments == {"path": "/"} and result.receipt


async def test_wait_false_returns_pending_and_withdraw_ends_it(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        asked = await client.request_approval("s1", "deploy", ARGS, user="alice", wait=False, timeout=60)
        assert asked.pending and asked.request_id
        withdrawn = await client.withdraw("s1", asked.request_id)
    assert withdrawn.status is Status.cancelled and withdrawn.approved is False


async def test_a_malformed_action_fails_before_sending(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        with pytest.raises(ValueError):
            await client.request_approval("s1", "deploy", ARGS, schema={"type": 12}, user="alice", wait=False)
        with pytest.raises(ValueError):
            await client.request_approval("s1", "", ARGS, user="alice", wait=False)
    assert (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"] == []


async def test_rides_through_503s_and_a_lost_ask_asking_once(daemon: RunningDaemon) -> None:
    p = await FlakyProxy(daemon.url).start()
    try:
        p.fail_next = 2
        p.lose_next_post = 1
        async with agent(p.url, daemon) as client:
            task = asyncio.create_task(client.request_approval("s1", "deploy", ARGS, user="alice"))
            await eventually(lambda: [m for m, *_ in p.seen].count("POST") >= 2, what="the retried POST")
            await admin_approve(daemon)
            result = await asyncio.wait_for(task, 5)
    finally:
        await p.stop()
    assert result.approved is True
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["asked"] == 1


async def test_the_blocking_client(daemon: RunningDaemon) -> None:
    def ask() -> Any:
        with AgentClient(daemon.url, daemon.token("agent"), poll_seconds=0.3, retry=FAST_RETRY) as client:
            return client.request_approval("s1", "deploy", ARGS, user="alice")

    task = asyncio.create_task(asyncio.to_thread(ask))
    await admin_approve(daemon)
    result = await asyncio.wait_for(task, 5)
    assert result.approved is True and result.arguments == ARGS


async def test_approve_for_and_decline_for_an_approval_in_the_agents_window(daemon: RunningDaemon) -> None:
    """What ``askd mcp`` does when the person approves in its host: one
    approval for them with the ask's ``host_key`` (a quorum waits for more),
    never twice, never for a second person; then a denial."""
    key = secrets.token_urlsafe(32)
    async with agent(daemon.url, daemon) as client:
        asked = await client.request_approval("s1", "deploy", ARGS, to=["alice", "bob"], quorum=2, wait=False, host_key=key)
        rid = asked.request_id
        first = await client.approve_for("s1", rid, "alice", host_key=key)
        assert first is not None and first.pending and [a["by"] for a in first.approvals or []] == ["alice"]
        with pytest.raises(ApiError) as again:
            await client.approve_for("s1", rid, "alice", host_key=key)
        assert (again.value.status, again.value.code) == (409, "already_voted")
        assert await client.approve_for("s1", rid, "mallory", host_key=key) is None  # not in the audience
        with pytest.raises(AuthError) as second_person:  # a host is one person's window
            await client.approve_for("s1", rid, "bob", host_key=key)
        assert (second_person.value.status, second_person.value.code) == (403, "forbidden")
        bob = {"Authorization": f"Bearer {daemon.token('admin', 'bob')}"}
        r = await daemon.http.post(f"{daemon.admin_url}/admin/v1/sessions/s1/questions/{rid}/approve", json={}, headers=bob)
        assert r.json() == {"accepted": True, "approvals": 2, "needed": 2}
        done = await client.result("s1", rid)
        assert [(a["by"], a["via"]) for a in done.approvals or []] == [("alice", "mcp"), ("bob", "admin")]
        assert await client.decline_for("s1", rid, "alice", "late", host_key=key) is None  # ended: the approval won
        denied = await client.request_approval("s2", "rm", {"path": "/"}, user="alice", wait=False, host_key=key)
        no = await client.decline_for("s2", denied.request_id, "alice", "no way", host_key=key)
    assert no is not None and (no.status, no.approved, no.reason, no.via) == (Status.declined, False, "no way", "mcp")
