"""The user side: a WebSocket inbox that survives dropped links.

``UserClient`` connects with a user token, subscribes (``*`` by default),
and on any drop reconnects by itself (capped exponential backoff, full
jitter) and subscribes again, which makes askd re-push every pending
question. It hands the application each question once (by ``requestId``),
and an answer is kept and resent after every reconnect until askd
acknowledges it (the seed's ``sendReliable``); askd answers a resend of
something already answered with ``not_pending``, so resending is harmless.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import ssl
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from askd.client.backoff import Backoff
from askd.client.discovery import Discovery, TokenSource, resolve_token, ws_url
from askd.client.errors import AskdClientError, AuthError, ClientClosed, InvalidAnswer, UntrustedCertificate
from askd.client.events import (
    ENDED_WHILE_AWAY,
    CancelledEvent,
    EscalatedEvent,
    Event,
    ExtendedEvent,
    QuestionEvent,
    SnapshotEvent,
    read_frame,
)
from askd.protocol import events as ev
from askd.protocol.ids import ALL_SESSIONS
from askd.protocol.models import check_answers

log = logging.getLogger("askd.client")

Callback = Callable[[Any], Any]  # may return an awaitable


@dataclass(slots=True)
class _Outgoing:
    """A frame (answer, decline, extend) waiting for its ack, resent on
    every new connection; the reply is the ack's payload."""

    frame: str
    reply: asyncio.Future[dict[str, Any]]
    sent_on: int = -1  # the connection generation it was last sent on


class UserClient:
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
        self.url = ws_url(found.url(url))
        self._ssl = found.tls(self.url, ca_file)  # None for ws://
        self._token = token
        self._sessions = list(dict.fromkeys(sessions)) or [ALL_SESSIONS]
        self._callbacks = {"question": on_question, "cancelled": on_cancelled, "event": on_event}
        self._on_connect, self._on_disconnect = on_connect, on_disconnect
        self._backoff = Backoff(backoff_base, backoff_cap)
        self._open_timeout, self._ping_interval = open_timeout, ping_interval
        self._remember = remember

        self._ws: ClientConnection | None = None
        self._gen = 0  # connection generation, +1 per connection
        self._ready = asyncio.Event()  # connected and every subscribe acknowledged
        self._done = asyncio.Event()  # the run task ended (closed, or a fatal error)
        self._closing = False
        self.error: AskdClientError | None = None  # why the client stopped, when not closed by the app
        self._task: asyncio.Task[None] | None = None

        self._questions: dict[str, tuple[QuestionEvent, int]] = {}  # pending, with the generation that saw it
        self._ended: OrderedDict[str, None] = OrderedDict()  # recently ended requestIds (bounded)
        self._outbox: dict[str, _Outgoing] = {}
        self._subs_waiting: dict[str, str] = {}  # subscribe frame id -> session
        self._replayed: set[str] = set()  # requestIds pushed on the current connection
        self._queues: set[asyncio.Queue[Event | None]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

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
        entry = _Outgoing(json.dumps({**frame, "id": frame_id}), asyncio.get_running_loop().create_future())
        self._outbox[frame_id] = entry
        try:
            await self._send_outgoing(entry)
            return await asyncio.wait_for(asyncio.shield(entry.reply), timeout)
        finally:
            self._outbox.pop(frame_id, None)

    async def _send_outgoing(self, entry: _Outgoing) -> None:
        ws = self._ws
        if ws is None or entry.sent_on == self._gen or entry.reply.done():
            return  # not connected: the next connection sends it
        entry.sent_on = self._gen
        try:
            await ws.send(entry.frame)
        except ConnectionClosed:
            pass  # resent by the next connection

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

    def _deliver(self, event: Event) -> None:
        for queue in self._queues:
            queue.put_nowait(event)
        kind = "question" if isinstance(event, QuestionEvent) else "cancelled" if isinstance(event, CancelledEvent) else None
        for cb in (self._callbacks.get(kind) if kind else None, self._callbacks["event"]):
            if cb is not None:
                self._call(cb, event)

    def _call(self, cb: Callable[..., Any], *args: Any) -> None:
        """Run an application callback; a coroutine runs as its own task, so
        it may await ``answer()`` without blocking the reader."""
        try:
            result = cb(*args)
        except Exception:
            log.exception("askd UserClient callback failed")
            return
        if inspect.isawaitable(result):
            task = asyncio.ensure_future(result)
            self._tasks.add(task)
            task.add_done_callback(self._callback_done)

    def _callback_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("askd UserClient callback failed", exc_info=task.exception())

    # ---- the connection loop -------------------------------------------

    async def _run(self) -> None:
        try:
            while not self._closing:
                try:
                    await self._connect_once()
                except InvalidStatus as err:
                    status = err.response.status_code
                    if status in (401, 403):
                        body = err.response.body.decode("utf-8", "replace") if err.response.body else ""
                        self.error = AuthError(status, "unauthorized" if status == 401 else "forbidden", body or "token refused")
                        return
                    log.info("askd refused the WebSocket upgrade (HTTP %s); retrying", status)
                except ssl.SSLCertVerificationError as err:  # retrying cannot fix it
                    self.error = UntrustedCertificate(self.url, err.verify_message or str(err))
                    return
                except (OSError, asyncio.TimeoutError, WebSocketException) as err:
                    log.info("askd WebSocket link lost (%s); reconnecting", err or type(err).__name__)
                if self._closing:
                    return
                await asyncio.sleep(self._backoff.next())
        finally:
            self._finish()

    async def _connect_once(self) -> None:
        headers = {"Authorization": f"Bearer {resolve_token(self._token)}"}
        async with connect(
            self.url,
            additional_headers=headers,
            open_timeout=self._open_timeout,
            ping_interval=self._ping_interval,
            **({"ssl": self._ssl} if self._ssl is not None else {}),
        ) as ws:
            self._ws, self._gen = ws, self._gen + 1
            try:
                await self._opened(ws)
                async for raw in ws:
                    self._handle(raw)
            finally:
                self._ws = None
                if self._ready.is_set():
                    self._ready.clear()
                    self._backoff.reset()  # this link worked: the next attempt starts fast
                    if self._on_disconnect is not None:
                        self._call(self._on_disconnect)

    async def _opened(self, ws: ClientConnection) -> None:
        """Subscribe (askd replays what is pending, then acks), then resend
        every answer still waiting for its ack."""
        self._replayed = set()
        self._subs_waiting = {f"sub-{self._gen}-{i}": s for i, s in enumerate(self._sessions)}
        for frame_id, session in list(self._subs_waiting.items()):
            await ws.send(json.dumps({"type": "subscribe", "sessionId": session, "id": frame_id}))
        for entry in list(self._outbox.values()):
            await self._send_outgoing(entry)

    def _finish(self) -> None:
        if self._done.is_set():
            return
        self._done.set()
        self._ready.clear()
        err = self.error or ClientClosed("the client is closed")
        for entry in self._outbox.values():
            if not entry.reply.done():
                entry.reply.set_exception(err)
                entry.reply.exception()  # retrieved here: no "never retrieved" warning if nobody waits
        for queue in self._queues:
            queue.put_nowait(None)
        for task in list(self._tasks):
            task.cancel()

    # ---- frames -------------------------------------------------------

    def _handle(self, raw: str | bytes) -> None:
        read = read_frame(raw)
        if read is None:
            return  # not a frame, a newer daemon's type, or one that does not fit (logged)
        sent, frame = read
        kind, payload = frame["type"], frame.get("payload") or {}
        if kind == ev.ASK:
            self._question(QuestionEvent.of(frame, sent["payload"]))
        elif kind == ev.CANCELLED:
            self._end(payload["requestId"], payload["reason"], payload["answeredBy"], payload["via"], payload["declineReason"])
        elif kind == ev.EXTENDED:
            known = self._questions.get(payload["requestId"])
            if known is not None:  # a question this application was shown
                self._deliver(ExtendedEvent(known[0].session_id, known[0].request_id, payload["expiresAt"]))
        elif kind == ev.ESCALATED:
            known = self._questions.get(payload["requestId"])
            if known is not None:
                to, steps, added = payload["to"], payload["escalations"], payload["escalatedTo"]
                self._deliver(EscalatedEvent(known[0].session_id, known[0].request_id, to, steps, added))
        elif kind == ev.SNAPSHOT:
            self._deliver(SnapshotEvent(frame["sessionId"], payload["active"], payload["pending"]))
        elif kind == ev.ACK:
            self._ack(frame["id"], sent.get("payload") or {})
        elif kind == ev.ERROR:
            self._error(frame["id"], payload)
        # pong: nothing to do

    def _question(self, event: QuestionEvent) -> None:
        rid = event.request_id
        self._replayed.add(rid)
        if rid in self._questions or rid in self._ended:
            return  # a re-push after a reconnect: the application has it already
        self._questions[rid] = (event, self._gen)
        self._deliver(event)

    def _end(
        self,
        request_id: str,
        reason: str,
        answered_by: str | None = None,
        via: str | None = None,
        decline_reason: str | None = None,
    ) -> None:
        known = self._questions.pop(request_id, None)
        self._ended[request_id] = None
        while len(self._ended) > self._remember:
            self._ended.popitem(last=False)
        if known is not None:
            self._deliver(CancelledEvent(known[0].session_id, request_id, reason, answered_by, via, decline_reason))

    def _ack(self, frame_id: Any, payload: dict[str, Any]) -> None:
        if isinstance(frame_id, str) and frame_id in self._subs_waiting:
            self._subscribed(self._subs_waiting.pop(frame_id))
        elif isinstance(frame_id, str) and frame_id in self._outbox:
            reply = self._outbox[frame_id].reply
            if not reply.done():
                reply.set_result(payload)

    def _error(self, frame_id: Any, payload: dict[str, Any]) -> None:
        code, message = payload.get("code", "error"), payload.get("message", "")
        if isinstance(frame_id, str) and frame_id in self._outbox:
            reply = self._outbox[frame_id].reply
            if not reply.done():
                cls = InvalidAnswer if code == "invalid_answer" else AskdClientError
                reply.set_exception(cls(f"{message} ({code})"))
        elif isinstance(frame_id, str) and frame_id in self._subs_waiting:
            log.warning("askd refused subscribe to %s: %s (%s)", self._subs_waiting[frame_id], message, code)
            self._subscribed(self._subs_waiting.pop(frame_id), replayed=False)
        else:
            log.warning("askd error frame: %s (%s)", message, code)

    def _subscribed(self, session: str, replayed: bool = True) -> None:
        """A subscription's replay is complete: a question seen on an earlier
        connection that was not re-pushed now has ended while we were away."""
        if replayed:
            for rid, (event, gen) in list(self._questions.items()):
                if gen < self._gen and rid not in self._replayed and session in (ALL_SESSIONS, event.session_id):
                    self._end(rid, ENDED_WHILE_AWAY)
        if not self._subs_waiting and not self._ready.is_set():
            self._ready.set()
            if self._on_connect is not None:
                self._call(self._on_connect)
