"""A schedule of named deadlines: one heap for every kind of deadline.

A deadline is ``(at, kind, key)``: a time, a kind's name (``timeout``,
``forget``, ``notify`` today) and what it is for, with an ``order`` its
owner gives (the registry: the order the question was asked in, kept by
the request). The schedule knows no kind: it keeps them in time order, ties
by ``order``, then in the order they were added, so an entry added again
(an extended timeout) keeps its place among those due at the same moment;
it asks the kind's ``alive`` predicate whether an entry (its key, at its time)
still counts. Entries whose
key moved on are left in the heap and skipped when they reach the top (no
search to remove one); the heap is rebuilt when its owner reports most of
them stale (a third), as asyncio does with cancelled timers. So a front end needs
one timer, at ``next_at()``, whatever the number and kinds of deadlines.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

K = TypeVar("K")

# Rebuild the heap once this many entries, and a third of them, are stale
# (so stale entries never cost more than half the live ones).
COMPACT_MIN = 1024


class Schedule(Generic[K]):
    def __init__(self, alive: Mapping[str, Callable[[K, float], bool]]) -> None:
        self._alive = alive  # by kind: whether an entry of that kind (key, at) still counts
        self._heap: list[tuple[float, int, int, str, K]] = []
        self._seq = itertools.count()
        self._stale = 0  # entries the owner reported stale, still in the heap

    def __len__(self) -> int:
        return len(self._heap)

    def add(self, at: float, kind: str, key: K, order: int = 0) -> None:
        """Schedule ``key``'s deadline of ``kind`` at ``at``; among entries
        due at the same moment, a lower ``order`` comes out first (equal
        ones in the order added)."""
        heapq.heappush(self._heap, (at, order, next(self._seq), kind, key))

    def entries(self) -> Iterator[tuple[float, str, K]]:
        """Every entry in the heap, stale ones too, in no order: for tests
        and diagnostics, which should not read the heap's layout."""
        return ((e[0], e[3], e[4]) for e in self._heap)

    def stale(self) -> None:
        """One entry in the heap no longer counts (its key moved on): a hint
        for the rebuild, never needed for correctness."""
        self._stale += 1

    def next_at(self) -> float | None:
        """When the earliest live deadline is due; None when there is none."""
        heap = self._heap
        while heap and not self._alive[heap[0][3]](heap[0][4], heap[0][0]):
            heapq.heappop(heap)
            self._stale = max(0, self._stale - 1)
        if self._stale > COMPACT_MIN and 3 * self._stale > len(heap):
            heap = self._heap = [e for e in heap if self._alive[e[3]](e[4], e[0])]
            heapq.heapify(heap)
            self._stale = 0
        return heap[0][0] if heap else None

    def pop_due(self, now: float) -> Iterator[tuple[str, K]]:
        """Take the live deadlines due by ``now``, earliest first (ties by
        order, then in the order added). Lazy: the caller may add deadlines as it goes, and
        one due by ``now`` comes out in the same walk."""
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, _, _, kind, key = heapq.heappop(heap)
            if self._alive[kind](key, at):
                yield kind, key
            else:
                self._stale = max(0, self._stale - 1)
