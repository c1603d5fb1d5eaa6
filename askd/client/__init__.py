"""askd's Python client library.

- ``AgentClient`` / ``AsyncAgentClient``: ask a user and wait (HTTP
  long-polls that survive dropped links and 5xx).
- ``UserClient``: a user's reconnecting WebSocket inbox (asyncio).
- ``AdminClient``: the admin API, as the CLI uses it.
- ``Discovery``: where the local daemon is and how to get a token.

Questions and answers use the wire's one definition (``askd.protocol``:
``Question``, ``Option``), and what askd answers is parsed against it.
Importing this package loads neither the daemon's engine nor its settings.
"""

from askd.client.admin import AdminClient
from askd.client.agent import AgentClient, AsyncAgentClient
from askd.client.discovery import Discovery, NoToken
from askd.client.errors import (
    ApiError,
    AskdClientError,
    AuthError,
    ClientClosed,
    DaemonUnavailable,
    InvalidAnswer,
    QuestionLost,
    UntrustedCertificate,
)
from askd.client.events import CancelledEvent, EscalatedEvent, Event, ExtendedEvent, QuestionEvent, SnapshotEvent
from askd.client.http import RetryPolicy
from askd.client.results import Result, Status
from askd.client.user import UserClient
from askd.protocol.models import Option, Question

__all__ = [
    "AdminClient",
    "AgentClient",
    "ApiError",
    "AskdClientError",
    "AsyncAgentClient",
    "AuthError",
    "CancelledEvent",
    "EscalatedEvent",
    "ExtendedEvent",
    "ClientClosed",
    "DaemonUnavailable",
    "Discovery",
    "Event",
    "InvalidAnswer",
    "NoToken",
    "Option",
    "Question",
    "QuestionEvent",
    "QuestionLost",
    "Result",
    "RetryPolicy",
    "SnapshotEvent",
    "Status",
    "UntrustedCertificate",
    "UserClient",
]
