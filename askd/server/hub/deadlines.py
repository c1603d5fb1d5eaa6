"""The daemon's side of deadlines: the one loop timer, and what a
deadline's coming does.

``DeadlineTimer`` is kept at the registry's next deadline, for every
deadline kind. The flush moves it after every change; it knows nothing
above it, and when it fires it calls the one function attached to it
(``DeadlineClock``'s).

Nothing stops it: the timer is armed again after every firing. Should the
attached function raise (the registry keeps one deadline's failure to
itself, so this is a bug elsewhere), or the next deadline not be known, it
is logged and the timer fires again in ``REARM_SECONDS``: never a hot loop
on a deadline that keeps failing, never a timer left unarmed.

``DeadlineClock`` takes the timer's firing. Whatever the registry's
deadline kinds decide (``Registry.due``) goes to the commit path like any
change; a kind that only reports (a webhook due) comes out in the flush. A
new kind of deadline needs nothing here.

A deadline whose kind raised is left out by the registry and tried again
later with a backoff; each failure is logged here with its question's ids,
and ``/healthz`` reports those still failing (``Hub.health``; protocol section 6).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable

from askd.core.registry.deadlines import DeadlineFailure
from askd.core.records import Request
from askd.core.registry import Registry
from askd.server.hub.commits import Commits
from askd.server.hub.flush import Flush
from askd.server.logs import get_logger

log = get_logger("askd.hub")

# When the next deadline cannot be read, the timer fires again this soon.
REARM_SECONDS = 1.0


class DeadlineTimer:
    def __init__(self, registry: Registry, now: Callable[[], float]) -> None:
        self._registry, self._now = registry, now
        self._fire: Callable[[], None] = lambda: None  # DeadlineClock attaches its own
        self._timer: asyncio.TimerHandle | None = None
        self._at: float | None = None

    def attach(self, fire: Callable[[], None]) -> None:
        """What runs when a deadline comes (as a store attaches its listener)."""
        self._fire = fire

    def arm(self) -> None:
        """Keep the one timer at the registry's next deadline. Never raises."""
        try:
            when = self._registry.next_deadline()
        except Exception:
            log.exception("deadline.next_failed", retryInSeconds=REARM_SECONDS)
            when = self._now() + REARM_SECONDS
        self._arm_at(when)

    def _arm_at(self, when: float | None) -> None:
        if when is None or (self._at is not None and self._at <= when):
            return  # an earlier timer is armed; when it fires it re-arms
        if self._timer is not None:
            self._timer.cancel()
        delay = max(0.0, when - self._now())
        # A fresh context: the timer must not log with the ids of whichever
        # request happened to arm it.
        self._timer = asyncio.get_running_loop().call_later(delay, self._fired, context=contextvars.Context())
        self._at = when

    def _fired(self) -> None:
        self._timer = self._at = None
        try:
            self._fire()
        except Exception:
            log.exception("deadline.clock_failed", retryInSeconds=REARM_SECONDS)
            self._arm_at(self._now() + REARM_SECONDS)  # not at once: what raised may raise again
            return
        self.arm()  # the next deadline has its timer, whatever the firing did

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._at = None

class DeadlineClock:
    """What a deadline's coming does; it takes the timer's firing."""

    def __init__(self, registry: Registry, commits: Commits, flush: Flush, timer: DeadlineTimer) -> None:
        self._registry, self._commits, self._flush, self._timer = registry, commits, flush, timer
        timer.attach(self._fire)

    def _fire(self) -> None:
        due = self._registry.due()
        if due:
            self._commits.defer(due)  # its write flushes (and re-arms) when done
        else:
            self._flush()  # notifications that came due; re-arms the timer
        log_failures(self._registry)

    def close(self) -> None:
        self._timer.close()


def log_failures(registry: Registry) -> None:
    """Log each deadline failure the registry noted since last asked (after
    what came due is on its way)."""
    for failure in registry.drain_deadline_failures():
        _log_failure(failure)


def _log_failure(failure: DeadlineFailure) -> None:
    key = failure.key
    ids = {"sessionId": key.session_id, "requestId": key.request_id} if isinstance(key, Request) else {"userId": key}
    err = failure.error
    log.error(
        "deadline.failed", kind=failure.kind, attempt=failure.attempts,
        retryInSeconds=DeadlineFailure.backoff(failure.attempts),
        exc_info=(type(err), err, err.__traceback__), **ids,
    )
