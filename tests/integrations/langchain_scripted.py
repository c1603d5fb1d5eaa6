"""A scripted LangChain chat model and the tools the LangGraph tests gate:
the model's turns are written in advance (tool calls with fixed ids, so a
restarted process makes the same calls), and it keeps what it was shown,
so a test sees what the model saw (a denial's reason)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import BaseTool, tool


class ScriptedModel(FakeMessagesListChatModel):
    """``FakeMessagesListChatModel`` (LangChain's own fake) that takes tools,
    as ``create_agent`` binds them, and replies by the conversation, not by
    how often it was called: its Nth turn (N the model's turns so far) is
    ``responses[N]``, so a process that resumes a stopped run goes on where
    the run stopped rather than at the script's start."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        return ChatResult(generations=[ChatGeneration(message=self.responses[min(turn, len(self.responses) - 1)])])


def calls(*tool_calls: tuple[str, dict[str, Any], str]) -> AIMessage:
    """One model turn calling these tools: ``(name, args, call id)``."""
    return AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in tool_calls])


def script(*turns: AIMessage) -> ScriptedModel:
    """The model's turns, then a closing text reply."""
    return ScriptedModel(responses=[*turns, AIMessage(content="done")])


def tool_messages(messages: Sequence[BaseMessage]) -> dict[str, str]:
    """What the model was told of each tool call: call id to content."""
    return {m.tool_call_id: str(m.content) for m in messages if isinstance(m, ToolMessage)}


def deploy_tool(ran: Path) -> BaseTool:
    """``deploy(service, env)``: appends one line per run to ``ran``."""

    @tool
    def deploy(service: str, env: str) -> str:
        """Deploy a service to an environment."""
        with ran.open("a") as f:
            f.write(f"deploy {service} {env}\n")
        return f"deployed {service} to {env}"

    return deploy


def delete_tool(ran: Path) -> BaseTool:
    @tool
    def delete_file(path: str) -> str:
        """Delete a file."""
        with ran.open("a") as f:
            f.write(f"delete {path}\n")
        return f"deleted {path}"

    return delete_file


@tool
def ask_user(question: str) -> str:
    """Ask the user a question; the person answers in its place."""
    raise AssertionError("ask_user is answered by the person, never run")
