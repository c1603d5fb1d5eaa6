"""The Claude Agent SDK adapter (protocol section 21) with the real
``claude-agent-sdk`` package and a real daemon whose person (alice's tab)
decides. The SDK drives the Claude Code CLI, which needs the network: here
the SDK's ``ClaudeSDKClient`` talks over a custom ``Transport`` to a
scripted CLI (tests/integrations/claude_cli_scripted.py) that sends the
``can_use_tool`` control requests the real CLI sends, so the callback is
called, and its answer put on the wire, by the SDK's own code."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ToolPermissionContext

from askd.client import AsyncAgentClient
from askd.integrations.claude_agent_sdk import AskdCanUseTool
from askd.receipts.jws import verify
from tests.conftest import RunningDaemon
from tests.integrations.agent_restart import killed_mid_wait_then_approved
from tests.integrations.claude_cli_scripted import ScriptedCLI, ToolUse
from tests.integrations.person import Tampering, agent_client, forged_signature, other_arguments
from tests.integrations.reviewer import Reviewer
from tests.receipts.test_wire import jwks

BASH: ToolUse = ("Bash", {"command": "make deploy", "description": "Deploy"}, "toolu_bash")
WRITE: ToolUse = ("Write", {"file_path": "/srv/app.conf", "content": "debug = false"}, "toolu_write")
BASH_SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
    "required": ["command"],
}


@pytest.fixture
async def reviewer(daemon: RunningDaemon) -> Reviewer:
    return await Reviewer.open_for(daemon)


async def run_agent(
    daemon: RunningDaemon, tmp_path: Path, *tool_uses: ToolUse, transport: httpx.AsyncBaseTransport | None = None,
    cli_says: dict[str, Any] | None = None, **kw: Any,
) -> ScriptedCLI:
    """One turn of the SDK against the scripted CLI (``cli_says``: its
    options), ``AskdCanUseTool`` deciding."""
    cli = ScriptedCLI(tool_uses, tmp_path / "ran.log", **(cli_says or {}))
    client = agent_client(daemon, transport)
    can_use_tool = AskdCanUseTool(session="claude", user="alice", agent="Claude Code", client=client, **kw)
    async with client, ClaudeSDKClient(ClaudeAgentOptions(can_use_tool=can_use_tool), transport=cli) as sdk:
        await sdk.query("deploy the app")
        async for _ in sdk.receive_response():
            pass
    return cli


def ran(tmp_path: Path) -> list[Any]:
    log = tmp_path / "ran.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def test_an_approved_call_is_allowed_as_asked_with_a_receipt_that_verifies(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    run = asyncio.create_task(run_agent(daemon, tmp_path, BASH, schemas={"Bash": BASH_SCHEMA}))
    [item] = await reviewer.pending()
    action = item["action"]
    assert (action["name"], action["arguments"], action["schema"]) == ("Bash", BASH[1], BASH_SCHEMA)
    assert action["editable"] is True and action["allowAlways"] is True and "**Claude Code**" in action["summary"]
    assert item["metadata"]["toolCallId"] == "toolu_bash"
    assert ran(tmp_path) == []
    await reviewer.approve(item)
    cli = await asyncio.wait_for(run, 10)
    assert cli.replies["toolu_bash"]["response"] == {"behavior": "allow", "updatedInput": BASH[1]}
    assert ran(tmp_path) == [["Bash", BASH[1]]]
    result = (await daemon.result("claude", item["requestId"])).json()
    verify(result["receipt"], await jwks(daemon), action={"name": "Bash", "arguments": BASH[1]})


async def test_an_edit_is_checked_against_the_schema_and_sent_as_updated_input(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    run = asyncio.create_task(run_agent(daemon, tmp_path, BASH, schemas={"Bash": BASH_SCHEMA}))
    [item] = await reviewer.pending()
    refused = await reviewer.approve(item, arguments={"command": ["make", "deploy"]})
    assert refused["type"] == "error" and "command" in json.dumps(refused)
    edited = {"command": "make deploy-staging", "description": "Deploy"}
    await reviewer.approve(item, arguments=edited)
    cli = await asyncio.wait_for(run, 10)
    assert cli.replies["toolu_bash"]["response"] == {"behavior": "allow", "updatedInput": edited}
    assert ran(tmp_path) == [["Bash", edited]]


async def test_approve_always_sends_the_clis_suggested_permission_updates(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    run = asyncio.create_task(run_agent(daemon, tmp_path, BASH))
    [item] = await reviewer.pending()
    await reviewer.approve(item, scope="always")
    cli = await asyncio.wait_for(run, 10)
    reply = cli.replies["toolu_bash"]["response"]
    assert reply["behavior"] == "allow"
    assert reply["updatedPermissions"] == [  # what the CLI suggested, as it suggested it
        {"type": "addRules", "destination": "localSettings", "rules": [{"toolName": "Bash", "ruleContent": "make deploy:*"}],
         "behavior": "allow"}
    ]


async def test_approve_always_without_a_suggestion_allows_the_tool_for_the_session(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    run = asyncio.create_task(run_agent(daemon, tmp_path, BASH, cli_says={"suggest": False}))
    [item] = await reviewer.pending()
    await reviewer.approve(item, scope="always")
    cli = await asyncio.wait_for(run, 10)
    assert cli.replies["toolu_bash"]["response"]["updatedPermissions"] == [
        {"type": "addRules", "destination": "session", "rules": [{"toolName": "Bash"}], "behavior": "allow"}
    ]


async def test_a_sub_agents_call_names_it(daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path) -> None:
    run = asyncio.create_task(run_agent(daemon, tmp_path, BASH, cli_says={"agent_id": "reviewer-7"}))
    [item] = await reviewer.pending()
    assert "**Claude Code (sub-agent reviewer-7)**" in item["action"]["summary"]
    await reviewer.approve(item)
    await asyncio.wait_for(run, 10)


async def test_a_denial_reaches_claude_with_its_reason_and_nothing_runs(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    run = asyncio.create_task(run_agent(daemon, tmp_path, BASH))
    [item] = await reviewer.pending()
    await reviewer.deny(item, "use the pipeline")
    cli = await asyncio.wait_for(run, 10)
    assert cli.replies["toolu_bash"]["response"] == {"behavior": "deny", "message": "alice denied it: use the pipeline"}
    assert ran(tmp_path) == []


async def test_a_timeout_is_a_denial_that_says_so(daemon: RunningDaemon, tmp_path: Path) -> None:
    cli = await asyncio.wait_for(run_agent(daemon, tmp_path, BASH, timeout=0.5), 10)
    reply = cli.replies["toolu_bash"]["response"]
    assert reply["behavior"] == "deny" and "nobody decided in time" in reply["message"]
    assert ran(tmp_path) == []


async def test_two_tool_uses_in_one_turn_are_two_questions_asked_at_once(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    run = asyncio.create_task(run_agent(daemon, tmp_path, BASH, WRITE))
    items = await reviewer.pending(2)  # both out before either is decided
    by_name = {item["action"]["name"]: item for item in items}
    await reviewer.deny(by_name["Write"], "not that file")
    await reviewer.approve(by_name["Bash"])
    cli = await asyncio.wait_for(run, 10)
    assert cli.replies["toolu_write"]["response"] == {"behavior": "deny", "message": "alice denied it: not that file"}
    assert cli.replies["toolu_bash"]["response"]["behavior"] == "allow"
    assert ran(tmp_path) == [["Bash", BASH[1]]]


async def test_a_tampered_result_is_refused_by_its_receipt(daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path) -> None:
    run = asyncio.create_task(run_agent(daemon, tmp_path, BASH, transport=Tampering(other_arguments)))
    [item] = await reviewer.pending()
    await reviewer.approve(item)
    cli = await asyncio.wait_for(run, 10)
    reply = cli.replies["toolu_bash"]["response"]
    assert reply["behavior"] == "deny"
    assert "receipt does not verify" in reply["message"] and "digest mismatch" in reply["message"]
    assert ran(tmp_path) == []


async def test_a_forged_receipt_signature_is_refused(daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path) -> None:
    run = asyncio.create_task(run_agent(daemon, tmp_path, BASH, transport=Tampering(forged_signature)))
    [item] = await reviewer.pending()
    await reviewer.approve(item)
    cli = await asyncio.wait_for(run, 10)
    reply = cli.replies["toolu_bash"]["response"]
    assert reply["behavior"] == "deny" and "bad signature" in reply["message"]
    assert ran(tmp_path) == []


async def test_a_permission_request_without_a_tool_use_id_asks_nothing(daemon: RunningDaemon) -> None:
    can_use_tool = AskdCanUseTool(session="claude", user="alice", client=AsyncAgentClient(daemon.url, daemon.token("agent")))
    with pytest.raises(ValueError, match="tool_use_id"):
        await can_use_tool("Bash", {"command": "ls"}, ToolPermissionContext())
    await can_use_tool.aclose()
    assert (await daemon.admin("GET", "/admin/v1/stats")).json()["asked"] == 0


async def test_an_agent_killed_while_it_waits_asks_the_same_question_again(
    daemon: RunningDaemon, reviewer: Reviewer, tmp_path: Path
) -> None:
    # The second process's CLI asks about the same tool use, as a resumed session does.
    out = await killed_mid_wait_then_approved(daemon, reviewer, "tests.integrations.claude_agent", tmp_path / "ran.log")
    assert json.loads(out.splitlines()[-1]) == {"behavior": "allow", "updatedInput": {"command": "make deploy"}}
    assert ran(tmp_path) == [["Bash", {"command": "make deploy"}]]  # ran once, by the second process
    assert await reviewer.asked_count() == 1
