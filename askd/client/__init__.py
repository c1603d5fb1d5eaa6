"""askd's Python client library.

- ``AgentClient`` / ``AsyncAgentClient``: ask a user and wait (HTTP
  long-polls that survive dropped links and 5xx).
- ``UserClient``: a user's reconnecting WebSocket inbox (asyncio).
- ``AdminClient``: the admin API, as the CLI uses it.
- ``Discovery``: where the local daemon is and how to get a token.

Questions and answers use the wire's one definition (``askd.protocol``:
``Question``, ``Option``), and what askd answers is parsed against it.
Importing this package loads neither the daemon's engine nor its settings,
and each name is imported when first used: ``askd hook`` reaches the HTTP
code (``askd.client.http``) without loading the WebSocket client or pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # `X as X`: the names this package re-exports, for type checkers (the
    # imports at run time are lazy, in __getattr__ below).
    from askd.client.admin import (
        AdminClient as AdminClient,
    )
    from askd.client.agent import (
        AgentClient as AgentClient,
        AsyncAgentClient as AsyncAgentClient,
    )
    from askd.client.discovery import (
        Discovery as Discovery,
        NoToken as NoToken,
    )
    from askd.client.errors import (
        ApiError as ApiError,
        AskdClientError as AskdClientError,
        AuthError as AuthError,
        ClientClosed as ClientClosed,
        DaemonUnavailable as DaemonUnavailable,
        InvalidAnswer as InvalidAnswer,
        QuestionLost as QuestionLost,
        UntrustedCertificate as UntrustedCertificate,
    )
    from askd.client.events import (
        CancelledEvent as CancelledEvent,
        EscalatedEvent as EscalatedEvent,
        Event as Event,
        ExtendedEvent as ExtendedEvent,
        QuestionEvent as QuestionEvent,
        SnapshotEvent as SnapshotEvent,
    )
    from askd.client.http import (
        RetryPolicy as RetryPolicy,
    )
    from askd.client.results import (
        Result as Result,
        Status as Status,
    )
    from askd.client.user import (
        UserClient as UserClient,
    )
    from askd.protocol.models import (
        Option as Option,
        Question as Question,
    )

# Each public name and the module that defines it.
_HOMES = {
    "AdminClient": "askd.client.admin",
    "AgentClient": "askd.client.agent",
    "AsyncAgentClient": "askd.client.agent",
    "Discovery": "askd.client.discovery",
    "NoToken": "askd.client.discovery",
    "ApiError": "askd.client.errors",
    "AskdClientError": "askd.client.errors",
    "AuthError": "askd.client.errors",
    "ClientClosed": "askd.client.errors",
    "DaemonUnavailable": "askd.client.errors",
    "InvalidAnswer": "askd.client.errors",
    "QuestionLost": "askd.client.errors",
    "UntrustedCertificate": "askd.client.errors",
    "CancelledEvent": "askd.client.events",
    "EscalatedEvent": "askd.client.events",
    "Event": "askd.client.events",
    "ExtendedEvent": "askd.client.events",
    "QuestionEvent": "askd.client.events",
    "SnapshotEvent": "askd.client.events",
    "RetryPolicy": "askd.client.http",
    "Result": "askd.client.results",
    "Status": "askd.client.results",
    "UserClient": "askd.client.user",
    "Option": "askd.protocol.models",
    "Question": "askd.protocol.models",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))
