"""An agent ends its own question for the person who answered in the
agent's window (the MCP host): ``POST .../questions/{R}/answer`` and
``.../decline`` with ``answeredBy``, ``via`` ``mcp`` and the ``hostKey``
the question was asked with (protocol section 5), over real sockets. The
first answer anywhere wins, as for a tab."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.conftest import RunningDaemon, eventually, q
from tests.receipts.independent import receipted

KEY = "the-asking-process-own-host-key-0123456789"  # the ask's hostKey: its host may relay


async def on_behalf(
    daemon: RunningDaemon, rid: str, verb: str, body: Any, session: str = "s1", token: str | None = None
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token or daemon.token('agent')}"}
    body = {"hostKey": KEY, **body} if isinstance(body, dict) else body
    return await daemon.http.post(f"{daemon.url}/v1/sessions/{session}/questions/{rid}/{verb}", json=body, headers=headers)


async def test_an_answer_for_the_person_wins_closes_every_tab_and_wakes_the_agent(daemon: RunningDaemon) -> None:
    tab1, tab2 = await daemon.connect("alice"), await daemon.connect("alice")
    questions = [q("Deploy?", "yes", "no"), q("Extras?", "tests", "docs", multi=True)]
    rid = (await daemon.ask("s1", "alice", questions, hostKey=KEY))["requestId"]
    for tab in (tab1, tab2):
        await tab.expect("ask_user_questions")
    waiting = asyncio.create_task(daemon.result("s1", rid, wait=10))
    await eventually(lambda: daemon.agent_waiting(rid), what="the agent waits")

    answers = {"Deploy?": "yes", "Extras?": ["docs", "a changelog"]}
    r = await on_behalf(daemon, rid, "answer", {"answers": answers, "answeredBy": "alice", "via": "mcp"})
    assert r.status_code == 200, r.text
    expected = {"requestId": rid, "sessionId": "s1", "status": "answered", "answers": answers, "answeredBy": "alice", "via": "mcp"}
    assert receipted(r.json()) == expected
    for tab in (tab1, tab2):
        closed = await tab.expect("ask_user_questions_cancelled")
        assert closed["payload"] == {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "mcp"}
    assert receipted((await waiting).json()) == expected

    # Once only: a second answer or decline (from the host or a tab) changes nothing.
    late = await on_behalf(daemon, rid, "decline", {"answeredBy": "alice"})
    assert (late.status_code, late.json()["error"]["code"]) == (404, "not_pending")
    assert (await tab1.answer("s1", rid, {"Deploy?": "no"}))["payload"] == {"accepted": False, "reason": "not_pending"}
    assert receipted((await daemon.result("s1", rid)).json()) == expected


async def test_a_decline_for_the_person_names_them_and_via_mcp(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    rid = (await daemon.ask("s1", "alice", [q("Delete the branch?")], hostKey=KEY))["requestId"]
    await tab.expect("ask_user_questions")
    r = await on_behalf(daemon, rid, "decline", {"answeredBy": "alice", "reason": "ask Bob"})  # via defaults to mcp
    assert r.status_code == 200, r.text
    assert receipted(r.json()) == {
        "requestId": rid, "sessionId": "s1", "status": "declined", "answeredBy": "alice", "via": "mcp", "reason": "ask Bob"
    }
    closed = await tab.expect("ask_user_questions_cancelled")
    assert closed["payload"] == {
        "requestId": rid, "reason": "declined", "answeredBy": "alice", "via": "mcp", "declineReason": "ask Bob"
    }


async def test_refusals_change_nothing(daemon: RunningDaemon) -> None:
    rid = (await daemon.ask("s1", "alice", [q("Deploy?", "yes", "no")], hostKey=KEY))["requestId"]

    def code(r: httpx.Response) -> tuple[int, str]:
        return r.status_code, r.json()["error"]["code"]

    good = {"answers": {"Deploy?": "yes"}, "answeredBy": "alice"}
    # Only someone the question was asked of can be named.
    assert code(await on_behalf(daemon, rid, "answer", {**good, "answeredBy": "mallory"})) == (404, "not_pending")
    # Bodies: answers checked against the questions, via only mcp, answeredBy required, nothing else.
    assert code(await on_behalf(daemon, rid, "answer", {**good, "answers": {"Other?": "x"}})) == (400, "invalid_answer")
    assert code(await on_behalf(daemon, rid, "answer", {**good, "via": "ws"})) == (400, "invalid_request")
    assert code(await on_behalf(daemon, rid, "answer", {"answers": {"Deploy?": "yes"}})) == (400, "invalid_request")
    assert code(await on_behalf(daemon, rid, "decline", {"answeredBy": "alice", "extra": 1})) == (400, "invalid_request")
    # Unknown questions, and another agent's session, are unknown.
    assert code(await on_behalf(daemon, "nope", "answer", good)) == (404, "not_found")
    assert code(await on_behalf(daemon, rid, "answer", good, token=daemon.token("agent", "other-agent"))) == (404, "not_found")
    # A user token is not an agent's.
    assert (await on_behalf(daemon, rid, "answer", good, token=daemon.token("user", "alice"))).status_code == 403

    assert (await daemon.result("s1", rid)).json()["status"] == "pending"
    r = await on_behalf(daemon, rid, "answer", good)
    assert (r.status_code, r.json()["via"], r.json()["answeredBy"]) == (200, "mcp", "alice")
