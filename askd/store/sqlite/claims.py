"""``store.claims`` on SQLite: one row per key in ``claims``, durable; the
first insert of a key wins (``ON CONFLICT DO NOTHING`` in a write
transaction, so one writer decides)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from askd.store.sqlite.file import Database


class SqliteClaims:
    def __init__(self, file: Database, clock: Callable[[], float]) -> None:
        self._file, self._now = file, clock

    async def claim(self, key: str, until: float) -> bool:
        return key in await self.claim_all([key], until)

    async def claim_all(self, keys: Sequence[str], until: float) -> list[str]:
        """Of ``keys``, those this call is the first to claim, in one
        transaction: all are claimed or, raising, none."""
        won: list[str] = []
        with self._file.transaction() as db:
            # Claims end with their question or code: the dead ones go with each new claim.
            db.execute("DELETE FROM claims WHERE until <= ?", (self._now(),))
            for key in dict.fromkeys(keys):
                if db.execute("INSERT INTO claims VALUES (?, ?) ON CONFLICT DO NOTHING", (key, until)).rowcount == 1:
                    won.append(key)
        return won
