"""What each frame from askd does to a ``UserClient``: a question shown
once, an ended one delivered, acks and errors matched to what was sent, and
the end of a subscription's replay (questions that ended while away)."""

from __future__ import annotations

from typing import Any

from askd.client.errors import AskdClientError, InvalidAnswer
from askd.client.events import (
    ENDED_WHILE_AWAY,
    CancelledEvent,
    EscalatedEvent,
    ExtendedEvent,
    QuestionEvent,
    SnapshotEvent,
    read_frame,
)
from askd.client.user_state import UserClientState, log
from askd.protocol import events as ev
from askd.protocol.ids import ALL_SESSIONS


class UserFrames(UserClientState):
    """Reads askd's frames into the client's state."""

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
