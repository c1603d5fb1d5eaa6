"""The lifecycle of a pending question, as data.

Every state a question can be in and every transition between them is in
``TRANSITIONS``. A question starts ``pending`` and ends exactly once; any
other move is a bug in the caller and raises :class:`IllegalTransition`
(as ``h11`` raises on an event its state machine does not allow).
"""

from __future__ import annotations

from enum import Enum
from typing import Literal, get_args


class Status(str, Enum):
    PENDING = "pending"
    ANSWERED = "answered"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    DECLINED = "declined"

    def __str__(self) -> str:
        return self.value


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

#: The ``reason`` of the ``ask_user_questions_cancelled`` event each end sends.
END_REASON: dict[Status, str] = {
    Status.ANSWERED: "answered",
    Status.TIMEOUT: "timeout",
    Status.CANCELLED: "cancelled",
    Status.DECLINED: "declined",
}

#: How an answer (or a decline) reached askd: the result's ``via``.
Via = Literal["ws", "link", "mcp", "admin"]
VIAS: tuple[str, ...] = get_args(Via)

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

#: ``ask_user_questions_cancelled`` reason for a member no longer in a
#: pending question's audience (removed from its group): the question goes on.
REASSIGNED = "reassigned"
