"""The adapters' shared part (askd.integrations.calls, protocol section 21)
against a real daemon, a person deciding in a real tab: the action made
from a tool call, one question per call id however often it is asked,
inline and deferred, every end as one typed decision, and the receipt
checked before a call may run."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest

from askd.client import AgentClient, AsyncAgentClient
from askd.integrations import Approved, ApprovalGate, AsyncApprovalGate, Denied, Pending, ToolCall, call_key
from tests.client.proxy import FlakyProxy
from tests.conftest import RunningDaemon
from tests.integrations.person import FAST_RETRY, Person, Tampering, agent_client, forged_signature, other_arguments

SCHEMA = {
    "type": "object",
    "properties": {"env": {"enum": ["staging", "production"]}, "replicas": {"type": "integer", "minimum": 1}},
    "required": ["env"],
    "additionalProperties": False,
}
DEPLOY = ToolCall("call_1", "deploy", {"env": "staging", "replicas": 2}, SCHEMA, "Deploy the web service.")


def gate(daemon: RunningDaemon, **kw: Any) -> AsyncApprovalGate:
    kw.setdefault("client", agent_client(daemon))
    return AsyncApprovalGate(session="s1", framework="test", agent="deployer", user="alice", **kw)


async def test_the_action_is_the_call_and_an_approval_runs_its_arguments(daemon: RunningDaemon) -> None:
    person = await Person.open(daemon)
    async with gate(daemon, allow_always=True) as approvals:
        deciding = asyncio.create_task(approvals.decide(DEPLOY))
        asked = await person.next_approval()
        await person.approve(asked, scope="always")
        decision = await asyncio.wait_for(deciding, 10)
    action = asked["action"]
    assert (action["name"], action["arguments"], action["schema"], action["editable"]) == (
        "deploy", {"env": "staging", "replicas": 2}, SCHEMA, True,
    )
    assert "**deployer**" in action["summary"] and "`deploy`" in action["summary"] and "web service" in action["summary"]
    assert isinstance(decision, Approved)
    assert (decision.arguments, decision.edited, decision.scope, decision.by) == (DEPLOY.arguments, False, "always", "alice")
    assert decision.request_id == asked["requestId"] and decision.receipt


async def test_inline_rides_through_503s_a_lost_ask_and_a_cut_wait(daemon: RunningDaemon) -> None:
    person, proxy = await Person.open(daemon), await FlakyProxy(daemon.url).start()
    try:
        proxy.fail_next, proxy.lose_next_post, proxy.drop_next_wait = 1, 1, 1
        client = AsyncAgentClient(proxy.url, daemon.token("agent"), retry=FAST_RETRY, poll_seconds=0.5)
        async with gate(daemon, client=client) as approvals:
            deciding = asyncio.create_task(approvals.decide(DEPLOY))
            asked = await person.next_approval()
            await asyncio.wait_for(proxy.dropped.wait(), 10)
            await person.approve(asked)
            decision = await asyncio.wait_for(deciding, 10)
        await client.aclose()
    finally:
        await proxy.stop()
    assert isinstance(decision, Approved) and decision.request_id == asked["requestId"]
    assert (proxy.count("503"), proxy.count("lost 201"), proxy.count("cut mid-wait")) == (1, 1, 1)
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["asked"] == 1


async def test_an_edit_is_checked_against_the_schema_and_comes_back_to_run(daemon: RunningDaemon) -> None:
    person = await Person.open(daemon)
    async with gate(daemon) as approvals:
        deciding = asyncio.create_task(approvals.decide(DEPLOY))
        asked = await person.next_approval()
        refused = await person.approve(asked, arguments={"env": "moon"})
        assert refused["type"] == "error" and refused["payload"]["code"] == "invalid_request"
        await person.approve(asked, arguments={"env": "production", "replicas": 5})
        decision = await asyncio.wait_for(deciding, 10)
    assert isinstance(decision, Approved)
    assert (decision.arguments, decision.edited, decision.scope) == ({"env": "production", "replicas": 5}, True, "once")


async def test_a_denial_names_who_and_why(daemon: RunningDaemon) -> None:
    person = await Person.open(daemon)
    async with gate(daemon) as approvals:
        deciding = asyncio.create_task(approvals.decide(DEPLOY))
        await person.deny(await person.next_approval(), "not on a Friday")
        decision = await asyncio.wait_for(deciding, 10)
    assert decision == Denied("alice denied it: not on a Friday", "declined", decision.request_id, "alice", "not on a Friday")


async def test_silence_is_never_consent_a_timeout_is_a_denial_saying_so(daemon: RunningDaemon) -> None:
    async with gate(daemon, timeout=0.3) as approvals:
        decision = await asyncio.wait_for(approvals.decide(DEPLOY), 10)
    assert isinstance(decision, Denied) and decision.kind == "timeout"
    assert decision.message == "Not approved: nobody decided in time (Timed out waiting for the user's answer)"


async def test_withdrawn_and_cancelled_are_denials_each_saying_which(daemon: RunningDaemon) -> None:
    async with gate(daemon) as approvals:
        asked = await approvals.ask(DEPLOY)
        assert isinstance(asked, Pending)
        await approvals.client.withdraw("s1", asked.request_id)
        withdrawn = await approvals.collect(DEPLOY)
        other = ToolCall("call_2", "deploy", {"env": "staging"}, SCHEMA)
        assert isinstance(await approvals.ask(other), Pending)
        await approvals.client.cancel_session("s1")
        cancelled = await approvals.collect(other)
    assert isinstance(withdrawn, Denied) and (withdrawn.kind, withdrawn.message) == ("withdrawn", "Not approved: Withdrawn by agent")
    assert isinstance(cancelled, Denied) and (cancelled.kind, cancelled.message) == ("cancelled", "Not approved: Session cancelled")


async def test_deferred_one_call_one_question_collected_from_another_client(daemon: RunningDaemon) -> None:
    person = await Person.open(daemon)
    async with gate(daemon) as first:
        asked = await first.ask(DEPLOY)
        again = await first.ask(DEPLOY)
        assert isinstance(asked, Pending) and isinstance(again, Pending) and again.request_id == asked.request_id
        assert isinstance(await first.collect(DEPLOY), Pending)  # wait 0: reported pending
        pushed = await person.next_approval()
        assert pushed["requestId"] == asked.request_id
    listed = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert [item["requestId"] for item in listed] == [asked.request_id]
    assert listed[0]["metadata"] == {"framework": "test", "agent": "deployer", "toolCallId": "call_1"}
    await person.approve(pushed)
    async with gate(daemon) as later:  # another process, as far as askd can tell
        collected = await later.collect(DEPLOY, wait=None)
        twice = await later.ask(DEPLOY)
    assert isinstance(collected, Approved) and collected.request_id == asked.request_id
    assert twice == collected
    assert (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"] == []


async def test_collect_waits_as_long_as_asked(daemon: RunningDaemon) -> None:
    person = await Person.open(daemon)
    async with gate(daemon) as approvals:
        await approvals.ask(DEPLOY)
        asked = await person.next_approval()
        assert isinstance(await approvals.collect(DEPLOY, wait=0.2), Pending)
        collecting = asyncio.create_task(approvals.collect(DEPLOY, wait=30))
        await person.approve(asked)
        assert isinstance(await asyncio.wait_for(collecting, 10), Approved)


@pytest.mark.parametrize(
    ("change", "why"),
    [(other_arguments, "digest mismatch"), (forged_signature, "bad signature")],
)
async def test_a_tampered_receipt_refuses_the_call(daemon: RunningDaemon, change: Any, why: str) -> None:
    person = await Person.open(daemon)
    async with gate(daemon, client=agent_client(daemon, Tampering(change))) as approvals:
        deciding = asyncio.create_task(approvals.decide(DEPLOY))
        await person.approve(await person.next_approval())
        decision = await asyncio.wait_for(deciding, 10)
    assert isinstance(decision, Denied) and decision.kind == "refused"
    assert decision.message.startswith("askd's receipt does not verify, so deploy was not run: " + why)


async def test_a_receipt_for_another_request_is_refused(daemon: RunningDaemon) -> None:
    person = await Person.open(daemon)
    async with gate(daemon) as approvals:
        asked = await approvals.ask(DEPLOY)
        await person.approve(await person.next_approval())
        first = await approvals.collect(DEPLOY, wait=None)
        assert isinstance(first, Approved) and isinstance(asked, Pending)
    # The same action approved once, replayed as the approval of a second call.
    replay = Tampering(lambda data: {**data, "receipt": first.receipt, "arguments": DEPLOY.arguments})
    async with gate(daemon, client=agent_client(daemon, replay)) as approvals:
        second = ToolCall("call_2", DEPLOY.name, DEPLOY.arguments, SCHEMA)
        deciding = asyncio.create_task(approvals.decide(second))
        await person.approve(await person.next_approval())
        decision = await asyncio.wait_for(deciding, 10)
    assert isinstance(decision, Denied) and decision.message.endswith("the receipt is for another request")


async def test_receipt_checks_are_off_only_when_asked(daemon: RunningDaemon) -> None:
    person = await Person.open(daemon)
    async with gate(daemon, client=agent_client(daemon, Tampering(forged_signature)), verify_receipts=False) as approvals:
        deciding = asyncio.create_task(approvals.decide(DEPLOY))
        await person.approve(await person.next_approval())
        assert isinstance(await asyncio.wait_for(deciding, 10), Approved)


async def test_a_framework_that_runs_its_own_arguments_refuses_an_approval_of_others(daemon: RunningDaemon) -> None:
    person = await Person.open(daemon)
    client = agent_client(daemon, Tampering(other_arguments))
    async with gate(daemon, client=client, editable=False, verify_receipts=False) as approvals:
        deciding = asyncio.create_task(approvals.decide(DEPLOY))
        await person.approve(await person.next_approval())
        decision = await asyncio.wait_for(deciding, 10)
    assert isinstance(decision, Denied) and decision.kind == "refused"
    assert decision.message.startswith("deploy was not run: askd approved other arguments than the call's")


async def test_arguments_that_do_not_fit_the_schema_are_a_denial_the_model_can_correct(daemon: RunningDaemon) -> None:
    async with gate(daemon) as approvals:
        decision = await approvals.decide(ToolCall("call_9", "deploy", {"env": "moon"}, SCHEMA))
        with pytest.raises(ValueError):  # a malformed action is the caller's error, raised
            await approvals.decide(ToolCall("call_10", "deploy\nrm", {"env": "staging"}))
    assert isinstance(decision, Denied) and (decision.kind, decision.request_id) == ("invalid", None)
    assert decision.message.startswith("Not asked: the arguments do not fit the tool's schema:") and "env" in decision.message
    assert (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"] == []


async def test_a_quorum_above_one_is_never_editable(daemon: RunningDaemon) -> None:
    async with AsyncApprovalGate(session="s3", framework="test", to=["alice", "bob"], quorum=2, client=agent_client(daemon)) as approvals:
        asked = await approvals.ask(DEPLOY)
    [listed] = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
    assert isinstance(asked, Pending) and listed["quorum"] == 2 and "editable" not in listed["action"]


async def test_the_blocking_gate_decides_the_same_way(daemon: RunningDaemon) -> None:
    person = await Person.open(daemon)
    client = AgentClient(daemon.url, daemon.token("agent"), retry=FAST_RETRY, poll_seconds=0.5)
    with ApprovalGate(session="s2", framework="test", user="alice", editable=False, client=client) as approvals:
        deciding = asyncio.create_task(asyncio.to_thread(approvals.decide, DEPLOY))
        asked = await person.next_approval()
        assert "editable" not in asked["action"]  # the default, false
        await person.approve(asked)
        decision = await asyncio.wait_for(deciding, 10)
        assert isinstance(decision, Approved) and decision.receipt
        assert await asyncio.to_thread(approvals.ask, DEPLOY) == decision  # the daemon runs on this loop
    client.close()


def test_the_key_is_one_per_framework_session_and_call() -> None:
    key = call_key("pydantic-ai", "s1", "call_1")
    assert key == call_key("pydantic-ai", "s1", "call_1") and len(key) <= 256
    others = {call_key("openai-agents", "s1", "call_1"), call_key("pydantic-ai", "s2", "call_1"), call_key("pydantic-ai", "s1", "call_2")}
    assert key not in others and len(others) == 3
    assert len(call_key("x", "s" * 200, "c" * 10_000)) <= 256


def test_importing_the_client_or_the_shared_part_loads_no_framework() -> None:
    code = (
        "import sys, askd.client, askd.integrations, askd.integrations.calls\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic_ai', 'agents', 'openai', 'langgraph', 'langchain', 'langchain_core', 'claude_agent_sdk'))\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
