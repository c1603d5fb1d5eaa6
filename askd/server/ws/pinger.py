"""Keep-alive for every WebSocket from one loop timer.

Every connection is pinged every ``ws.ping_interval_seconds``; one that has
not answered a ping ``ws.ping_timeout_seconds`` after it was sent is closed
(as Tornado's ``websocket_ping_interval`` did, with the same close reason).
Tornado's pinging runs a task per connection (a coroutine, its sleeping
future and a loop timer): about 1.4 KB of every connection's memory
(docs/performance.md, the memory per idle connection). Here one timer serves them all.

The timer does not walk every connection at once: connections are dealt
round-robin into ``slots`` groups, about one per second of the interval
(at most ``MAX_SLOTS``), and each tick of the timer handles one group. So
each connection is still pinged once per interval, and a tick handles
``1/slots`` of them: with 100,000 tabs and the default 20 s interval, 5,000
pings per tick, each a small write to a socket, rather than 100,000 in one
callback that would hold up every other connection.
"""

from __future__ import annotations

import asyncio
import contextvars
import math
from typing import Protocol

# About how long a tick is, and so how often the timer fires while any
# connection is open (never when none is): each tick pings one group.
TICK_SECONDS = 1.0
# Long intervals get fewer, longer ticks rather than more groups.
MAX_SLOTS = 60

# Tornado closed a silent peer with this reason (and so code 1000).
TIMEOUT_CODE = 1000
TIMEOUT_REASON = "ping timed out"


class Pingable(Protocol):
    def ping_peer(self) -> None: ...

    def close_peer(self, code: int, reason: str) -> None: ...


class Pinger:
    """Pings each added peer once per ``interval`` and closes one that has
    not answered within ``timeout`` (at most the interval) of a ping."""

    def __init__(self, interval: float, timeout: float, *, tick: float = TICK_SECONDS) -> None:
        if not 0 < timeout <= interval:
            raise ValueError(f"the ping timeout ({timeout}) must be in (0, interval ({interval})]")
        self.slots = max(1, min(MAX_SLOTS, round(interval / tick)))
        self.tick = interval / self.slots
        # Ticks from a group's ping to the check of its answers: the timeout,
        # rounded up to whole ticks (a round at most, as timeout <= interval).
        self.grace = min(self.slots, math.ceil(timeout / self.tick - 1e-9))
        self._groups: list[dict[Pingable, None]] = [{} for _ in range(self.slots)]
        self._unanswered: set[Pingable] = set()  # pinged, no pong yet
        self._joining = 0  # the group the next connection joins
        self._current = 0  # the group the next tick pings
        self._count = 0
        self._timer: asyncio.TimerHandle | None = None
        self._due = 0.0

    def __len__(self) -> int:
        return self._count

    def add(self, peer: Pingable) -> int:
        """Keep ``peer`` alive from now on; returns its group, for ``discard``."""
        group = self._joining
        self._joining = (group + 1) % self.slots
        self._groups[group][peer] = None
        self._count += 1
        if self._timer is None:
            self._schedule(asyncio.get_running_loop().time() + self.tick)
        return group

    def discard(self, peer: Pingable, group: int) -> None:
        """``peer`` went away."""
        members = self._groups[group]
        if peer in members:
            del members[peer]
            self._count -= 1
        self._unanswered.discard(peer)

    def peers(self) -> list[Pingable]:
        """Every peer kept alive now (each open WebSocket)."""
        return [peer for group in self._groups for peer in group]

    def answered(self, peer: Pingable) -> None:
        """A pong came from ``peer``."""
        self._unanswered.discard(peer)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _schedule(self, when: float) -> None:
        loop = asyncio.get_running_loop()
        self._due = max(when, loop.time())  # a late tick is not made up with a burst
        # A fresh context: what a close logs must not carry the ids of
        # whichever request happened to start the timer.
        self._timer = loop.call_at(self._due, self._on_tick, context=contextvars.Context())

    def _on_tick(self) -> None:
        self._timer = None
        # Lists, not the groups themselves: a close or a failed write may
        # drop a peer from its group on the spot.
        checked = self._groups[(self._current - self.grace) % self.slots]
        for peer in [p for p in checked if p in self._unanswered]:
            self._unanswered.discard(peer)
            peer.close_peer(TIMEOUT_CODE, TIMEOUT_REASON)
        pinged = list(self._groups[self._current])
        self._current = (self._current + 1) % self.slots
        self._unanswered.update(pinged)
        for peer in pinged:
            peer.ping_peer()
        if self._count:
            self._schedule(self._due + self.tick)
