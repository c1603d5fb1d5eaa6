"""``audit.retention_days``: the trail's oldest records go, from the front,
on the daemon's own hourly clock (not the schedule of deadlines: a prune
is no question's deadline, and an hour late changes nothing). On a shared
store every node prunes; a prune is idempotent."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from askd.core.events import isotime
from askd.server.logs import get_logger
from askd.store.parts import AuditTrail

log = get_logger("askd.audit")

EVERY_SECONDS = 3600.0
# The first prune waits this long: never in the way of the start's own work
# (questions overdue while it was down end as it starts).
FIRST_SECONDS = 60.0
DAY = 86400.0


class AuditRetention:
    def __init__(self, trail: AuditTrail | None, days: float, clock: Callable[[], float] = time.time) -> None:
        self._trail, self._days, self._clock = trail, days, clock
        self._task: asyncio.Task[None] | None = None
        self._first: asyncio.TimerHandle | None = None

    def start(self) -> None:
        # A timer, not a task: a task's first step would be one more callback
        # in the start's loop turn, which the commit path waits for.
        if self._trail is not None and self._days > 0 and self._first is None:
            self._first = asyncio.get_running_loop().call_later(FIRST_SECONDS, self._begin)

    def _begin(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def prune(self) -> int:
        """Remove the records older than the retention now; how many went."""
        if self._trail is None or self._days <= 0:
            return 0
        gone = int(await self._trail.prune(isotime(self._clock() - self._days * DAY)))
        if gone:
            log.info("audit.pruned", records=gone, retentionDays=self._days)
        return gone

    async def _run(self) -> None:
        while True:
            try:
                await self.prune()
            except Exception as err:  # a failing store: try again next hour
                log.warning("audit.prune_failed", error=str(err))
            await asyncio.sleep(EVERY_SECONDS)

    def stop(self) -> None:
        if self._first is not None:
            self._first.cancel()
        if self._task is not None:
            self._task.cancel()
            self._task = None
