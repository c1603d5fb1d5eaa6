"""What ``UserClient`` hands the application: typed server events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from askd.core.models import Question

# Reason of a ``CancelledEvent`` that UserClient makes itself: the question
# was pending when the link dropped and was not re-pushed after the
# reconnect, so it ended meanwhile (answered elsewhere, timed out or
# cancelled) while no event could reach this client.
ENDED_WHILE_AWAY = "ended"


@dataclass(frozen=True, slots=True)
class QuestionEvent:
    """``ask_user_questions``: a question waiting for this user."""

    session_id: str
    request_id: str
    questions: list[Question]
    metadata: dict[str, Any]
    created_at: str
    expires_at: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_frame(cls, frame: dict[str, Any]) -> QuestionEvent:
        p = frame["payload"]
        return cls(
            session_id=frame["sessionId"],
            request_id=p["requestId"],
            questions=[Question.model_validate(q) for q in p["questions"]],
            metadata=p.get("metadata") or {},
            created_at=p.get("createdAt", ""),
            expires_at=p.get("expiresAt", ""),
            raw=p,
        )


@dataclass(frozen=True, slots=True)
class CancelledEvent:
    """``ask_user_questions_cancelled``: the question ended; ``reason`` is
    ``answered``, ``timeout``, ``cancelled``, ``declined``, or ``ended`` (see
    ``ENDED_WHILE_AWAY``). An answered or declined one names who did it
    (``answered_by``: None for an admin without a name) and how (``via``);
    a declined one may carry the person's ``decline_reason``."""

    session_id: str
    request_id: str
    reason: str
    answered_by: str | None = None
    via: str | None = None
    decline_reason: str | None = None


@dataclass(frozen=True, slots=True)
class SnapshotEvent:
    """``session_snapshot``, sent on (re-)subscribe."""

    session_id: str
    active: bool
    pending: int


@dataclass(frozen=True, slots=True)
class ExtendedEvent:
    """``ask_user_questions_extended``: a question's deadline moved to ``expires_at``."""

    session_id: str
    request_id: str
    expires_at: str


@dataclass(frozen=True, slots=True)
class EscalatedEvent:
    """``ask_user_questions_escalated``: an escalation step widened the
    audience of a question this user already has. ``to`` is whom it is asked
    of now; ``escalated_to`` the entries the steps taken added."""

    session_id: str
    request_id: str
    to: list[str]
    escalations: int
    escalated_to: list[str]


Event = QuestionEvent | CancelledEvent | ExtendedEvent | EscalatedEvent | SnapshotEvent
