"""The LangGraph and Claude Agent SDK examples (examples/) run offline as
their docstrings say, against a real daemon, with alice deciding in her tab."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.conftest import RunningDaemon
from tests.integrations.agent_restart import AGENT_START_TIMEOUT
from tests.integrations.reviewer import Reviewer

ROOT = Path(__file__).resolve().parents[2]


async def start(daemon: RunningDaemon, example: str, *args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "ASKD_URL": daemon.url, "ASKD_AGENT_TOKEN": daemon.token("agent")}
    return await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "examples" / example), *args, env=env, cwd=ROOT,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


async def test_the_langgraph_example_deploys_once_approved_and_passes_on_the_answer(daemon: RunningDaemon) -> None:
    reviewer = await Reviewer.open_for(daemon)
    proc = await start(daemon, "langgraph_approval.py", "--user", "alice")
    items = await reviewer.pending(2, timeout=AGENT_START_TIMEOUT)
    approval = next(item for item in items if "action" in item)
    question = next(item for item in items if "questions" in item)
    await reviewer.approve(approval, arguments={"service": "web", "env": "production"})
    await reviewer.answer(question, {"Which region next?": "eu-west-1"})
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert "ask_user: eu-west-1" in text.splitlines()
    assert "deploy: Note: a human reviewer replaced this tool call" in text  # the edit, as the model is told
    assert text.count("deployed web to production") == 1


async def test_the_claude_example_answers_the_cli_with_the_decision(daemon: RunningDaemon) -> None:
    reviewer = await Reviewer.open_for(daemon)
    proc = await start(daemon, "claude_agent_sdk_approval.py", "--user", "alice")
    [item] = await reviewer.pending(timeout=AGENT_START_TIMEOUT)
    assert item["action"]["name"] == "Bash"
    await reviewer.deny(item, "use the pipeline")
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    assert 'The SDK answered the CLI: {"behavior": "deny", "message": "alice denied it: use the pipeline"}' in out.decode()
