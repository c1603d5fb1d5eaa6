"""Reservations: what asks being committed hold.

It owns the asks decided and not yet applied or released (``_flying`` by
request, ``in_session`` by session), whose budgets it counts in the
session book's tally from the moment they are decided. The ask's decision
(``Registry.prepare_ask``, in ``decisions.py``) checks every refusal
against the questions applied and the asks in flight alike, so asks
decided before any of them is stored (one batch) are checked against each
other. Which sessions an agent token reaches is read here too: a session
being asked in for the first time is its asker's already.
"""

from __future__ import annotations

from askd.core.registry.budgets import Tally
from askd.core.changes import Asked
from askd.core.errors import NotFound
from askd.core.records import Request
from askd.core.registry.sessions import SessionBook


class Reservations:
    def __init__(self, book: SessionBook) -> None:
        self.held: Tally = book.held  # what they reserve is counted with what questions hold
        # Asks prepared and not yet applied or released (being committed),
        # by request and by session: what they reserve counts for the next.
        self._flying: dict[str, Request] = {}
        self.in_session: dict[str, list[Request]] = {}
        self._book = book

    @property
    def in_flight(self) -> int:
        return len(self._flying)

    def reserve(self, req: Request) -> None:
        """An ask was decided (``Registry.prepare_ask``): what it takes is
        held until it is applied or ``release``d, so the next asks are
        checked against it (its bytes counted in the tally from now)."""
        assert req.frame is not None  # a decided ask has its frame
        self._flying[req.request_id] = req
        self.held.add(req.user_id, req.agent, len(req.frame))  # counted from now: applying keeps it
        self.in_session.setdefault(req.session_id, []).append(req)

    def reaches(self, session_id: str, agent: str | None) -> bool:
        """Whether an agent token with this ``sub`` may act on the session:
        a token without one reaches every session; one with a sub, a session
        it first asked in, or one nobody asked in yet (nor is asking in)."""
        if agent is None:
            return True
        session = self._book.sessions.get(session_id)
        if session is not None:
            return session.agent == agent
        flying = self.in_session.get(session_id)
        return not flying or flying[0].agent == agent

    def reach(self, session_id: str, agent: str | None) -> None:
        """Raise :class:`NotFound` unless ``reaches``: the same answer as for
        a session askd does not know, naming nobody."""
        if not self.reaches(session_id, agent):
            raise NotFound(f"no session {session_id} for this agent token")

    def release(self, change: Asked) -> None:
        """The ask's commit is over (taken, refused, or failed): what it
        reserved is free again. Applying it releases it too."""
        req = self.unreserve(change)
        if req is not None:
            self.held.take(req.user_id, req.agent, len(req.frame or b""))

    def unreserve(self, change: Asked) -> Request | None:
        """The ask is no longer in flight; returns it if it was (prepared
        here), its budgets still counted."""
        req = self._flying.pop(change.request.request_id, None)
        if req is not None:
            flying = self.in_session[req.session_id]
            flying.remove(req)
            if not flying:
                del self.in_session[req.session_id]
        return req
