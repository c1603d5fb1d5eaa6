"""``store.once_keys`` on SQLite: one row per key, durable; the first
insert of a key wins (``ON CONFLICT DO NOTHING`` in a write transaction, so
one writer decides).

The table keeps the name it was made with, ``claims`` (schema step 9):
renaming it would be a migration for a word, and an older askd opening the
file would no longer find its keys.
"""

from __future__ import annotations

from collections.abc import Callable

from askd.store.sqlite.database import Database


class SqliteOnceKeys:
    def __init__(self, file: Database, clock: Callable[[], float]) -> None:
        self._file, self._now = file, clock

    async def take(self, key: str, until: float) -> bool:
        with self._file.transaction() as db:
            # Keys end with their question or code: the dead ones go with each new take.
            db.execute("DELETE FROM claims WHERE until <= ?", (self._now(),))
            return db.execute("INSERT INTO claims VALUES (?, ?) ON CONFLICT DO NOTHING", (key, until)).rowcount == 1
