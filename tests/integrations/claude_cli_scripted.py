"""The Claude Code CLI's side of the Claude Agent SDK's control protocol,
scripted: the SDK (``ClaudeSDKClient`` with a custom ``Transport``) talks to
it exactly as to the real CLI, which needs the network and is not run here.

The script answers the SDK's ``initialize``, reads the prompt, then sends
every tool use of the turn as a ``can_use_tool`` control request at once
(as the CLI does for parallel tool calls) and reads the SDK's replies: an
allowed tool "runs" (a line in ``ran`` with the input it ran with), a denied
one does not. Then one assistant message and the result."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from claude_agent_sdk._internal.transport import Transport

ToolUse = tuple[str, dict[str, Any], str]  # tool name, input, tool_use_id


class ScriptedCLI(Transport):
    def __init__(self, tool_uses: Sequence[ToolUse], ran: Path, *, suggest: bool = True, agent_id: str | None = None) -> None:
        self.tool_uses, self.ran = list(tool_uses), ran
        self.suggest, self.agent_id = suggest, agent_id  # what each request carries: the CLI's "always" suggestion, a sub-agent
        self.replies: dict[str, dict[str, Any]] = {}  # tool_use_id -> the SDK's control response
        self._from_sdk: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._to_sdk: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._player: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        self._player = asyncio.create_task(self._play())

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        return None

    async def close(self) -> None:
        if self._player is not None:
            self._player.cancel()
        await self._to_sdk.put(None)

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            if line.strip():
                await self._from_sdk.put(json.loads(line))

    async def read_messages(self) -> AsyncIterator[dict[str, Any]]:
        while (message := await self._to_sdk.get()) is not None:
            yield message

    async def _play(self) -> None:
        init = await self._from_sdk.get()
        assert init["request"]["subtype"] == "initialize", init
        await self._to_sdk.put(
            {"type": "control_response", "response": {"subtype": "success", "request_id": init["request_id"], "response": {}}}
        )
        prompt = await self._from_sdk.get()
        assert prompt["type"] == "user", prompt
        by_request = {}
        for n, (name, tool_input, tool_use_id) in enumerate(self.tool_uses):
            request_id = f"perm-{n}"
            by_request[request_id] = (name, tool_input, tool_use_id)
            request: dict[str, Any] = {"subtype": "can_use_tool", "tool_name": name, "input": tool_input,
                                       "tool_use_id": tool_use_id}
            if self.suggest:
                request["permission_suggestions"] = [
                    {"type": "addRules", "rules": [{"toolName": name, "ruleContent": "make deploy:*"}], "behavior": "allow",
                     "destination": "localSettings"}
                ]
            if self.agent_id:
                request["agent_id"] = self.agent_id
            await self._to_sdk.put({"type": "control_request", "request_id": request_id, "request": request})
        while len(self.replies) < len(by_request):
            reply = (await self._from_sdk.get())["response"]
            name, tool_input, tool_use_id = by_request[reply["request_id"]]
            self.replies[tool_use_id] = reply
            allowed = reply.get("response", {})
            if allowed.get("behavior") == "allow":
                with self.ran.open("a") as f:
                    f.write(json.dumps([name, allowed["updatedInput"]]) + "\n")
        await self._to_sdk.put({"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}], "model": "scripted"}})
        await self._to_sdk.put(
            {"type": "result", "subtype": "success", "duration_ms": 1, "duration_api_ms": 1, "is_error": False,
             "num_turns": 1, "session_id": "scripted"}
        )
