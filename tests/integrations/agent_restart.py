"""An agent process killed while it waits on a person, and started again:
the check every adapter's restart test shares."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.conftest import RunningDaemon, eventually
from tests.integrations.person import Person

REPO = Path(__file__).resolve().parents[2]  # where `python -m tests...` finds the agent processes
# A cold interpreter importing a framework (openai-agents loads the whole
# OpenAI client) took 17 s on the shared two-core machine under load.
AGENT_START_TIMEOUT = 90.0


async def killed_mid_wait_then_approved(daemon: RunningDaemon, person: Person, module: str, log: Path) -> str:
    """Run ``python -m module s1 LOG`` (an agent asking inline), kill it once it
    waits on its question, start it again, and once the new process waits on
    the same question (nothing new pushed or pending), approve it. Returns
    what the second process printed; it must exit 0."""
    env = {**os.environ, "ASKD_URL": daemon.url, "ASKD_AGENT_TOKEN": daemon.token("agent")}

    async def start() -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, "s1", str(log), env=env, cwd=REPO, stdout=asyncio.subprocess.PIPE
        )

    first = await start()
    asked = await person.next_approval(AGENT_START_TIMEOUT)
    rid = asked["requestId"]
    await eventually(lambda: daemon.agent_waiting(rid), what="the agent waiting")
    first.kill()
    await first.wait()
    await eventually(lambda: not daemon.agent_waiting(rid), what="the killed agent's wait to end")
    second = await start()
    try:
        await eventually(
            lambda: daemon.agent_waiting(rid), AGENT_START_TIMEOUT, what="the restarted agent waiting on the same question"
        )
        await person.tab.quiet()  # nothing new was asked
        pending = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
        assert [item["requestId"] for item in pending] == [rid]
        await person.approve(asked)
        out, _ = await asyncio.wait_for(second.communicate(), 30)
    finally:
        if second.returncode is None:
            second.kill()
            await second.wait()
    assert second.returncode == 0
    return out.decode().strip()
