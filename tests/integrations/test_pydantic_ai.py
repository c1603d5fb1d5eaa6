"""The Pydantic AI adapter (protocol section 21) with the real package and
a scripted model, against a real daemon, the person deciding in a real tab:
inline (the HandleDeferredToolCalls capability) and deferred
(DeferredToolRequests asked, DeferredToolResults collected to resume)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from askd.integrations.pydantic_ai import AskdApprovals
from pydantic_ai.tools import DeferredToolRequests
from tests.conftest import RunningDaemon
from tests.integrations.agent_restart import killed_mid_wait_then_approved
from tests.integrations.person import Person, Tampering, agent_client, other_arguments
from tests.integrations.scripted_pydantic_ai import deployer

DEPLOY = ("deploy", {"env": "staging"}, "call_1")
DROP = ("drop_table", {"table": "users"}, "call_2")


def approvals(daemon: RunningDaemon, session: str = "s1", **kw: Any) -> AskdApprovals:
    kw.setdefault("client", agent_client(daemon))
    return AskdApprovals(session=session, user="alice", **kw)


async def test_inline_an_approved_call_runs_and_the_action_is_the_tool_call(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    async with approvals(daemon) as gate:
        agent = deployer([DEPLOY], ran, [gate.capability()])
        running = asyncio.create_task(agent.run("Ship it"))
        asked = await person.next_approval()
        assert ran == []  # nothing runs before the person decides
        await person.approve(asked)
        result = await asyncio.wait_for(running, 10)
    action = asked["action"]
    assert (action["name"], action["arguments"], action["editable"]) == ("deploy", {"env": "staging"}, True)
    assert action["schema"]["properties"]["replicas"]["type"] == "integer"
    assert "**deployer**" in action["summary"] and "Deploy the web service." in action["summary"]
    assert result.output == "deploy: deployed to staging x1" and ran == [{"env": "staging", "replicas": 1}]


async def test_inline_an_edit_is_checked_against_the_tool_schema_and_run(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    async with approvals(daemon) as gate:
        running = asyncio.create_task(deployer([DEPLOY], ran, [gate.capability()]).run("Ship it"))
        asked = await person.next_approval()
        refused = await person.approve(asked, arguments={"env": "staging", "replicas": "three"})
        assert refused["type"] == "error" and refused["payload"]["details"][0]["loc"].startswith("arguments")
        await person.approve(asked, arguments={"env": "production", "replicas": 3})
        result = await asyncio.wait_for(running, 10)
    assert result.output == "deploy: deployed to production x3" and ran == [{"env": "production", "replicas": 3}]


def test_approve_always_is_not_offered_as_pydantic_ai_approves_one_call_at_a_time() -> None:
    with pytest.raises(ValueError, match="allow_always"):
        AskdApprovals(session="s1", allow_always=True)


async def test_inline_a_denial_reaches_the_model_and_nothing_runs(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    async with approvals(daemon) as gate:
        running = asyncio.create_task(deployer([DEPLOY], ran, [gate.capability()]).run("Ship it"))
        await person.deny(await person.next_approval(), "freeze until Monday")
        result = await asyncio.wait_for(running, 10)
    assert result.output == "deploy: alice denied it: freeze until Monday" and ran == []


async def test_inline_a_timeout_is_a_denial_saying_so(daemon: RunningDaemon) -> None:
    ran: list[dict[str, Any]] = []
    async with approvals(daemon, timeout=0.3) as gate:
        result = await asyncio.wait_for(deployer([DEPLOY], ran, [gate.capability()]).run("Ship it"), 10)
    assert result.output == "deploy: Not approved: nobody decided in time (Timed out waiting for the user's answer)"
    assert ran == []


async def test_two_calls_in_one_turn_are_two_questions_decided_apart(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    async with approvals(daemon) as gate:
        running = asyncio.create_task(deployer([DEPLOY, DROP], ran, [gate.capability()]).run("Ship it"))
        first, second = await person.next_approval(), await person.next_approval()
        by_name = {first["action"]["name"]: first, second["action"]["name"]: second}
        assert first["requestId"] != second["requestId"] and set(by_name) == {"deploy", "drop_table"}
        await person.deny(by_name["drop_table"], "never")
        await person.approve(by_name["deploy"])
        result = await asyncio.wait_for(running, 10)
    assert result.output == "deploy: deployed to staging x1 | drop_table: alice denied it: never"
    assert ran == [{"env": "staging", "replicas": 1}]


async def test_deferred_asked_at_once_and_collected_elsewhere_to_resume(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    agent = deployer([DEPLOY, DROP], ran)
    first = await agent.run("Ship it")
    requests = first.output
    assert isinstance(requests, DeferredToolRequests) and len(requests.approvals) == 2
    async with approvals(daemon) as gate:
        assert await gate.ask(requests, agent) is None  # asked, nobody decided yet
        assert await gate.ask(requests, agent) is None  # asking again asks nothing new
    asked = [await person.next_approval(), await person.next_approval()]
    assert len((await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]) == 2
    assert all(item["action"]["schema"] and "**deployer**" in item["action"]["summary"] for item in asked)
    for item in asked:
        if item["action"]["name"] == "deploy":
            await person.approve(item, arguments={"env": "production", "replicas": 2})
        else:
            await person.deny(item, "not this one")
    async with approvals(daemon) as later:  # another process, after a restart, as far as askd can tell
        results = await later.collect(requests, agent, wait=None)
    assert results is not None
    assert results.approvals["call_1"].override_args == {"env": "production", "replicas": 2}  # type: ignore[union-attr]
    assert results.answered_by == {"call_1": "alice", "call_2": "alice"}
    assert results.metadata["call_1"]["askd"]["receipt"]
    resumed = await agent.run(message_history=first.all_messages(), deferred_tool_results=results)
    assert resumed.output == "deploy: deployed to production x2 | drop_table: alice denied it: not this one"
    assert ran == [{"env": "production", "replicas": 2}]


async def test_a_tampered_receipt_refuses_the_call(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    async with approvals(daemon, client=agent_client(daemon, Tampering(other_arguments))) as gate:
        running = asyncio.create_task(deployer([DEPLOY], ran, [gate.capability()]).run("Ship it"))
        await person.approve(await person.next_approval())
        result = await asyncio.wait_for(running, 10)
    assert ran == []
    assert result.output.startswith("deploy: askd's receipt does not verify, so deploy was not run: digest mismatch")


async def test_an_agent_killed_mid_wait_asks_the_same_question_again_and_runs_once(
    daemon: RunningDaemon, tmp_path: Path
) -> None:
    person, log = await Person.open(daemon), tmp_path / "ran.log"
    out = await killed_mid_wait_then_approved(daemon, person, "tests.integrations.pydantic_ai_agent_process", log)
    assert out == "deploy: deployed to staging x1"
    assert log.read_text() == "deploy staging 1\n"
