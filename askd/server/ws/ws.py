"""The user's WebSocket (spec section 3): authenticate before the upgrade,
then parse each frame, hand it to the hub and reply."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import structlog

from askd.core import AlreadyVoted, Forbidden, InvalidAnswer, InvalidRequest, NotAllowed, NotPending
from askd.core import events as ev
from askd.core.events import Event, isotime
from askd.protocol.frames import (
    AnswerFrame,
    ApproveFrame,
    DeclineFrame,
    ExtendFrame,
    FrameError,
    Ping,
    Subscribe,
    Unsubscribe,
    parse_frame,
)
from askd.server.context import Context
from askd.server.front_door import door
from askd.server.front_door.auth import authenticate
from askd.server.front_door.proxy import origin_of
from askd.server.http.base import ApiError, JsonErrors, house_headers
from askd.server.logs import get_logger
from askd.server.ws.ws_peer import PeerSocket
from askd.store import StoreUnavailable

log = get_logger("askd.ws")

# The close code when the socket's token expires or is revoked (protocol section 3, close codes).
TOKEN_ENDED_CODE = 4001


class _TokenBucket:
    __slots__ = ("rate", "burst", "tokens", "at")

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.at = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class WsHandler(JsonErrors, PeerSocket):
    # Its state is ``self.tab`` (ws_peer.TabState): no attribute of its own here.

    def initialize(self, ctx: Context) -> None:
        super().initialize(ctx)
        limits = ctx.settings.limits
        self.tab.bucket = _TokenBucket(limits.frames_per_second, limits.frames_burst)

    # ---- before the upgrade -------------------------------------------

    def set_default_headers(self) -> None:
        house_headers(self)

    # The error envelope and exception mapping are the API's (JsonErrors).
    # A refused handshake, or a request that is no handshake at all (POST
    # /ws), ends its connection: nothing else is served on /ws.
    close_after_error = True

    def prepare(self) -> None:
        structlog.contextvars.clear_contextvars()
        principal = authenticate(self.ctx, self.request, "user", allow_query=True)
        door.prove(self.request.connection)
        self.tab.user_id = principal.sub or ""
        self.tab.issued_at, self.tab.exp = principal.iat, principal.exp
        # Checked here too (Tornado checks again after prepare) so that the
        # 403 carries the JSON error envelope instead of Tornado's plain text.
        origin = self.request.headers.get("Origin")
        if origin is not None and not self.check_origin(origin):
            raise ApiError("forbidden", f"Origin {origin[:200]!r} may not open /ws (see allowed_origins and public_url)")
        if self.ctx.hub.stopping:
            raise ApiError("shutting_down", "askd is stopping")
        cap = self.ctx.settings.limits.max_connections_per_user
        if self.ctx.hub.peer_count(self.user_id) >= cap:
            raise ApiError("too_many_connections", f"user {self.user_id} already has {cap} open connections (limits.max_connections_per_user)")

    def check_origin(self, origin: str) -> bool:
        if origin in self.ctx.settings.allowed_origins:
            return True
        if self.ctx.public_origin is not None and origin.lower() == self.ctx.public_origin:
            return True
        # The daemon's own origin: the same scheme, host and port as the
        # request (its Host, or a trusted proxy's X-Forwarded-Host and -Proto).
        try:
            return origin_of(origin) == origin_of(f"{self.request.protocol}://{self.request.host}")
        except ValueError:  # a port that is not a number
            return False

    # ---- the connection -----------------------------------------------

    def open(self) -> None:
        self.set_nodelay(True)  # small frames must not wait on Nagle
        stream = self.ws_connection.stream if self.ws_connection else None  # type: ignore[attr-defined]
        if stream is not None:
            stream.max_write_buffer_size = self.ctx.settings.limits.max_buffered_bytes
        s = self.tab
        s.conn_id = self.ctx.hub.connect(self, s.user_id, self.request.remote_ip or "")
        s.ping_group = self.ctx.pinger.add(self)
        if s.exp is not None:
            loop = asyncio.get_running_loop()
            # The loop's clock is monotonic; exp is wall-clock time.
            delay = max(0.0, s.exp - time.time())
            s.expires = loop.call_at(loop.time() + delay, self.token_ended, "token expired")
        self._bind()
        log.info("ws.connected", remote=self.request.remote_ip)

    def token_ended(self, reason: str) -> None:
        """The token this socket opened with expired or was revoked: close
        with 4001, and the page asks for a new one."""
        self._bind()
        log.info("ws.token_ended", reason=reason)
        self.close(TOKEN_ENDED_CODE, reason)

    def _bind(self) -> None:
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(connectionId=self.conn_id, userId=self.user_id)

    def on_close(self) -> None:
        s = self.tab
        if s.conn_id is None:
            return
        self._bind()
        if s.expires is not None:
            s.expires.cancel()
            s.expires = None
        self.ctx.pinger.discard(self, s.ping_group)
        self.ctx.hub.disconnect(s.conn_id)
        log.info("ws.disconnected", code=self.close_code, reason=self.close_reason)
        s.conn_id = None

    def on_message(self, message: str | bytes) -> Awaitable[None] | None:
        # A frame that changes a question returns an awaitable (its store
        # write), and a (un)subscribe on a shared store (its presence write);
        # Tornado reads this connection's next frame once it is done.
        if self.conn_id is None:
            return None
        if isinstance(message, bytes):
            self.close(1003, "binary frames are not accepted")
            return None
        self._bind()
        if not self.tab.bucket.take():
            self._reply(Event(ev.ERROR, payload={"code": "rate_limited", "message": "too many frames; closing"}))
            log.warning("ws.rate_limited")
            self.close(1008, "rate limited")
            return None
        try:
            frame = parse_frame(message)
        except FrameError as err:
            payload: dict[str, Any] = {"code": err.code, "message": err.message}
            if err.details:
                payload["details"] = err.details
            self._reply(Event(ev.ERROR, payload=payload, id=err.id))
            return None
        except Exception:
            self._internal(None)
            return None
        try:
            return self._dispatch(frame)
        except Forbidden as err:
            self._reply(Event(ev.ERROR, getattr(frame, "sessionId", None), {"code": "forbidden", "message": err.message}, frame.id))
            return None
        except Exception:
            self._internal(frame)
            return None

    def _internal(self, frame: Any) -> None:
        """A frame askd failed on (a bug) is answered and logged; the socket,
        and the person's other questions on it, stay (Tornado would drop it
        with 1006). The frames that write (``_end``, ``_extend``) call it too."""
        log.exception("ws.frame_failed")
        session_id, frame_id = getattr(frame, "sessionId", None), getattr(frame, "id", None)
        self._reply(Event(ev.ERROR, session_id, {"code": "internal", "message": "askd failed on this frame; it is logged"}, frame_id))

    def on_pong(self, data: bytes) -> None:
        self.ctx.pinger.answered(self)

    def _dispatch(self, frame: Any) -> Awaitable[None] | None:
        hub, conn_id = self.ctx.hub, self.conn_id
        assert conn_id is not None
        if isinstance(frame, Ping):
            self._reply(Event(ev.PONG, id=frame.id))
        elif isinstance(frame, Subscribe):
            structlog.contextvars.bind_contextvars(sessionId=frame.sessionId)
            cap = self.ctx.settings.limits.max_subscriptions_per_connection
            held = hub.subscriptions(conn_id)  # the registry's own record, not a copy
            if frame.sessionId not in held and len(held) >= cap:
                message = f"this connection already holds {cap} subscriptions (limits.max_subscriptions_per_connection); unsubscribe first"
                self._reply(Event(ev.ERROR, frame.sessionId, {"code": "too_many_subscriptions", "message": message}, frame.id))
                return None
            # The replay is paced by the socket's drain (send_frame), so a
            # slow reader gets every pending question.
            self.tab.replaying = True
            try:
                pushed = hub.subscribe(conn_id, frame.sessionId, frame.id)
                if frame.id is not None:  # tells the client the replay is complete
                    return self._ack_when_listed(Event(ev.ACK, frame.sessionId, {"repushed": pushed}, frame.id))
            finally:
                self.tab.replaying = False
        elif isinstance(frame, Unsubscribe):
            hub.unsubscribe(conn_id, frame.sessionId)
            return self._ack_when_listed(Event(ev.ACK, frame.sessionId, {}, frame.id))
        elif isinstance(frame, AnswerFrame):
            structlog.contextvars.bind_contextvars(sessionId=frame.sessionId, requestId=frame.requestId)
            answer = partial(hub.answer, frame.sessionId, frame.requestId, frame.answers, user_id=self.user_id)
            return self._end(frame, answer, "the answer was not taken")
        elif isinstance(frame, DeclineFrame):
            structlog.contextvars.bind_contextvars(sessionId=frame.sessionId, requestId=frame.requestId)
            decline = partial(hub.decline, frame.sessionId, frame.requestId, frame.reason, user_id=self.user_id)
            return self._end(frame, decline, "the decline was not taken")
        elif isinstance(frame, ExtendFrame):
            structlog.contextvars.bind_contextvars(sessionId=frame.sessionId, requestId=frame.requestId)
            return self._extend(frame)
        elif isinstance(frame, ApproveFrame):
            structlog.contextvars.bind_contextvars(sessionId=frame.sessionId, requestId=frame.requestId)
            return self._approve(frame)
        return None

    def _ack_when_listed(self, ack: Event) -> Awaitable[None] | None:
        """Send a (un)subscribe's ack once every node's connection listing
        shows the change (at once but on a shared store): the admin's
        listing after the ack agrees with it, on every node."""
        listed = self.ctx.hub.store.cluster.presence_written()
        if listed is None:
            self._reply(ack)
            return None

        async def later() -> None:
            await listed
            self._reply(ack)

        return later()

    async def _end(self, frame: AnswerFrame | DeclineFrame, ends: Callable[..., Awaitable[Any]], what: str) -> None:
        """An answer or a decline: ``ends`` (the hub's ``answer`` or ``decline``
        for this frame) ends the question and replies as the spec says."""
        try:
            # The hub sends every connection the `cancelled` event; the ack
            # must reach the sender first, so it is written before the flush.
            await ends(before_flush=lambda: self._reply(Event(ev.ACK, frame.sessionId, {"accepted": True}, frame.id)))
        except NotPending:
            self._reply(Event(ev.ACK, frame.sessionId, {"accepted": False, "reason": "not_pending"}, frame.id))
        except InvalidAnswer as err:  # an answer's only
            self._reply(Event(ev.ERROR, frame.sessionId, {"code": "invalid_answer", "message": err.message}, frame.id))
        except InvalidRequest as err:  # an answer to an action
            self._invalid(frame, err)
        except StoreUnavailable:
            self._store_failed(frame, what)
        except Exception:
            self._internal(frame)

    async def _approve(self, frame: ApproveFrame) -> None:
        """One approval (section 17): the ack says how many it has now and
        needs; the tabs hear of it (``voted``, or the end) after the ack."""
        def ack(payload: dict[str, Any]) -> None:
            self._reply(Event(ev.ACK, frame.sessionId, payload, frame.id))

        def approved() -> None:
            req = self.ctx.hub.get(frame.sessionId, frame.requestId)
            assert req is not None and req.approval is not None
            ack({"accepted": True, "approvals": req.approvals, "needed": req.approval.quorum})

        try:
            await self.ctx.hub.approve(
                frame.sessionId, frame.requestId, frame.arguments, frame.scope, user_id=self.user_id, before_flush=approved
            )
        except NotPending:
            ack({"accepted": False, "reason": "not_pending"})
        except AlreadyVoted:
            ack({"accepted": False, "reason": "already_voted"})
        except InvalidRequest as err:
            self._invalid(frame, err)
        except StoreUnavailable:
            self._store_failed(frame, "the approval was not taken")
        except Exception:
            self._internal(frame)

    def _invalid(self, frame: AnswerFrame | DeclineFrame | ApproveFrame, err: InvalidRequest) -> None:
        payload: dict[str, Any] = {"code": "invalid_request", "message": err.message}
        if err.details:
            payload["details"] = err.details
        self._reply(Event(ev.ERROR, frame.sessionId, payload, frame.id))

    async def _extend(self, frame: ExtendFrame) -> None:
        def ack(payload: dict[str, Any]) -> None:
            self._reply(Event(ev.ACK, frame.sessionId, payload, frame.id))

        def extended() -> None:  # the sender's ack precedes every tab's `extended` event
            req = self.ctx.hub.get(frame.sessionId, frame.requestId)
            assert req is not None
            ack({"extended": True, "expiresAt": isotime(req.expires_at)})

        try:
            await self.ctx.hub.extend(frame.sessionId, frame.requestId, frame.seconds, user_id=self.user_id, before_flush=extended)
        except NotPending:
            ack({"extended": False, "reason": "not_pending"})
        except NotAllowed:
            ack({"extended": False, "reason": "not_allowed"})
        except StoreUnavailable:
            self._store_failed(frame, "the extension was not taken")
        except Exception:
            self._internal(frame)

    def _store_failed(self, frame: AnswerFrame | DeclineFrame | ExtendFrame | ApproveFrame, what: str) -> None:
        message = f"askd cannot write to its store right now; {what}, send it again"
        self._reply(Event(ev.ERROR, frame.sessionId, {"code": "store_unavailable", "message": message}, frame.id))

    def _reply(self, event: Event) -> None:
        self.send_frame(event.frame)
