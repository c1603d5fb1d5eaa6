"""``store.posts`` on SQLite: ``posts``, one row per chat message posted
about a question, durable; each kept until its instant (the dead ones go
with each new one)."""

from __future__ import annotations

from collections.abc import Callable

from askd.store.parts import Post
from askd.store.sqlite.database import Database

_COLUMNS = "session_id, request_id, key, channel, ts, body, until"


class SqlitePosts:
    def __init__(self, file: Database, clock: Callable[[], float]) -> None:
        self._file, self._now = file, clock

    async def keep(self, post: Post) -> None:
        with self._file.transaction() as db:
            db.execute("DELETE FROM posts WHERE until <= ?", (self._now(),))
            db.execute(
                f"INSERT OR REPLACE INTO posts ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (post.session_id, post.request_id, post.key, post.channel, post.ts, post.body, post.until),
            )

    async def of(self, request_id: str) -> list[Post]:
        rows = self._file.read(
            lambda db: db.execute(
                f"SELECT {_COLUMNS} FROM posts WHERE request_id = ? AND until > ? ORDER BY key", (request_id, self._now())
            ).fetchall()
        )
        return [Post(*row) for row in rows]

    async def done(self, request_id: str, key: str) -> None:
        self._file.write(lambda db: db.execute("DELETE FROM posts WHERE request_id = ? AND key = ?", (request_id, key)))

    async def every(self) -> list[Post]:
        rows = self._file.read(
            lambda db: db.execute(f"SELECT {_COLUMNS} FROM posts WHERE until > ? ORDER BY until", (self._now(),)).fetchall()
        )
        return [Post(*row) for row in rows]
