"""The MCP host as a channel: ``askd mcp`` asks in the host (form
elicitation) beside the page, through the ``mcp`` package's own clients
against a live daemon and the real ``askd mcp`` on stdio. Both protocol
eras: ``elicitation/create`` server requests (``ClientSession``, the
initialize handshake) and ``InputRequiredResult`` (``Client`` pinned to
2026-07-28, where server requests were replaced). A WebSocket tab plays the
page."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters, stdio_client, types

from tests.conftest import RunningDaemon, WsClient, eventually, q
from tests.mcp.conftest import ASKD, CALL_TIMEOUT, BridgeFactory
from tests.receipts.independent import receipted

S = "mcp-host"
QUESTIONS = [q("Which database?", "PostgreSQL", "SQLite", header="Database"), q("Extras?", "tests", "docs", multi=True), q("Anything else?")]


class Host:
    """The person at the host: each form is recorded, then answered with
    ``reply`` once ``gate`` (if any) is set."""

    def __init__(self, reply: types.ElicitResult, gate: asyncio.Event | None = None) -> None:
        self.reply, self.gate = reply, gate
        self.forms: list[types.ElicitRequestFormParams] = []
        self.shown = asyncio.Event()
        self.withdrawn = False  # the bridge cancelled the dialog

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.forms.append(params)
        self.shown.set()
        try:
            if self.gate is not None:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.withdrawn = True
            raise
        return self.reply


def accept(content: dict[str, Any]) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def events(log: Path) -> list[dict[str, Any]]:
    """The bridge's log lines (JSON, as stderr is not a terminal)."""
    out = []
    for line in log.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def tab_for(daemon: RunningDaemon) -> WsClient:
    tab = await daemon.connect("alice")
    await tab.subscribe("*")
    return tab


async def asked(tab: WsClient) -> str:
    frame = await tab.expect("ask_user_questions")
    return str(frame["payload"]["requestId"])


@asynccontextmanager
async def modern(daemon: RunningDaemon, host: Host, tmp_path: Path, *args: str) -> AsyncIterator[Client]:
    """``askd mcp`` driven by ``Client`` on protocol 2026-07-28 (no
    initialize, no server requests): the client runs the InputRequiredResult
    rounds through ``host``."""
    params = StdioServerParameters(
        command=ASKD[0],
        args=[*ASKD[1:], "mcp", "--user", "alice", "--session", S, "--url", daemon.url, *args],
        env={"ASKD_STATE_DIR": str(tmp_path / "state"), "ASKD_AGENT_TOKEN": daemon.token("agent")},
    )
    with (tmp_path / "modern.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="2026-07-28", elicitation_callback=host) as client:
            # No handshake in this era: list the tools first, as hosts do, so the process is up.
            await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT)
            yield client


# ---- elicitation/create (the initialize-handshake era) -------------------


async def test_an_accept_in_the_host_answers_via_mcp_and_the_tab_closes(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    host = Host(accept({"q1": "SQLite", "q2": ["docs"], "q2_other": "a changelog", "q3": "  no  "}))
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent"), elicitation=host) as b:
        result = await b.call("ask_user_questions", {"questions": QUESTIONS})
    rid = await asked(tab)
    closed = await tab.expect("ask_user_questions_cancelled")
    assert closed["payload"] == {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "mcp"}

    answers = {"Which database?": "SQLite", "Extras?": ["docs", "a changelog"], "Anything else?": "no"}
    assert result.is_error is False
    assert receipted(result.structured_content) == {
        "requestId": rid, "sessionId": S, "status": "answered", "answers": answers, "answeredBy": "alice", "via": "mcp"
    }
    assert "Which database? → SQLite" in text(result)

    # The form: an enum for options, a list of enums for multiSelect, a string for free text and Other.
    (form,) = host.forms
    props = form.requested_schema["properties"]
    assert props["q1"]["enum"] == ["PostgreSQL", "SQLite"] and props["q1"]["title"] == "Database"
    assert props["q2"] == {**props["q2"], "type": "array", "items": {"type": "string", "enum": ["tests", "docs"]}}
    assert props["q1_other"]["type"] == props["q2_other"]["type"] == props["q3"]["type"] == "string"
    assert "q3_other" not in props and "Which database?" in form.message


async def test_a_decline_in_the_host_declines_and_is_a_result_not_an_error(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    host = Host(types.ElicitResult(action="decline"))
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent"), elicitation=host) as b:
        result = await b.call("ask_user_questions", {"questions": [q("Delete the branch?")]})
    rid = await asked(tab)
    closed = await tab.expect("ask_user_questions_cancelled")
    assert closed["payload"] == {"requestId": rid, "reason": "declined", "answeredBy": "alice", "via": "mcp"}
    assert result.is_error is False
    assert receipted(result.structured_content) == {"requestId": rid, "sessionId": S, "status": "declined", "answeredBy": "alice", "via": "mcp"}
    assert text(result).startswith("alice declined to answer.")


async def test_a_cancel_leaves_it_to_the_page_and_the_host_is_not_asked_again(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    host = Host(types.ElicitResult(action="cancel"))
    async with bridge("--url", daemon.url, "--session", S, "--max-wait", "0.5", token=daemon.token("agent"), elicitation=host) as b:
        first = await b.call("ask_user_questions", {"questions": [q("Deploy now?", "Yes", "No")]})
        rid = await asked(tab)
        assert first.structured_content["status"] == "pending" and len(host.forms) == 1
        # A later call on the same question waits without asking the host again.
        again = await b.call("get_answer", {"requestId": rid, "waitSeconds": 0.2})
        assert again.structured_content["status"] == "pending"
        await tab.answer(S, rid, {"Deploy now?": "No"})
        result = await b.call("get_answer", {"requestId": rid})
    assert receipted(result.structured_content) == {
        "requestId": rid, "sessionId": S, "status": "answered", "answers": {"Deploy now?": "No"}, "answeredBy": "alice", "via": "ws"
    }
    assert len(host.forms) == 1


async def test_a_max_wait_withdraws_the_dialog_and_get_answer_asks_again(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    gate = asyncio.Event()
    host = Host(accept({"q1": "Yes"}), gate)
    async with bridge("--url", daemon.url, "--session", S, "--max-wait", "0.5", token=daemon.token("agent"), elicitation=host) as b:
        first = await b.call("ask_user_questions", {"questions": [q("Deploy now?", "Yes", "No")]})
        rid = await asked(tab)
        assert first.structured_content["status"] == "pending"
        await eventually(lambda: host.withdrawn, what="the dialog withdrawn")
        assert len(host.forms) == 1
        gate.set()  # the person now answers the dialog shown again
        result = await b.call("get_answer", {"requestId": rid})
    assert len(host.forms) == 2
    assert (result.structured_content["status"], result.structured_content["via"]) == ("answered", "mcp")


async def test_a_tab_answer_ends_the_call_while_the_host_dialog_is_open(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    host = Host(accept({"q1": "Yes"}), asyncio.Event())  # the person never gets to the dialog
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent"), elicitation=host) as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Deploy now?", "Yes", "No")]}))
        rid = await asked(tab)
        await asyncio.wait_for(host.shown.wait(), CALL_TIMEOUT)
        await tab.answer(S, rid, {"Deploy now?": "No"})
        result = await asyncio.wait_for(call, CALL_TIMEOUT)
        assert (result.structured_content["answers"], result.structured_content["via"]) == ({"Deploy now?": "No"}, "ws")
        await eventually(lambda: host.withdrawn, what="the dialog withdrawn")


async def test_with_no_elicit_the_host_is_never_asked(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    host = Host(accept({"q1": "Yes"}))
    async with bridge("--url", daemon.url, "--session", S, "--no-elicit", token=daemon.token("agent"), elicitation=host) as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Deploy now?", "Yes", "No")]}))
        rid = await asked(tab)
        await tab.answer(S, rid, {"Deploy now?": "No"})
        result = await asyncio.wait_for(call, CALL_TIMEOUT)
    assert result.structured_content["via"] == "ws" and host.forms == []


async def test_a_host_that_declares_no_elicitation_is_never_asked(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Deploy now?", "Yes", "No")]}))
        rid = await asked(tab)
        await tab.answer(S, rid, {"Deploy now?": "No"})
        result = await asyncio.wait_for(call, CALL_TIMEOUT)
        log = b.log_text()
    assert result.structured_content["via"] == "ws"
    assert "mcp.host_asked" not in log and "mcp.host_ask_failed" not in log


async def test_a_question_asked_of_others_is_not_put_to_the_host(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    bob = await daemon.connect("bob")
    await bob.subscribe("*")
    host = Host(accept({"q1": "Yes"}))
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent"), elicitation=host) as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Deploy now?", "Yes", "No")], "to": ["bob"]}))
        rid = await asked(bob)
        await bob.answer(S, rid, {"Deploy now?": "No"})
        result = await asyncio.wait_for(call, CALL_TIMEOUT)
    assert result.structured_content["answeredBy"] == "bob" and host.forms == []


# ---- InputRequiredResult (2026-07-28: no server requests) --------------------


async def test_input_required_accept_answers_via_mcp(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    host = Host(accept({"q1": "PostgreSQL", "q2": ["tests", "docs"]}))
    async with modern(daemon, host, tmp_path) as client:
        result = await client.call_tool("ask_user_questions", {"questions": QUESTIONS[:2]}, read_timeout_seconds=CALL_TIMEOUT)
    rid = await asked(tab)
    closed = await tab.expect("ask_user_questions_cancelled")
    assert closed["payload"] == {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "mcp"}
    assert receipted(result.structured_content) == {
        "requestId": rid,
        "sessionId": S,
        "status": "answered",
        "answers": {"Which database?": "PostgreSQL", "Extras?": ["tests", "docs"]},
        "answeredBy": "alice",
        "via": "mcp",
    }
    assert len(host.forms) == 1


async def test_input_required_cancel_leaves_it_to_the_page(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    host = Host(types.ElicitResult(action="cancel"))
    async with modern(daemon, host, tmp_path) as client:
        call = asyncio.create_task(
            client.call_tool("ask_user_questions", {"questions": [q("Deploy now?", "Yes", "No")]}, read_timeout_seconds=CALL_TIMEOUT)
        )
        rid = await asked(tab)
        dismissed = lambda: any(e.get("event") == "mcp.host_dismissed" for e in events(tmp_path / "modern.log"))  # noqa: E731
        await eventually(dismissed, CALL_TIMEOUT, what="the cancel heard")
        assert (await daemon.result(S, rid)).json()["status"] == "pending"
        await tab.answer(S, rid, {"Deploy now?": "Yes"})
        result = await asyncio.wait_for(call, CALL_TIMEOUT)
    assert (result.structured_content["status"], result.structured_content["via"]) == ("answered", "ws")
    assert len(host.forms) == 1


async def test_a_slow_host_loses_to_the_tab_and_its_late_accept_changes_nothing(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    host = Host(accept({"q1": "Yes"}), asyncio.Event())
    async with modern(daemon, host, tmp_path) as client:
        call = asyncio.create_task(
            client.call_tool("ask_user_questions", {"questions": [q("Deploy now?", "Yes", "No")]}, read_timeout_seconds=CALL_TIMEOUT)
        )
        rid = await asked(tab)
        await asyncio.wait_for(host.shown.wait(), CALL_TIMEOUT)
        await tab.answer(S, rid, {"Deploy now?": "No"})
        await tab.expect("ask_user_questions_cancelled")
        assert host.gate is not None
        host.gate.set()  # the person accepts in the host after the tab answered
        result = await asyncio.wait_for(call, CALL_TIMEOUT)
    expected = {"requestId": rid, "sessionId": S, "status": "answered", "answers": {"Deploy now?": "No"}, "answeredBy": "alice", "via": "ws"}
    assert receipted(result.structured_content) == expected
    assert receipted((await daemon.result(S, rid)).json()) == expected
    (replied,) = [e for e in events(tmp_path / "modern.log") if e.get("event") == "mcp.host_replied"]
    assert (replied["action"], replied["taken"]) == ("accept", False)
