"""The session book: every session, the questions each holds, and their keys.

It owns the session tree (each session's parent and children), each user's
sessions, the requests a session holds (pending, and ended ones whose
result is still kept), their ``Idempotency-Key`` index and pending count,
the tally of what pending questions hold (questions and bytes, per user
and agent: ``budgets.py``; asks in flight reserve their part in it too) and
the order questions came in. It decides nothing: the registry's parts
put requests in, drop them, and read it. Empty sessions are collected,
walking up to their parents.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator

from askd.core.registry.audiences import Audiences
from askd.core.registry.budgets import Tally
from askd.core.records import Request, Session
from askd.core.smallmap import SmallMap


class SessionBook:
    def __init__(self, audiences: Audiences) -> None:
        self.sessions: dict[str, Session] = {}
        # Most users hold one session: SmallMaps, not dicts.
        self.user_sessions: dict[str, SmallMap[str, None]] = {}  # owner -> its session ids, in order
        self._order = itertools.count(1)  # Request.order: the order questions came in
        # What pending questions hold, and asks being committed reserve (budgets.py).
        self.held = Tally()
        self._audiences = audiences

    # ---- reads --------------------------------------------------------

    def get(self, session_id: str, request_id: str) -> Request | None:
        """A pending request, or an ended one whose result is still kept."""
        session = self.sessions.get(session_id)
        return session.requests.get(request_id) if session else None

    def owner(self, session_id: str) -> str | None:
        session = self.sessions.get(session_id)
        return session.owner if session else None

    def pending(self, session_id: str | None = None, user_id: str | None = None) -> list[Request]:
        """Pending requests, oldest first within each session; a user's
        (``user_id``: their own and their teams'), oldest first."""
        if session_id is not None:
            sessions: Iterable[Session] = [s for s in (self.sessions.get(session_id),) if s]
        elif user_id is not None:
            sessions = [self.sessions[s] for s in self.user_sessions.get(user_id, ())]
        else:
            sessions = self.sessions.values()
        out = [
            r
            for s in sessions
            if s.pending and (user_id is None or s.owner == user_id)
            for r in s.requests.values()
            if r.pending
        ]
        if user_id is not None:  # and those asked of a team the user is in
            audiences = self._audiences
            mine = {r.request_id for r in out}
            out += [
                r
                for r in audiences.team.values()
                if r.request_id not in mine and (session_id is None or r.session_id == session_id) and audiences.holds(user_id, r)
            ]
            out.sort(key=lambda r: r.created_at)  # one list, in the order they were asked: own and teams' alike
        return out

    def session_users(self, session_id: str) -> set[str]:
        """Whom the session is for: its owner (the audience of its first
        question, the groups as they are now) and the audience of each of
        its pending questions."""
        session = self.sessions.get(session_id)
        return set() if session is None else self._audiences.session_users(session)

    def descendants(self, root: Session) -> Iterator[Session]:
        stack = [root]
        while stack:
            session = stack.pop()
            yield session
            stack.extend(self.sessions[c] for c in session.children or ())

    # ---- changes --------------------------------------------------------

    def put(self, req: Request, parent_session_id: str | None) -> Session:
        """Put a request (pending or ended) in its session, made if new and
        linked to its parent, and give it its place in the order."""
        session = self.sessions.get(req.session_id)
        if session is None:
            session = self._new_session(req.session_id, req.user_id, req.agent)
        if parent_session_id is not None and session.parent is None:
            session = self.session(req.session_id, req.user_id, parent_session_id, req.agent)
        session.requests[req.request_id] = req
        req.order = next(self._order)
        if req.idempotency_key is not None:
            if session.by_key is None:
                session.by_key = {}
            session.by_key[(req.agent, req.idempotency_key)] = req
        if req.pending:
            session.pending += 1
        return session

    def session(self, session_id: str, owner: str, parent_session_id: str | None, agent: str | None) -> Session:
        """The session, made if new (the agent's: it asks first), linked to
        its parent if it had none (a parent it names is made the agent's too)."""
        session = self.sessions.get(session_id) or self._new_session(session_id, owner, agent)
        if parent_session_id is not None and session.parent is None:
            parent = self.sessions.get(parent_session_id) or self._new_session(parent_session_id, owner, agent)
            session.parent = parent.id
            if parent.children is None:
                parent.children = set()
            parent.children.add(session.id)
        return session

    def _new_session(self, session_id: str, owner: str, agent: str | None) -> Session:
        session = Session(session_id, owner, agent=agent)
        self.sessions[session_id] = session
        owned = self.user_sessions.get(owner)
        if owned is None:
            owned = self.user_sessions[owner] = SmallMap()
        owned[session_id] = None
        return session

    def share_ids(self, req: Request) -> None:
        """A restored request takes its session's own id and owner strings,
        shared with the session as an ask shares them, not a copy more per
        question (about 110 bytes each; docs/performance.md,
        the start with 100,000 questions in the store)."""
        session = self.sessions.get(req.session_id)
        if session is not None:
            req.session_id = session.id
            if req.user_id == session.owner:
                req.user_id = session.owner

    def drop(self, req: Request) -> None:
        """Drop an ended request (its result retention ran out)."""
        session = self.sessions[req.session_id]
        del session.requests[req.request_id]
        key = req.idempotency_key
        if key is not None and session.by_key and session.by_key.get((req.agent, key)) is req:
            del session.by_key[(req.agent, key)]
        self._collect(session)

    def _collect(self, session: Session | None) -> None:
        """Forget sessions that hold nothing, walking up to their parents."""
        while session is not None and not session.requests and not session.children:
            del self.sessions[session.id]
            owned = self.user_sessions[session.owner]
            del owned[session.id]
            if not owned:
                del self.user_sessions[session.owner]
            parent = self.sessions.get(session.parent) if session.parent else None
            if parent is not None and parent.children is not None:
                parent.children.discard(session.id)
            session = parent
