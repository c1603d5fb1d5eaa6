"""``store.directory`` on SQLite: ``user_settings``, one row per user and setting."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from askd.store.parts import check_setting
from askd.store.sqlite.database import Database

# Under SQLite's limit of bound parameters per statement.
CHUNK = 500


class SqliteDirectory:
    def __init__(self, file: Database) -> None:
        self._file = file

    async def get(self, setting: str, users: Sequence[str]) -> dict[str, str]:
        check_setting(setting)
        wanted = list(dict.fromkeys(users))
        out: dict[str, str] = {}

        def read(db: sqlite3.Connection) -> None:
            for start in range(0, len(wanted), CHUNK):
                chunk = wanted[start : start + CHUNK]
                marks = ", ".join("?" * len(chunk))
                out.update(
                    db.execute(
                        f"SELECT user_id, value FROM user_settings WHERE name = ? AND user_id IN ({marks})",
                        [setting, *chunk],
                    )
                )

        self._file.read(read)
        return out

    async def set(self, setting: str, user: str, value: str | None) -> None:
        check_setting(setting)
        if value is None:
            self._file.write(lambda db: db.execute("DELETE FROM user_settings WHERE user_id = ? AND name = ?", (user, setting)))
        else:
            self._file.write(
                lambda db: db.execute(
                    "INSERT INTO user_settings VALUES (?, ?, ?)"
                    " ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value",
                    (user, setting, value),
                )
            )
