"""AgentClient/AsyncAgentClient ``answer_for`` and ``decline_for`` against a
real daemon: an agent passes on what the person answered in its own window
(the MCP host case). Every test runs once with each client, so the blocking
one is held to exactly what the async one does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import pytest

from askd.client import AgentClient, ApiError, AsyncAgentClient, QuestionLost, Result, Status
from tests.client.waiting import eventually, pending_on_daemon
from tests.conftest import RunningDaemon, WsClient, q


class Awaited:
    """A blocking ``AgentClient`` whose calls run in a thread (the daemon
    shares this event loop), awaited like ``AsyncAgentClient``'s."""

    def __init__(self, client: AgentClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
        method = getattr(self._client, name)

        async def call(*args: Any, **kw: Any) -> Any:
            return await asyncio.to_thread(method, *args, **kw)

        return call


@pytest.fixture(params=["blocking", "async"])
async def agent(request: pytest.FixtureRequest, daemon: RunningDaemon) -> AsyncIterator[Any]:
    if request.param == "blocking":
        with AgentClient(daemon.url, daemon.token("agent"), poll_seconds=0.3) as client:
            yield Awaited(client)
    else:
        async with AsyncAgentClient(daemon.url, daemon.token("agent"), poll_seconds=0.3) as aclient:
            yield aclient


async def asked_and_waiting(daemon: RunningDaemon, agent: Any, *questions: dict[str, Any]) -> tuple[str, asyncio.Task[Result]]:
    """The agent's blocking ``ask`` in the background, parked on askd."""
    waiting = asyncio.create_task(agent.ask("s1", "alice", list(questions)))
    [item] = await pending_on_daemon(daemon)
    await eventually(lambda: daemon.agent_waiting(item["requestId"]), what="the agent waits")
    return item["requestId"], waiting


async def closed(tab: WsClient) -> dict[str, Any]:
    return (await tab.expect("ask_user_questions_cancelled"))["payload"]  # type: ignore[no-any-return]


async def test_answer_for_the_person_wakes_the_agents_ask_and_closes_the_tabs(daemon: RunningDaemon, agent: Any) -> None:
    tab = await daemon.connect("alice")
    rid, waiting = await asked_and_waiting(daemon, agent, q("Deploy?", "yes", "no"), q("Extras?", "tests", "docs", multi=True))
    await tab.expect("ask_user_questions")

    answers = {"Deploy?": "yes", "Extras?": ["docs", "a changelog"]}
    taken = await agent.answer_for("s1", rid, "alice", answers)
    assert taken is not None
    assert (taken.request_id, taken.status, taken.answers, taken.answered_by, taken.via) == (
        rid, Status.answered, answers, "alice", "mcp"
    )
    assert await asyncio.wait_for(waiting, 5) == taken
    assert await closed(tab) == {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "mcp"}


async def test_decline_for_the_person_with_and_without_a_reason(daemon: RunningDaemon, agent: Any) -> None:
    tab = await daemon.connect("alice")
    for reason in ("ask Bob", None):
        rid, waiting = await asked_and_waiting(daemon, agent, q("Delete the branch?"))
        await tab.expect("ask_user_questions")
        taken = await agent.decline_for("s1", rid, "alice", reason)
        assert taken is not None
        assert (taken.status, taken.reason, taken.answered_by, taken.via, taken.answers) == (
            Status.declined, reason, "alice", "mcp", None
        )
        assert ("reason" in taken.raw) == (reason is not None)
        assert await asyncio.wait_for(waiting, 5) == taken
        with_reason = {"declineReason": reason} if reason else {}
        assert await closed(tab) == {"requestId": rid, "reason": "declined", "answeredBy": "alice", "via": "mcp", **with_reason}


async def test_a_question_already_ended_or_not_the_persons_is_none_and_unknown_is_lost(
    daemon: RunningDaemon, agent: Any
) -> None:
    tab = await daemon.connect("alice")
    rid = (await agent.submit("s1", "alice", [q("Deploy?", "yes", "no")])).request_id
    await tab.expect("ask_user_questions")
    # Someone outside the question's audience cannot be named: as if it had ended for them.
    assert await agent.answer_for("s1", rid, "mallory", {"Deploy?": "yes"}) is None
    assert (await agent.result("s1", rid)).pending

    # The person answered in a tab first: the host's late reply changes nothing.
    assert (await tab.answer("s1", rid, {"Deploy?": "no"}))["payload"] == {"accepted": True}
    assert await agent.answer_for("s1", rid, "alice", {"Deploy?": "yes"}) is None
    assert await agent.decline_for("s1", rid, "alice", "too late") is None
    ended = await agent.result("s1", rid)
    assert (ended.status, ended.answers, ended.via) == (Status.answered, {"Deploy?": "no"}, "ws")

    with pytest.raises(QuestionLost):
        await agent.answer_for("s1", "no-such-request", "alice", {"Deploy?": "yes"})
    with pytest.raises(QuestionLost):
        await agent.decline_for("s1", "no-such-request", "alice")


async def test_a_bad_answer_or_via_is_refused_and_changes_nothing(daemon: RunningDaemon, agent: Any) -> None:
    rid = (await agent.submit("s1", "alice", [q("Deploy?", "yes", "no")])).request_id
    with pytest.raises(ApiError) as bad:
        await agent.answer_for("s1", rid, "alice", {"Other?": "x"})
    assert (bad.value.status, bad.value.code) == (400, "invalid_answer")
    with pytest.raises(ApiError) as bad_via:
        await agent.decline_for("s1", rid, "alice", via="ws")
    assert (bad_via.value.status, bad_via.value.code) == (400, "invalid_request")
    assert (await agent.result("s1", rid)).pending
