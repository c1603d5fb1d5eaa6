"""Errors the registry raises when an event cannot be applied.

Each carries the spec's error ``code``; front ends map codes to their own
status (HTTP status, WebSocket ``error``/``ack``).
"""

from __future__ import annotations

from typing import Any


class AskdError(Exception):
    code = "error"

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidRequest(AskdError):
    code = "invalid_request"


class InvalidAnswer(AskdError):
    code = "invalid_answer"


class NotPending(AskdError):
    """The question is not pending for this caller: ended, unknown, or another user's."""

    code = "not_pending"


class NoSeat(InvalidRequest):
    """An approval that names nobody (an admin token without a ``sub``, a
    link not bound to one person) on an action needing more than one
    person's approval: a quorum counts people (protocol section 17)."""


class AlreadyVoted(AskdError):
    """This user approved the action already (an ``approve`` ack's reason)."""

    code = "already_voted"


class NotFound(AskdError):
    """Unknown to this caller: an agent token with a ``sub`` calling on a
    session another agent first asked in gets this, never a hint it exists."""

    code = "not_found"


class NotAllowed(AskdError):
    """An extension beyond what the question allows."""

    code = "not_allowed"


class Forbidden(AskdError):
    """Not this caller's to do: an agent's relay the ask does not allow
    (protocol section 5, "Answering for the person")."""

    code = "forbidden"


class SessionOwnerMismatch(AskdError):
    code = "session_owner_mismatch"


class UserOffline(AskdError):
    code = "user_offline"


class TooManyPending(AskdError):
    code = "too_many_pending"


class AskInFlight(Exception):
    """Not a refusal: an ask with the same Idempotency-Key is being stored.
    The front end waits for that commit and asks again (a replay then)."""
