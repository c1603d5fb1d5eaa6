"""Server events and the sends the registry asks its driver to make.

An :class:`Event` is encoded at most once, however many connections it goes
to and however often it is re-pushed: the encoded frame is cached on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from askd.protocol import codec

# The frames' type names and shapes are the wire's (askd.protocol.events).
from askd.protocol.events import ACK, ASK, CANCELLED, ERROR, ESCALATED, EXTENDED, PONG, SNAPSHOT, VOTED

__all__ = [
    "ACK", "ASK", "CANCELLED", "ERROR", "ESCALATED", "EXTENDED", "PONG", "SNAPSHOT", "VOTED", "Event", "Send", "encode", "isotime",
]


def isotime(ts: float) -> str:
    """Epoch seconds as ISO 8601 UTC with milliseconds, e.g. ``2026-11-29T10:00:00.250Z``."""
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def encode(obj: Any) -> bytes:
    """Compact UTF-8 JSON (see :mod:`askd.protocol.codec`)."""
    return codec.dumps(obj)


@dataclass(slots=True, eq=False)
class Event:
    """One frame of the spec's envelope ``{"type", "sessionId", "payload"}``.

    ``id`` echoes a client frame's id (replies only)."""

    type: str
    session_id: str | None = None
    payload: Mapping[str, Any] | None = None  # one of askd.protocol.events' payload shapes
    id: Any = None
    request_id: str | None = None  # the question an ask event carries (for logs)
    _frame: bytes | None = field(default=None, repr=False)

    @classmethod
    def from_frame(cls, type_: str, session_id: str, frame: bytes, request_id: str | None = None) -> Event:
        """An event from its encoded frame, as a store kept it."""
        event = cls(type_, session_id, request_id=request_id)
        event._frame = frame
        return event

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.id is not None:
            out["id"] = self.id
        if self.session_id is not None:
            out["sessionId"] = self.session_id
        if self.payload is not None:
            out["payload"] = self.payload
        return out

    @property
    def frame(self) -> bytes:
        """The UTF-8 JSON text of the frame, encoded on first use."""
        if self._frame is None:
            self._frame = encode(self.to_json())
        return self._frame


@dataclass(slots=True)
class Send:
    """Deliver ``event`` to each connection in ``to``. Never modified; not
    ``frozen``, which made each send's record twice as dear to build."""

    to: tuple[str, ...]
    event: Event
