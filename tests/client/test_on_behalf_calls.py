"""AgentClient/AsyncAgentClient ``answer_for`` and ``decline_for`` against a
real daemon: an agent passes on what the person answered in its own window
(the MCP host case), with the ``host_key`` it asked with. Every test runs
once with each client, so the blocking one is held to exactly what the
async one does."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import pytest

from askd.client import AgentClient, ApiError, AsyncAgentClient, AuthError, QuestionLost, Result, RetryPolicy, Status
from tests.client.proxy import FlakyProxy
from tests.client.waiting import eventually, pending_on_daemon
from tests.conftest import RunningDaemon, WsClient, q

KEY = secrets.token_urlsafe(32)  # this process's hostKey: its asks let it relay (protocol section 5)


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


@asynccontextmanager
async def open_agent(kind: str, url: str, daemon: RunningDaemon) -> AsyncIterator[Any]:
    kw: dict[str, Any] = {"poll_seconds": 0.3, "retry": RetryPolicy(retry_for=10.0, backoff_base=0.02, backoff_cap=0.1)}
    if kind == "blocking":
        with AgentClient(url, daemon.token("agent"), **kw) as client:
            yield Awaited(client)
    else:
        async with AsyncAgentClient(url, daemon.token("agent"), **kw) as aclient:
            yield aclient


@pytest.fixture(params=["blocking", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def agent(kind: str, daemon: RunningDaemon) -> AsyncIterator[Any]:
    async with open_agent(kind, daemon.url, daemon) as client:
        yield client


async def asked_and_waiting(daemon: RunningDaemon, agent: Any, *questions: dict[str, Any]) -> tuple[str, asyncio.Task[Result]]:
    """The agent's blocking ``ask`` in the background, parked on askd."""
    waiting = asyncio.create_task(agent.ask("s1", "alice", list(questions), host_key=KEY))
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
    taken = await agent.answer_for("s1", rid, "alice", answers, host_key=KEY)
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
        taken = await agent.decline_for("s1", rid, "alice", reason, host_key=KEY)
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
    rid = (await agent.submit("s1", "alice", [q("Deploy?", "yes", "no")], host_key=KEY)).request_id
    await tab.expect("ask_user_questions")
    # Someone outside the question's audience cannot be named: as if it had ended for them.
    assert await agent.answer_for("s1", rid, "mallory", {"Deploy?": "yes"}, host_key=KEY) is None
    assert (await agent.result("s1", rid)).pending

    # The person answered in a tab first: the host's late reply changes nothing.
    assert (await tab.answer("s1", rid, {"Deploy?": "no"}))["payload"] == {"accepted": True}
    assert await agent.answer_for("s1", rid, "alice", {"Deploy?": "yes"}, host_key=KEY) is None
    assert await agent.decline_for("s1", rid, "alice", "too late", host_key=KEY) is None
    ended = await agent.result("s1", rid)
    assert (ended.status, ended.answers, ended.via) == (Status.answered, {"Deploy?": "no"}, "ws")

    with pytest.raises(QuestionLost):
        await agent.answer_for("s1", "no-such-request", "alice", {"Deploy?": "yes"}, host_key=KEY)
    with pytest.raises(QuestionLost):
        await agent.decline_for("s1", "no-such-request", "alice", host_key=KEY)


async def test_a_bad_answer_or_via_is_refused_and_changes_nothing(daemon: RunningDaemon, agent: Any) -> None:
    rid = (await agent.submit("s1", "alice", [q("Deploy?", "yes", "no")], host_key=KEY)).request_id
    with pytest.raises(ApiError) as bad:
        await agent.answer_for("s1", rid, "alice", {"Other?": "x"}, host_key=KEY)
    assert (bad.value.status, bad.value.code) == (400, "invalid_answer")
    with pytest.raises(ApiError) as bad_via:
        await agent.decline_for("s1", rid, "alice", via="ws", host_key=KEY)
    assert (bad_via.value.status, bad_via.value.code) == (400, "invalid_request")
    assert (await agent.result("s1", rid)).pending


async def test_a_retry_after_a_lost_response_is_none_and_the_result_shows_whose_answer_won(
    daemon: RunningDaemon, kind: str
) -> None:
    proxy = await FlakyProxy(daemon.url).start()
    try:
        async with open_agent(kind, proxy.url, daemon) as agent:
            rid = (await agent.submit("s1", "alice", [q("Deploy?", "yes", "no")], host_key=KEY)).request_id
            proxy.lose_next_post = 1  # askd takes the answer; the agent never hears of it and retries
            assert await agent.answer_for("s1", rid, "alice", {"Deploy?": "yes"}, host_key=KEY) is None
            ended = await agent.result("s1", rid)
    finally:
        await proxy.stop()
    assert [did for method, _, did in proxy.seen if method == "POST"][1:] == ["lost 200", "404"]
    assert (ended.status, ended.answers, ended.answered_by, ended.via) == (Status.answered, {"Deploy?": "yes"}, "alice", "mcp")


async def test_without_the_asks_key_the_relay_is_refused(daemon: RunningDaemon, agent: Any) -> None:
    plain = (await agent.submit("s1", "alice", [q("Deploy?", "yes", "no")])).request_id
    keyed = (await agent.submit("s1", "alice", [q("Deploy?", "yes", "no")], host_key=KEY)).request_id
    for rid, key in ((plain, KEY), (plain, None), (keyed, None), (keyed, secrets.token_urlsafe(32))):
        with pytest.raises(AuthError) as refused:
            await agent.answer_for("s1", rid, "alice", {"Deploy?": "yes"}, host_key=key)
        assert (refused.value.status, refused.value.code) == (403, "forbidden")
    assert (await agent.result("s1", plain)).pending and (await agent.result("s1", keyed)).pending
