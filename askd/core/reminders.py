"""Reminders (protocol section 20): a pending question's audience members
with no open tab are notified again, every ``everySeconds``, ``times`` times.

Reminder k (from 1) is due at ``createdAt + k * everySeconds`` while the
question is pending and before its ``expiresAt`` (the end comes first: an
extension lets a later one come, never more than ``times``). It is one
deadline kind of the one schedule (``deadlines.DEADLINE_KINDS``, ``remind``):
one entry per question at a time, the next added when one fires. Firing
decides no change: it reports ``(req, k, audience, offline)`` in the outbox
(``Outbox.reminders``), and the front end sends it; each reminder's
deliveries are claimed in the store (``notify:<rid>:r<k>``,
``mail:<rid>:r<k>:<user>``), so every node may find it due and one sends it.

How many reminders came is this node's own count (``Request.reminded``), not
kept by the stores: a node that learns of a question (its ask, another
node's, or a restart's restore) counts from the clock the reminders whose
time has passed, and takes only the latest of them as still due
(``catch_up``): a restart sends at most one missed reminder, at once, and
none if it was sent before (its claim is kept). This module imports no I/O.
"""

from __future__ import annotations

from askd.core.records import Request

def when(req: Request) -> float | None:
    """When the question's next reminder is due (None: no reminder left
    before its end, or none asked)."""
    remind = req.remind
    if remind is None or req.reminded >= remind[1]:
        return None
    at = req.created_at + (req.reminded + 1) * remind[0]
    return at if at < req.expires_at else None


def catch_up(req: Request, now: float) -> None:
    """A question this node learns of: the reminders whose time has passed
    but the latest are over (never sent from here); the latest is still due."""
    remind = req.remind
    if remind is None:
        return
    every, times = remind
    passed = min(times, int((now - req.created_at) // every)) if now > req.created_at else 0
    req.reminded = max(req.reminded, passed - 1)


def take(req: Request) -> int:
    """The reminder due now is taken: which one it is (from 1)."""
    req.reminded += 1
    return req.reminded
