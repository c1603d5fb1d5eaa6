"""``store = "memory"``: v1's behaviour, nothing survives the process.

It writes nothing, yet its commit reports what took effect as SQLite and
Redis do: it keeps each question's row as the engine's rules read it
(``rules.RowState``), each group's members and each user's away, and asks the rules
(``core/rules.py``) of each change. It never reads the registry.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from typing import Any

from askd.audit.trail import MemoryTrail
from askd.core.registry import rules
from askd.core.changes import Change
from askd.core.snapshot import Loaded
from askd.store.parts import LocalCluster, Post, StoreListener, check_setting


class MemoryOnceKeys:
    """Once keys in a dict, each dropped once its instant has passed."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._now = clock
        self._until: dict[str, float] = {}
        self._ends: list[tuple[float, str]] = []  # (until, key), soonest first

    async def take(self, key: str, until: float) -> bool:
        # No await before the check and the keep: one step on the loop.
        now, ends, held = self._now(), self._ends, self._until
        while ends and ends[0][0] <= now:
            at, gone = heapq.heappop(ends)
            if held.get(gone) == at:
                del held[gone]
        if key in held and held[key] > now:
            return False
        held[key] = until
        heapq.heappush(ends, (until, key))
        return True


class MemoryDirectory:
    def __init__(self) -> None:
        self._settings: dict[str, dict[str, str]] = {}  # setting -> user -> value

    async def get(self, setting: str, users: Sequence[str]) -> dict[str, str]:
        kept = self._settings.get(check_setting(setting), {})
        return {u: kept[u] for u in users if u in kept}

    async def set(self, setting: str, user: str, value: str | None) -> None:
        kept = self._settings.setdefault(check_setting(setting), {})
        if value is None:
            kept.pop(user, None)
        else:
            kept[user] = value


class MemoryPosts:
    """Posts by request id, each dropped once its instant has passed."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._now = clock
        self._by_request: dict[str, dict[str, Post]] = {}

    def _live(self, request_id: str) -> dict[str, Post]:
        kept = self._by_request.get(request_id, {})
        now = self._now()
        for key in [k for k, p in kept.items() if p.until <= now]:
            del kept[key]
        return kept

    async def keep(self, post: Post) -> None:
        self._by_request.setdefault(post.request_id, {})[post.key] = post

    async def of(self, request_id: str) -> list[Post]:
        return list(self._live(request_id).values())

    async def done(self, request_id: str, key: str) -> None:
        kept = self._by_request.get(request_id)
        if kept is not None:
            kept.pop(key, None)
            if not kept:
                del self._by_request[request_id]

    async def every(self) -> list[Post]:
        for rid in list(self._by_request):
            if not self._live(rid):
                del self._by_request[rid]
        return [p for kept in self._by_request.values() for p in kept.values()]


class MemoryStore:
    kind = "memory"
    durable = False
    shared = False

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        # A question's row by its request id (an id kept already is not
        # asked again, in any session, as on SQLite and Redis); a group's
        # members by its name; a user's away by their id: by the rule's lookup.
        self._rows: dict[str, Any] = {}
        self._groups: dict[str, Any] = {}
        self._kept: dict[str, dict[str, Any]] = {"get": self._rows, "group": self._groups, "away": {}}
        self._not_before = 0.0
        self._listener: StoreListener | None = None
        self.once_keys = MemoryOnceKeys(clock)
        self.directory = MemoryDirectory()
        self.posts = MemoryPosts(clock)
        self.cluster = LocalCluster(lambda: self._listener)
        self.audit = MemoryTrail()
        self._clock = clock

    def attach(self, listener: StoreListener) -> None:
        self._listener = listener

    async def load(self) -> Loaded:
        return Loaded()  # nothing kept from before

    async def catch_up(self) -> None:
        return None

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        taken = [change for change in changes if self._write(change)]
        self.audit.append(taken, self._clock())  # no await between: one step, as the change
        return taken

    def _write(self, change: Change) -> bool:
        rule = rules.rule_of(change)
        key = rule.key(change)[-1]  # the request id, the group's name, or the user's id
        kept = self._kept[rule.lookup]
        row = kept.get(key)
        if not rules.takes(change, row):
            return False
        left = rules.after(change, row)
        if left is None:
            kept.pop(key, None)
        else:
            kept[key] = left
        return True

    async def probe(self) -> None:
        return None

    async def load_not_before(self) -> float:
        return self._not_before

    async def save_not_before(self, at: float) -> None:
        self._not_before = max(self._not_before, at)

    async def aclose(self) -> None:
        return None
