"""The OpenAI Agents SDK's tool approvals through askd (protocol section 21).

A ``function_tool(needs_approval=...)`` call pauses the run: the result's
``interruptions`` hold a ``ToolApprovalItem`` per call, and the run goes on
from ``result.to_state()`` once each is approved (``RunState.approve(item,
always_approve=...)``) or rejected (``RunState.reject(item,
rejection_message=...)``). :class:`AskdApprovals` asks askd for each
interruption and applies the decision: askd's scope ``always`` becomes
``always_approve``, a denial's message (``"<who> denied it: <reason>"``)
the ``rejection_message`` the model reads.

- **Inline**: ``await approvals.run(agent, input)`` runs the agent, asks
  for every interruption, waits (through dropped links and askd restarts),
  and runs on until the run ends without one.
- **Deferred**: ``await approvals.ask(state)`` asks for the interruptions
  of a paused run and returns at once; ``await approvals.collect(state)``,
  in this process or another (the state stored with ``to_string()`` and
  loaded with ``RunState.from_string``), applies the decisions and returns
  the state to resume with ``Runner.run(agent, state)``, or None while any
  is undecided.

The SDK takes no changed arguments on approval, so the person approves or
denies the call as made (``editable`` is false). Needs ``askd[openai-agents]``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Unpack

from agents import Agent, FunctionTool, RunResult, RunState, Runner, ToolApprovalItem

from askd.client import AsyncAgentClient
from askd.integrations.calls import Approved, AsyncApprovalGate, AsyncGated, Decision, GateOptions, Outcome, Pending, ToolCall

__all__ = ["FRAMEWORK", "AskdApprovals", "apply", "tool_call_of"]

#: The adapter's name in every call's ``Idempotency-Key`` and ``metadata``.
FRAMEWORK = "openai-agents"


def _arguments(item: ToolApprovalItem) -> dict[str, Any]:
    """The call's arguments as an object: a function call's JSON, else the
    raw text under ``arguments`` (so the person still sees what it is)."""
    raw = item.arguments
    if raw is None:
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


def tool_call_of(item: ToolApprovalItem) -> ToolCall:
    """The call to approve: the item's call id, tool name and arguments; the
    function tool's JSON Schema and description when its agent has it."""
    name = item.qualified_name or item.name or "tool"
    tool = next(
        (t for t in item.agent.tools if isinstance(t, FunctionTool) and t.name == item.tool_name),
        None,
    )
    call_id = item.call_id
    if call_id is None:
        raise ValueError(f"the interruption for {name} carries no call id to ask once by")
    return ToolCall(
        call_id=call_id,
        name=name,
        arguments=_arguments(item),
        schema=tool.params_json_schema if tool is not None else None,
        description=tool.description if tool is not None else None,
        agent=item.agent.name,
    )


def apply(state: RunState[Any, Any], item: ToolApprovalItem, decision: Decision) -> None:
    """Record askd's decision on ``item`` in ``state``: approved (``always``
    as ``always_approve``) or rejected with the denial's message."""
    if isinstance(decision, Approved):
        state.approve(item, always_approve=decision.scope == "always")
    else:
        state.reject(item, rejection_message=decision.message)


class AskdApprovals(AsyncGated):
    """askd as the approver of one session's tool calls. ``session`` is one
    conversation; :class:`~askd.integrations.calls.GateOptions` says whom and
    how to ask (``user`` or ``to``, ``timeout``, ``quorum``,
    ``allow_always``). ``client``: an ``AsyncAgentClient`` of yours
    (default: found as every askd client finds askd)."""

    def __init__(self, *, session: str, client: AsyncAgentClient | None = None, **asking: Unpack[GateOptions]) -> None:
        if asking.get("editable"):
            raise ValueError("the OpenAI Agents SDK runs a call with its own arguments: editable cannot be true")
        asking["editable"] = False
        self.gate = AsyncApprovalGate(session=session, framework=FRAMEWORK, client=client, **asking)

    async def run(self, agent: Agent[Any], input: str | list[Any] | RunState[Any, Any], **runner: Any) -> RunResult:
        """Inline: ``Runner.run(agent, input, **runner)``, each interruption
        asked of askd and waited on, until a run ends without one."""
        result = await Runner.run(agent, input, **runner)
        while result.interruptions:
            state = result.to_state()
            await self.decide(state)
            result = await Runner.run(agent, state, **runner)
        return result

    async def decide(self, state: RunState[Any, Any]) -> None:
        """Inline, on a paused run's state: ask for every interruption at once,
        wait for each decision and record it in ``state``."""
        items = state.get_interruptions()
        decisions = await asyncio.gather(*(self.gate.decide(tool_call_of(item)) for item in items))
        for item, decision in zip(items, decisions):
            apply(state, item, decision)

    async def ask(self, state: RunState[Any, Any]) -> RunState[Any, Any] | None:
        """Deferred: ask for every interruption of ``state`` at once and return
        without waiting: the state with the decisions recorded when each was
        already decided (asked before), else None (``state`` unchanged)."""
        return await self._settle(state, lambda call: self.gate.ask(call))

    async def collect(self, state: RunState[Any, Any], wait: float | None = 0.0) -> RunState[Any, Any] | None:
        """The decisions on ``state``'s interruptions, recorded in it: the
        state to resume with ``Runner.run(agent, state)``, or None (and
        ``state`` unchanged) while any is undecided. ``wait``: 0 at once, N
        up to N seconds for each, None until each ends. Works from another
        process holding the same state (the same session): each
        interruption is the same question."""
        return await self._settle(state, lambda call: self.gate.collect(call, wait))

    async def _settle(self, state: RunState[Any, Any], step: Any) -> RunState[Any, Any] | None:
        items = state.get_interruptions()
        outcomes: list[Outcome] = list(await asyncio.gather(*(step(tool_call_of(item)) for item in items)))
        if any(isinstance(outcome, Pending) for outcome in outcomes):
            return None
        for item, outcome in zip(items, outcomes):
            assert not isinstance(outcome, Pending)
            apply(state, item, outcome)
        return state
