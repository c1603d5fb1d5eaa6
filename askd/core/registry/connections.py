"""The connections: who is connected, what each subscribes to, and what they are sent.

It owns the connections (by id and by user) and the sends queued for the
front end's next ``drain``. Connection events apply at once (nothing is
stored): ``connect``, ``disconnect``, ``subscribe`` (with the replay of the
pending questions a subscriber may have missed) and ``unsubscribe``. The other parts send
through it: to users' connections, or to a question's audience as it is now.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from askd.core import events as ev
from askd.core.registry.audiences import Audiences
from askd.core.registry.sessions import SessionBook
from askd.core.errors import Forbidden
from askd.core.events import Event, Send
from askd.core.records import ALL_SESSIONS, Connection, Counters, Outbox, Request, Session
from askd.core.selectors import subscribed
from askd.core.smallmap import SmallMap


class Connections:
    def __init__(
        self, book: SessionBook, audiences: Audiences, counters: Counters, clock: Callable[[], float], box: Outbox
    ) -> None:
        self.conns: dict[str, Connection] = {}
        # Most users hold one connection: SmallMaps, not dicts.
        self.user_conns: dict[str, SmallMap[str, Connection]] = {}
        self._book = book
        self._audiences = audiences
        self._counters = counters
        self._clock = clock
        self._box = box  # the outbox being filled: its ``sends``

    # ---- sending ------------------------------------------------------

    def send_to_users(self, users: Iterable[str], event: Event) -> None:
        to = tuple(c for u in sorted(users) for c in self.user_conns.get(u, ()))
        if to:
            self._box.sends.append(Send(to, event))

    def send_to_audience(self, req: Request, event: Event) -> None:
        """Send to whom the question is asked of now (``Audiences.of``). A
        question of one user (no team, no steps: the usual one) goes to that
        user's connections without a set of one built and sorted (docs/performance.md)."""
        if req.request_id in self._audiences.team:
            self.send_to_users(self._audiences.resolve(req.to), event)
            return
        conns = self.user_conns.get(req.user_id)
        if conns:
            self._box.sends.append(Send(tuple(conns), event))

    # ---- connection events --------------------------------------------

    def connect(self, conn_id: str, user_id: str, remote: str = "") -> Connection:
        if conn_id in self.conns:
            raise ValueError(f"connection {conn_id} is already connected")
        conn = Connection(conn_id, user_id, self._clock(), remote)
        self.conns[conn_id] = conn
        conns = self.user_conns.get(user_id)
        if conns is None:
            conns = self.user_conns[user_id] = SmallMap()
        conns[conn_id] = conn
        return conn

    def disconnect(self, conn_id: str) -> None:
        """A connection went away. This never ends a question: a
        person may close the page and answer later, from it or elsewhere."""
        conn = self.conns.pop(conn_id, None)
        if conn is None:
            return
        conns = self.user_conns[conn.user_id]
        del conns[conn_id]
        if not conns:
            del self.user_conns[conn.user_id]

    def subscribe(self, conn_id: str, session_id: str, reply_id: Any = None) -> int:
        """Subscribe and re-push the pending questions (a page that reconnects
        missed what was asked meanwhile).

        For one session: a ``session_snapshot`` then each pending question,
        oldest first. For ``*``: the same for every session of the user that
        has pending questions. Snapshots echo ``reply_id`` (the subscribe
        frame's ``id``). Returns the number of questions re-pushed."""
        conn = self.conns[conn_id]
        sessions = self._book.sessions
        if session_id == ALL_SESSIONS:
            conn.subscriptions[ALL_SESSIONS] = None
            pushed = 0
            sids = dict.fromkeys(self._book.user_sessions.get(conn.user_id, ()))
            # and every session with a pending question whose audience holds the user
            sids.update((r.session_id, None) for r in self._audiences.asked_of(conn.user_id))
            for sid in sids:
                session = sessions[sid]
                if session.pending:
                    pushed += self._replay(conn, sid, session, reply_id)
            return pushed
        found = sessions.get(session_id)
        if found is not None and not self._audiences.may_subscribe(conn.user_id, found):
            raise Forbidden(f"session {session_id} belongs to another user")
        conn.subscriptions[session_id] = None
        return self._replay(conn, session_id, found, reply_id)

    def _replay(self, conn: Connection, session_id: str, session: Session | None, reply_id: Any) -> int:
        to = (conn.id,)
        user = conn.user_id
        holds = self._audiences.holds
        pending = [r for r in session.requests.values() if r.pending and holds(user, r)] if session else []
        snapshot = Event(ev.SNAPSHOT, session_id, {"active": bool(pending), "pending": len(pending)}, reply_id)
        sends = self._box.sends
        sends.append(Send(to, snapshot))
        for req in pending:
            sends.append(Send(to, req.ask_event()))
        self._counters.repushed += len(pending)
        return len(pending)

    def unsubscribe(self, conn_id: str, session_id: str) -> None:
        self.conns[conn_id].subscriptions.pop(session_id, None)

    # ---- reads --------------------------------------------------------

    def connections(self, user_id: str | None = None) -> list[Connection]:
        if user_id is not None:
            conns = self.user_conns.get(user_id)
            return list(conns.values()) if conns else []
        return list(self.conns.values())

    def connections_for_session(self, session_id: str) -> list[Connection]:
        """Connections that get this session's events on subscribe: those
        subscribed to it, and its owner's connections subscribed to ``*``."""
        users = self._book.session_users(session_id)
        return [c for c in self.conns.values() if subscribed(c, session_id, users)]
