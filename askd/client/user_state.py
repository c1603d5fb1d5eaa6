"""What a ``UserClient`` knows, and how it hands events to the application.

The state is set up here, once, for the layers above it: ``user_frames``
(what each frame from askd does to it), ``user_link`` (the connection and
its reconnects) and ``user`` (the application's API).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import ssl
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.client import ClientConnection

from askd.client.backoff import Backoff
from askd.client.discovery import TokenSource
from askd.client.errors import AskdClientError
from askd.client.events import CancelledEvent, Event, QuestionEvent

log = logging.getLogger("askd.client")

Callback = Callable[[Any], Any]  # may return an awaitable


@dataclass(slots=True)
class Outgoing:
    """A frame (answer, decline, extend) waiting for its ack, resent on
    every new connection; the reply is the ack's payload."""

    frame: str
    reply: asyncio.Future[dict[str, Any]]
    sent_on: int = -1  # the connection generation it was last sent on


class UserClientState:
    """The client's state and its delivery to the application (queues and
    callbacks). ``UserClient`` resolves its arguments and passes them here."""

    def __init__(
        self,
        *,
        url: str,
        ssl_context: ssl.SSLContext | None,
        token: TokenSource,
        sessions: list[str],
        callbacks: dict[str, Callback | None],
        on_connect: Callable[[], Any] | None,
        on_disconnect: Callable[[], Any] | None,
        backoff: Backoff,
        open_timeout: float,
        ping_interval: float | None,
        remember: int,
    ) -> None:
        self.url = url
        self._ssl = ssl_context  # None for ws://
        self._token = token
        self._sessions = sessions
        self._callbacks = callbacks
        self._on_connect, self._on_disconnect = on_connect, on_disconnect
        self._backoff = backoff
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
        self._outbox: dict[str, Outgoing] = {}
        self._subs_waiting: dict[str, str] = {}  # subscribe frame id -> session
        self._replayed: set[str] = set()  # requestIds pushed on the current connection
        self._queues: set[asyncio.Queue[Event | None]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()

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
