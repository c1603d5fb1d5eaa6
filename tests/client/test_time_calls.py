"""The clients' calls for more time and refusal against a real daemon:
AgentClient/AsyncAgentClient ``extend``, UserClient ``extend``/``decline``,
AdminClient ``decline``, and the result fields they read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from askd.client import (
    AdminClient,
    AgentClient,
    CancelledEvent,
    EscalatedEvent,
    ExtendedEvent,
    QuestionEvent,
    Status,
    UserClient,
)
from askd.client.agent import AsyncAgentClient
from askd.client.errors import ApiError
from tests.client.waiting import eventually
from tests.conftest import RunningDaemon, q


@pytest.fixture
async def alice(daemon: RunningDaemon) -> AsyncIterator[tuple[UserClient, list[Any]]]:
    seen: list[Any] = []
    client = UserClient(daemon.url, daemon.token("user", "alice"), on_event=seen.append, backoff_base=0.02, backoff_cap=0.1)
    await client.start()
    await client.wait_connected(5)
    yield client, seen
    await client.close()


async def test_user_client_extends_within_the_allowance_and_declines(daemon: RunningDaemon, alice: Any) -> None:
    user, seen = alice
    async with AsyncAgentClient(daemon.url, daemon.token("agent")) as agent:
        asked = await agent.submit("s1", "alice", [q("Deploy?")], timeout=60, max_extension=30)
        await eventually(lambda: [e for e in seen if isinstance(e, QuestionEvent)], what="the question")
        [event] = [e for e in seen if isinstance(e, QuestionEvent)]
        verdict = await user.extend(event, 45)
        assert verdict["extended"] is True and verdict["expiresAt"] > asked.expires_at
        assert await user.extend(event, 1) == {"extended": False, "reason": "not_allowed"}

        # The agent's own extension leaves the allowance as it is (none left here).
        moved = await agent.extend("s1", asked.request_id, 10)
        assert moved.pending and moved.expires_at > verdict["expiresAt"]
        await eventually(lambda: len([e for e in seen if isinstance(e, ExtendedEvent)]) == 2, what="two extensions")
        assert [e.expires_at for e in seen if isinstance(e, ExtendedEvent)] == [verdict["expiresAt"], moved.expires_at]

        assert await user.decline(event, "not mine to decide") is True
        await eventually(lambda: [e for e in seen if isinstance(e, CancelledEvent)], what="the close")
        assert [e for e in seen if isinstance(e, CancelledEvent)] == [
            CancelledEvent("s1", asked.request_id, "declined", "alice", "ws", "not mine to decide")
        ]
        result = await agent.result("s1", asked.request_id)
        assert (result.status, result.reason, result.answered_by, result.via) == (
            Status.declined, "not mine to decide", "alice", "ws"
        )
        assert await user.decline(event) is False
        # Ended: extend returns the real result, unchanged.
        assert (await agent.extend("s1", asked.request_id, 10)).status is Status.declined


async def test_blocking_clients_extend_decline_and_read_a_default(daemon: RunningDaemon) -> None:
    admin_url = f"http://127.0.0.1:{daemon.daemon.admin_port}"

    def work() -> None:
        with AgentClient(daemon.url, daemon.token("agent")) as agent, AdminClient(admin_url, daemon.token("admin", "ops")) as admin:
            asked = agent.submit("s1", "alice", [q("Deploy?")], timeout=60)
            with pytest.raises(ApiError) as refused:
                agent.extend("s1", asked.request_id, 86400)
            assert (refused.value.status, refused.value.code) == (409, "not_allowed")
            assert agent.extend("s1", asked.request_id, 5).pending
            assert admin.decline("s1", asked.request_id, "out of scope") is True
            result = agent.result("s1", asked.request_id)
            assert (result.status, result.answered_by, result.via, result.reason) == (Status.declined, "ops", "admin", "out of scope")

            done = agent.ask("s2", "alice", [q("Deploy now?", "Yes", "No")], timeout=0.3, on_timeout={"Deploy now?": "No"})
            assert (done.status, done.answers, done.defaulted) == (Status.timeout, {"Deploy now?": "No"}, True)

    await asyncio.to_thread(work)


async def test_user_client_hears_a_step_widen_a_question_it_has(daemon: RunningDaemon, alice: Any) -> None:
    user, seen = alice
    async with AsyncAgentClient(daemon.url, daemon.token("agent")) as agent:
        asked = await agent.submit("s1", "alice", [q("Deploy?")], timeout=60, escalate=[(0.3, ["bob"])])
        await eventually(lambda: [e for e in seen if isinstance(e, EscalatedEvent)], what="the step")
        assert [e for e in seen if isinstance(e, EscalatedEvent)] == [
            EscalatedEvent("s1", asked.request_id, ["alice", "bob"], 1, ["bob"])
        ]
