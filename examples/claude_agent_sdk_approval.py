"""askd as the Claude Agent SDK's ``can_use_tool``: a person approves each tool use.

Offline by default: the SDK talks to a scripted stand-in for the Claude Code
CLI (which needs the network and an API key) that asks permission for one
Bash command, exactly as the CLI's control protocol does. ``--live`` drives
the real CLI instead. Either way askd asks you, in your inbox (or Slack,
e-mail, your phone), and the SDK gets your decision in its own types.

    pip install 'askd[claude-agent-sdk]'
    askd serve &            # then open the inbox it prints, as the user below
    python examples/claude_agent_sdk_approval.py --user alice

Approve, edit the command, or choose *Approve always* (Claude Code stops
asking about this tool for the session); deny with a reason and Claude is
told "alice denied it: <reason>". askd is found as every askd client finds
it (ASKD_URL and ASKD_AGENT_TOKEN, or the local daemon's state).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
from claude_agent_sdk._internal.transport import Transport

from askd.integrations.claude_agent_sdk import AskdCanUseTool

BASH_SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


class ScriptedCLI(Transport):
    """Plays the Claude Code CLI's side of the SDK's stream-json protocol:
    answers ``initialize``, reads the prompt, asks ``can_use_tool`` for one
    Bash command, prints the SDK's answer, then ends the turn."""

    def __init__(self) -> None:
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.player: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        self.player = asyncio.create_task(self.play())

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        return None

    async def close(self) -> None:
        if self.player is not None:
            self.player.cancel()
        await self.outbox.put(None)

    async def write(self, data: str) -> None:
        for line in filter(str.strip, data.splitlines()):
            await self.inbox.put(json.loads(line))

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self.outbox.get()) is not None:
            yield message

    async def play(self) -> None:
        init = await self.inbox.get()
        await self.outbox.put({"type": "control_response",
                               "response": {"subtype": "success", "request_id": init["request_id"], "response": {}}})
        await self.inbox.get()  # the prompt
        await self.outbox.put({"type": "control_request", "request_id": "perm-1", "request": {
            "subtype": "can_use_tool", "tool_name": "Bash", "input": {"command": "make deploy ENV=staging"},
            "tool_use_id": "toolu_example_1", "title": "Claude wants to run make deploy ENV=staging"}})
        reply = (await self.inbox.get())["response"].get("response", {})
        print("The SDK answered the CLI:", json.dumps(reply))
        await self.outbox.put({"type": "assistant", "message": {"content": [{"type": "text", "text": "Done."}],
                                                                "model": "scripted"}})
        await self.outbox.put({"type": "result", "subtype": "success", "duration_ms": 1, "duration_api_ms": 1,
                               "is_error": False, "num_turns": 1, "session_id": "example"})


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", default="alice", help="whom askd asks")
    parser.add_argument("--session", default="claude-example", help="askd's session for this agent")
    parser.add_argument("--live", action="store_true", help="drive the real Claude Code CLI (network, API key)")
    args = parser.parse_args()

    can_use_tool = AskdCanUseTool(session=args.session, user=args.user, agent="Claude Code", schemas={"Bash": BASH_SCHEMA})
    options = ClaudeAgentOptions(can_use_tool=can_use_tool)
    transport = None if args.live else ScriptedCLI()
    print(f"Asking {args.user} through askd; decide in the inbox.")
    try:
        async with ClaudeSDKClient(options, transport=transport) as claude:
            await claude.query("Deploy the app to staging with make.")
            async for message in claude.receive_response():
                print(type(message).__name__)
    finally:
        await can_use_tool.aclose()


if __name__ == "__main__":
    asyncio.run(main())
