"""askd's core: the pending-question registry and its lifecycle, with no I/O.

Nothing here imports Tornado or touches a socket, a file or the real clock
unless one is injected. The records are in ``records.py``, the changes a
store makes durable in ``changes.py``, the events in ``events.py``, the
errors in ``errors.py``. The engine is the sub-package ``registry/``:
``Registry`` (``registry/registry.py``) and its parts (the session book,
connections, reservations, audiences, deadlines and their kinds, the
decisions, what can change when in ``rules.py`` and what each change does
in ``effects.py``). The daemon (``askd.server``) drives it and the stores
(``askd.store``) keep its changes. The wire's shapes are
``askd.protocol``'s, shared with the clients, the CLI and the MCP bridge.
The engine is not imported here (``from askd.core.registry import
Registry``): what needs only the records does not load it.
"""

from askd.core.errors import (
    AlreadyVoted,
    AskdError,
    Forbidden,
    InvalidAnswer,
    InvalidRequest,
    NoSeat,
    NotFound,
    NotAllowed,
    NotPending,
    SessionOwnerMismatch,
    TooManyPending,
    UserOffline,
)
from askd.core.events import Event, Send
from askd.core.lifecycle import Status
from askd.core.records import ALL_SESSIONS, AskInput, Connection, Limits, NotifyPolicy, Outbox, Request

__all__ = [
    "ALL_SESSIONS",
    "AlreadyVoted",
    "AskInput",
    "AskdError",
    "Connection",
    "Event",
    "Forbidden",
    "InvalidAnswer",
    "InvalidRequest",
    "Limits",
    "NoSeat",
    "NotFound",
    "NotAllowed",
    "NotPending",
    "NotifyPolicy",
    "Outbox",
    "Request",
    "Send",
    "SessionOwnerMismatch",
    "Status",
    "TooManyPending",
    "UserOffline",
]
