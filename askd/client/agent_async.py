"""``AsyncAgentClient``: ``AgentClient``'s calls for asyncio, driving the
same flows (``agent_calls``) with an ``httpx.AsyncClient``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import httpx

from askd.client.agent_calls import DEFAULT_POLL_SECONDS, ApprovalOptions, AskOptions, ask_body, new_key, setup
from askd.client.discovery import TokenSource
from askd.client.http import RetryPolicy, drive_async
from askd.client.results import Result

if TYPE_CHECKING:
    from askd.client.results import QuestionLike


class AsyncAgentClient:
    """``AgentClient`` for asyncio; the same methods, awaited."""

    def __init__(
        self,
        url: str | None = None,
        token: TokenSource | None = None,
        *,
        poll_seconds: float = DEFAULT_POLL_SECONDS,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        ca_file: str | Path | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.url, self._flows, http = setup(url, token, poll_seconds, retry, ca_file, headers)
        self._http = httpx.AsyncClient(**http, transport=transport)

    async def __aenter__(self) -> AsyncAgentClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def ask(
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
        body = ask_body(user, questions, metadata, timeout, require_online, parent_session, **options)
        return await drive_async(self._http, self._flows.ask(session, body, idempotency_key or new_key()))

    async def request_approval(
        self,
        session: str,
        name: str,
        arguments: Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        wait: bool = True,
        **options: Unpack[ApprovalOptions],
    ) -> Result:
        """See ``AgentClient.request_approval``."""
        return await drive_async(self._http, self._flows.approval(session, name, arguments, idempotency_key, wait, options))

    async def submit(
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
        body = ask_body(user, questions, metadata, timeout, require_online, parent_session, **options)
        return await drive_async(self._http, self._flows.submit(session, body, idempotency_key or new_key(), 0.0))

    async def result(self, session: str, request_id: str) -> Result:
        return await drive_async(self._http, self._flows.result(session, request_id))

    async def wait(self, session: str, request_id: str, timeout: float | None = None) -> Result:
        return await drive_async(self._http, self._flows.wait(session, request_id, timeout))

    async def pending(self, session: str) -> list[dict[str, Any]]:
        return await drive_async(self._http, self._flows.pending(session))

    async def health(self) -> dict[str, Any]:
        return await drive_async(self._http, self._flows.health())

    async def jwks(self) -> dict[str, Any]:
        """See ``AgentClient.jwks``."""
        return await drive_async(self._http, self._flows.jwks())

    async def withdraw(self, session: str, request_id: str) -> Result:
        return await drive_async(self._http, self._flows.withdraw(session, request_id))

    async def extend(self, session: str, request_id: str, seconds: float) -> Result:
        return await drive_async(self._http, self._flows.extend(session, request_id, seconds))

    async def cancel_session(self, session: str) -> int:
        return await drive_async(self._http, self._flows.cancel_session(session))

    async def answer_for(
        self, session: str, request_id: str, user: str, answers: Mapping[str, Any], via: str = "mcp", *, host_key: str | None = None
    ) -> Result | None:
        """See ``AgentClient.answer_for``."""
        return await drive_async(self._http, self._flows.answer_for(session, request_id, user, answers, via, host_key))

    async def decline_for(
        self, session: str, request_id: str, user: str, reason: str | None = None, via: str = "mcp", *, host_key: str | None = None
    ) -> Result | None:
        """See ``AgentClient.decline_for``."""
        return await drive_async(self._http, self._flows.decline_for(session, request_id, user, reason, via, host_key))

    async def approve_for(
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
        """See ``AgentClient.approve_for``."""
        return await drive_async(self._http, self._flows.approve_for(session, request_id, user, arguments, scope, via, host_key))
