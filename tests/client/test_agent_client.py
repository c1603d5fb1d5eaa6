"""AgentClient / AsyncAgentClient against a real daemon, directly and behind
a proxy that answers 503, cuts long-polls and loses responses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from askd.client import (
    AgentClient,
    ApiError,
    AsyncAgentClient,
    AuthError,
    DaemonUnavailable,
    Option,
    Question,
    QuestionLost,
    RetryPolicy,
    Status,
)
from tests.client.proxy import FlakyProxy
from tests.client.waiting import eventually, pending_on_daemon
from tests.conftest import SECRET, RunningDaemon, q

FAST_RETRY = RetryPolicy(retry_for=10.0, backoff_base=0.02, backoff_cap=0.1)


@pytest.fixture
async def proxy(daemon: RunningDaemon) -> AsyncIterator[FlakyProxy]:
    p = await FlakyProxy(daemon.url).start()
    yield p
    await p.stop()


def agent(url: str, daemon: RunningDaemon, **kw: Any) -> AsyncAgentClient:
    kw.setdefault("retry", FAST_RETRY)
    kw.setdefault("poll_seconds", 0.3)
    return AsyncAgentClient(url, daemon.token("agent"), **kw)


async def answer_when_asked(daemon: RunningDaemon, answers: dict[str, Any]) -> dict[str, Any]:
    [item] = await pending_on_daemon(daemon)
    r = await daemon.admin(
        "POST", f"/admin/v1/sessions/{item['sessionId']}/questions/{item['requestId']}/answer", json={"answers": answers}
    )
    assert r.json() == {"accepted": True}
    return item


async def test_ask_blocks_across_polls_until_answered(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon, poll_seconds=0.2) as client:
        task = asyncio.create_task(
            client.ask("s1", "alice", [Question(question="Which database?", options=[Option(label="PostgreSQL")])], metadata={"k": 1})
        )
        await asyncio.sleep(0.5)  # longer than two polls: the ask must still be waiting
        assert not task.done()
        item = await answer_when_asked(daemon, {"Which database?": "PostgreSQL"})
        result = await asyncio.wait_for(task, 5)
    assert result.status is Status.answered and result.answered
    assert result.answers == {"Which database?": "PostgreSQL"}
    assert result.request_id == item["requestId"] and result.session_id == "s1"
    assert item["questions"] == [q("Which database?", "PostgreSQL")]  # only the fields that were set
    assert item["metadata"] == {"k": 1}


async def test_string_and_dict_questions_pass_through_untouched(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        await client.submit("s1", "alice", "Free text?")
        await client.submit("s2", "alice", [{"question": "Pick", "options": [{"label": "a", "x": 1}], "extra": True}])
        with pytest.raises(ValueError):
            await client.submit("s3", "alice", [{"question": ""}])  # checked before sending
    pending = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert [p["questions"] for p in pending] == [
        [{"question": "Free text?"}],
        [{"question": "Pick", "options": [{"label": "a", "x": 1}], "extra": True}],
    ]


async def test_survives_503s_for_a_while(daemon: RunningDaemon, proxy: FlakyProxy) -> None:
    proxy.fail_next = 4
    async with agent(proxy.url, daemon) as client:
        task = asyncio.create_task(client.ask("s1", "alice", [q("Deploy?", "yes", "no")]))
        await answer_when_asked(daemon, {"Deploy?": "yes"})
        result = await asyncio.wait_for(task, 5)
    assert result.answers == {"Deploy?": "yes"}
    assert proxy.count("503") == 4
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["asked"] == 1


async def test_survives_its_long_poll_cut_mid_wait(daemon: RunningDaemon, proxy: FlakyProxy) -> None:
    proxy.drop_next_wait = 1
    async with agent(proxy.url, daemon, poll_seconds=5) as client:
        # the POST's own wait is short, so the long-poll that gets cut is the GET
        asked = await client.submit("s1", "alice", [q("Deploy?")])
        task = asyncio.create_task(client.wait("s1", asked.request_id))
        await asyncio.wait_for(proxy.dropped.wait(), 5)
        await answer_when_asked(daemon, {"Deploy?": "now"})
        result = await asyncio.wait_for(task, 5)
    assert result.answers == {"Deploy?": "now"}
    assert proxy.count("cut mid-wait") == 1
    assert [m for m, _, did in proxy.seen if did == "200"].count("GET") >= 1  # it came back by requestId


async def test_a_retried_ask_asks_once(daemon: RunningDaemon, proxy: FlakyProxy) -> None:
    proxy.lose_next_post = 1  # the daemon creates the question, the agent never hears of it
    async with agent(proxy.url, daemon) as client:
        task = asyncio.create_task(client.ask("s1", "alice", [q("Deploy?")]))
        await eventually(lambda: [m for m, *_ in proxy.seen].count("POST") == 2, what="the retried POST")
        pending = await pending_on_daemon(daemon)
        assert len(pending) == 1
        await answer_when_asked(daemon, {"Deploy?": "yes"})
        result = await asyncio.wait_for(task, 5)
    assert result.request_id == pending[0]["requestId"]
    assert [did for m, _, did in proxy.seen if m == "POST"][:2] == ["lost 201", "201"]
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["asked"] == 1


async def test_same_idempotency_key_returns_the_same_question(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        first = await client.submit("s1", "alice", "Deploy?", idempotency_key="tool-call-7")
        again = await client.submit("s1", "alice", "Deploy?", idempotency_key="tool-call-7")
    assert first.request_id == again.request_id and first.pending
    assert first.created_at and first.expires_at


@pytest.mark.parametrize("settings_overrides", [{"question_timeout_seconds": 0.3}])
async def test_timeout_is_a_result_not_an_exception(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        result = await asyncio.wait_for(client.ask("s1", "alice", "Anyone?"), 5)
    assert result.status is Status.timeout and result.answers is None
    assert result.error


async def test_cancel_session_ends_a_waiting_ask(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        task = asyncio.create_task(client.ask("child", "alice", "Deploy?", parent_session="parent"))
        await pending_on_daemon(daemon)
        assert await client.cancel_session("parent") == 1
        result = await asyncio.wait_for(task, 5)
    assert result.status is Status.cancelled and result.error == "Session cancelled"


async def test_withdraw_ends_a_waiting_ask_and_is_idempotent(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        task = asyncio.create_task(client.ask("s1", "alice", "Deploy?"))
        [item] = await pending_on_daemon(daemon)
        withdrawn = await client.withdraw("s1", item["requestId"])
        assert withdrawn.status is Status.cancelled and withdrawn.error == "Withdrawn by agent"
        result = await asyncio.wait_for(task, 5)
        assert result.status is Status.cancelled and result.error == "Withdrawn by agent"
        assert (await client.withdraw("s1", item["requestId"])).raw == withdrawn.raw
        with pytest.raises(QuestionLost):
            await client.withdraw("s1", "no-such-request")
    with AgentClient(daemon.url, daemon.token("agent"), retry=FAST_RETRY) as sync_client:
        again = await asyncio.to_thread(sync_client.withdraw, "s1", item["requestId"])
        assert again.status is Status.cancelled


async def test_submit_result_wait_and_pending(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        asked = await client.submit("s1", "alice", "Deploy?", metadata={"m": 1}, timeout=60)
        assert (await client.result("s1", asked.request_id)).pending
        assert [p["requestId"] for p in await client.pending("s1")] == [asked.request_id]
        still = await client.wait("s1", asked.request_id, timeout=0.2)
        assert still.pending
        await answer_when_asked(daemon, {"Deploy?": "ok"})
        done = await client.wait("s1", asked.request_id, timeout=5)
        assert done.answers == {"Deploy?": "ok"}


async def test_a_forgotten_question_is_an_error_not_a_hang(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        with pytest.raises(QuestionLost):
            await asyncio.wait_for(client.wait("s1", "no-such-request"), 5)


async def test_a_stopped_daemon_is_an_error_not_a_hang(daemon: RunningDaemon) -> None:
    retry = RetryPolicy(retry_for=0.5, backoff_base=0.02, backoff_cap=0.1)
    async with agent(daemon.url, daemon, retry=retry, poll_seconds=5) as client:
        task = asyncio.create_task(client.ask("s1", "alice", "Deploy?"))
        await pending_on_daemon(daemon)
        await daemon.daemon.stop()
        with pytest.raises(DaemonUnavailable):
            await asyncio.wait_for(task, 5)


async def test_refusals_are_api_errors(daemon: RunningDaemon) -> None:
    async with AsyncAgentClient(daemon.url, daemon.token("admin"), retry=FAST_RETRY) as client:
        with pytest.raises(AuthError) as err:
            await client.submit("s1", "alice", "Deploy?")
    assert err.value.status == 403
    async with agent(daemon.url, daemon) as client:
        await client.submit("s1", "alice", "Deploy?")
        with pytest.raises(ApiError) as conflict:
            await client.submit("s1", "bob", "Deploy?")
    assert (conflict.value.status, conflict.value.code) == (409, "session_owner_mismatch")


async def test_finds_the_local_daemon_without_url_or_token(daemon: RunningDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    # The fixture's daemon wrote askd.json into ASKD_STATE_DIR; its secret is configured.
    monkeypatch.setenv("ASKD_AUTH__SECRET", SECRET)
    async with AsyncAgentClient() as client:
        assert client.url == daemon.url
        assert (await client.submit("s1", "alice", "Deploy?")).pending


async def test_the_blocking_client(daemon: RunningDaemon) -> None:
    def ask() -> Any:
        with AgentClient(daemon.url, daemon.token("agent"), poll_seconds=0.3, retry=FAST_RETRY) as client:
            return client.ask("s1", "alice", [q("Pick", "a", "b", multi=True)])

    task = asyncio.create_task(asyncio.to_thread(ask))
    await answer_when_asked(daemon, {"Pick": ["a", "b"]})
    result = await asyncio.wait_for(task, 5)
    assert result.answers == {"Pick": ["a", "b"]}


def test_poll_must_stay_under_a_minute() -> None:
    with pytest.raises(ValueError):
        AgentClient("http://127.0.0.1:1", "t", poll_seconds=60)


async def test_ask_a_team_with_an_escalation_step(daemon: RunningDaemon) -> None:
    await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["bob"]})
    async with agent(daemon.url, daemon) as client:
        task = asyncio.create_task(client.ask("s1", None, ["Deploy?"], to=["group:oncall"], escalate=[(0.2, ["carol"])]))
        await eventually(lambda: any(r.escalations for r in daemon.daemon.hub.registry.pending()), what="the step taken")
        item = await answer_when_asked(daemon, {"Deploy?": "y"})
        result = await asyncio.wait_for(task, 5)
    assert (item["to"], "userId" in item) == (["group:oncall", "carol"], False)
    assert result.answered and result.escalations == 1


async def test_ask_with_reminders(daemon: RunningDaemon) -> None:
    async with agent(daemon.url, daemon) as client:
        asked = await client.submit("s1", "alice", ["Deploy?"], remind=(90, 2))
        plain = await client.submit("s2", "alice", ["Deploy?"])
    kept = daemon.daemon.hub.registry.get("s1", asked.request_id)
    assert kept is not None and kept.remind == (90.0, 2)
    other = daemon.daemon.hub.registry.get("s2", plain.request_id)
    assert other is not None and other.remind is None
