"""Pydantic AI's tool approvals through askd (protocol section 21).

A tool made with ``requires_approval=True`` (or raising ``ApprovalRequired``)
is a *deferred* call: Pydantic AI hands it over as ``DeferredToolRequests``
and resumes with ``DeferredToolResults``. :class:`AskdApprovals` asks askd
for each such call and answers in Pydantic AI's own types: ``ToolApproved``
(with ``override_args`` when the person edited the arguments) or
``ToolDenied(message)``, the message the model reads.

- **Inline**: ``Agent(..., capabilities=[approvals.capability()])``. The
  ``HandleDeferredToolCalls`` capability asks while the run waits (through
  dropped links and askd restarts) and the run goes on in one call.
- **Deferred**: the run ends with ``DeferredToolRequests``;
  ``await approvals.ask(requests, agent)`` asks and returns at once, and
  ``await approvals.collect(requests, agent)``, in this process or another
  after a restart, returns the ``DeferredToolResults`` to resume with
  (``None`` while a call is still undecided).

Every call is asked once: its key is its ``tool_call_id`` and the session,
so a session is one conversation (the model's call ids are only unique
within one). Needs ``askd[pydantic-ai]``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from pydantic_ai import Agent, FunctionToolset, RunContext
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDefinition, ToolDenied

from askd.client import AsyncAgentClient
from askd.integrations.calls import Approved, AsyncApprovalGate, AsyncGated, Decision, GateOptions, Outcome, Pending, ToolCall

__all__ = ["FRAMEWORK", "AskdApprovals", "results_of", "tool_call_of"]

#: The adapter's name in every call's ``Idempotency-Key`` and ``metadata``.
FRAMEWORK = "pydantic-ai"


def tool_call_of(part: ToolCallPart, tool: ToolDefinition | None = None, agent: str | None = None) -> ToolCall:
    """The call to approve: its arguments as the model sent them (what
    ``ToolApproved()`` runs again), the tool's JSON Schema and description
    when its definition is known."""
    return ToolCall(
        call_id=part.tool_call_id,
        name=part.tool_name,
        arguments=part.args_as_dict(),
        schema=tool.parameters_json_schema if tool is not None else None,
        description=tool.description if tool is not None else None,
        agent=agent,
    )


def results_of(decided: Mapping[str, Decision]) -> DeferredToolResults:
    """``DeferredToolResults`` from askd's decisions, keyed by tool call id:
    ``ToolApproved`` (``override_args`` only when edited: otherwise the call
    runs with the arguments the receipt signs), ``ToolDenied(message)``.
    Each call's ``metadata`` carries ``askd`` (``requestId``, ``receipt``),
    which the tool reads as ``ctx.tool_call_metadata``."""
    results = DeferredToolResults()
    for call_id, decision in decided.items():
        if isinstance(decision, Approved):
            results.approvals[call_id] = ToolApproved(override_args=decision.arguments if decision.edited else None)
            results.metadata[call_id] = {"askd": {"requestId": decision.request_id, "receipt": decision.receipt}}
        else:
            results.approvals[call_id] = ToolDenied(decision.message)
            results.metadata[call_id] = {"askd": {"requestId": decision.request_id, "denied": decision.kind}}
        if decision.by is not None:
            results.answered_by[call_id] = decision.by
    return results


def _tool_defs(agent: Agent[Any, Any] | None) -> dict[str, ToolDefinition]:
    """The definitions of the agent's function tools (schema, description),
    for a deferred ask made outside the run."""
    if agent is None:
        return {}
    return {
        name: tool.tool_def
        for toolset in agent.toolsets
        if isinstance(toolset, FunctionToolset)
        for name, tool in toolset.tools.items()
    }


class AskdApprovals(AsyncGated):
    """askd as the approver of one session's deferred tool calls.
    ``session`` is one conversation; :class:`~askd.integrations.calls.GateOptions`
    says whom and how to ask (``user`` or ``to``, ``timeout``, ``quorum``,
    ``editable``, default true: Pydantic AI runs ``override_args``; not
    ``allow_always``: Pydantic AI has no lasting approval). ``client``:
    an ``AsyncAgentClient`` of yours (default: found as every askd client
    finds askd)."""

    def __init__(self, *, session: str, client: AsyncAgentClient | None = None, **asking: Unpack[GateOptions]) -> None:
        if asking.get("allow_always"):
            # Offering "Approve always" would promise what Pydantic AI cannot keep.
            raise ValueError("Pydantic AI approves one call at a time: allow_always cannot be true")
        self.gate = AsyncApprovalGate(session=session, framework=FRAMEWORK, client=client, **asking)

    def capability(self) -> HandleDeferredToolCalls[Any]:
        """Inline: a ``HandleDeferredToolCalls`` that asks askd for every call
        awaiting approval and waits for the decisions (all asked at once).
        External calls are left to the next handler, or end the run."""
        return HandleDeferredToolCalls(handler=self._handle)

    async def _handle(self, ctx: RunContext[Any], requests: DeferredToolRequests) -> DeferredToolResults | None:
        if not requests.approvals:
            return None
        tools = ctx.tool_manager
        agent = ctx.agent.name if ctx.agent is not None else None
        calls = [
            tool_call_of(part, tools.get_tool_def(part.tool_name) if tools is not None else None, agent)
            for part in requests.approvals
        ]
        decisions = await asyncio.gather(*(self.gate.decide(call) for call in calls))
        return results_of({call.call_id: decision for call, decision in zip(calls, decisions)})

    async def ask(self, requests: DeferredToolRequests, agent: Agent[Any, Any] | None = None) -> DeferredToolResults | None:
        """Deferred: ask askd for every call awaiting approval, at once, and
        return without waiting: the results when every call was already
        decided (asked before), else None. ``agent`` (the one whose run
        ended) gives the tools' schemas and its name."""
        return self._complete(await self._each(requests, agent, lambda call: self.gate.ask(call)))

    async def collect(
        self, requests: DeferredToolRequests, agent: Agent[Any, Any] | None = None, wait: float | None = 0.0
    ) -> DeferredToolResults | None:
        """The decisions on ``requests`` as ``DeferredToolResults`` to resume
        the run with, or None while any is undecided. ``wait``: 0 returns at
        once, N waits up to N seconds for each, None until each ends. Works
        from another process (the same session): each call is the same question."""
        return self._complete(await self._each(requests, agent, lambda call: self.gate.collect(call, wait)))

    async def _each(self, requests: DeferredToolRequests, agent: Agent[Any, Any] | None, step: Any) -> Sequence[tuple[str, Outcome]]:
        tools = _tool_defs(agent)
        name = agent.name if agent is not None else None
        calls = [tool_call_of(part, tools.get(part.tool_name), name) for part in requests.approvals]
        outcomes = await asyncio.gather(*(step(call) for call in calls))
        return [(call.call_id, outcome) for call, outcome in zip(calls, outcomes)]

    @staticmethod
    def _complete(outcomes: Sequence[tuple[str, Outcome]]) -> DeferredToolResults | None:
        decided: dict[str, Decision] = {}
        for call_id, outcome in outcomes:
            if isinstance(outcome, Pending):
                return None
            decided[call_id] = outcome
        return results_of(decided)
