"""``store = "memory"``: v1's behaviour, nothing survives the process.

It writes nothing, yet its commit reports what took effect as SQLite and
Redis do: it keeps the few fields the checks read (``Row``: status,
deadline, escalation steps; and which groups are held) and checks each
change against them, the same checks as ``sqlite/writes.py`` and
``redis/commit.lua``. It never reads the registry.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from askd.core.changes import Asked, Change, Ended, Escalated, Extended, Forgot, GroupDeleted, GroupSet, Notified
from askd.core.lifecycle import Status
from askd.core.snapshot import Loaded
from askd.store.compat import OldCalls
from askd.store.parts import LocalCluster, StoreListener, check_setting


@dataclass
class Row:
    """What the checks read of a kept question."""

    status: Status
    expires_at: float
    escalations: int = 0


class MemoryClaims:
    """Claims in a dict, each dropped once its instant has passed."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._now = clock
        self._until: dict[str, float] = {}
        self._ends: list[tuple[float, str]] = []  # (until, key), soonest first

    async def claim(self, key: str, until: float) -> bool:
        return key in await self.claim_all([key], until)

    async def claim_all(self, keys: Sequence[str], until: float) -> list[str]:
        now, ends, held = self._now(), self._ends, self._until
        while ends and ends[0][0] <= now:
            at, gone = heapq.heappop(ends)
            if held.get(gone) == at:
                del held[gone]
        won = []
        for key in dict.fromkeys(keys):
            if key in held and held[key] > now:
                continue
            held[key] = until
            heapq.heappush(ends, (until, key))
            won.append(key)
        return won


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


class MemoryStore(OldCalls):
    kind = "memory"
    durable = False
    shared = False

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._rows: dict[str, Row] = {}
        self._groups: set[str] = set()
        self._not_before = 0.0
        self._listener: StoreListener | None = None
        self.claims = MemoryClaims(clock)
        self.directory = MemoryDirectory()
        self.cluster = LocalCluster(lambda: self._listener)

    def attach(self, listener: StoreListener) -> None:
        self._listener = listener

    async def load(self) -> Loaded:
        return Loaded()  # nothing kept from before

    async def catch_up(self) -> None:
        return None

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        return [change for change in changes if self._write(change)]

    def _write(self, change: Change) -> bool:
        if isinstance(change, GroupSet):
            self._groups.add(change.group)
            return True
        if isinstance(change, GroupDeleted):
            held = change.group in self._groups
            self._groups.discard(change.group)
            return held
        if isinstance(change, Asked):
            req = change.request
            if req.request_id in self._rows:
                return False  # a request id kept already: as SQLite and Redis
            self._rows[req.request_id] = Row(Status.PENDING, req.expires_at)
            return True
        row = self._rows.get(change.request_id)
        if isinstance(change, Forgot):
            if row is None or row.status is Status.PENDING:
                return False
            del self._rows[change.request_id]
            return True
        if row is None or row.status is not Status.PENDING:
            return False
        if isinstance(change, Ended):
            row.status = change.status
        elif isinstance(change, Extended):
            if row.expires_at != change.previous:
                return False
            row.expires_at = change.expires_at
        elif isinstance(change, Escalated):
            if row.escalations >= change.step:
                return False
            row.escalations = change.step
        else:
            assert isinstance(change, Notified)
        return True

    async def probe(self) -> None:
        return None

    async def load_not_before(self) -> float:
        return self._not_before

    async def save_not_before(self, at: float) -> None:
        self._not_before = max(self._not_before, at)

    async def aclose(self) -> None:
        return None
