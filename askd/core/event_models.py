"""Moved to :mod:`askd.protocol.events`; this path stays for code not yet updated (issue 31)."""

from askd.protocol.events import *  # noqa: F401,F403
from askd.protocol.events import (  # noqa: F401
    AckEvent,
    AckPayload,
    AskedEvent,
    AskedPayload,
    CancelledEvent,
    CancelledPayload,
    ErrorEvent,
    ErrorPayload,
    EscalatedEvent,
    EscalatedPayload,
    ExtendedEvent,
    ExtendedPayload,
    PongEvent,
    ServerEvent,
    SnapshotEvent,
    SnapshotPayload,
)
