"""The lifecycle of a pending question, as data.

Every state a question can be in and every transition between them is in
``TRANSITIONS``. A question starts ``pending`` and ends exactly once; any
other move is a bug in the caller and raises :class:`IllegalTransition`
(as ``h11`` raises on an event its state machine does not allow).
"""

from __future__ import annotations

from enum import Enum

# The statuses, vias and end reasons are the wire's words (askd.protocol.status).
from askd.protocol.status import END_REASON, REASSIGNED, VIAS, Status, Via

__all__ = [
    "CANCEL_ERROR",
    "END_REASON",
    "IllegalTransition",
    "REASSIGNED",
    "Status",
    "TIMEOUT_ERROR",
    "TRANSITIONS",
    "Trigger",
    "VIAS",
    "Via",
    "WITHDRAW_ERROR",
    "next_status",
]


class Trigger(str, Enum):
    ANSWER = "answer"  # a user (or an admin on its behalf) answered
    EXPIRE = "expire"  # the clock passed expiresAt
    CANCEL = "cancel"  # its session (or an ancestor session) was cancelled, or the agent withdrew it
    DECLINE = "decline"  # the user (or an admin) refused to answer


TRANSITIONS: dict[tuple[Status, Trigger], Status] = {
    (Status.PENDING, Trigger.ANSWER): Status.ANSWERED,
    (Status.PENDING, Trigger.EXPIRE): Status.TIMEOUT,
    (Status.PENDING, Trigger.CANCEL): Status.CANCELLED,
    (Status.PENDING, Trigger.DECLINE): Status.DECLINED,
}

#: The ``error`` text an agent reads in a result that did not get an answer.
TIMEOUT_ERROR = "Timed out waiting for the user's answer"
CANCEL_ERROR = "Session cancelled"
WITHDRAW_ERROR = "Withdrawn by agent"


class IllegalTransition(RuntimeError):
    """A question was moved in a way the lifecycle does not allow."""


def next_status(current: Status, trigger: Trigger) -> Status:
    try:
        return TRANSITIONS[(current, trigger)]
    except KeyError:
        raise IllegalTransition(f"cannot {trigger.value} a question that is {current.value}") from None
