"""Agents kept apart (issue 25, 4) over real sockets, on every store (on
Redis, two nodes taking requests in turn): an agent token with a ``sub``
finds a session another agent first asked in unknown, whatever it calls;
its Idempotency-Keys are its own; a token without a ``sub`` reaches every
session, and the admin is unchanged."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import RunningDaemon, q


class Agent:
    """One agent token (``sub`` None: a token without one) on the daemon."""

    def __init__(self, daemon: RunningDaemon, sub: str | None) -> None:
        self.daemon = daemon
        self.headers = {"Authorization": f"Bearer {daemon.token('agent', sub)}"}

    async def call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        headers = {**self.headers, **kw.pop("headers", {})}
        return await self.daemon.http.request(method, f"{self.daemon.url}/v1/sessions/{path}", headers=headers, **kw)

    async def ask(self, session: str, user: str = "alice", headers: dict[str, str] | None = None, **body: Any) -> httpx.Response:
        body = {"userId": user, "questions": [q("Deploy?")], **body}
        return await self.call("POST", f"{session}/questions", json=body, headers=headers or {})


def not_found(r: httpx.Response) -> str:
    assert r.status_code == 404, r.text
    assert r.json()["error"]["code"] == "not_found"
    message: str = r.json()["error"]["message"]
    return message


async def test_another_agent_gets_404_for_every_call_on_a_session(daemon: RunningDaemon) -> None:
    a, b = Agent(daemon, "agent-a"), Agent(daemon, "agent-b")
    tab = await daemon.connect("alice")
    asked = await a.ask("s1")
    assert asked.status_code == 201, asked.text
    rid = asked.json()["requestId"]
    await tab.expect("ask_user_questions")

    # The ask: 404, not 409, whichever user it names (it learns nothing of the owner).
    for user in ("alice", "bob"):
        not_found(await b.ask("s1", user))
    # Reading (with and without a wait) and withdrawing: exactly what an unknown question gets.
    unknown = not_found(await b.call("GET", f"s1/questions/{rid}-unknown")).replace(f"{rid}-unknown", rid)
    assert not_found(await b.call("GET", f"s1/questions/{rid}")) == unknown
    assert not_found(await b.call("GET", f"s1/questions/{rid}", params={"wait": 5})) == unknown
    assert not_found(await b.call("DELETE", f"s1/questions/{rid}")) == unknown
    # The session's listing and its cancel.
    not_found(await b.call("GET", "s1/questions"))
    not_found(await b.call("POST", "s1/cancel"))
    # A sub-session under it is refused too (it would be cancelled with it).
    not_found(await b.ask("child", parentSessionId="s1"))

    await tab.quiet()  # nothing reached the person
    r = await a.call("GET", "s1/questions")
    assert [p["requestId"] for p in r.json()["pending"]] == [rid]
    assert (await a.call("GET", f"s1/questions/{rid}")).json()["status"] == "pending"
    # The admin is unchanged: it sees and cancels every session.
    listing = (await daemon.admin("GET", "/admin/v1/pending")).json()
    assert [p["requestId"] for p in listing["pending"]] == [rid]
    assert (await a.call("POST", "s1/cancel")).json() == {"cancelled": 1}


async def test_each_agent_lists_and_acts_on_its_own_sessions(daemon: RunningDaemon) -> None:
    a, b = Agent(daemon, "agent-a"), Agent(daemon, "agent-b")
    rid_a = (await a.ask("sa")).json()["requestId"]
    rid_b = (await b.ask("sb")).json()["requestId"]
    assert [p["requestId"] for p in (await b.call("GET", "sb/questions")).json()["pending"]] == [rid_b]
    not_found(await b.call("GET", "sa/questions"))
    not_found(await a.call("GET", "sb/questions"))
    # Each withdraws its own; the other's stays pending.
    assert (await b.call("DELETE", f"sb/questions/{rid_b}")).json()["status"] == "cancelled"
    assert (await a.call("GET", f"sa/questions/{rid_a}")).json()["status"] == "pending"
    # An ended question's session is still its agent's while its result is kept.
    not_found(await a.call("GET", f"sb/questions/{rid_b}"))


async def test_a_token_without_a_sub_reaches_every_session(daemon: RunningDaemon) -> None:
    a, local = Agent(daemon, "agent-a"), Agent(daemon, None)
    rid = (await a.ask("s1")).json()["requestId"]
    assert (await local.call("GET", f"s1/questions/{rid}")).json()["status"] == "pending"
    assert [p["requestId"] for p in (await local.call("GET", "s1/questions")).json()["pending"]] == [rid]
    also = await local.ask("s1")
    assert also.status_code == 201
    assert (await local.call("DELETE", f"s1/questions/{rid}")).json()["status"] == "cancelled"
    # ... and its own sessions are no sub's: an agent with one finds them unknown.
    await local.ask("mine")
    not_found(await a.ask("mine"))


async def test_idempotency_keys_are_per_agent(daemon: RunningDaemon) -> None:
    a, b, local = Agent(daemon, "agent-a"), Agent(daemon, "agent-b"), Agent(daemon, None)
    key = {"Idempotency-Key": "same-key"}
    first = await a.ask("s1", headers=key)
    again = await a.ask("s1", headers=key)
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json()["requestId"] == first.json()["requestId"]
    # The same key from another agent is another question: in the session
    # the sub-less agent reaches, and in B's own.
    other = await local.ask("s1", headers=key)
    assert other.status_code == 201 and "Idempotent-Replayed" not in other.headers
    assert other.json()["requestId"] != first.json()["requestId"]
    theirs = await b.ask("s2", headers=key)
    assert theirs.status_code == 201 and theirs.json()["requestId"] != first.json()["requestId"]
    # B's same key in A's session tells it nothing (no replay of A's question).
    not_found(await b.ask("s1", headers=key))
    replay = await local.ask("s1", headers=key)
    assert replay.json()["requestId"] == other.json()["requestId"]
