"""Away, with delegates (spec R): while a user is away, every pending and
new question whose audience holds them also goes to their delegates.

An away is core state, as a group is: ``AwaySet`` and ``AwayEnded``
(``changes.py``) in the rule table, kept by every store, its end a deadline
of kind ``away`` on the one schedule (``deadlines.py``). The away users are
held by ``Audiences.aways``, which resolves their delegates (groups as they
are now) into every audience that holds them; one-user questions of an away
user leave the fast path (``Audiences.team``) while it lasts. This module
holds the record and the effect of a change: who gains a question (pushed
to their tabs) and who loses it (``reassigned``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from askd.core import events as ev
from askd.core.changes import AwayEnded, AwaySet
from askd.core.deadlines import DeadlineKind
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


#: The end of an away, at its ``until``: a deadline on the registry's one
#: schedule (``Agenda``), keyed by the user's id, not a request: scheduled by
#: the away's start (``Agenda.away_planned``), never planned for a question
#: (``can``). ``when`` reads the away held now, so an entry at an ``until``
#: the away no longer has does not count; ``fire`` ends it only at that
#: ``until`` (compare and set, as every node's clock may decide it).
AWAY_DEADLINE = DeadlineKind(
    "away",
    False,
    lambda reg, user: reg.away_until(user),  # type: ignore[attr-defined,arg-type]
    lambda reg, user: reg.away_until(user) is not None,  # type: ignore[attr-defined,arg-type]
    lambda reg, user, now: AwayEnded(user, reg.away_until(user)),  # type: ignore[attr-defined,arg-type]
    lambda reg, stepped: False,
)


def set_away(audiences: Any, tabs: Any, agenda: Any, book: Any, change: AwaySet | AwayEnded) -> None:
    """An away starts (or changes) or ends: the pending questions whose
    audience holds the user follow at once. Delegates who gain one get it
    pushed; those who lose one (the away ended, or changed its delegates)
    hear ``reassigned``. A start schedules its end. (The parts are the
    registry's ``Audiences``, ``Tabs``, ``Agenda`` and ``SessionBook``, untyped here: they
    import this module.)"""
    user = change.user
    touched = book.pending(user_id=user)  # the pending questions whose audience holds the user
    before = [audiences.of(r) for r in touched]
    if isinstance(change, AwaySet):
        audiences.put_away(user, Away(change.until, change.delegates), touched)
        agenda.away_planned(user, change.until)
    else:
        audiences.put_away(user, None, touched)
    for req, was in zip(touched, before):
        now = audiences.of(req)
        tabs.send_to_users(now - was, req.ask_event())
        gone = Event(ev.CANCELLED, req.session_id, {"requestId": req.request_id, "reason": REASSIGNED})
        tabs.send_to_users(was - now, gone)
