"""Typed views of what askd returns to agents, parsed against the wire's
one definition (``askd.protocol.results.QuestionResult``), and building
asks from the shared question models (``askd.protocol.models``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from askd.protocol.action import Scope
from askd.protocol.models import Answers, Question
from askd.protocol.parse import parse
from askd.protocol.results import ApprovalGiven, QuestionResult
from askd.protocol.status import Status

__all__ = ["QuestionLike", "Result", "Status", "question_dicts"]


@dataclass(frozen=True, slots=True)
class Result:
    """A question's state as the agent API reports it. ``answers`` is set
    when ``status`` is ``answered`` (or ``timeout`` with ``defaulted``: the
    ask's ``on_timeout``); ``error`` when it timed out or was cancelled.
    Answered or declined: ``answered_by`` and ``via``; declined: ``reason``.
    Once ended: ``receipt``, askd's signed statement of the end
    (``askd.receipts.verify`` checks it; protocol section 16).

    An approval (section 17) adds ``approvals`` (so far, in order) and, once
    ended, ``approved`` (True only when answered), ``arguments`` (the final
    ones, edited or as asked), ``edited`` and ``scope`` (``once`` or
    ``always`` when approved). For a question they stay None."""

    request_id: str
    session_id: str
    status: Status
    answers: Answers | None = None
    error: str | None = None
    created_at: str | None = None
    expires_at: str | None = None
    answered_by: str | None = None
    via: str | None = None
    reason: str | None = None
    defaulted: bool = False
    receipt: str | None = None
    approvals: list[ApprovalGiven] | None = None
    approved: bool | None = None
    arguments: dict[str, Any] | None = None
    edited: bool | None = None
    scope: Scope | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Result:
        """A result, or an ask's ``201`` reply (``PendingBody``, the same
        keys and ``createdAt``); raises pydantic's ``ValidationError`` (a
        ``ValueError``) when it is neither."""
        result = parse(QuestionResult, data)
        return cls(
            request_id=result["requestId"],
            session_id=result["sessionId"],
            status=result["status"],
            answers=result.get("answers"),
            error=result.get("error"),
            created_at=data.get("createdAt"),
            expires_at=result.get("expiresAt"),
            answered_by=result.get("answeredBy"),
            via=result.get("via"),
            reason=result.get("reason"),
            defaulted=result.get("defaulted") is True,
            receipt=result.get("receipt"),
            approvals=result.get("approvals"),
            approved=result.get("approved"),
            arguments=result.get("arguments"),
            edited=result.get("edited"),
            scope=result.get("scope"),
            raw=dict(data),
        )

    @property
    def escalations(self) -> int | None:
        """Escalation steps taken so far; None when asked without ``escalate``."""
        n = self.raw.get("escalations")
        return int(n) if n is not None else None

    @property
    def pending(self) -> bool:
        return self.status is Status.pending

    @property
    def answered(self) -> bool:
        return self.status is Status.answered


QuestionLike = Question | Mapping[str, Any] | str


def question_dicts(questions: QuestionLike | Iterable[QuestionLike]) -> list[dict[str, Any]]:
    """Questions as the wire wants them. A string is a free-text question; a
    mapping is checked against ``Question`` and sent as given (unknown fields
    pass through); a ``Question`` is sent with the fields that were set."""
    if isinstance(questions, (str, Question, Mapping)):
        questions = [questions]
    out: list[dict[str, Any]] = []
    for item in questions:
        if isinstance(item, str):
            out.append({"question": item})
        elif isinstance(item, Question):
            out.append(item.model_dump(mode="json", exclude_unset=True))
        else:
            Question.model_validate(dict(item))  # fail early, before the daemon does
            out.append(dict(item))
    return out
