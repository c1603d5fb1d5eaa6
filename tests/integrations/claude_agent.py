"""A Claude Agent SDK agent in its own process, for the test that kills it
while it waits: ``python -m tests.integrations.claude_agent SESSION LOG`` runs the
SDK's ``ClaudeSDKClient`` against the scripted CLI, one ``Bash`` tool use
(``toolu_restart``) gated by ``AskdCanUseTool``; started again, the CLI asks
about the same tool use (as a resumed session does). It prints the SDK's
reply to the CLI as JSON at the end. askd is found as every client finds it."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

from askd.integrations.claude_agent_sdk import AskdCanUseTool
from tests.integrations.claude_cli_scripted import ScriptedCLI


async def main(session: str, log: Path) -> None:
    cli = ScriptedCLI([("Bash", {"command": "make deploy"}, "toolu_restart")], log)
    can_use_tool = AskdCanUseTool(session=session, user="alice")
    try:
        async with ClaudeSDKClient(ClaudeAgentOptions(can_use_tool=can_use_tool), transport=cli) as client:
            await client.query("deploy")
            async for _ in client.receive_response():
                pass
    finally:
        await can_use_tool.aclose()
    print(json.dumps(cli.replies["toolu_restart"]["response"]), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
