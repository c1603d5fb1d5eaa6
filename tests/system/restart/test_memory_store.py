"""``store = memory`` keeps v1's behaviour: a restart loses every question,
and an agent waiting on one learns it (503 or a dropped link, then 404),
never hangs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from askd.client import AsyncAgentClient, QuestionLost, RetryPolicy
from tests.conftest import FRAME_TIMEOUT
from tests.system.restart import HOW, go_down, running

# Retries while askd is down come back within half a second.
RETRY = RetryPolicy(retry_for=30, backoff_cap=0.5)


@pytest.mark.parametrize("how", HOW)
async def test_a_restart_loses_the_question_and_its_waiting_agents_learn_it(how: str, tmp_path: Path) -> None:
    async with running(tmp_path, "--store", "memory") as d:
        svc, http = d.daemon, d.http
        tab = await d.connect("alice")
        await tab.subscribe("*")
        waiting = asyncio.create_task(
            http.post(
                f"{d.url}/v1/sessions/s/questions",
                params={"wait": 30},
                json={"userId": "alice", "questions": [{"question": "Kept?"}]},
                headers=d.agent_headers,
            )
        )
        rid = (await tab.expect("ask_user_questions"))["payload"]["requestId"]  # the POST now waits
        async with AsyncAgentClient(d.url, d.token("agent"), retry=RETRY) as agent:
            library = asyncio.create_task(agent.wait("s", rid))

            await go_down(svc, how)
            if how == "term":
                r = await asyncio.wait_for(waiting, FRAME_TIMEOUT)
                assert r.status_code == 503 and r.json()["error"]["code"] == "shutting_down"
                assert "lost" in r.json()["error"]["message"]
            else:
                with pytest.raises(httpx.TransportError):
                    await asyncio.wait_for(waiting, FRAME_TIMEOUT)

            await svc.start()
            r = await d.result("s", rid)
            assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
            with pytest.raises(QuestionLost):
                await asyncio.wait_for(library, FRAME_TIMEOUT)
