"""Who may answer for a person (protocol sections 5, 16 and 17), over real
sockets: an agent token relays only where its ask carried a ``hostKey``,
with that key, from the asking token's ``sub``, for one person; a quorum
counts people, so an approval that names nobody never fills a seat; and a
receipt lists only people, each with the ``via`` of their approval."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from askd.receipts import verify
from tests.conftest import RunningDaemon, q
from tests.receipts.independent import check
from tests.receipts.test_wire import jwks
from tests.system.wire.test_approvals import DEPLOY, approve, result

KEY = "k" * 32  # the asking process's secret
OTHER_KEY = "o" * 43


async def ask(daemon: RunningDaemon, token: str, session: str = "s1", **body: Any) -> str:
    """An approval of ``deploy`` asked with ``token`` (``hostKey`` etc. in ``body``)."""
    full = {"to": ["alice", "bob"], "action": DEPLOY, **body}
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/{session}/questions", json=full, headers={"Authorization": f"Bearer {token}"}
    )
    assert r.status_code == 201, r.text
    return str(r.json()["requestId"])


async def relay(daemon: RunningDaemon, token: str, rid: str, verb: str, body: dict[str, Any], session: str = "s1") -> httpx.Response:
    return await daemon.http.post(
        f"{daemon.url}/v1/sessions/{session}/questions/{rid}/{verb}", json=body, headers={"Authorization": f"Bearer {token}"}
    )


def refused(r: httpx.Response) -> str:
    assert (r.status_code, r.json()["error"]["code"]) == (403, "forbidden"), r.text
    return str(r.json()["error"]["message"])


async def unchanged(daemon: RunningDaemon, rid: str, session: str = "s1") -> None:
    now = (await daemon.result(session, rid)).json()
    assert (now["status"], now["approvals"]) == ("pending", []), now


async def test_an_agent_cannot_approve_as_someone_else_without_its_asks_own_key(daemon: RunningDaemon) -> None:
    agent = daemon.token("agent")
    # Asked without hostKey (as every hook prompt and `askd ask` are): no agent token relays.
    rid = await ask(daemon, agent, quorum=2)
    for body in ({"answeredBy": "alice"}, {"answeredBy": "alice", "hostKey": KEY}):
        assert "asked without hostKey" in refused(await relay(daemon, agent, rid, "approve", body))
    assert "asked without hostKey" in refused(await relay(daemon, agent, rid, "decline", {"answeredBy": "bob"}))
    await unchanged(daemon, rid)

    # Asked with one: no key, or another, is refused alike.
    rid = await ask(daemon, agent, quorum=2, hostKey=KEY)
    for body in ({"answeredBy": "alice"}, {"answeredBy": "alice", "hostKey": OTHER_KEY}):
        assert "hostKey is not the one" in refused(await relay(daemon, agent, rid, "approve", body))
    await unchanged(daemon, rid)


async def test_the_key_only_holds_from_the_asking_tokens_sub(daemon: RunningDaemon) -> None:
    # Asked by agent "builder" with a key: a token without a sub (which reaches every
    # session) holding the same key is another agent, and is refused.
    rid = await ask(daemon, daemon.token("agent", "builder"), hostKey=KEY)
    r = await relay(daemon, daemon.token("agent"), rid, "approve", {"answeredBy": "alice", "hostKey": KEY})
    assert "asked by another agent" in refused(r)
    # Asked without a sub: a token with one, key and all, does not reach the session.
    other = await ask(daemon, daemon.token("agent"), session="s2", hostKey=KEY)
    r = await relay(daemon, daemon.token("agent", "builder"), other, "approve", {"answeredBy": "alice", "hostKey": KEY}, "s2")
    assert (r.status_code, r.json()["error"]["code"]) == (404, "not_found")
    await unchanged(daemon, rid)
    await unchanged(daemon, other, "s2")


@pytest.mark.parametrize("key", ["short", "k" * 31, "k" * 129, "k" * 31 + "+", 7])
async def test_a_malformed_host_key_is_400_with_its_loc(daemon: RunningDaemon, key: Any) -> None:
    body = {"hostKey": key}
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions", json={"userId": "alice", "questions": [q()], **body}, headers=daemon.agent_headers
    )
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request")
    assert [d["loc"] for d in r.json()["error"]["details"]] == ["hostKey"]
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")], hostKey=KEY))["requestId"]
    r = await relay(daemon, daemon.token("agent"), rid, "answer", {"answers": {"Deploy?": "yes"}, "answeredBy": "alice", **body})
    assert [d["loc"] for d in r.json()["error"]["details"]] == ["hostKey"]


async def test_the_host_fills_one_seat_and_the_receipt_says_it_relayed(daemon: RunningDaemon) -> None:
    bob = await daemon.connect("bob")
    agent = daemon.token("agent")
    rid = await ask(daemon, agent, quorum=2, hostKey=KEY)
    await bob.expect("ask_user_questions")
    first = await relay(daemon, agent, rid, "approve", {"answeredBy": "alice", "hostKey": KEY})
    assert first.status_code == 200 and first.json()["status"] == "pending", first.text
    # A host is one person's window: it relays for nobody else on this question.
    assert "relayed for alice" in refused(await relay(daemon, agent, rid, "approve", {"answeredBy": "bob", "hostKey": KEY}))
    assert "relayed for alice" in refused(await relay(daemon, agent, rid, "decline", {"answeredBy": "bob", "hostKey": KEY}))
    r = await relay(daemon, agent, rid, "approve", {"answeredBy": "alice", "hostKey": KEY})
    assert (r.status_code, r.json()["error"]["code"]) == (409, "already_voted")
    assert (await approve(bob, "s1", rid))["payload"] == {"accepted": True, "approvals": 2, "needed": 2}
    done = await result(daemon, "s1", rid)
    assert [(a["by"], a["via"]) for a in done["approvals"]] == [("alice", "mcp"), ("bob", "ws")]
    _, claims = check(done["receipt"], await jwks(daemon))
    assert (claims["approved"], claims["by"], claims["via"]) == (True, "bob", "ws")
    assert (claims["approvals"], claims["approvalsVia"]) == (["alice", "bob"], ["mcp", "ws"])
    assert list(claims).index("approvalsVia") == list(claims).index("approvals") + 1
    assert verify(done["receipt"], await jwks(daemon), action={"name": "deploy", "arguments": DEPLOY["arguments"]}) == claims


async def test_a_question_asked_with_a_key_is_answered_by_its_own_host(daemon: RunningDaemon) -> None:
    agent = daemon.token("agent", "builder")
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")], hostKey=KEY,
                            headers={"Authorization": f"Bearer {agent}"}))["requestId"]
    body = {"answers": {"Deploy?": "yes"}, "answeredBy": "alice", "hostKey": KEY}
    r = await relay(daemon, agent, rid, "answer", body)
    assert r.status_code == 200 and (r.json()["answeredBy"], r.json()["via"]) == ("alice", "mcp"), r.text
    # The key is never shown: not in the result, the listing, nor the receipt.
    assert KEY not in r.text and "hostKey" not in r.text


async def test_an_admin_without_a_sub_ends_a_quorum_of_one_but_fills_no_seat(daemon: RunningDaemon) -> None:
    agent = daemon.token("agent")
    two = await ask(daemon, agent, quorum=2)
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{two}/approve", json={})
    assert (r.status_code, r.json()["error"]["code"]) == (400, "invalid_request")
    assert "an admin token without a sub cannot fill a quorum seat" in r.json()["error"]["message"]
    await unchanged(daemon, two)

    one = await ask(daemon, agent)
    r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{one}/approve", json={})
    assert r.json() == {"accepted": True, "approvals": 1, "needed": 1}
    done = await result(daemon, "s1", one)
    _, claims = check(done["receipt"], await jwks(daemon))
    assert (claims["approved"], claims["by"], claims["via"]) == (True, None, "admin")
    assert (claims["approvals"], claims["approvalsVia"]) == ([], [])
