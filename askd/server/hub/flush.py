"""The flush: what the registry queued, handed on once a change is stored.

Each event's frame goes to its connections, waiting agents are woken,
questions due for a notification, and those that ended, go to the
notification pipeline, and the
deadline timer is moved to the registry's next deadline. The commit path (after a store
step), the clock (when it fires with nothing to store) and the hub (a
subscribe's re-push) call it; it calls none of them back. It is the only
reader of ``Registry.drain``.

The pipeline (``askd/channels/pipeline.py``) commits what was delivered (a
``Notified`` change), so it is made after the commit path, which is made
with the flush: it attaches to the flush (as a store's listener does), and
the flush knows it only as ``Due``.
"""

from __future__ import annotations

from typing import Protocol

from askd.core import Outbox, Request, Status
from askd.core.registry import Registry
from askd.server.hub.connections import Connections
from askd.server.hub.waiters import Waiters
from askd.server.metrics import Metrics


class Due(Protocol):
    """Where questions due for a notification, and those that ended, go
    (``askd.channels.pipeline.Pipeline``)."""

    def due(self, reqs: list[Request]) -> None: ...

    def remind(self, reminders: list[tuple[Request, int, list[str], list[str]]]) -> None: ...

    def ended(self, reqs: list[Request]) -> None: ...


class Timer(Protocol):
    """The deadline timer (``deadlines.DeadlineTimer``), as the flush moves
    it: known by this one method so the timer's module can build on the flush."""

    def arm(self) -> None: ...


class _NoNotifications:
    def due(self, reqs: list[Request]) -> None:
        return None

    def remind(self, reminders: list[tuple[Request, int, list[str], list[str]]]) -> None:
        return None

    def ended(self, reqs: list[Request]) -> None:
        return None


class Flush:
    def __init__(
        self, registry: Registry, connections: Connections, waiters: Waiters, metrics: Metrics, timer: Timer
    ) -> None:
        self._registry, self._connections, self._waiters = registry, connections, waiters
        self._metrics, self._timer = metrics, timer
        self._notifications: Due = _NoNotifications()

    def attach(self, notifications: Due) -> None:
        """Where questions due for a notification go from now on."""
        self._notifications = notifications

    def __call__(self) -> Outbox:
        """Hand on everything queued; returns it (the hub logs a re-push from it)."""
        out = self._registry.drain()
        try:
            self._connections.deliver(out.sends)
        finally:
            # Whatever a send did, the registry already moved on: waiting
            # agents must still be woken and the next deadline armed.
            for req in out.ended:
                if req.status is Status.ANSWERED and req.ended_at is not None:
                    self._metrics.time_to_answer.observe(req.ended_at - req.created_at)
                self._waiters.wake(req.request_id)
            self._notifications.due(out.notify)
            reminders = self._registry.drain_reminders()
            if reminders:
                self._notifications.remind(reminders)
            if out.ended:
                self._notifications.ended(out.ended)
            self._timer.arm()
        return out
