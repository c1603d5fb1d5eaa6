"""Agents ride through a clean restart (issue #10): ``AgentClient`` (in a
thread), ``AsyncAgentClient`` and ``askd ask`` are each blocked waiting
when askd gets SIGTERM; a new process starts on the same port; a tab
answers; each returns that answer. A raw agent waiting at the stop reads
the 503 that says its question is kept."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from askd.client import AgentClient, AsyncAgentClient, RetryPolicy
from tests.support.askd_process import ASKD, START_TIMEOUT
from tests.conftest import FRAME_TIMEOUT, WsClient, q
from tests.system.restart import running

# Bounded, so a failing test ends; short backoff, so the clients come back
# soon after the restart (askd ask keeps its defaults).
RETRY = RetryPolicy(retry_for=20, backoff_cap=0.5)


async def answer(tab: WsClient, session: str, rid: str, answers: dict[str, Any]) -> None:
    """Answer and read up to its ack (other tabs' events may come first)."""
    await tab.send({"type": "ask_user_questions_result", "sessionId": session, "requestId": rid, "answers": answers, "id": rid})
    while (frame := await tab.recv())["type"] != "ack" or frame.get("id") != rid:
        pass
    assert frame["payload"] == {"accepted": True}, frame


async def reap(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.kill()
        await proc.wait()


async def test_waiting_agents_return_the_answer_given_after_a_restart(tmp_path: Path) -> None:
    async with AsyncExitStack() as stack:
        d = await stack.enter_async_context(running(tmp_path))
        svc, http = d.daemon, d.http
        sync_agent = stack.enter_context(AgentClient(d.url, d.token("agent"), retry=RETRY))
        async_agent = await stack.enter_async_context(AsyncAgentClient(d.url, d.token("agent"), retry=RETRY))
        tab = await d.connect("alice")
        await tab.subscribe("*")

        waiters = {
            "sync": asyncio.create_task(asyncio.to_thread(sync_agent.ask, "sync", "alice", [q("sync?")])),
            "async": asyncio.create_task(async_agent.ask("async", "alice", [q("async?")])),
            "raw": asyncio.create_task(
                http.post(
                    f"{d.url}/v1/sessions/raw/questions",
                    params={"wait": 30},
                    json={"userId": "alice", "questions": [q("raw?")]},
                    headers=d.agent_headers,
                )
            ),
        }
        cli = await asyncio.create_subprocess_exec(
            *ASKD, "ask", "--user", "alice", "--session", "cli", "--question", "cli?",
            env=svc.env,  # finds askd through askd.json and the secret, like a user's shell
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        stack.push_async_callback(reap, cli)
        # Each asks with ?wait=: once its question is pushed, it waits.
        asked = {}
        for _ in range(4):
            frame = await tab.expect("ask_user_questions", timeout=START_TIMEOUT)
            asked[frame["sessionId"]] = frame["payload"]["requestId"]

        assert await svc.stop() == 0
        r = await asyncio.wait_for(waiters.pop("raw"), FRAME_TIMEOUT)
        assert r.status_code == 503, r.text
        error = r.json()["error"]
        assert error["code"] == "shutting_down"
        assert "the question is kept" in error["message"]
        # The exact call to make, never "ask again" (a second POST would ask twice).
        assert f"GET /v1/sessions/raw/questions/{asked['raw']}?wait=300 for its result" in error["message"]

        await svc.start()
        tab = await d.connect("alice")
        frames = await tab.subscribe("*")
        assert {f["sessionId"]: f["payload"]["requestId"] for f in frames if f["type"] == "ask_user_questions"} == asked
        for session, rid in asked.items():
            await answer(tab, session, rid, {f"{session}?": f"{session}, after the restart"})

        results = await asyncio.wait_for(asyncio.gather(waiters["sync"], waiters["async"]), 30)
        for session, result in zip(("sync", "async"), results):
            assert (result.request_id, result.status.value) == (asked[session], "answered")
            assert result.answers == {f"{session}?": f"{session}, after the restart"}
        out, err = await asyncio.wait_for(cli.communicate(), 30)
        assert (cli.returncode, out.decode()) == (0, "cli, after the restart\n"), err.decode()
