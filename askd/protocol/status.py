"""The words of a question's state on the wire: its ``status``, how an
answer reached askd (``via``) and the ``reason`` an ended question's
``ask_user_questions_cancelled`` gives. The lifecycle (``askd.core.lifecycle``)
moves between these statuses; this module only names them."""

from __future__ import annotations

from enum import Enum
from typing import ClassVar, Literal, get_args


class Status(str, Enum):
    PENDING = "pending"
    ANSWERED = "answered"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    DECLINED = "declined"

    # The same members under the lower-case names askd.client has always
    # offered (``Status.answered is Status.ANSWERED``), set below the class:
    # aliases made in it would be listed in the schema's enum too.
    pending: ClassVar[Status]
    answered: ClassVar[Status]
    timeout: ClassVar[Status]
    cancelled: ClassVar[Status]
    declined: ClassVar[Status]

    def __str__(self) -> str:
        return str(self.value)


for _status in Status:
    setattr(Status, _status.value, _status)


#: How an answer (or a decline) reached askd: the result's ``via``.
Via = Literal["ws", "link", "mcp", "admin"]
VIAS: tuple[str, ...] = get_args(Via)

#: The ``reason`` of the ``ask_user_questions_cancelled`` event each end sends.
END_REASON: dict[Status, str] = {
    Status.ANSWERED: "answered",
    Status.TIMEOUT: "timeout",
    Status.CANCELLED: "cancelled",
    Status.DECLINED: "declined",
}

#: ``ask_user_questions_cancelled`` reason for a member no longer in a
#: pending question's audience (removed from its group): the question goes on.
REASSIGNED = "reassigned"
