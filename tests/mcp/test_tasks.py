"""MCP Tasks on ``askd mcp`` (protocol section 22), over stdio against a
live daemon: a host of the 2026-07-28 protocol written as plain JSON-RPC
(``tests.mcp.wire``), a WebSocket tab playing the person."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict

from askd import state, tokens
from tests.support.askd_process import Service
from tests.conftest import RunningDaemon, WsClient, q
from tests.mcp.conftest import ASKD, CALL_TIMEOUT
from tests.mcp.wire import TASKS, Host, caps, host
from tests.receipts.independent import receipted

S = "mcp-tasks"
ASK = {"questions": [q("Which database?", "PostgreSQL", "SQLite")], "timeoutSeconds": 600}


async def tab_for(daemon: RunningDaemon, user: str = "alice") -> WsClient:
    tab = await daemon.connect(user)
    await tab.subscribe("*")
    return tab


def seconds(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


async def created(h: Host, tool: str = "ask_user_questions", arguments: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    task = await h.call(tool, ASK if arguments is None else arguments, **kw)
    assert task["resultType"] == "task" and task["status"] == "working", task
    return task


async def test_a_task_is_created_polled_answered_in_a_tab_and_completed(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    async with host(tmp_path, daemon.url, daemon.token("agent"), "--session", S) as h:
        discovered = await h.result("server/discover")
        assert discovered["capabilities"]["extensions"][TASKS] == {}
        task = await created(h)
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        assert set(task) >= {"taskId", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
        # ttlMs from creation covers the question's time left (600 s) and more.
        assert task["ttlMs"] >= 600_000 and task["pollIntervalMs"] > 0

        working = await h.get(task["taskId"])
        assert working["resultType"] == "complete" and working["status"] == "working"
        assert working["statusMessage"].startswith("Waiting for alice to answer (") and "min" in working["statusMessage"]
        assert "inputRequests" not in working  # the host declared no form elicitation

        await tab.answer(S, rid, {"Which database?": "SQLite"})
        done = await h.until(task["taskId"], "completed")
    result = done["result"]
    assert result["isError"] is False
    assert result["content"] == [{"type": "text", "text": "Which database? → SQLite"}]
    assert receipted(result["structuredContent"]) == {
        "requestId": rid, "sessionId": S, "status": "answered", "answers": {"Which database?": "SQLite"}, "answeredBy": "alice", "via": "ws"
    }
    assert seconds(done["lastUpdatedAt"]) >= seconds(done["createdAt"])


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("ask_user_questions", {"questions": [q("Deploy now?")], "timeoutSeconds": 0.3}),
        ("request_approval", {"name": "deploy", "arguments": {"env": "prod"}, "timeoutSeconds": 0.3}),
    ],
    ids=["question", "approval"],
)
async def test_a_timeout_completes_with_the_blocking_calls_error_result(
    daemon: RunningDaemon, tmp_path: Path, tool: str, arguments: dict[str, Any]
) -> None:
    async with host(tmp_path, daemon.url, daemon.token("agent"), "--session", S) as h:
        blocking = await h.call(tool, arguments, declare=caps(tasks=False))  # served exactly as before
        assert "resultType" not in blocking or blocking["resultType"] == "complete"
        task = await created(h, tool, {**arguments, "timeoutSeconds": 0.31})  # another question, not the same key
        done = await h.until(task["taskId"], "completed")
    assert done["result"]["isError"] is True is blocking["isError"]
    assert done["result"]["content"] == blocking["content"]
    assert done["result"]["structuredContent"]["status"] == blocking["structuredContent"]["status"] == "timeout"


async def test_a_decline_completes_and_is_not_an_error(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    async with host(tmp_path, daemon.url, daemon.token("agent"), "--session", S) as h:
        task = await created(h)
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        await tab.send({"type": "decline", "id": "d", "sessionId": S, "requestId": rid, "reason": "not mine"})
        done = await h.until(task["taskId"], "completed")
    assert done["result"]["isError"] is False
    assert done["result"]["structuredContent"]["status"] == "declined"
    assert done["result"]["content"][0]["text"].startswith("alice declined to answer: not mine.")


async def test_cancel_withdraws_the_question_and_the_tab_closes_it(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    async with host(tmp_path, daemon.url, daemon.token("agent"), "--session", S) as h:
        task = await created(h)
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        ack = await h.result("tasks/cancel", {"taskId": task["taskId"]})
        assert ack["resultType"] == "complete" and set(ack) <= {"resultType", "_meta"}
        closed = await tab.expect("ask_user_questions_cancelled")
        assert closed["payload"] == {"requestId": rid, "reason": "cancelled"}
        cancelled = await h.get(task["taskId"])
        assert cancelled["status"] == "cancelled" and "result" not in cancelled
        assert "Withdrawn by agent" in cancelled["statusMessage"]
        # A cancel of a task that has ended changes nothing and is acknowledged.
        assert "result" in await h.request("tasks/cancel", {"taskId": task["taskId"]})
    assert (await daemon.result(S, rid)).json()["error"] == "Withdrawn by agent"


async def test_a_new_bridge_process_finds_the_task(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    token = daemon.token("agent")
    async with host(tmp_path, daemon.url, token, "--session", S, name="first") as first:
        task = await created(first)
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        first.proc.kill()  # the host and its bridge die
    # Another session of its own: the task id names the question's.
    async with host(tmp_path, daemon.url, token, "--session", "another", name="second") as second:
        working = await second.get(task["taskId"])
        assert working["status"] == "working" and "alice" in working["statusMessage"]
        await tab.answer(S, rid, {"Which database?": "PostgreSQL"})
        done = await second.until(task["taskId"], "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "Which database? → PostgreSQL"}]
    assert done["result"]["structuredContent"]["requestId"] == rid


async def subscribed_tab(served: Service, user: str = "alice") -> WsClient:
    import websockets

    secret = state.read_secret(served.state_dir)
    assert secret is not None
    conn = await websockets.connect(
        f"ws://127.0.0.1:{served.port}/ws", additional_headers={"Authorization": f"Bearer {tokens.issue(secret, 'user', user)}"}
    )
    tab = WsClient(conn)
    await tab.subscribe("*")
    return tab


async def test_a_task_outlives_a_restart_of_askd_on_sqlite(tmp_path: Path) -> None:
    served = Service(tmp_path / "state")  # the default store: SQLite in the state directory
    try:
        first = await served.start()
        tab = await subscribed_tab(served)
        # No --url, no token: found and minted from askd.json and the state directory, as on a user's machine.
        async with host(tmp_path, None, None, "--session", S) as h:
            task = await created(h)
            rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
            await tab.close()
            await first.kill()  # kill -9
            down = await h.error("tasks/get", {"taskId": task["taskId"]})
            assert down["code"] == -32603 and "poll again" in down["message"]
            await served.start()
            assert (await h.get(task["taskId"]))["status"] == "working"
            tab = await subscribed_tab(served)
            await tab.answer(S, rid, {"Which database?": "SQLite"})
            done = await h.until(task["taskId"], "completed")
            await tab.close()
        assert done["result"]["structuredContent"]["answers"] == {"Which database?": "SQLite"}
    finally:
        await served.close()


async def test_another_agent_tokens_task_is_not_found(daemon: RunningDaemon, tmp_path: Path) -> None:
    async with host(tmp_path, daemon.url, daemon.token("agent", "agent-one"), "--session", S, name="one") as one:
        task = await created(one)
        async with host(tmp_path, daemon.url, daemon.token("agent", "agent-two"), name="two") as two:
            for method in ("tasks/get", "tasks/cancel"):
                error = await two.error(method, {"taskId": task["taskId"]})
                assert error["code"] == -32602 and "not found" in error["message"].lower()
            error = await two.error("tasks/update", {"taskId": task["taskId"], "inputResponses": {}})
            assert error["code"] == -32602
        assert (await one.get(task["taskId"]))["status"] == "working"  # untouched


async def test_unknown_methods_and_bad_input_are_clear_jsonrpc_errors(daemon: RunningDaemon, tmp_path: Path) -> None:
    async with host(tmp_path, daemon.url, daemon.token("agent"), "--session", S) as h:
        task = await created(h)
        for method in ("tasks/result", "tasks/list"):
            assert (await h.error(method, {"taskId": task["taskId"]}))["code"] == -32601
        undeclared = await h.error("tasks/get", {"taskId": task["taskId"]}, declare=caps(tasks=False))
        assert undeclared["code"] == -32021
        assert undeclared["data"]["requiredCapabilities"] == {"extensions": {TASKS: {}}}
        for params in ({}, {"taskId": 7}, {"taskId": ""}, {"taskId": "x" * 5000}):
            assert (await h.error("tasks/get", params))["code"] == -32602, params
        for forged in ("nope", "askd1.!!!", "askd1.e30", task["taskId"] + "x"):
            error = await h.error("tasks/get", {"taskId": forged})
            assert error["code"] == -32602 and "not found" in error["message"].lower(), forged
        assert (await h.error("tasks/update", {"taskId": task["taskId"]}))["code"] == -32602  # inputResponses missing
        assert (await h.error("tasks/update", {"taskId": task["taskId"], "inputResponses": []}))["code"] == -32602
        listen = await h.error("subscriptions/listen", {"notifications": {"taskIds": task["taskId"]}})  # not a list
        assert listen["code"] == -32602 and "taskIds" in listen["message"]
        # Bad tool arguments: no task, the blocking call's own error result.
        bad = await h.call("ask_user_questions", {"questions": []})
        assert bad["isError"] is True and "Invalid arguments for ask_user_questions" in bad["content"][0]["text"]
        # get_answer stays a plain call.
        plain = await h.call("get_answer", {"requestId": "nope", "waitSeconds": 0})
        assert plain["isError"] is True and "resultType" in plain and plain["resultType"] == "complete"


async def test_input_required_and_an_answer_through_tasks_update(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    declare = caps(form=True)
    async with host(tmp_path, daemon.url, daemon.token("agent"), "--session", S) as h:
        task = await created(h, declare=declare)
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        asking = await h.get(task["taskId"], declare=declare)
        assert asking["status"] == "input_required"
        (key,) = asking["inputRequests"]
        form = asking["inputRequests"][key]
        assert form["method"] == "elicitation/create" and form["params"]["message"] == "Which database?"
        assert form["params"]["requestedSchema"]["properties"]["q1"]["enum"] == ["PostgreSQL", "SQLite"]
        # A poll that does not take forms sees it working.
        assert (await h.get(task["taskId"]))["status"] == "working"

        reply = {key: {"action": "accept", "content": {"q1": "PostgreSQL"}}}
        ack = await h.result("tasks/update", {"taskId": task["taskId"], "inputResponses": reply}, declare=declare)
        assert ack["resultType"] == "complete"
        closed = await tab.expect("ask_user_questions_cancelled")
        assert closed["payload"] == {"requestId": rid, "reason": "answered", "answeredBy": "alice", "via": "mcp"}
        done = await h.until(task["taskId"], "completed", declare=declare)
        # The same key again is no longer outstanding: ignored, acknowledged.
        assert "result" in await h.request("tasks/update", {"taskId": task["taskId"], "inputResponses": reply}, declare=declare)
    assert done["result"]["structuredContent"]["via"] == "mcp"
    assert done["result"]["structuredContent"]["answers"] == {"Which database?": "PostgreSQL"}


async def test_a_tab_answer_wins_over_a_later_tasks_update(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    declare = caps(form=True)
    async with host(tmp_path, daemon.url, daemon.token("agent"), "--session", S) as h:
        task = await created(h, declare=declare)
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        asking = await h.until(task["taskId"], "input_required", declare=declare)
        await tab.answer(S, rid, {"Which database?": "SQLite"})
        await tab.expect("ask_user_questions_cancelled")
        (key,) = asking["inputRequests"]
        late = {key: {"action": "accept", "content": {"q1": "PostgreSQL"}}}
        ack = await h.request("tasks/update", {"taskId": task["taskId"], "inputResponses": late}, declare=declare)
        assert "result" in ack  # acknowledged; askd refuses it (not_pending), the tab's answer stands
        done = await h.until(task["taskId"], "completed", declare=declare)
    ended = done["result"]["structuredContent"]
    assert (ended["answers"], ended["via"]) == ({"Which database?": "SQLite"}, "ws")
    assert (await daemon.result(S, rid)).json()["via"] == "ws"


async def test_a_bad_input_response_is_invalid_params(daemon: RunningDaemon, tmp_path: Path) -> None:
    declare = caps(form=True)
    async with host(tmp_path, daemon.url, daemon.token("agent"), "--session", S) as h:
        task = await created(h, declare=declare)
        asking = await h.until(task["taskId"], "input_required", declare=declare)
        (key,) = asking["inputRequests"]
        error = await h.error("tasks/update", {"taskId": task["taskId"], "inputResponses": {key: {"action": "maybe"}}}, declare=declare)
        assert error["code"] == -32602 and "elicitation result" in error["message"]
        assert (await h.get(task["taskId"], declare=declare))["status"] == "input_required"  # still asked


async def test_notifications_tell_a_listening_host_each_change(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    async with host(tmp_path, daemon.url, daemon.token("agent"), "--session", S) as h:
        task = await created(h)
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
        undeclared = await h.error("subscriptions/listen", {"notifications": {"taskIds": [task["taskId"]]}}, declare=caps(tasks=False))
        assert undeclared["code"] == -32021
        listen_id, _ = h.send("subscriptions/listen", {"notifications": {"taskIds": [task["taskId"], "askd1.unknown"]}})
        ack = await h.note(lambda n: n["method"] == "notifications/subscriptions/acknowledged")
        assert ack["params"]["notifications"] == {"taskIds": [task["taskId"]]}
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id
        working = await h.note(lambda n: n["method"] == "notifications/tasks" and n["params"]["status"] == "working")
        assert working["params"]["taskId"] == task["taskId"]
        await tab.answer(S, rid, {"Which database?": "SQLite"})
        done = await h.note(lambda n: n["method"] == "notifications/tasks" and n["params"]["status"] == "completed")
    assert done["params"]["result"]["content"] == [{"type": "text", "text": "Which database? → SQLite"}]
    assert done["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id


# ---- the mcp package's own client, resolving the task through a claim ----------


class CreatedTask(Result):
    """The ``CreateTaskResult`` as the client's claim reads it."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str


class PolledTask(Result):
    model_config = ConfigDict(extra="allow")
    status: str
    result: dict[str, Any] | None = None


class GetTaskParams(RequestParams):
    task_id: str


class GetTask(Request[GetTaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: GetTaskParams
    name_param = "taskId"


class TasksClient(ClientExtension):
    """The client side of the extension, as the SDK lets a host add it: a
    claim on ``resultType`` ``task`` that polls ``tasks/get`` to the end."""

    identifier = TASKS

    def __init__(self) -> None:
        self.created: list[CreatedTask] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, task: CreatedTask, ctx: ClaimContext) -> CallToolResult:
        self.created.append(task)
        while True:
            polled = await ctx.session.send_request(GetTask(params=GetTaskParams(task_id=task.task_id)), PolledTask)
            if polled.status == "completed":
                return CallToolResult.model_validate(polled.result)
            assert polled.status == "working", polled
            await asyncio.sleep(0.05)


async def test_the_mcp_packages_client_resolves_a_task_to_the_calls_result(daemon: RunningDaemon, tmp_path: Path) -> None:
    tab = await tab_for(daemon)
    params = StdioServerParameters(
        command=ASKD[0],
        args=[*ASKD[1:], "mcp", "--user", "alice", "--session", S, "--url", daemon.url],
        env={"ASKD_STATE_DIR": str(tmp_path / "state"), "ASKD_AGENT_TOKEN": daemon.token("agent")},
    )
    tasks = TasksClient()
    with (tmp_path / "sdk.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="2026-07-28", extensions=[tasks]) as client:
            await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT)
            call = asyncio.create_task(client.call_tool("ask_user_questions", ASK, read_timeout_seconds=CALL_TIMEOUT))
            rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]
            await tab.answer(S, rid, {"Which database?": "SQLite"})
            result = await asyncio.wait_for(call, CALL_TIMEOUT)
    (task,) = tasks.created
    assert task.status == "working"
    assert result.is_error is False and result.content[0].text == "Which database? → SQLite"  # type: ignore[union-attr]
    assert result.structured_content is not None and result.structured_content["requestId"] == rid
