"""The ``UserClient``'s link: connect, subscribe, resend what waits for an
ack, and on any drop reconnect (capped exponential backoff, full jitter)
until the application closes the client or askd refuses its token."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from askd.client.discovery import resolve_token
from askd.client.errors import AuthError, ClientClosed, UntrustedCertificate
from askd.client.user_frames import UserFrames
from askd.client.user_state import Outgoing, log
from askd.protocol import codec


class UserLink(UserFrames):
    """The connection loop, over the state and frame reading below it."""

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
        # ssl only for wss://: websockets refuses an ssl argument for ws://, and
        # ssl=None on wss:// would turn TLS off rather than use the default.
        tls: dict[str, Any] = {"ssl": self._ssl} if self._ssl is not None else {}
        async with connect(
            self.url,
            additional_headers=headers,
            open_timeout=self._open_timeout,
            ping_interval=self._ping_interval,
            **tls,
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
            await ws.send(codec.dumps({"type": "subscribe", "sessionId": session, "id": frame_id}).decode())  # a text frame
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

    async def _send_outgoing(self, entry: Outgoing) -> None:
        ws = self._ws
        if ws is None or entry.sent_on == self._gen or entry.reply.done():
            return  # not connected: the next connection sends it
        entry.sent_on = self._gen
        try:
            await ws.send(entry.frame)
        except ConnectionClosed:
            pass  # resent by the next connection
