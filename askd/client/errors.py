"""What the client library raises."""

from __future__ import annotations

from typing import Any


class AskdClientError(Exception):
    """Base of every error ``askd.client`` raises."""


class DaemonUnavailable(AskdClientError):
    """askd did not answer (not running, unreachable, or failing with 5xx)
    for longer than the client was told to keep retrying."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"askd is not answering at {url} ({reason})")
        self.url, self.reason = url, reason


class UntrustedCertificate(AskdClientError):
    """askd serves TLS with a certificate this client does not trust (an
    unknown CA, or a name that does not match): retrying cannot help."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(
            f"the TLS certificate of {url} is not trusted ({reason}); "
            "give its CA bundle with --cacert, ASKD_CA_FILE or ca_file="
        )
        self.url, self.reason = url, reason


class ApiError(AskdClientError):
    """askd refused the call: ``status`` is the HTTP status, ``code`` the
    error code of its ``{"error": {...}}`` body (protocol section 5)."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(f"{message} ({status} {code})")
        self.status, self.code, self.message, self.details = status, code, message, details


class QuestionLost(AskdClientError):
    """askd no longer knows a question the client was waiting for: it
    restarted on ``store = memory`` (which keeps nothing), or the result outlived
    ``result_ttl_seconds``."""

    def __init__(self, session_id: str, request_id: str, reason: str | None = None) -> None:
        # ``reason``: the daemon's own 404 sentence, for a question this client
        # never saw (a withdraw by id), which says only what can be true.
        super().__init__(
            reason
            or f"question {request_id} of session {session_id} is no longer known "
            "(its result expired, or the daemon restarted on a memory store)"
        )
        self.session_id, self.request_id = session_id, request_id


class AuthError(ApiError):
    """The daemon refused the token (401) or its role (403)."""


class InvalidAnswer(AskdClientError):
    """The answers do not fit the question (``invalid_answer``)."""


class ClientClosed(AskdClientError):
    """The client was closed while the call waited."""
