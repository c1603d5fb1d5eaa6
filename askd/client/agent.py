"""The agent side: ask a user and wait for the answer.

``ask`` never holds one HTTP request for the whole wait: it long-polls in
slices shorter than a minute (so proxies and tool-call limits never cut
it), and when the link drops or askd answers 5xx it comes back by
``requestId``. The ask itself carries an ``Idempotency-Key``, so retrying
it after a lost response returns the same question instead of a second one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import httpx

# AsyncAgentClient and the agent_calls names below were defined here: re-exported
# (the CLI imports DEFAULT_POLL_SECONDS from here).
from askd.client.agent_async import AsyncAgentClient
from askd.client.agent_calls import (
    DEFAULT_POLL_SECONDS,
    MAX_POLL_SECONDS,
    READ_GRACE_SECONDS,
    ApprovalOptions,
    AskOptions,
    approval_body,
    ask_body,
    new_key,
    setup,
)
from askd.client.discovery import TokenSource
from askd.client.http import RetryPolicy, drive_sync
from askd.client.results import Result

if TYPE_CHECKING:
    from askd.client.results import QuestionLike

__all__ = [
    "DEFAULT_POLL_SECONDS",
    "MAX_POLL_SECONDS",
    "READ_GRACE_SECONDS",
    "AgentClient",
    "AsyncAgentClient",
    "approval_body",
    "ask_body",
    "new_key",
]


class AgentClient:
    """Blocking agent client. ``url`` and ``token`` default to what
    ``askd.client.Discovery`` finds (``ASKD_URL``, ``ASKD_AGENT_TOKEN``, the
    local daemon's ``askd.json`` and secret). Over HTTPS it trusts the
    system's CAs and ``ca_file`` (default ``ASKD_CA_FILE``)."""

    def __init__(
        self,
        url: str | None = None,
        token: TokenSource | None = None,
        *,
        poll_seconds: float = DEFAULT_POLL_SECONDS,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
        ca_file: str | Path | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.url, self._flows, http = setup(url, token, poll_seconds, retry, ca_file, headers)
        self._http = httpx.Client(**http, transport=transport)

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def ask(
        self,
        session: str,
        user: str | None,
        questions: QuestionLike | Iterable[QuestionLike],
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        require_online: bool = False,
        parent_session: str | None = None,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[AskOptions],
    ) -> Result:
        """Ask and block until the question is answered, times out or is
        cancelled. ``timeout`` is the question's own (``timeoutSeconds``);
        ``remind`` ``(everySeconds, times)`` reminds those with no open tab
        (unset: the daemon's ``notify.remind_*``). ``host_key``: this
        process's secret (32 to 128 base64url characters) letting its own host
        answer for the person (``answer_for`` with the same key; protocol
        section 5); without it no agent token may."""
        body = ask_body(user, questions, metadata, timeout, require_online, parent_session, **options)
        return drive_sync(self._http, self._flows.ask(session, body, idempotency_key or new_key()))

    def request_approval(
        self,
        session: str,
        name: str,
        arguments: Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        wait: bool = True,
        **options: Unpack[ApprovalOptions],
    ) -> Result:
        """Ask permission to run ``name`` with ``arguments`` (protocol
        section 17) of ``user`` or ``to``, and block until approved, denied,
        timed out or withdrawn, riding through dropped links and restarts as
        ``ask`` does. Check ``result.approved`` and run ``result.arguments``
        (the person may have edited them when ``editable``); ``result.receipt``
        is the signed proof. ``wait=False`` returns the pending result at once
        (its ``request_id`` to ``wait`` on or ``withdraw``). ``quorum``: the
        approvals needed from distinct people; ``host_key`` as ``ask``'s (the
        host then fills at most one seat). ``ValueError`` before sending
        when the action is malformed (a bad schema, arguments not an object)."""
        return drive_sync(self._http, self._flows.approval(session, name, arguments, idempotency_key, wait, options))

    def submit(
        self,
        session: str,
        user: str | None,
        questions: QuestionLike | Iterable[QuestionLike],
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        require_online: bool = False,
        parent_session: str | None = None,
        *,
        idempotency_key: str | None = None,
        **options: Unpack[AskOptions],
    ) -> Result:
        """Ask without waiting; the result has the ``request_id`` to wait on."""
        body = ask_body(user, questions, metadata, timeout, require_online, parent_session, **options)
        return drive_sync(self._http, self._flows.submit(session, body, idempotency_key or new_key(), 0.0))

    def result(self, session: str, request_id: str) -> Result:
        return drive_sync(self._http, self._flows.result(session, request_id))

    def wait(self, session: str, request_id: str, timeout: float | None = None) -> Result:
        """Wait until the question ends, or ``timeout`` seconds (then the
        result may still be pending)."""
        return drive_sync(self._http, self._flows.wait(session, request_id, timeout))

    def pending(self, session: str) -> list[dict[str, Any]]:
        return drive_sync(self._http, self._flows.pending(session))

    def health(self) -> dict[str, Any]:
        """``GET /healthz`` once, no retries; ``DaemonUnavailable`` if nothing answers."""
        return drive_sync(self._http, self._flows.health())

    def jwks(self) -> dict[str, Any]:
        """askd's public receipt keys, ``GET /.well-known/jwks.json`` (protocol
        section 16): pass them to ``askd.receipts.verify``."""
        return drive_sync(self._http, self._flows.jwks())

    def withdraw(self, session: str, request_id: str) -> Result:
        """Take one question back: a pending one ends ``cancelled``; an ended
        one's result is returned unchanged. ``QuestionLost`` when unknown."""
        return drive_sync(self._http, self._flows.withdraw(session, request_id))

    def extend(self, session: str, request_id: str, seconds: float) -> Result:
        """Move the question's deadline ``seconds`` later (not the person's
        allowance); ``ApiError`` 409 ``not_allowed`` past the cap, the real
        result once it ended, ``QuestionLost`` when unknown."""
        return drive_sync(self._http, self._flows.extend(session, request_id, seconds))

    def cancel_session(self, session: str) -> int:
        """Cancel every pending question of the session and its sub-sessions."""
        return drive_sync(self._http, self._flows.cancel_session(session))

    def answer_for(
        self, session: str, request_id: str, user: str, answers: Mapping[str, Any], via: str = "mcp", *, host_key: str | None = None
    ) -> Result | None:
        """Answer one of this agent's questions for ``user``, who answered in
        the agent's own window (``via``): the result, or None when the question
        had already ended (or is not ``user``'s): the first answer won.
        ``ApiError`` 400 ``invalid_answer`` when the answers do not fit the
        questions, ``QuestionLost`` when askd does not know the question.
        ``host_key`` is the one the question was asked with: without the
        same key, from this agent, askd refuses (``AuthError`` 403 ``forbidden``)."""
        return drive_sync(self._http, self._flows.answer_for(session, request_id, user, answers, via, host_key))

    def decline_for(
        self, session: str, request_id: str, user: str, reason: str | None = None, via: str = "mcp", *, host_key: str | None = None
    ) -> Result | None:
        """Decline for ``user`` (with ``reason`` when given), as ``answer_for`` answers."""
        return drive_sync(self._http, self._flows.decline_for(session, request_id, user, reason, via, host_key))

    def approve_for(
        self,
        session: str,
        request_id: str,
        user: str,
        arguments: Mapping[str, Any] | None = None,
        scope: str | None = None,
        via: str = "mcp",
        *,
        host_key: str | None = None,
    ) -> Result | None:
        """One approval of this agent's action for ``user``, who approved in
        the agent's own window (protocol section 17): the result (still
        pending while a quorum needs more), or None when it had already ended
        (or is not ``user``'s). ``ApiError`` 409 ``already_voted``, 400 for
        arguments or a scope the action does not allow; 403 ``forbidden``
        without the ask's ``host_key``, or for a second person (a host
        relays for one person only)."""
        return drive_sync(self._http, self._flows.approve_for(session, request_id, user, arguments, scope, via, host_key))
