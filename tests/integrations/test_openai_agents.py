"""The OpenAI Agents SDK adapter (protocol section 21) with the real
package and a scripted ``Model``, against a real daemon, the person
deciding in a real tab: inline (the adapter's run loop) and deferred
(the paused RunState asked, collected from a stored copy to resume)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from agents import RunState, Runner
from askd.integrations.openai_agents import AskdApprovals
from tests.conftest import RunningDaemon
from tests.integrations.agent_restart import killed_mid_wait_then_approved
from tests.integrations.person import Person, Tampering, agent_client, forged_signature
from tests.integrations.scripted_openai_agents import deployer

DEPLOY = ("deploy", {"env": "staging", "replicas": 1}, "call_1")
DROP = ("drop_table", {"table": "users"}, "call_2")


def approvals(daemon: RunningDaemon, session: str = "s1", **kw: Any) -> AskdApprovals:
    kw.setdefault("client", agent_client(daemon))
    return AskdApprovals(session=session, user="alice", **kw)


async def test_inline_an_approved_call_runs_and_the_action_is_the_tool_call(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    async with approvals(daemon) as gate:
        running = asyncio.create_task(gate.run(deployer([[DEPLOY]], ran), "Ship it"))
        asked = await person.next_approval()
        assert ran == []
        await person.approve(asked)
        result = await asyncio.wait_for(running, 10)
    action = asked["action"]
    assert (action["name"], action["arguments"], action.get("editable", False)) == ("deploy", DEPLOY[1], False)
    assert action["schema"]["properties"]["replicas"]["type"] == "integer"
    assert "**deployer**" in action["summary"] and "Deploy the web service." in action["summary"]
    assert result.final_output == "deployed to staging x1" and ran == [DEPLOY[1]]


async def test_an_edit_is_refused_as_the_sdk_runs_the_call_as_made(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    with pytest.raises(ValueError, match="editable"):
        AskdApprovals(session="s1", editable=True)
    async with approvals(daemon) as gate:
        running = asyncio.create_task(gate.run(deployer([[DEPLOY]], ran), "Ship it"))
        asked = await person.next_approval()
        refused = await person.approve(asked, arguments={"env": "production", "replicas": 3})
        assert refused["type"] == "error" and refused["payload"]["code"] == "invalid_request"
        await person.approve(asked)
        result = await asyncio.wait_for(running, 10)
    assert result.final_output == "deployed to staging x1" and ran == [DEPLOY[1]]


async def test_approve_always_is_always_approve_for_the_rest_of_the_run(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    again = ("deploy", {"env": "production", "replicas": 2}, "call_3")
    async with approvals(daemon, allow_always=True) as gate:
        running = asyncio.create_task(gate.run(deployer([[DEPLOY], [again]], ran), "Ship it"))
        await person.approve(await person.next_approval(), scope="always")
        result = await asyncio.wait_for(running, 10)
    assert result.final_output == "deployed to staging x1 | deployed to production x2"
    assert ran == [DEPLOY[1], again[1]]
    assert (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"] == []  # the second was not asked


async def test_inline_a_denial_reaches_the_model_and_nothing_runs(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    async with approvals(daemon) as gate:
        running = asyncio.create_task(gate.run(deployer([[DEPLOY]], ran), "Ship it"))
        await person.deny(await person.next_approval(), "freeze until Monday")
        result = await asyncio.wait_for(running, 10)
    assert result.final_output == "alice denied it: freeze until Monday" and ran == []


async def test_inline_a_timeout_is_a_denial_saying_so(daemon: RunningDaemon) -> None:
    ran: list[dict[str, Any]] = []
    async with approvals(daemon, timeout=0.3) as gate:
        result = await asyncio.wait_for(gate.run(deployer([[DEPLOY]], ran), "Ship it"), 10)
    assert result.final_output == "Not approved: nobody decided in time (Timed out waiting for the user's answer)"
    assert ran == []


async def test_two_calls_in_one_turn_are_two_questions_decided_apart(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    async with approvals(daemon) as gate:
        running = asyncio.create_task(gate.run(deployer([[DEPLOY, DROP]], ran), "Ship it"))
        first, second = await person.next_approval(), await person.next_approval()
        by_name = {first["action"]["name"]: first, second["action"]["name"]: second}
        assert first["requestId"] != second["requestId"] and set(by_name) == {"deploy", "drop_table"}
        await person.deny(by_name["drop_table"], "never")
        await person.approve(by_name["deploy"])
        result = await asyncio.wait_for(running, 10)
    assert result.final_output == "deployed to staging x1 | alice denied it: never"
    assert ran == [DEPLOY[1]]


async def test_deferred_asked_at_once_and_collected_from_a_stored_state(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    agent = deployer([[DEPLOY, DROP]], ran)
    paused = await Runner.run(agent, "Ship it")
    assert len(paused.interruptions) == 2
    stored = paused.to_state().to_string()
    async with approvals(daemon) as gate:
        state = paused.to_state()
        assert await gate.ask(state) is None and await gate.ask(state) is None  # asked once, undecided
        assert state.get_interruptions()  # left as it was
    for item in [await person.next_approval(), await person.next_approval()]:
        if item["action"]["name"] == "deploy":
            await person.approve(item)
        else:
            await person.deny(item, "not this one")
    assert (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"] == []
    async with approvals(daemon) as later:  # another process, as far as askd can tell
        restored = await RunState.from_string(agent, stored)
        ready = await later.collect(restored, wait=None)
    assert ready is restored
    resumed = await Runner.run(agent, ready)
    assert resumed.final_output == "deployed to staging x1 | alice denied it: not this one"
    assert ran == [DEPLOY[1]]


async def test_a_tampered_receipt_refuses_the_call(daemon: RunningDaemon) -> None:
    person, ran = await Person.open(daemon), []
    async with approvals(daemon, client=agent_client(daemon, Tampering(forged_signature))) as gate:
        running = asyncio.create_task(gate.run(deployer([[DEPLOY]], ran), "Ship it"))
        await person.approve(await person.next_approval())
        result = await asyncio.wait_for(running, 10)
    assert ran == []
    assert result.final_output == "askd's receipt does not verify, so deploy was not run: bad signature"


async def test_an_agent_killed_mid_wait_asks_the_same_question_again_and_runs_once(
    daemon: RunningDaemon, tmp_path: Path
) -> None:
    person, log = await Person.open(daemon), tmp_path / "ran.log"
    out = await killed_mid_wait_then_approved(daemon, person, "tests.integrations.openai_agents_agent_process", log)
    assert out == "deployed to staging x1"
    assert log.read_text() == "deploy staging 1\n"
