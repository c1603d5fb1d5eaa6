"""An OpenAI Agents SDK agent driven by a scripted ``Model``: each turn
makes the tool calls given, in order; once all are made, its reply
reports every tool output the run saw, rejections included. The tools
append to ``ran`` (and to a file, for a test whose agent is another
process). No network: tracing is off."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents import Agent, Model, ModelResponse, Usage, function_tool, set_tracing_disabled
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

set_tracing_disabled(True)

Call = tuple[str, dict[str, Any], str]  # tool name, arguments, call id


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


class ScriptedModel(Model):
    def __init__(self, turns: Sequence[Sequence[Call]]) -> None:
        self.turns = turns

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        items = input if isinstance(input, list) else []
        made = sum(1 for item in items if _field(item, "type") == "function_call")
        for turn_index in range(len(self.turns)):
            if made == sum(len(turn) for turn in self.turns[:turn_index]):
                calls = [
                    ResponseFunctionToolCall(
                        id=f"fc_{call_id}", call_id=call_id, name=name, arguments=json.dumps(args), type="function_call",
                        status="completed",
                    )
                    for name, args, call_id in self.turns[turn_index]
                ]
                return ModelResponse(output=list(calls), usage=Usage(), response_id=None)
        outputs = [str(_field(item, "output")) for item in items if _field(item, "type") == "function_call_output"]
        text = ResponseOutputText(text=" | ".join(outputs), type="output_text", annotations=[])
        message = ResponseOutputMessage(id="msg_1", role="assistant", status="completed", type="message", content=[text])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted model does not stream")


def deployer(turns: Sequence[Sequence[Call]], ran: list[dict[str, Any]], log: Path | None = None) -> Agent[Any]:
    @function_tool(needs_approval=True)
    def deploy(env: str, replicas: int) -> str:
        """Deploy the web service."""
        ran.append({"env": env, "replicas": replicas})
        if log is not None:
            with log.open("a") as out:
                out.write(f"deploy {env} {replicas}\n")
        return f"deployed to {env} x{replicas}"

    @function_tool(needs_approval=True)
    def drop_table(table: str) -> str:
        """Drop a table."""
        ran.append({"table": table})
        return f"dropped {table}"

    return Agent(name="deployer", model=ScriptedModel(turns), tools=[deploy, drop_table])
