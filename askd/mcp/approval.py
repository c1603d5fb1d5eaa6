"""``request_approval``: ask permission to run an action (protocol section
17) through ``askd mcp``: its arguments, and its result in words.

The tool takes the action's ``name``, ``arguments``, ``summary`` and
``preview`` (what a person needs to decide) and whom to ask (``to`` or
``userId``); the result is the approval's, as ``get_answer`` returns it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator, model_validator

from askd.client import Result, Status
from askd.protocol.action import MAX_NAME, MAX_SUMMARY, Action
from askd.protocol.ids import Id
from askd.protocol.models import To, json_number

APPROVE = "request_approval"

APPROVE_DESCRIPTION = (
    "Ask the user (a person) for permission before you run an action (a command, a merge, a deploy), and wait "
    "for their decision. Give the action's name, the exact arguments you will run it with, a short summary of why "
    "and, when it helps, a preview (a diff, the command). Run the action only when the result says approved, and "
    "then with the result's arguments. A denial carries the person's reason. If the result says pending, call "
    "get_answer with its requestId to keep waiting."
)


class RequestApprovalArgs(BaseModel):
    """Arguments of ``request_approval``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: StrictStr = Field(min_length=1, max_length=MAX_NAME, description="What will run: Bash, deploy, a tool's name.")
    arguments: dict[str, Any] = Field(description="Exactly what it will run with: a JSON object.")
    summary: StrictStr | None = Field(default=None, max_length=MAX_SUMMARY, description="Why, in words (Markdown).")
    preview: StrictStr | None = Field(default=None, description="What it will change (Markdown: a diff, a command), at most 32 KiB.")
    userId: Id | None = Field(default=None, description="Ask this user instead of the one askd mcp serves.")
    to: To | None = Field(default=None, description="Ask these users and group:NAME entries instead (any one may decide).")
    timeoutSeconds: float | None = Field(default=None, gt=0, description="Give up (not approved) after this many seconds.")

    _timeout_number = field_validator("timeoutSeconds", mode="before")(json_number)

    @model_validator(mode="after")
    def _one_audience(self) -> RequestApprovalArgs:
        if self.userId is not None and self.to is not None:
            raise ValueError("give userId or to, not both")
        Action.model_validate(self.action())  # the preview's byte limit
        return self

    def action(self) -> dict[str, Any]:
        """The ask's ``action``, with only the fields given."""
        action: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        for key in ("summary", "preview"):
            if getattr(self, key) is not None:
                action[key] = getattr(self, key)
        return action


def describe_approval(result: Result, whom: str) -> str:
    """The text block for an approval's result: whether to run, and with what."""
    # The agent reads the arguments as text: keys sorted and spaced as it
    # has always been told them, which the codec does not write.
    args = json.dumps(result.arguments, ensure_ascii=False, sort_keys=True) if result.arguments is not None else "{}"
    if result.status is Status.answered and result.approved:
        who = result.answered_by or "An admin"
        how = " (approve always)" if result.scope == "always" else ""
        edited = " The person edited the arguments: run it with these, not the ones you asked with." if result.edited else ""
        return f"{who} approved the action{how}.{edited}\nArguments: {args}"
    if result.status is Status.pending:
        given = len(result.approvals or ())
        so_far = f" ({given} approval{'s' if given != 1 else ''} so far)" if given else ""
        return (
            f"{whom} has not decided yet{so_far}; the approval is still open. Do not run the action. "
            f'Call get_answer with requestId "{result.request_id}" to keep waiting.'
        )
    if result.status is Status.declined:
        who = result.answered_by or "An admin"
        why = f": {result.reason}" if result.reason else ""
        return f"{who} denied the action{why}. Do not run it."
    if result.status is Status.timeout:
        return f"Nobody approved the action in time ({result.error or 'timed out'}). Do not run it."
    return f"The approval was cancelled ({result.error or 'cancelled'}). Do not run the action."
