"""askd's core: the pending-question registry and its lifecycle, with no I/O.

Nothing here imports Tornado or touches a socket, a file or the real clock
unless one is injected. Front ends (the Tornado daemon today; durable stores
or an MCP bridge later) plug in around it.
"""

from askd.core.errors import (
    AskdError,
    Forbidden,
    InvalidAnswer,
    InvalidRequest,
    NotPending,
    SessionOwnerMismatch,
    TooManyPending,
    UserOffline,
)
from askd.core.events import Event, Send
from askd.core.lifecycle import Status
from askd.core.registry import ALL_SESSIONS, Connection, Limits, NotifyPolicy, Outbox, Registry, Request

__all__ = [
    "ALL_SESSIONS",
    "AskdError",
    "Connection",
    "Event",
    "Forbidden",
    "InvalidAnswer",
    "InvalidRequest",
    "Limits",
    "NotPending",
    "NotifyPolicy",
    "Outbox",
    "Registry",
    "Request",
    "Send",
    "SessionOwnerMismatch",
    "Status",
    "TooManyPending",
    "UserOffline",
]
