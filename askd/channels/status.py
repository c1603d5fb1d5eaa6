"""What became of each question's deliveries, as this node made them: per
channel and recipient, ``sent``, ``failed`` or ``retrying``, with the
reason of a failure and when it was recorded (protocol section 6: the admin
listing's ``deliveries``; ``askd pending show``).

The delivery worker records every attempt's outcome here, and every
failure that made no attempt (a message that could not be built, a notice
dropped because too many were held, a claim the store could not take), so
no message is ever dropped without a trace an admin can read. It is this
node's memory, bounded (``MAX_QUESTIONS`` questions, the oldest forgotten
first; ``MAX_PER_QUESTION`` recipients each), not the store's: on a shared
store each node shows the deliveries it made (docs/decisions.md).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

from askd.core.events import isotime

SENT: Final = "sent"
FAILED: Final = "failed"
RETRYING: Final = "retrying"
State = Literal["sent", "failed", "retrying"]

MAX_QUESTIONS = 10_000  # questions whose deliveries are kept; the oldest go first
MAX_PER_QUESTION = 100  # channel and recipient pairs kept per question
REASON_CHARS = 300  # a reason is a line, not a receiver's whole answer


@dataclass(slots=True)
class Status:
    channel: str
    recipient: str | None
    state: str
    reason: str | None
    at: float
    attempts: int

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"channel": self.channel, "recipient": self.recipient, "status": self.state}
        if self.reason is not None:
            out["reason"] = self.reason
        return {**out, "attempts": self.attempts, "at": isotime(self.at)}


class DeliveryBook:
    """The latest outcome per question, channel and recipient."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._now = clock
        self._kept: OrderedDict[str, dict[tuple[str, str | None], Status]] = OrderedDict()

    def record(
        self, request_id: str, channel: str, recipient: str | None, state: State, reason: str | None = None, attempts: int = 0
    ) -> None:
        """Keep what became of ``channel``'s message to ``recipient`` (None:
        the channel's one message, or the whole notice when none was made)."""
        if reason is not None and len(reason) > REASON_CHARS:
            reason = reason[: REASON_CHARS - 1] + "…"
        statuses = self._kept.get(request_id)
        if statuses is None:
            statuses = self._kept[request_id] = {}
            while len(self._kept) > MAX_QUESTIONS:
                self._kept.popitem(last=False)
        key = (channel, recipient)
        if key not in statuses and len(statuses) >= MAX_PER_QUESTION:
            return
        statuses[key] = Status(channel, recipient, state, reason, self._now(), attempts)

    def of(self, request_id: str) -> list[dict[str, Any]]:
        """The question's deliveries on the wire, by channel then recipient."""
        statuses = self._kept.get(request_id, {})
        return [statuses[k].wire() for k in sorted(statuses, key=lambda k: (k[0], k[1] or ""))]

    def forget(self, request_id: str) -> None:
        """The question ended: nothing lists it as pending any more."""
        self._kept.pop(request_id, None)
