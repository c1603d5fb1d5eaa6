"""Receipts on a real daemon: every ended result carries one, and it checks
out with nothing but the daemon's /.well-known/jwks.json, ``cryptography``
and ``rfc8785`` (tests/receipts/independent.py), not askd's own verify."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.conftest import RunningDaemon, WsClient, eventually, q
from tests.receipts.independent import check, digest_of, js_parse

QUESTIONS = [q("Deploy to prod?", "yes", "no", header="Ship"), q("Anything else?", n=2**53 - 1)]


async def jwks(daemon: RunningDaemon) -> dict[str, Any]:
    r = await daemon.http.get(f"{daemon.url}/.well-known/jwks.json")  # no token
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


async def asked(daemon: RunningDaemon, session: str = "s1", tab: WsClient | None = None, **body: Any) -> tuple[str, list[dict[str, Any]]]:
    """Ask; return the requestId and the questions as the listing shows them
    (and as the push to ``tab`` shows them)."""
    rid = (await daemon.ask(session, "alice", QUESTIONS, **body))["requestId"]
    if tab is not None:
        pushed = await tab.expect("ask_user_questions")
        assert pushed["payload"]["requestId"] == rid
    r = await daemon.http.get(f"{daemon.url}/v1/sessions/{session}/questions", headers=daemon.agent_headers)
    [item] = [p for p in r.json()["pending"] if p["requestId"] == rid]
    assert item["questions"][1]["n"] == 2**53 - 1  # I-JSON's largest integer, kept exact as sent
    if tab is not None:
        assert pushed["payload"]["questions"] == item["questions"]
    [js] = [p for p in js_parse(r.text)["pending"] if p["requestId"] == rid]
    return rid, js["questions"]


async def ended(daemon: RunningDaemon, rid: str, session: str = "s1") -> dict[str, Any]:
    async def done() -> dict[str, Any] | None:
        body = (await daemon.result(session, rid)).json()
        return body if body["status"] != "pending" else None

    return await eventually(done, what=f"{rid} ended")  # type: ignore[no-any-return]


async def checked(daemon: RunningDaemon, result: dict[str, Any], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """The receipt's claims once checked independently against the result."""
    header, claims = check(result["receipt"], await jwks(daemon))
    assert list(claims) == ["iss", "iat", "sid", "rid", "status", "by", "via", "digest", "endedAt"]
    assert claims["iss"] == "askd"
    assert (claims["sid"], claims["rid"], claims["status"]) == (result["sessionId"], result["requestId"], result["status"])
    assert (claims["by"], claims["via"]) == (result.get("answeredBy"), result.get("via"))
    assert claims["digest"] == digest_of({"questions": questions, "answers": result.get("answers")})
    assert claims["endedAt"].endswith("Z") and isinstance(claims["iat"], int)
    return claims


async def test_an_answered_result_carries_a_receipt_that_checks_out_independently(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    await tab.subscribe("s1")
    rid, questions = await asked(daemon, tab=tab)
    pending = (await daemon.result("s1", rid)).json()
    assert "receipt" not in pending  # only an ended result has one
    answers = {"Deploy to prod?": "yes", "Anything else?": "no"}
    await tab.answer("s1", rid, answers)
    result = await ended(daemon, rid)
    claims = await checked(daemon, result, questions)
    assert (claims["status"], claims["by"], claims["via"]) == ("answered", "alice", "ws")
    # The same bytes on every read (and, on redis, from either node).
    assert {(await daemon.result("s1", rid)).json()["receipt"] for _ in range(4)} == {result["receipt"]}


async def test_a_wait_that_ends_and_the_asks_own_wait_carry_the_receipt(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    await tab.subscribe("s1")
    rid, questions = await asked(daemon, tab=tab)
    waiting = asyncio.ensure_future(daemon.result("s1", rid, wait=10))
    await eventually(lambda: daemon.agent_waiting(rid), what="the wait parked")
    await tab.answer("s1", rid, {"Deploy to prod?": "no", "Anything else?": "-"})
    result = (await waiting).json()
    await checked(daemon, result, questions)
    # An ask replayed with its Idempotency-Key, with ?wait=: its 200 is the ended result.
    again = await daemon.ask("s2", "alice", QUESTIONS, expect=201, headers={"Idempotency-Key": "k1"})
    await tab.subscribe("s2")  # its question comes with the subscription
    await tab.answer("s2", again["requestId"], {"Deploy to prod?": "yes", "Anything else?": "x"})
    replay = await daemon.ask("s2", "alice", QUESTIONS, expect=200, headers={"Idempotency-Key": "k1"}, params={"wait": 5})
    check(replay["receipt"], await jwks(daemon))


async def test_declined_timeout_and_cancelled_results_carry_receipts(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    await tab.subscribe("s1")
    declined, q1 = await asked(daemon, tab=tab)
    await tab.send({"type": "decline", "sessionId": "s1", "requestId": declined, "reason": "not mine", "id": "d"})
    result = await ended(daemon, declined)
    claims = await checked(daemon, result, q1)
    assert (claims["status"], claims["by"], claims["via"]) == ("declined", "alice", "ws")

    timed, q2 = await asked(daemon, timeoutSeconds=0.3)
    claims = await checked(daemon, await ended(daemon, timed), q2)
    assert (claims["status"], claims["by"], claims["via"]) == ("timeout", None, None)

    defaulted, q3 = await asked(daemon, timeoutSeconds=0.3, onTimeout={"answers": {"Deploy to prod?": "no", "Anything else?": ""}})
    result = await ended(daemon, defaulted)
    assert result["defaulted"] is True
    await checked(daemon, result, q3)  # the digest covers the default answers

    withdrawn, q4 = await asked(daemon)
    r = await daemon.http.delete(f"{daemon.url}/v1/sessions/s1/questions/{withdrawn}", headers=daemon.agent_headers)
    claims = await checked(daemon, r.json(), q4)
    assert claims["status"] == "cancelled"

    cancelled, q5 = await asked(daemon, session="s3")
    r = await daemon.http.post(f"{daemon.url}/v1/sessions/s3/cancel", headers=daemon.agent_headers)
    assert r.json() == {"cancelled": 1}
    await checked(daemon, await ended(daemon, cancelled, "s3"), q5)


async def test_an_answer_on_behalf_replies_with_the_receipt(daemon: RunningDaemon) -> None:
    key = "the-asking-process-own-host-key-0123456789"  # the ask lets its own host relay (protocol section 5)
    rid, questions = await asked(daemon, hostKey=key)
    r = await daemon.http.post(
        f"{daemon.url}/v1/sessions/s1/questions/{rid}/answer",
        json={"answers": {"Deploy to prod?": "yes", "Anything else?": "no"}, "answeredBy": "alice", "hostKey": key},
        headers=daemon.agent_headers,
    )
    assert r.status_code == 200, r.text
    claims = await checked(daemon, r.json(), questions)
    assert (claims["by"], claims["via"]) == ("alice", "mcp")


async def test_the_jwks_needs_no_token_and_keeps_the_public_routes_rules(daemon: RunningDaemon) -> None:
    r = await daemon.http.get(f"{daemon.url}/.well-known/jwks.json")
    assert r.headers["Cache-Control"] == "public, max-age=300"
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert "Server" not in r.headers
    [key] = r.json()["keys"]
    assert {k: key[k] for k in ("kty", "crv", "use", "alg")} == {"kty": "OKP", "crv": "Ed25519", "use": "sig", "alg": "EdDSA"}
    # A Host that is not askd's is refused here as on every route.
    r = await daemon.http.get(f"{daemon.url}/.well-known/jwks.json", headers={"Host": "evil.example"})
    assert r.status_code == 403
    # Only on the public listener.
    r = await daemon.http.get(f"{daemon.admin_url}/.well-known/jwks.json", headers=daemon.admin_headers)
    assert r.status_code == 404


async def _jwks_at(url: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        return (await http.get(f"{url}/.well-known/jwks.json")).json()  # type: ignore[no-any-return]


async def test_the_python_client_result_has_the_receipt_and_verify_takes_it(daemon: RunningDaemon) -> None:
    from askd.client import AsyncAgentClient
    from askd.receipts import verify

    rid, _ = await asked(daemon)
    async with AsyncAgentClient(daemon.url, daemon.token("agent")) as agent:
        assert (await agent.result("s1", rid)).receipt is None
        ended = await agent.withdraw("s1", rid)
    assert ended.receipt is not None
    assert verify(ended.receipt, await jwks(daemon))["rid"] == rid
