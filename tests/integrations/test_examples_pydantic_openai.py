"""The Pydantic AI and OpenAI Agents SDK examples (examples/) run offline as
their docstrings say, inline and deferred, against a real daemon, with
alice deciding in her tab."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import RunningDaemon
from tests.integrations.agent_restart import AGENT_START_TIMEOUT
from tests.integrations.person import Person

ROOT = Path(__file__).resolve().parents[2]


async def run_example(daemon: RunningDaemon, example: str, mode: str, decide: str) -> tuple[dict[str, object], str]:
    """Run ``examples/EXAMPLE --mode MODE``; alice approves (``approve``) or
    denies its one call. Returns what was asked and what the example printed."""
    person = await Person.open(daemon)
    env = {**os.environ, "ASKD_URL": daemon.url, "ASKD_AGENT_TOKEN": daemon.token("agent")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "examples" / example), "--user", "alice", "--mode", mode, env=env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    try:
        asked = await person.next_approval(AGENT_START_TIMEOUT)
        if decide == "approve":
            await person.approve(asked)
        else:
            await person.deny(asked, "use the pipeline")
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    return asked, out.decode()


@pytest.mark.parametrize("mode", ["inline", "deferred"])
async def test_the_pydantic_ai_example_deploys_once_approved(daemon: RunningDaemon, mode: str) -> None:
    asked, out = await run_example(daemon, "pydantic_ai_approval.py", mode, "approve")
    assert asked["action"]["name"] == "deploy" and "**Release bot**" in asked["action"]["summary"]  # type: ignore[index]
    assert out.splitlines()[-1] == "deploy: deployed web to staging"


async def test_the_pydantic_ai_example_tells_the_model_of_a_denial(daemon: RunningDaemon) -> None:
    _, out = await run_example(daemon, "pydantic_ai_approval.py", "inline", "deny")
    assert out.splitlines()[-1] == "deploy: alice denied it: use the pipeline"


@pytest.mark.parametrize("mode", ["inline", "deferred"])
async def test_the_openai_agents_example_deploys_once_approved(daemon: RunningDaemon, mode: str) -> None:
    asked, out = await run_example(daemon, "openai_agents_approval.py", mode, "approve")
    assert asked["action"]["name"] == "deploy" and asked["action"]["allowAlways"] is True  # type: ignore[index]
    assert out.splitlines()[-1] == "deploy: deployed web to staging"


async def test_the_openai_agents_example_tells_the_model_of_a_denial(daemon: RunningDaemon) -> None:
    _, out = await run_example(daemon, "openai_agents_approval.py", "deferred", "deny")
    assert out.splitlines()[-1] == "deploy: alice denied it: use the pipeline"
