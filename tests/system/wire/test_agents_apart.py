"""Agents kept apart (issue 25, 4) over real sockets, on every store (on
Redis, two nodes taking requests in turn): an agent token with a ``sub``
finds a session another agent first asked in unknown, whatever it calls;
its Idempotency-Keys are its own; a token without a ``sub`` reaches every
session, and the admin is unchanged."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import RunningDaemon, eventually, q


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


async def caught_up(daemon: RunningDaemon, pending: int) -> None:
    """Every node holds ``pending`` questions: a node checks budgets against
    what it has applied, as the per-user byte budget always was (on Redis,
    the other node may be a few milliseconds behind)."""
    nodes = getattr(daemon, "nodes", (daemon.daemon,))
    await eventually(lambda: all(n.hub.registry.stats()["pending"] == pending for n in nodes), what=f"{pending} pending")


def too_many_pending(r: httpx.Response) -> str:
    assert r.status_code == 429, r.text
    assert r.json()["error"]["code"] == "too_many_pending"
    message: str = r.json()["error"]["message"]
    return message


@pytest.mark.parametrize("settings_overrides", [{"limits": {"max_pending_per_agent": 2}}])
async def test_an_agent_at_its_question_cap_leaves_room_for_another(daemon: RunningDaemon) -> None:
    """Issue 29 item 10: one agent token cannot take every pending slot."""
    a, b, anonymous = Agent(daemon, "agent-a"), Agent(daemon, "agent-b"), Agent(daemon, None)
    for session in ("a1", "a2"):
        assert (await a.ask(session, user=session)).status_code == 201
    await caught_up(daemon, 2)
    assert "max_pending_per_agent" in too_many_pending(await a.ask("a3", user="a3"))
    assert (await b.ask("b1")).status_code == 201  # the other agent still asks
    assert (await anonymous.ask("n1")).status_code == 201  # and tokens without a sub
    await caught_up(daemon, 4)
    withdrawn = await a.call("DELETE", f"a1/questions/{daemon.daemon.hub.registry.pending('a1')[0].request_id}")
    assert withdrawn.status_code == 200, withdrawn.text
    await caught_up(daemon, 3)
    assert (await a.ask("a3", user="a3")).status_code == 201  # an end frees the slot


@pytest.mark.parametrize(
    "settings_overrides", [{"limits": {"max_pending_bytes_per_user": 65536, "max_user_share_per_agent": 0.5}}]
)
async def test_an_agent_fills_only_its_share_of_a_persons_inbox(daemon: RunningDaemon) -> None:
    a, b = Agent(daemon, "agent-a"), Agent(daemon, "agent-b")
    big = [q("Deploy?", description="x" * 20_000)]  # 2 of them pass half of alice's 64 KiB
    assert (await a.ask("a1", questions=big)).status_code == 201
    await caught_up(daemon, 1)
    assert "share of the user's budget" in too_many_pending(await a.ask("a2", questions=big))
    assert (await a.ask("a2", user="bob", questions=big)).status_code == 201  # a share of each user
    assert (await b.ask("b1", questions=big)).status_code == 201  # another agent still reaches alice
