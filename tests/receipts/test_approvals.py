"""Receipts of approvals (protocol sections 16 and 17) on a real daemon,
checked with nothing but its /.well-known/jwks.json, ``cryptography`` and
``rfc8785`` (tests/receipts/independent.py): the claims name who approved,
and the digest is that of ``{"action": {"name", "arguments"}, "scope"}``
with the final arguments, recomputed here."""

from __future__ import annotations

import json
from typing import Any

from askd.receipts import ReceiptError, verify
from tests.conftest import RunningDaemon
from tests.receipts.independent import check, digest_of, js_parse
from tests.receipts.test_wire import ended, jwks
from tests.system.wire.test_approvals import approve, ask_action

CLAIMS = ["iss", "iat", "sid", "rid", "status", "approved", "scope", "by", "via", "approvals", "approvalsVia", "digest", "endedAt"]
ARGS = {"env": "prod", "replicas": 3, "big": 2**53 - 1}  # the largest integer askd takes (I-JSON)


async def checked(daemon: RunningDaemon, result: dict[str, Any], arguments: Any, scope: str | None) -> dict[str, Any]:
    _, claims = check(result["receipt"], await jwks(daemon))
    assert list(claims) == CLAIMS
    assert (claims["sid"], claims["rid"], claims["status"]) == (result["sessionId"], result["requestId"], result["status"])
    assert (claims["by"], claims["via"]) == (result.get("answeredBy"), result.get("via"))
    # The people who approved, each with the via of their approval; never null.
    assert claims["approvals"] == [a["by"] for a in result["approvals"] if a["by"] is not None]
    assert claims["approvalsVia"] == [a["via"] for a in result["approvals"] if a["by"] is not None]
    assert (claims["approved"], claims["scope"]) == (result["approved"], scope)
    # As a JavaScript verifier holds the arguments.
    content = {"action": {"name": "deploy", "arguments": js_parse(json.dumps(arguments))}, "scope": scope}
    assert claims["digest"] == digest_of(content)
    return claims


async def test_an_approved_quorum_is_receipted_with_who_approved_and_the_final_arguments(daemon: RunningDaemon) -> None:
    alice, bob = await daemon.connect("alice"), await daemon.connect("bob")
    rid = (await ask_action(daemon, "s1", ["alice", "bob"], quorum=2, arguments=ARGS, allowAlways=True))["requestId"]
    for tab in (alice, bob):
        await tab.expect("ask_user_questions")
    assert (await approve(alice, "s1", rid, scope="always"))["payload"]["accepted"] is True
    assert (await approve(bob, "s1", rid, scope="always"))["payload"]["accepted"] is True
    result = await ended(daemon, rid)
    claims = await checked(daemon, result, ARGS, "always")
    assert (claims["approved"], claims["by"]) == (True, "bob")
    assert (claims["approvals"], claims["approvalsVia"]) == (["alice", "bob"], ["ws", "ws"])
    # askd's own verify agrees, and an executor about to run other arguments is refused.
    keys = await jwks(daemon)
    assert verify(result["receipt"], keys, action={"name": "deploy", "arguments": ARGS})["approved"] is True
    for other in ({"name": "deploy", "arguments": {**ARGS, "env": "staging"}}, {"name": "destroy", "arguments": ARGS}):
        try:
            verify(result["receipt"], keys, action=other)
        except ReceiptError as err:
            assert "digest mismatch" in str(err)
        else:
            raise AssertionError("another action verified")


async def test_an_edited_approval_is_receipted_over_the_edited_arguments(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    rid = (await ask_action(daemon, "s1", ["alice"], editable=True))["requestId"]
    await tab.expect("ask_user_questions")
    edited = {"env": "staging", "replicas": 1}
    assert (await approve(tab, "s1", rid, arguments=edited))["payload"]["accepted"] is True
    result = await ended(daemon, rid)
    assert result["edited"] is True
    await checked(daemon, result, edited, "once")


async def test_a_denied_approval_is_receipted_not_approved_over_the_asked_arguments(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    rid = (await ask_action(daemon, "s1", ["alice", "bob"], quorum=2, arguments=ARGS))["requestId"]
    await tab.expect("ask_user_questions")
    await approve(tab, "s1", rid)
    await tab.send({"type": "decline", "sessionId": "s1", "requestId": rid, "id": "d"})
    result = await ended(daemon, rid)
    claims = await checked(daemon, result, ARGS, None)
    assert (claims["status"], claims["approved"], claims["approvals"]) == ("declined", False, ["alice"])
    try:
        verify(result["receipt"], await jwks(daemon), action={"name": "deploy", "arguments": ARGS})
    except ReceiptError as err:
        assert str(err) == "not approved"
    else:
        raise AssertionError("a denied action verified as approved")
