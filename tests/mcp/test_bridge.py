"""``askd mcp`` through the ``mcp`` package's client over stdio, against a
live daemon, with a WebSocket tab answering as a person would."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from askd.protocol.models import AskFields
from askd.protocol.results import QuestionResult
from askd.mcp.approval import RequestApprovalArgs
from askd.mcp.tools import schema
from tests.conftest import RunningDaemon, WsClient, eventually, q
from tests.mcp.conftest import BridgeFactory
from tests.receipts.independent import receipted

S = "mcp-test"


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def tab_for(daemon: RunningDaemon, user: str = "alice") -> WsClient:
    tab = await daemon.connect(user)
    await tab.subscribe("*")
    return tab


async def test_lists_both_tools_with_schemas_from_askds_models(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    async with bridge("--url", daemon.url, token=daemon.token("agent")) as b:
        listed = {t.name: t for t in (await b.session.list_tools()).tools}
    assert set(listed) == {"ask_user_questions", "get_answer", "request_approval"}
    ask, get, approve = listed["ask_user_questions"], listed["get_answer"], listed["request_approval"]

    expected = schema(AskFields)
    expected["properties"]["questions"].update(minItems=1, maxItems=20)  # limits.max_questions
    assert ask.input_schema == expected
    assert ask.input_schema["required"] == ["questions"] and ask.input_schema["additionalProperties"] is False
    question = ask.input_schema["properties"]["questions"]["items"]
    assert set(question["properties"]) == {"question", "header", "options", "multiSelect"}
    assert "$ref" not in str(ask.input_schema) and "$defs" not in str(ask.input_schema)

    assert get.input_schema["required"] == ["requestId"]
    assert set(get.input_schema["properties"]) == {"requestId", "waitSeconds"}
    assert approve.input_schema == schema(RequestApprovalArgs) and approve.input_schema["required"] == ["name", "arguments"]
    for tool in (ask, get, approve):
        assert tool.output_schema == schema(QuestionResult)
        assert tool.output_schema["required"] == ["requestId", "sessionId", "status"]
        assert tool.output_schema["properties"]["status"]["enum"] == ["pending", "answered", "timeout", "cancelled", "declined"]
        assert tool.description


async def test_ask_is_answered_from_a_tab_with_progress_while_it_waits(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    progress: list[tuple[float, str | None]] = []
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, message))

        call = asyncio.create_task(
            b.call(
                "ask_user_questions",
                {
                    "questions": [
                        q("Which database?", "PostgreSQL", "SQLite", header="Database", hint="kept"),
                        q("Extras?", "tests", "docs", multi=True),
                    ],
                    "metadata": {"tool": "deploy"},
                    "timeoutSeconds": 60,
                },
                progress_callback=on_progress,
            )
        )
        frame = await tab.expect("ask_user_questions")
        payload = frame["payload"]
        assert frame["sessionId"] == S and payload["metadata"] == {"tool": "deploy"}
        assert payload["questions"][0]["hint"] == "kept"  # unknown fields pass through untouched
        await eventually(lambda: len(progress) >= 2, what="two progress notifications")
        assert progress[1][0] > progress[0][0] and "alice" in (progress[0][1] or "")

        answers = {"Which database?": "SQLite", "Extras?": ["tests", "docs"]}
        ack = await tab.answer(S, payload["requestId"], answers)
        assert ack["payload"] == {"accepted": True}
        result = await asyncio.wait_for(call, 10)

    assert result.is_error is False
    assert receipted(result.structured_content) == {
        "requestId": payload["requestId"],
        "sessionId": S,
        "status": "answered",
        "answers": answers,
        "answeredBy": "alice",
        "via": "ws",
    }
    assert text(result) == "Which database? → SQLite\nExtras? → tests, docs"


async def test_a_question_that_times_out_is_an_error_result(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        result = await b.call("ask_user_questions", {"questions": [q("Deploy now?")], "timeoutSeconds": 0.3})
    assert result.is_error is True
    assert result.structured_content["status"] == "timeout" and result.structured_content["error"]
    assert "did not answer in time" in text(result)


async def test_a_timeout_with_on_timeout_is_the_default_not_an_error(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    arguments = {
        "questions": [q("Deploy now?", "Yes", "No")],
        "timeoutSeconds": 0.3,
        "onTimeout": {"answers": {"Deploy now?": "No"}},
        "maxExtensionSeconds": 60,
    }
    async with bridge("--url", daemon.url, token=daemon.token("agent")) as b:
        result = await b.call("ask_user_questions", arguments)
        bad = await b.call("ask_user_questions", {**arguments, "onTimeout": {"answers": {"Other?": "No"}}})
    assert result.is_error is False
    assert result.structured_content is not None
    assert (result.structured_content["status"], result.structured_content["defaulted"]) == ("timeout", True)
    assert result.structured_content["answers"] == {"Deploy now?": "No"}
    assert "default stands" in text(result) and "Deploy now? → No" in text(result)
    assert bad.is_error is True and "onTimeout.answers" in text(bad)


async def test_a_declined_question_is_a_result_naming_who_and_why(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await daemon.connect("alice")
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Delete the branch?")]}))
        frame = await tab.expect("ask_user_questions")
        await tab.send({"type": "decline", "sessionId": S, "requestId": frame["payload"]["requestId"], "reason": "ask Bob", "id": "d"})
        result = await asyncio.wait_for(call, 10)
    assert result.is_error is False  # the person's reply, not a failure of the tool
    assert result.structured_content is not None
    assert (result.structured_content["status"], result.structured_content["answeredBy"]) == ("declined", "alice")
    assert text(result).startswith("alice declined to answer: ask Bob.")


async def test_max_wait_returns_pending_then_get_answer_returns_the_answer(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    async with bridge("--url", daemon.url, "--session", S, "--max-wait", "0.3", token=daemon.token("agent")) as b:
        first = await b.call("ask_user_questions", {"questions": [q("Which database?", "PostgreSQL", "SQLite")]})
        rid = first.structured_content["requestId"]
        assert first.is_error is False
        expires = first.structured_content["expiresAt"]
        assert first.structured_content == {"requestId": rid, "sessionId": S, "status": "pending", "expiresAt": expires}
        assert "get_answer" in text(first) and rid in text(first)
        assert (await daemon.result(S, rid)).json()["status"] == "pending"  # the question itself is untouched

        again = await b.call("get_answer", {"requestId": rid, "waitSeconds": 0})
        assert again.structured_content["status"] == "pending"

        frame = await tab.expect("ask_user_questions")
        await tab.answer(S, rid, {"Which database?": "PostgreSQL"})
        done = await b.call("get_answer", {"requestId": rid})
    assert done.is_error is False
    assert receipted(done.structured_content) == {
        "requestId": frame["payload"]["requestId"],
        "sessionId": S,
        "status": "answered",
        "answers": {"Which database?": "PostgreSQL"},
        "answeredBy": "alice",
        "via": "ws",
    }
    assert text(done) == "Which database? → PostgreSQL"


async def test_get_answer_waits_for_a_question_of_its_session_with_progress(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    asked = await daemon.ask(S, questions=[q("Ship it?", "yes", "no")])  # e.g. by the bridge before a host restart
    progressed = asyncio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progressed.set()

    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        call = asyncio.create_task(b.call("get_answer", {"requestId": asked["requestId"]}, progress_callback=on_progress))
        await asyncio.wait_for(progressed.wait(), 10)  # still waiting, and saying so
        frame = await tab.expect("ask_user_questions")
        await tab.answer(S, frame["payload"]["requestId"], {"Ship it?": "yes"})
        result = await asyncio.wait_for(call, 10)
    assert receipted(result.structured_content) == {"requestId": asked["requestId"], "sessionId": S, "status": "answered", "answers": {"Ship it?": "yes"}, "answeredBy": "alice", "via": "ws"}
    assert text(result) == "Ship it? → yes"


BAD_ARGUMENTS = [
    ("ask_user_questions", {}, "questions"),
    ("ask_user_questions", {"questions": []}, "questions"),
    ("ask_user_questions", {"questions": "Which database?"}, "questions"),
    ("ask_user_questions", {"questions": [{"question": 42}]}, "questions.0.question"),
    ("ask_user_questions", {"questions": [{"question": "A", "options": [{"label": ""}]}]}, "questions.0.options.0.label"),
    ("ask_user_questions", {"questions": [q(f"Q{i}?") for i in range(21)]}, "questions"),
    ("ask_user_questions", {"questions": [q("A?"), q("A?")]}, "questions"),
    ("ask_user_questions", {"questions": [q("A?")], "timeoutSeconds": "soon"}, "timeoutSeconds"),
    ("ask_user_questions", {"questions": [q("A?")], "timeoutSeconds": -1}, "timeoutSeconds"),
    ("ask_user_questions", {"questions": [q("A?")], "metadata": [1]}, "metadata"),
    ("ask_user_questions", {"questions": [q("A?")], "userId": "mallory"}, "userId"),
    ("get_answer", {}, "requestId"),
    ("get_answer", {"requestId": 7}, "requestId"),
    ("get_answer", {"requestId": "r", "waitSeconds": True}, "waitSeconds"),
]


async def test_bad_arguments_are_tool_errors_naming_the_field_and_the_bridge_keeps_serving(
    daemon: RunningDaemon, bridge: BridgeFactory
) -> None:
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        for tool, arguments, field in BAD_ARGUMENTS:
            result = await b.call(tool, arguments)
            assert result.is_error is True, (tool, arguments)
            assert result.structured_content is None
            message = text(result)
            assert message.startswith(f"Invalid arguments for {tool}: {field}:"), (arguments, message)
            assert "\n" not in message
        with pytest.raises(MCPError, match="Unknown tool"):
            await b.call("ask_everyone", {})

        unknown = await b.call("get_answer", {"requestId": "no-such-request"})
        assert unknown.is_error is True and "does not know question no-such-request" in text(unknown)

        still = await b.call("ask_user_questions", {"questions": [q("Still there?")], "timeoutSeconds": 0.2})
    assert still.structured_content["status"] == "timeout"
    assert await daemon.ask("other", questions=[q("Direct?")])  # nothing bad reached the daemon


async def test_a_retried_call_asks_once_and_a_later_call_asks_anew(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    arguments = {"questions": [q("Proceed?", "yes", "no")]}
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        first = asyncio.create_task(b.call("ask_user_questions", arguments))
        frame = await tab.expect("ask_user_questions")
        rid = frame["payload"]["requestId"]
        # The host gives up on its first call and retries it while the first still waits.
        retry = asyncio.create_task(b.call("ask_user_questions", arguments))
        await eventually(lambda: daemon.daemon.hub.waiters.waiting_on(rid) >= 2, what="both calls waiting")
        await tab.quiet()  # no second question reached the user
        pending = (await daemon.admin("GET", "/admin/v1/pending")).json()
        assert [p["requestId"] for p in pending["pending"]] == [rid]

        await tab.answer(S, rid, {"Proceed?": "yes"})
        results = await asyncio.gather(first, retry)
        assert [r.structured_content["requestId"] for r in results] == [rid, rid]
        assert all(r.structured_content["answers"] == {"Proceed?": "yes"} for r in results)

        # Asking the same once the answer was delivered is a new question, not a replay.
        later = asyncio.create_task(b.call("ask_user_questions", arguments))
        await tab.expect("ask_user_questions_cancelled")  # the first one's end, to every tab
        again = await tab.expect("ask_user_questions")
        assert again["payload"]["requestId"] != rid
        await tab.answer(S, again["payload"]["requestId"], {"Proceed?": "no"})
        assert (await later).structured_content["answers"] == {"Proceed?": "no"}


async def test_a_call_the_host_cancels_withdraws_its_question(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Delete the branch?", "yes", "no")]}))
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        await eventually(lambda: daemon.agent_waiting(rid), what="the bridge waiting")
        call.cancel()  # the SDK's client sends notifications/cancelled for it
        closed = await tab.expect("ask_user_questions_cancelled")
        assert closed["payload"] == {"requestId": rid, "reason": "cancelled"}
        result = (await daemon.result(S, rid)).json()
        assert (result["status"], result["error"]) == ("cancelled", "Withdrawn by agent")

        # The bridge keeps serving, and the same question asked again is a new one.
        again = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Delete the branch?", "yes", "no")]}))
        second = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        assert second != rid
        await tab.answer(S, second, {"Delete the branch?": "no"})
        assert (await again).structured_content["answers"] == {"Delete the branch?": "no"}
    assert '"mcp.withdrawn"' in b.log_text()


async def test_a_bridge_that_stops_leaves_its_question_open(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    """A host that exits closes the bridge's stdin; that is no cancel, so the
    question stays for the user (and a later get_answer)."""
    tab = await tab_for(daemon)
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Still needed?")]}))
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        await eventually(lambda: daemon.agent_waiting(rid), what="the bridge waiting")
    call.cancel()
    assert '"mcp.stopped"' in b.log_text()  # it stopped by itself, not killed
    await tab.quiet(0.5)  # and withdrew nothing
    assert (await daemon.result(S, rid)).json()["status"] == "pending"


async def test_the_tool_asks_a_team_named_in_to(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    await daemon.admin("PUT", "/admin/v1/groups/oncall", json={"members": ["bob"]})
    alice, bob = await tab_for(daemon), await tab_for(daemon, "bob")
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        tools = {t.name: t for t in (await b.session.list_tools()).tools}
        assert {"to", "escalate"} <= set(tools["ask_user_questions"].input_schema["properties"])
        call = asyncio.create_task(b.call("ask_user_questions", {"questions": [q("Deploy?")], "to": ["group:oncall"]}))
        payload = (await bob.expect("ask_user_questions"))["payload"]
        await alice.quiet()  # the bridge's own user is not asked: to names whom
        assert (await bob.answer(S, payload["requestId"], {"Deploy?": "y"}))["payload"] == {"accepted": True}
        result = await asyncio.wait_for(call, 10)
    assert result.structured_content["answers"] == {"Deploy?": "y"}


async def test_the_tool_passes_reminders(daemon: RunningDaemon, bridge: BridgeFactory) -> None:
    tab = await tab_for(daemon)
    async with bridge("--url", daemon.url, "--session", S, token=daemon.token("agent")) as b:
        tools = {t.name: t for t in (await b.session.list_tools()).tools}
        assert "remind" in tools["ask_user_questions"].input_schema["properties"]
        call = asyncio.create_task(
            b.call("ask_user_questions", {"questions": [q("Deploy?")], "remind": {"everySeconds": 300, "times": 2}})
        )
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        req = daemon.daemon.hub.registry.get(S, rid)
        assert req is not None and req.remind == (300.0, 2)
        assert (await tab.answer(S, rid, {"Deploy?": "y"}))["payload"] == {"accepted": True}
        await asyncio.wait_for(call, 10)
