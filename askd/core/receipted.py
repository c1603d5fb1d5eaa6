"""The digest an ended question's receipt carries (protocol section 16),
taken when its end is decided: the questions (or the action) are dropped
once it ends."""

from __future__ import annotations

from typing import Any

from askd.core.records import Request
from askd.receipts.digest import approval_content, digest, questions_content


def ended_digest(req: Request, answers: Any) -> str:
    """``digest`` of the questions as asked (as listings show them) and the
    answers it ends with (None: none); for an action, of the action with
    its arguments as asked and no scope (it ends not approved)."""
    if req.approval is not None:
        return approval_digest(req, req.approval.arguments, None)
    return digest(questions_content(req.questions, answers))


def approval_digest(req: Request, arguments: Any, scope: str | None) -> str:
    """``digest`` of a pending action's name with ``arguments`` and ``scope``
    (section 17: what an executor recomputes)."""
    name = req.ask_payload()["action"]["name"]
    return digest(approval_content({"name": name, "arguments": arguments}, scope))
