"""The user side: a WebSocket inbox that survives dropped links.

``UserClient`` connects with a user token, subscribes (``*`` by default),
and on any drop reconnects by itself (capped exponential backoff, full
jitter) and subscribes again, which makes askd re-push every pending
question. It hands the application each question once (by ``requestId``),
and an answer is kept and resent after every reconnect until askd
acknowledges it, so an answer given while the link was down is not lost;
askd answers a resend of something already answered with ``not_pending``,
so resending is harmless.

This module is the application's API; the client's state is in
``user_state``, what askd's frames do to it in ``user_frames``, and the
connection and its reconnects in ``user_link``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

from askd.client.backoff import Backoff
from askd.client.discovery import Discovery, TokenSource, ws_url
from askd.client.errors import ClientClosed, InvalidAnswer
from askd.client.events import Event, QuestionEvent
from askd.client.user_link import UserLink
from askd.client.user_state import Callback, Outgoing
from askd.protocol import codec
from askd.protocol.ids import ALL_SESSIONS
from askd.protocol.models import check_answers

__all__ = ["Callback", "UserClient"]


class UserClient(UserLink):
    """A user's reconnecting WebSocket client.

    ``url`` is the daemon's public URL (``http://host:port``) or its
    ``ws://host:port/ws``; default: what ``Discovery`` finds. ``token`` is a
    user token (or a callable returning one, called on every connect);
    without it, ``user`` names the user and a token is minted from the local
    daemon's secret. Over WSS it trusts the system's CAs and ``ca_file``
    (default ``ASKD_CA_FILE``); a certificate it does not trust stops it
    with ``UntrustedCertificate``.

    Use ``async with UserClient(...) as client:`` and either pass callbacks
    (``on_question``, ``on_cancelled``, ``on_event``; plain functions or
    coroutine functions) or iterate ``async for event in client``.
    """

    def __init__(
        self,
        url: str | None = None,
        token: TokenSource | None = None,
        *,
        user: str | None = None,
        sessions: Iterable[str] = (ALL_SESSIONS,),
        on_question: Callback | None = None,
        on_cancelled: Callback | None = None,
        on_event: Callback | None = None,
        on_connect: Callable[[], Any] | None = None,
        on_disconnect: Callable[[], Any] | None = None,
        backoff_base: float = 0.2,
        backoff_cap: float = 10.0,
        open_timeout: float = 10.0,
        ping_interval: float | None = 20.0,
        remember: int = 10_000,
        ca_file: str | Path | None = None,
    ) -> None:
        found = Discovery()
        if token is None:
            if not user:
                raise ValueError("UserClient needs a token, or user= to mint one from the local daemon's secret")
            token = found.user_token(user)
        url = ws_url(found.url(url))
        super().__init__(
            url=url,
            ssl_context=found.tls(url, ca_file),  # None for ws://
            token=token,
            sessions=list(dict.fromkeys(sessions)) or [ALL_SESSIONS],
            callbacks={"question": on_question, "cancelled": on_cancelled, "event": on_event},
            on_connect=on_connect,
            on_disconnect=on_disconnect,
            backoff=Backoff(backoff_base, backoff_cap),
            open_timeout=open_timeout,
            ping_interval=ping_interval,
            remember=remember,
        )

    # ---- lifecycle ----------------------------------------------------

    async def __aenter__(self) -> UserClient:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="askd-user-client")

    async def close(self) -> None:
        self._closing = True
        ws = self._ws
        if ws is not None:
            try:
                await ws.close()  # a clean 1000, not the 1011 a cancelled task would send
            except Exception:
                pass
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        self._finish()

    @property
    def connected(self) -> bool:
        """Connected and every subscription's replay received."""
        return self._ready.is_set()

    @property
    def pending(self) -> list[QuestionEvent]:
        """The questions waiting for this user, as far as this client knows, oldest first."""
        return [ev for ev, _ in self._questions.values()]

    async def wait_connected(self, timeout: float | None = None) -> None:
        """Wait until connected and subscribed; raises the fatal error (a
        refused token) or ``ClientClosed`` if the client stopped instead."""
        if not self._ready.is_set():
            waits = [asyncio.ensure_future(self._ready.wait()), asyncio.ensure_future(self._done.wait())]
            try:
                await asyncio.wait_for(asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED), timeout)
            finally:
                for w in waits:
                    w.cancel()
        if not self._ready.is_set():
            raise self.error or ClientClosed("the client is closed")

    # ---- answering ----------------------------------------------------

    async def answer(
        self,
        request: QuestionEvent | str,
        answers: dict[str, Any],
        *,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> bool:
        """Answer a question; True when askd accepted it, False when it was
        no longer pending (answered in another tab, timed out, cancelled).
        Kept and resent across reconnects until askd replies. After a drop,
        the reply to a resend may be False although the first copy was the
        one that answered (its ack was lost with the link); the agent has
        the answer either way. Raises ``InvalidAnswer`` for answers that do
        not fit the question."""
        if isinstance(request, QuestionEvent):
            request_id, session_id = request.request_id, request.session_id
        else:
            request_id = request
        known = self._questions.get(request_id)
        if session_id is None:
            if known is None:
                raise ValueError(f"unknown question {request_id}: pass session_id=")
            session_id = known[0].session_id
        if known is not None:
            problem = check_answers(answers, {q.question: q.multiSelect for q in known[0].questions})
            if problem:
                raise InvalidAnswer(problem)
        frame = {"type": "ask_user_questions_result", "sessionId": session_id, "requestId": request_id, "answers": answers}
        return (await self._request(frame, timeout)).get("accepted") is True

    async def decline(
        self,
        request: QuestionEvent | str,
        reason: str | None = None,
        *,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> bool:
        """Refuse to answer (``reason`` optional, at most 1,000 characters);
        True when askd took it, False when the question was no longer
        pending. Kept and resent across reconnects as ``answer`` is."""
        request_id, session_id = self._which(request, session_id)
        frame: dict[str, Any] = {"type": "decline", "sessionId": session_id, "requestId": request_id}
        if reason is not None:
            frame["reason"] = reason
        return (await self._request(frame, timeout)).get("accepted") is True

    async def extend(
        self,
        request: QuestionEvent | str,
        seconds: float,
        *,
        session_id: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Ask for ``seconds`` more (up to what the question allows). Returns
        askd's verdict: ``{"extended": True, "expiresAt": ...}`` or
        ``{"extended": False, "reason": "not_allowed" | "not_pending"}``."""
        request_id, session_id = self._which(request, session_id)
        frame = {"type": "extend", "sessionId": session_id, "requestId": request_id, "seconds": seconds}
        return await self._request(frame, timeout)

    def _which(self, request: QuestionEvent | str, session_id: str | None) -> tuple[str, str]:
        if isinstance(request, QuestionEvent):
            return request.request_id, request.session_id
        if session_id is None:
            known = self._questions.get(request)
            if known is None:
                raise ValueError(f"unknown question {request}: pass session_id=")
            session_id = known[0].session_id
        return request, session_id

    async def _request(self, frame: dict[str, Any], timeout: float | None) -> dict[str, Any]:
        """Send a frame that askd acks, kept until it replies; the ack's payload."""
        frame_id = f"{frame['type'][:3]}-{uuid.uuid4().hex}"
        entry = Outgoing(codec.dumps({**frame, "id": frame_id}).decode(), asyncio.get_running_loop().create_future())
        self._outbox[frame_id] = entry
        try:
            await self._send_outgoing(entry)
            return await asyncio.wait_for(asyncio.shield(entry.reply), timeout)
        finally:
            self._outbox.pop(frame_id, None)

    # ---- events -------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[Event]:
        return self.events()

    async def events(self) -> AsyncIterator[Event]:
        """Every event from now on, starting with a ``QuestionEvent`` for
        each question already pending, so a late iterator misses nothing.
        Ends when the client closes (raising its error if it failed)."""
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        for ev in self.pending:
            queue.put_nowait(ev)
        if self._done.is_set():
            queue.put_nowait(None)
        self._queues.add(queue)
        try:
            while (item := await queue.get()) is not None:
                yield item
        finally:
            self._queues.discard(queue)
        if self.error is not None:
            raise self.error
