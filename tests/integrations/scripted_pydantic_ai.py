"""A Pydantic AI agent driven by a scripted model (``FunctionModel``): its
first reply calls the tools given, its next reports what the tools
returned, denials included. The tools append to ``ran`` (and to a file,
for a test whose agent is another process)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import DeferredToolRequests


def scripted(calls: Sequence[tuple[str, dict[str, Any], str]]) -> FunctionModel:
    """``calls``: (tool name, arguments, tool call id) the model makes at once."""

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returned = [part for part in last.parts if isinstance(part, ToolReturnPart)] if isinstance(last, ModelRequest) else []
        if returned:
            return ModelResponse(parts=[TextPart(" | ".join(f"{part.tool_name}: {part.content}" for part in returned))])
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=call_id) for name, args, call_id in calls])

    return FunctionModel(reply)


def deployer(
    calls: Sequence[tuple[str, dict[str, Any], str]],
    ran: list[dict[str, Any]],
    capabilities: Sequence[AbstractCapability[Any]] = (),
    log: Path | None = None,
) -> Agent[None, str | DeferredToolRequests]:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        scripted(calls), name="deployer", output_type=[str, DeferredToolRequests], capabilities=list(capabilities)
    )

    @agent.tool_plain(requires_approval=True)
    def deploy(env: str, replicas: int = 1) -> str:
        """Deploy the web service."""
        ran.append({"env": env, "replicas": replicas})
        if log is not None:
            with log.open("a") as out:
                out.write(f"deploy {env} {replicas}\n")
        return f"deployed to {env} x{replicas}"

    @agent.tool_plain(requires_approval=True)
    def drop_table(table: str) -> str:
        """Drop a table."""
        ran.append({"table": table})
        return f"dropped {table}"

    return agent
