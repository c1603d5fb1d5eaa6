"""Typed views of what askd returns to agents, and building asks from the
shared question models (``askd.core.models``: one definition)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from askd.core.models import Answers, Question


class Status(str, Enum):
    pending = "pending"
    answered = "answered"
    timeout = "timeout"
    cancelled = "cancelled"
    declined = "declined"


@dataclass(frozen=True, slots=True)
class Result:
    """A question's state as the agent API reports it. ``answers`` is set
    when ``status`` is ``answered`` (or ``timeout`` with ``defaulted``: the
    ask's ``on_timeout``); ``error`` when it timed out or was cancelled.
    Answered or declined: ``answered_by`` and ``via``; declined: ``reason``.
    Once ended: ``receipt``, askd's signed statement of the end
    (``askd.receipts.verify`` checks it; protocol section 16)."""

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
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Result:
        return cls(
            request_id=data["requestId"],
            session_id=data["sessionId"],
            status=Status(data["status"]),
            answers=data.get("answers"),
            error=data.get("error"),
            created_at=data.get("createdAt"),
            expires_at=data.get("expiresAt"),
            answered_by=data.get("answeredBy"),
            via=data.get("via"),
            reason=data.get("reason"),
            defaulted=data.get("defaulted") is True,
            receipt=data.get("receipt"),
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
