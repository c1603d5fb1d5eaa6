"""The one loop timer, kept at the registry's next deadline, for every
deadline kind. The flush moves it after every change; it knows nothing
above it, and when it fires it calls the one function attached to it (the
clock's, ``clock.py``)."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable

from askd.core.registry import Registry


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
        """Keep the one timer at the registry's next deadline."""
        when = self._registry.next_deadline()
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
        self._fire()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._at = None
