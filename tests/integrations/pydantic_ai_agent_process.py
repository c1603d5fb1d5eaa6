"""An agent process for the restart test: runs the scripted Pydantic AI
agent inline against the askd that ``ASKD_URL`` and ``ASKD_AGENT_TOKEN``
name, printing the run's output. Usage: SESSION LOG_FILE."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from askd.integrations.pydantic_ai import AskdApprovals
from tests.integrations.scripted_pydantic_ai import deployer


async def main(session: str, log: Path) -> None:
    async with AskdApprovals(session=session, user="alice") as approvals:
        agent = deployer([("deploy", {"env": "staging"}, "call_1")], [], [approvals.capability()], log)
        result = await agent.run("Ship it")
    print(result.output, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
