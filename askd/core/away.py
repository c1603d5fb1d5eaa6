"""Away, with delegates: while a user is away, every pending and
new question whose audience holds them also goes to their delegates.

An away is core state, as a group is: ``AwaySet`` and ``AwayEnded``
(``changes.py``) in the rule table, kept by every store, its end a deadline
of kind ``away`` on the one schedule (``deadlines.AWAY_DEADLINE``). The away users are
held by ``Audiences.aways``, which resolves their delegates (groups as they
are now) into every audience that holds them; one-user questions of an away
user leave the fast path (``Audiences.team``) while it lasts. This module
holds the record and the effect of a change: who gains a question (pushed
to their connections) and who loses it (``reassigned``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from askd.core import events as ev
from askd.core.changes import AwayEnded, AwaySet
from askd.core.events import Event, isotime
from askd.core.lifecycle import REASSIGNED


@dataclass(frozen=True, slots=True)
class Away:
    """A user's away: until when (the clock's seconds), and to whom their
    questions also go (user ids and ``group:G``, as given)."""

    until: float
    delegates: tuple[str, ...]

    def wire(self, user: str) -> dict[str, object]:
        return {"user": user, "until": isotime(self.until), "delegates": list(self.delegates)}


def set_away(audiences: Any, connections: Any, deadlines: Any, book: Any, change: AwaySet | AwayEnded) -> None:
    """An away starts (or changes) or ends: the pending questions whose
    audience holds the user follow at once. Delegates who gain one get it
    pushed; those who lose one (the away ended, or changed its delegates)
    hear ``reassigned``. A start schedules its end. (The parts are the
    registry's ``Audiences``, ``Connections``, ``Deadlines`` and ``SessionBook``, untyped here: they
    import this module.)"""
    user = change.user
    touched = book.pending(user_id=user)  # the pending questions whose audience holds the user
    before = [audiences.of(r) for r in touched]
    if isinstance(change, AwaySet):
        audiences.put_away(user, Away(change.until, change.delegates), touched)
        deadlines.away_planned(user, change.until)
    else:
        audiences.put_away(user, None, touched)
    for req, was in zip(touched, before):
        now = audiences.of(req)
        connections.send_to_users(now - was, req.ask_event())
        gone = Event(ev.CANCELLED, req.session_id, {"requestId": req.request_id, "reason": REASSIGNED})
        connections.send_to_users(was - now, gone)
