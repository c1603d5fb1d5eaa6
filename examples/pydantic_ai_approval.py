"""askd as the approver of a Pydantic AI agent's tool calls.

Runs offline: the model is scripted (Pydantic AI's ``FunctionModel``: it
asks to deploy, then says what came of it), so no model provider is
needed. What is real: Pydantic AI defers the ``requires_approval`` tool,
and askd asks you, in your inbox (or Slack, e-mail, your phone), then the
run goes on with your decision.

    pip install 'askd[pydantic-ai]'
    askd serve &            # then open the inbox it prints, as the user below
    python examples/pydantic_ai_approval.py --user alice
    python examples/pydantic_ai_approval.py --user alice --mode deferred

Approve (or edit the arguments) and the tool runs with what you approved;
deny with a reason and the model is told "alice denied it: <reason>".
``--mode deferred`` ends the run with the pending call, asks, and resumes
a new run with the decision, as a process started later would. askd is
found as every askd client finds it (ASKD_URL and ASKD_AGENT_TOKEN, or the
local daemon's state).
"""

from __future__ import annotations

import argparse
import asyncio

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests

from askd.integrations.pydantic_ai import AskdApprovals


def scripted_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A stand-in for a real model: first it calls ``deploy``, then it reports what the tool returned."""
    last = messages[-1]
    returned = [part for part in last.parts if isinstance(part, ToolReturnPart)] if isinstance(last, ModelRequest) else []
    if returned:
        return ModelResponse(parts=[TextPart(f"{part.tool_name}: {part.content}") for part in returned])
    return ModelResponse(parts=[ToolCallPart("deploy", {"service": "web", "env": "staging"}, tool_call_id="call_deploy")])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", default="alice", help="whom askd asks")
    parser.add_argument("--session", default="pydantic-ai-example", help="askd's session for this conversation")
    parser.add_argument("--mode", choices=["inline", "deferred"], default="inline", help="wait in the run, or end it and resume")
    args = parser.parse_args()

    async with AskdApprovals(session=args.session, user=args.user, timeout=600) as approvals:
        capabilities = [approvals.capability()] if args.mode == "inline" else []
        agent = Agent(
            FunctionModel(scripted_model), name="Release bot", output_type=[str, DeferredToolRequests], capabilities=capabilities
        )

        @agent.tool_plain(requires_approval=True)
        def deploy(service: str, env: str) -> str:
            """Deploy a service to an environment."""
            return f"deployed {service} to {env}"

        print(f"Asking {args.user} through askd; decide in the inbox.", flush=True)
        result = await agent.run("Ship web to staging.")
        if isinstance(result.output, DeferredToolRequests):
            await approvals.ask(result.output, agent)  # returns at once; the run has ended
            # ... later, in this process or another (the same session):
            decided = await approvals.collect(result.output, agent, wait=None)
            assert decided is not None  # waited until every call was decided
            result = await agent.run(message_history=result.all_messages(), deferred_tool_results=decided)
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main())
