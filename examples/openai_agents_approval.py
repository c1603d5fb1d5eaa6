"""askd as the approver of an OpenAI Agents SDK agent's tool calls.

Runs offline: the model is a scripted ``Model`` (it asks to deploy, then
says what came of it), so no OpenAI key is needed and tracing is off. What
is real: the SDK pauses the ``needs_approval`` tool with an interruption,
and askd asks you, in your inbox (or Slack, e-mail, your phone), then the
run resumes from its ``RunState`` with your decision.

    pip install 'askd[openai-agents]'
    askd serve &            # then open the inbox it prints, as the user below
    python examples/openai_agents_approval.py --user alice
    python examples/openai_agents_approval.py --user alice --mode deferred

Approve (*Approve always* approves the tool for the rest of the run) and
the tool runs; deny with a reason and the model is told "alice denied it:
<reason>". The SDK runs a call as the model made it, so askd does not offer
to edit it. ``--mode deferred`` stores the paused run as a string, asks,
and resumes from the stored copy, as a process started later would. askd
is found as every askd client finds it (ASKD_URL and ASKD_AGENT_TOKEN, or
the local daemon's state).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from agents import Agent, Model, ModelResponse, RunState, Runner, Usage, function_tool, set_tracing_disabled
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from askd.integrations.openai_agents import AskdApprovals


class ScriptedModel(Model):
    """A stand-in for a real model: first it calls ``deploy``, then it reports what the tool returned."""

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        items = input if isinstance(input, list) else []
        outputs = [item["output"] for item in items if isinstance(item, dict) and item.get("type") == "function_call_output"]
        if outputs:
            text = ResponseOutputText(text=f"deploy: {outputs[-1]}", type="output_text", annotations=[])
            reply = ResponseOutputMessage(id="msg_1", role="assistant", status="completed", type="message", content=[text])
            return ModelResponse(output=[reply], usage=Usage(), response_id=None)
        call = ResponseFunctionToolCall(
            id="fc_deploy", call_id="call_deploy", name="deploy", type="function_call", status="completed",
            arguments=json.dumps({"service": "web", "env": "staging"}),
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model does not stream")


@function_tool(needs_approval=True)
def deploy(service: str, env: str) -> str:
    """Deploy a service to an environment."""
    return f"deployed {service} to {env}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", default="alice", help="whom askd asks")
    parser.add_argument("--session", default="openai-agents-example", help="askd's session for this conversation")
    parser.add_argument("--mode", choices=["inline", "deferred"], default="inline", help="wait in the run, or stop it and resume")
    args = parser.parse_args()
    set_tracing_disabled(True)  # offline: no traces to export

    agent = Agent(name="Release bot", model=ScriptedModel(), tools=[deploy])
    async with AskdApprovals(session=args.session, user=args.user, timeout=600, allow_always=True) as approvals:
        print(f"Asking {args.user} through askd; decide in the inbox.", flush=True)
        if args.mode == "inline":
            result = await approvals.run(agent, "Ship web to staging.")
        else:
            paused = await Runner.run(agent, "Ship web to staging.")
            stored = paused.to_state().to_string()  # keep it anywhere: a file, a database row
            await approvals.ask(paused.to_state())  # returns at once
            # ... later, in this process or another (the same session):
            state = await RunState.from_string(agent, stored)
            ready = await approvals.collect(state, wait=None)
            assert ready is not None  # waited until every call was decided
            result = await Runner.run(agent, ready)
    print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
