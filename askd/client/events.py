"""What ``UserClient`` hands the application: typed server events, read
from frames parsed against the wire's one definition
(``askd.protocol.events``)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from askd.protocol import codec
from askd.protocol.events import EVENT_TYPES, AskedEvent
from askd.protocol.models import Question
from askd.protocol.parse import parse

log = logging.getLogger("askd.client")

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
        """From an ``ask_user_questions`` frame as askd sent it."""
        return cls.of(parse(AskedEvent, frame), frame["payload"])

    @classmethod
    def of(cls, event: AskedEvent, raw: dict[str, Any]) -> QuestionEvent:
        """From the parsed frame and its payload as askd sent it (``raw``)."""
        p = event["payload"]
        return cls(
            session_id=event["sessionId"],
            request_id=p["requestId"],
            questions=list(p.get("questions") or ()),  # none for an action to approve (raw["action"])
            metadata=p["metadata"],
            created_at=p["createdAt"],
            expires_at=p["expiresAt"],
            raw=raw,
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


def read_frame(text: str | bytes) -> tuple[dict[str, Any], Any] | None:
    """A frame askd sent on ``/ws``: as sent, and checked against its type's
    shape (``askd.protocol.events``: absent optional keys read as None).
    None, and nothing to do, for a type this client does not know (a newer
    daemon's) or a frame that does not fit (logged)."""
    try:
        frame = codec.loads(text)
        shape = EVENT_TYPES.get(frame.get("type"))
    except (ValueError, AttributeError, TypeError):
        log.warning("askd sent a frame that is not a JSON object; ignored")
        return None
    if shape is None:
        return None
    try:
        parsed = parse(shape, frame)
    except ValidationError as err:
        log.warning("askd sent a %s frame this client cannot read (%s); ignored", frame["type"], err.errors()[0]["msg"])
        return None
    return frame, parsed
