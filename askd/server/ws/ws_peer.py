"""The sending side of a tab's WebSocket, as the hub sees it (a ``Peer``):
frames in order with flow control, pings, a close or a drop. ``WsHandler``
(``ws.py``) adds the token, the frames it reads and the replies."""

from __future__ import annotations

from collections import deque
from typing import Any

import tornado.websocket
from tornado.iostream import StreamClosedError

from askd.server.context import Context
from askd.server.logs import get_logger

log = get_logger("askd.ws")

# Bytes a connection may have in Tornado's write buffer at once while more
# waits to be sent (send_frame): a few large questions.
FLIGHT_BYTES = 256 * 1024


class TabState:
    """What askd keeps of one tab's socket, in one object with slots.

    Tornado's handler has 27 attributes of its own once upgraded, and a
    class's instances share their ``__dict__``'s keys only up to 30: askd's
    dozen as attributes of the handler made every connection's dict a
    private one of 1.5 KB (docs/performance.md, the memory per idle connection). So the handler gets
    two, ``ctx`` and this."""

    __slots__ = (
        "conn_id", "user_id", "issued_at", "exp", "expires", "ping_group", "bucket",
        "in_flight", "waiting", "live_waiting", "replaying",
    )

    def __init__(self) -> None:
        self.conn_id: str | None = None
        self.user_id = ""
        self.issued_at: float | None = None  # the token's iat, for auth.not_before
        self.exp: float | None = None  # the token's exp
        self.expires: Any = None  # the loop timer that closes the socket at exp
        self.ping_group = -1  # while open: its group in ctx.pinger
        self.bucket: Any = None  # the frame rate limit (ws._TokenBucket)
        # Flow control (see send_frame): bytes handed to the stream and not
        # yet flushed to the kernel, and what waits for them to drain.
        self.in_flight = 0
        self.waiting: deque[tuple[bytes, bool]] | None = None  # (frame, live), made when first needed
        self.live_waiting = 0  # bytes of live events among them
        self.replaying = False


class PeerSocket(tornado.websocket.WebSocketHandler):
    ctx: Context
    tab: TabState

    def initialize(self, ctx: Context) -> None:
        self.ctx = ctx
        self.tab = TabState()

    @property
    def conn_id(self) -> str | None:
        return self.tab.conn_id

    @property
    def user_id(self) -> str:
        return self.tab.user_id

    @property
    def issued_at(self) -> float | None:
        return self.tab.issued_at

    def send_frame(self, frame: bytes) -> None:
        """Send ``frame``, in order with every earlier one.

        A subscribe's replay may be hundreds of large questions: it is
        written only as fast as the socket drains (``FLIGHT_BYTES`` or less
        at a time in Tornado's buffer, the rest waiting here as references to
        frames the hub holds anyway), so a slow reader gets all of it and
        only the ping timeout drops one that reads nothing. Live events
        still count against ``limits.max_buffered_bytes``: a peer that
        leaves that much of them unread is dropped.
        """
        if self.ws_connection is None or self.ws_connection.is_closing():
            return
        s = self.tab
        live = not s.replaying
        if s.waiting or (not live and s.in_flight >= self._flight_cap()):
            if s.waiting is None:
                s.waiting = deque()
            s.waiting.append((frame, live))
            if live:
                s.live_waiting += len(frame)
                if s.live_waiting > self.ctx.settings.limits.max_buffered_bytes:
                    self._drop_slow_peer()
            return
        self._write(frame)

    def _flight_cap(self) -> int:
        # Never near the stream's own cap (max_buffered_bytes), which drops.
        return min(FLIGHT_BYTES, self.ctx.settings.limits.max_buffered_bytes // 2)

    def _write(self, frame: bytes) -> None:
        try:
            # bytes with binary=False go out as a text frame, not re-encoded
            sent = self.write_message(frame, binary=False)
        except (tornado.websocket.WebSocketClosedError, StreamClosedError):
            pass
        except Exception:  # the peer left too much unread: drop it
            self._drop_slow_peer()
        else:
            size = len(frame)
            self.tab.in_flight += size
            sent.add_done_callback(lambda fut: self._drained(fut, size))

    def _drained(self, fut: Any, size: int) -> None:
        # A peer that goes away mid-write fails this future; take its
        # exception (else asyncio logs it as an error).
        if not fut.cancelled():
            fut.exception()
        s = self.tab
        s.in_flight -= size
        waiting = s.waiting
        while waiting and s.in_flight < self._flight_cap():
            if self.ws_connection is None or self.ws_connection.is_closing():
                waiting.clear()
                break
            frame, live = waiting.popleft()
            if live:
                s.live_waiting -= len(frame)
            self._write(frame)
        if waiting is not None and not waiting:
            s.waiting = None  # most connections never need one: no empty deque kept

    def _drop_slow_peer(self) -> None:
        log.warning("ws.slow_peer_dropped", limit=self.ctx.settings.limits.max_buffered_bytes)
        self.tab.waiting = None
        self.abort_peer()

    def ping_peer(self) -> None:
        """A WebSocket ping (``ctx.pinger`` sends one every interval)."""
        conn = self.ws_connection
        if conn is None or conn.is_closing():
            return
        try:
            conn.write_ping(b"")
        except StreamClosedError:
            pass
        except Exception:  # the peer left too much unread: drop it
            limit = self.ctx.settings.limits.max_buffered_bytes
            log.warning("ws.slow_peer_dropped", connectionId=self.conn_id, userId=self.user_id, limit=limit)
            self.abort_peer()

    def close_peer(self, code: int, reason: str) -> None:
        self.close(code, reason)

    def abort_peer(self) -> None:
        """Drop the TCP connection with no close handshake, as a network failure would."""
        conn = self.ws_connection
        if conn is not None and conn.stream is not None:  # type: ignore[attr-defined]
            conn.stream.close()  # type: ignore[attr-defined]


