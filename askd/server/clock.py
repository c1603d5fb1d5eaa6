"""One loop timer for every deadline the registry schedules, of any kind.

The timer sits at ``registry.next_deadline()``. When it fires, whatever the
registry's deadline kinds decide (``Registry.due``) goes to the commit path
like any change; a kind that only reports (a webhook due) comes out in the
next flush. A new kind of deadline needs nothing here.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable

from askd.core.registry import Registry
from askd.server.commits import Commits


class DeadlineClock:
    def __init__(self, registry: Registry, commits: Commits, now: Callable[[], float], flush: Callable[[], None]) -> None:
        self._registry, self._commits, self._now, self._flush = registry, commits, now, flush
        self._timer: asyncio.TimerHandle | None = None
        self._at: float | None = None

    def arm(self) -> None:
        """Keep the one timer at the registry's next deadline."""
        when = self._registry.next_deadline()
        if when is None or (self._at is not None and self._at <= when):
            return  # an earlier timer is armed; when it fires it re-arms
        if self._timer is not None:
            self._timer.cancel()
        delay = max(0.0, when - self._now())
        # A fresh context: the timer must not log with the ids of whichever
        # request happened to arm it.
        self._timer = asyncio.get_running_loop().call_later(delay, self._fire, context=contextvars.Context())
        self._at = when

    def _fire(self) -> None:
        self._timer = self._at = None
        due = self._registry.due()
        if due:
            self._commits.defer(due)  # its write flushes (and re-arms) when done
        else:
            self._flush()  # notifications that came due; re-arms the timer

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._at = None
