"""askd as the approver of a LangChain agent's tool calls (LangGraph underneath).

Runs offline: the chat model is scripted (it asks to deploy, then to ask you
which region), so no model provider is needed. What is real: LangChain's
``HumanInTheLoopMiddleware`` pauses the agent, and askd asks you, in your
inbox (or Slack, e-mail, your phone), then resumes the agent with your decision.

    pip install 'askd[langgraph]'
    askd serve &            # then open the inbox it prints, as the user below
    python examples/langgraph_approval.py --user alice

Approve (or edit the arguments) and the tool runs; deny with a reason and the
model is told "alice denied it: <reason>". askd is found as every askd client
finds it (ASKD_URL and ASKD_AGENT_TOKEN, or the local daemon's state).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from askd.integrations.langgraph import AskdInterrupts


class ScriptedModel(FakeMessagesListChatModel):
    """A stand-in for a real chat model: its Nth turn is ``responses[N]``."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        turn = sum(isinstance(m, AIMessage) for m in messages)
        return ChatResult(generations=[ChatGeneration(message=self.responses[min(turn, len(self.responses) - 1)])])


@tool
def deploy(service: str, env: str) -> str:
    """Deploy a service to an environment."""
    return f"deployed {service} to {env}"


@tool
def ask_user(question: str) -> str:
    """Ask the user; the person answers in its place."""
    raise RuntimeError("answered by the person, never run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", default="alice", help="whom askd asks")
    parser.add_argument("--session", default="langgraph-example", help="askd's session for this agent")
    parser.add_argument("--mode", choices=["batched", "per_call"], default="batched", help="the middleware's interrupt mode")
    args = parser.parse_args()

    model = ScriptedModel(responses=[
        AIMessage(content="", tool_calls=[
            {"name": "deploy", "args": {"service": "web", "env": "staging"}, "id": "call_deploy", "type": "tool_call"},
            {"name": "ask_user", "args": {"question": "Which region next?"}, "id": "call_region", "type": "tool_call"},
        ]),
        AIMessage(content="Done."),
    ])
    tools = [deploy, ask_user]
    agent = create_agent(
        model, tools=tools,
        middleware=[HumanInTheLoopMiddleware(
            interrupt_on={"deploy": {"allowed_decisions": ["approve", "edit", "reject"]},
                          "ask_user": {"allowed_decisions": ["respond"]}},
            interrupt_mode=args.mode,
        )],
        checkpointer=InMemorySaver(),  # a durable one (SqliteSaver, Postgres) lets another process resume
    )
    config = {"configurable": {"thread_id": args.session}}
    with AskdInterrupts(session=args.session, user=args.user, tools=tools, agent="Release bot") as askd:
        print(f"Asking {args.user} through askd; decide in the inbox.")
        output = askd.invoke(agent, {"messages": [("user", "Ship web to staging.")]}, config)
    for message in output.value["messages"]:
        if isinstance(message, ToolMessage):
            print(f"{message.name}: {message.content}")


if __name__ == "__main__":
    main()
