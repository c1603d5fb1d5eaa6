"""``request_approval`` through ``askd mcp`` and the ``mcp`` package's own
clients against a live daemon: the host's form is Approve / Deny where it
elicits (both protocol eras), the admin decides where it does not, and the
result is the approval's, with a receipt the executor can check."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp_types._v2025_11_25 import PrimitiveSchemaDefinition, RequestedSchema
from pydantic import TypeAdapter

from askd.mcp.host import build_approval_form
from askd.receipts.jws import verify
from tests.client.waiting import pending_on_daemon
from tests.mcp.conftest import CALL_TIMEOUT, BridgeFactory
from tests.mcp.test_host import S, Host, accept, modern, text
from tests.conftest import RunningDaemon
from tests.receipts.test_wire import jwks

ACTION = {"name": "deploy", "arguments": {"service": "web", "env": "staging"}, "summary": "Ship v2", "preview": "```diff\n+v2\n```"}


def agent(daemon: RunningDaemon, *args: str) -> tuple[tuple[str, ...], dict[str, Any]]:
    return ("--url", daemon.url, "--session", S, *args), {"token": daemon.token("agent")}


async def test_the_tool_is_listed_with_its_schema(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    args, kw = agent(daemon)
    async with bridge(*args, **kw) as b:
        tools = {t.name: t for t in (await b.session.list_tools()).tools}
    tool = tools["request_approval"]
    assert tool.input_schema["required"] == ["name", "arguments"]
    assert {"name", "arguments", "summary", "preview", "to", "userId"} <= set(tool.input_schema["properties"])
    assert "approved" in tool.output_schema["properties"]


async def test_approve_in_the_host_approves_via_mcp_with_a_receipt(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    host = Host(accept({"decision": "Approve"}))
    args, kw = agent(daemon)
    async with bridge(*args, elicitation=host, **kw) as b:
        result = await b.call("request_approval", ACTION)
    done = result.structured_content
    assert result.is_error is False
    assert (done["status"], done["approved"], done["answeredBy"], done["via"]) == ("answered", True, "alice", "mcp")
    assert done["arguments"] == ACTION["arguments"] and done["scope"] == "once"
    claims = verify(done["receipt"], await jwks(daemon), action={"name": "deploy", "arguments": ACTION["arguments"]})
    assert (claims["approvals"], claims["approvalsVia"]) == (["alice"], ["mcp"])  # relayed by the host, signed so
    assert text(result).startswith("alice approved the action.")
    (form,) = host.forms
    assert form.requested_schema["properties"]["decision"]["enum"] == ["Approve", "Deny"]
    assert form.message.startswith("Approve deploy?") and '"env": "staging"' in form.message and "+v2" in form.message


@pytest.mark.parametrize(
    ("reply", "reason"),
    [(accept({"decision": "Deny", "reason": "not on a Friday"}), "not on a Friday"), (types.ElicitResult(action="decline"), None)],
    ids=["deny", "host-decline"],
)
async def test_deny_in_the_host_denies_and_is_a_result_not_an_error(
    daemon: RunningDaemon, bridge: BridgeFactory, reply: types.ElicitResult, reason: str | None
) -> None:
    args, kw = agent(daemon)
    async with bridge(*args, elicitation=Host(reply), **kw) as b:
        result = await b.call("request_approval", ACTION)
    done = result.structured_content
    assert result.is_error is False
    assert (done["status"], done["approved"], done.get("reason"), done["via"]) == ("declined", False, reason, "mcp")
    assert "denied the action" in text(result) and "Do not run it." in text(result)


async def test_without_elicitation_the_admin_decides(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    host = Host(accept({"decision": "Approve"}))
    args, kw = agent(daemon, "--no-elicit")
    async with bridge(*args, elicitation=host, **kw) as b:
        call = b.call("request_approval", {"name": "rm", "arguments": {"path": "/tmp/x"}, "userId": "bob"})
        task = asyncio.create_task(call)
        [item] = await pending_on_daemon(daemon)
        assert (item["action"]["name"], item["userId"]) == ("rm", "bob")
        path = f"/admin/v1/sessions/{S}/questions/{item['requestId']}/approve"
        assert (await daemon.admin("POST", path, json={})).status_code == 200
        result = await asyncio.wait_for(task, CALL_TIMEOUT)
    assert result.structured_content["approved"] is True and host.forms == []


async def test_asked_of_others_the_host_is_not_asked_and_bad_arguments_are_one_sentence(
    daemon: RunningDaemon, bridge: BridgeFactory
) -> None:
    host = Host(accept({"decision": "Approve"}))
    args, kw = agent(daemon, "--max-wait", "0.3")
    async with bridge(*args, elicitation=host, **kw) as b:
        result = await b.call("request_approval", {**ACTION, "to": ["bob", "carol"]})
        bad = await b.call("request_approval", {"name": "", "arguments": []})
    assert result.structured_content["status"] == "pending" and host.forms == []
    assert "bob, carol has not decided yet" in text(result) and "get_answer" in text(result)
    # Not the host's to answer, so asked without a hostKey: no agent token relays for bob.
    path = f"{daemon.url}/v1/sessions/{S}/questions/{result.structured_content['requestId']}/approve"
    r = await daemon.http.post(path, json={"answeredBy": "bob", "hostKey": "k" * 43}, headers=daemon.agent_headers)
    assert (r.status_code, r.json()["error"]["code"]) == (403, "forbidden")
    assert bad.is_error is True and text(bad).startswith("Invalid arguments for request_approval: ")


async def test_input_required_era_approves_via_mcp(daemon: RunningDaemon, tmp_path: Path) -> None:
    host = Host(accept({"decision": "Approve"}))
    async with modern(daemon, host, tmp_path) as client:
        result = await client.call_tool("request_approval", ACTION, read_timeout_seconds=CALL_TIMEOUT)
    done = result.structured_content
    assert (done["approved"], done["answeredBy"], done["via"]) == (True, "alice", "mcp")
    assert len(host.forms) == 1


def test_the_form_is_spec_primitives_and_reads_the_choice() -> None:
    form = build_approval_form({"name": "x", "arguments": {"a": "b" * 5000}})
    RequestedSchema.model_validate(form.schema)
    adapter: TypeAdapter[object] = TypeAdapter(PrimitiveSchemaDefinition)
    for prop in form.schema["properties"].values():
        adapter.validate_python(prop)
    assert len(form.message) == 2000
    assert form.decision(accept({"decision": "Approve", "reason": "x"})) == ("approve", None)
    assert form.decision(accept({"decision": "Deny", "reason": " why "})) == ("deny", "why")
    assert form.decision(types.ElicitResult(action="decline")) == ("deny", None)
    assert form.decision(types.ElicitResult(action="cancel")) is None
    assert form.decision(accept({})) is None and form.decision(None) is None


async def test_get_answer_keeps_waiting_for_an_approval(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    args, kw = agent(daemon, "--max-wait", "0.3", "--no-elicit")
    async with bridge(*args, **kw) as b:
        first = await b.call("request_approval", ACTION)
        rid = first.structured_content["requestId"]
        assert first.structured_content["status"] == "pending" and "Do not run the action." in text(first)
        path = f"/admin/v1/sessions/{S}/questions/{rid}/approve"
        assert (await daemon.admin("POST", path, json={})).status_code == 200
        done = await b.call("get_answer", {"requestId": rid})
    assert done.structured_content["approved"] is True
    assert text(done).startswith("An admin approved the action.") and '"env": "staging"' in text(done)
