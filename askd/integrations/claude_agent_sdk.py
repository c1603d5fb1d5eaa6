"""The Claude Agent SDK: askd as its ``can_use_tool`` callback (protocol
section 21). Install with ``askd[claude-agent-sdk]``.

The SDK asks its ``can_use_tool(tool_name, input, context)`` callback before
Claude Code runs a tool the permission rules do not settle. :class:`AskdCanUseTool`
is such a callback: it asks askd to approve the call (section 17) and waits,
through dropped links and askd restarts, then answers in the SDK's types:

- approved: ``PermissionResultAllow``, with ``updated_input`` when the person
  edited the arguments, and ``updated_permissions`` when they chose *Approve
  always* (scope ``always``): the permission updates Claude Code suggested
  for this call, or else a rule allowing the tool for the rest of the session;
- denied, timed out, withdrawn, or a receipt that does not verify:
  ``PermissionResultDeny(message)``, ``"<who> denied it: <reason>"`` or why
  it ended undecided; Claude sees the message.

The call's id is ``context.tool_use_id``, so its ``Idempotency-Key`` is the
same when a restarted agent asks about the same tool use: one question, one
decision. The callback waits inline (the SDK offers no deferred answer to a
permission request).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny, ToolPermissionContext
from claude_agent_sdk.types import PermissionRuleValue, PermissionUpdate

from askd.client import AsyncAgentClient
from askd.integrations.calls import Approved, AsyncApprovalGate, GateOptions, ToolCall

__all__ = ["AskdCanUseTool"]

FRAMEWORK = "claude-agent-sdk"


class AskdCanUseTool:
    """A ``can_use_tool`` callback that asks askd. ``session``: askd's session
    for this agent's approvals; ``schemas``: a JSON Schema per tool name
    (Claude Code does not pass its tools' schemas to the callback), so an
    edit is checked against it; whom and how to ask: ``GateOptions``
    (``user`` or ``to``, ``agent``, the name the person sees, ``quorum``,
    ``timeout``, ...; ``editable`` and ``allow_always`` default to true, as
    the SDK takes both). ``verify_receipts=False`` lets a call run without
    checking its receipt (protocol section 16). ``client``: an
    ``AsyncAgentClient`` of yours.

    Use it as ``ClaudeAgentOptions(can_use_tool=AskdCanUseTool(...))``."""

    def __init__(
        self,
        *,
        session: str,
        schemas: Mapping[str, Mapping[str, Any]] | None = None,
        client: AsyncAgentClient | None = None,
        **asking: Unpack[GateOptions],
    ) -> None:
        self.schemas = dict(schemas or {})
        asking.setdefault("agent", "Claude agent")
        asking.setdefault("editable", True)  # updated_input carries an edit
        asking.setdefault("allow_always", True)  # updated_permissions carries "always"
        self.gate = AsyncApprovalGate(session=session, framework=FRAMEWORK, client=client, **asking)

    async def aclose(self) -> None:
        await self.gate.aclose()

    async def __call__(
        self, tool_name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        if not context.tool_use_id:
            # Without the call's id a restarted agent would ask a second question.
            raise ValueError("the SDK gave no tool_use_id for this permission request")
        call = ToolCall(
            call_id=context.tool_use_id,
            name=tool_name,
            arguments=tool_input,
            schema=self.schemas.get(tool_name),
            description=context.title or context.description or context.decision_reason,
            agent=f"{self.gate.asking.agent} (sub-agent {context.agent_id})" if context.agent_id else None,
        )
        decision = await self.gate.decide(call)
        if not isinstance(decision, Approved):
            return PermissionResultDeny(message=decision.message)
        return PermissionResultAllow(
            updated_input=decision.arguments if decision.edited else None,
            updated_permissions=_always(tool_name, context) if decision.scope == "always" else None,
        )


def _always(tool_name: str, context: ToolPermissionContext) -> list[PermissionUpdate]:
    """What *Approve always* changes in Claude Code: its own suggestions for
    this call (what its prompt's "don't ask again" would apply), or else a
    rule allowing the tool for the rest of the session."""
    if context.suggestions:
        return list(context.suggestions)
    return [PermissionUpdate(type="addRules", rules=[PermissionRuleValue(tool_name=tool_name)], behavior="allow",
                             destination="session")]
