"""Reminders (protocol section 20): a pending question's audience members
with no open tab are notified again, every ``everySeconds``, ``times`` times.

Reminder k (from 1) is due at ``createdAt + k * everySeconds`` while the
question is pending and before its ``expiresAt`` (the end comes first: an
extension lets a later one come, never more than ``times``). It is one
deadline kind of the one schedule (``deadlines.DEADLINE_KINDS``, ``remind``):
one entry per question at a time, the next added when one fires. Firing
decides no change: the registry's deadlines report ``(req, k, audience, offline)``
(``Deadlines.reminders``, drained by ``Registry.drain_reminders``), and the
front end sends it; each reminder's deliveries are claimed in the store
(``remind:<rid>:r<k>``, ``mail:<rid>:r<k>:<user>``), so every node may find
it due and one sends it.

How many reminders came is this node's own count (the deadlines part's, by
request), not kept by the stores: a node that learns of a question (its ask,
another node's, or a restart's restore) counts from the clock the reminders
whose time has passed, and takes only the latest of them as still due
(``passed``): a restart sends at most one missed reminder, at once, and none
if it was sent before (its claim is kept). This module imports no I/O.
"""

from __future__ import annotations

from askd.core.records import Request

#: An ask's reminders: (everySeconds, times).
Remind = tuple[float, int]


def when(req: Request, reminded: int) -> float | None:
    """When the question's next reminder is due, ``reminded`` of them come
    already (None: no reminder left before its end, or none asked)."""
    remind = req.remind
    if remind is None or reminded >= remind[1]:
        return None
    at = req.created_at + (reminded + 1) * remind[0]
    return at if at < req.expires_at else None


def passed(req: Request, now: float) -> int:
    """For a question this node learns of at ``now``: how many reminders
    count as come (never sent from here), all whose time passed but the
    latest, which is still due."""
    remind = req.remind
    if remind is None or now <= req.created_at:
        return 0
    every, times = remind
    return max(0, min(times, int((now - req.created_at) // every)) - 1)
