"""An agent process for the restart test: runs the scripted OpenAI Agents
SDK agent inline against the askd that ``ASKD_URL`` and
``ASKD_AGENT_TOKEN`` name, printing the final output. Usage: SESSION LOG_FILE."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from askd.integrations.openai_agents import AskdApprovals
from tests.integrations.scripted_openai_agents import deployer


async def main(session: str, log: Path) -> None:
    agent = deployer([[("deploy", {"env": "staging", "replicas": 1}, "call_1")]], [], log)
    async with AskdApprovals(session=session, user="alice") as approvals:
        result = await approvals.run(agent, "Ship it")
    print(result.final_output, flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
