"""``store = "sqlite"``: an embedded SQLite database, the default; this is
its change log (``SqliteStore``), with its parts beside it: the file
(``database.py``, ``schema.py``), each change's write (``writes.py``), once
keys (``once_keys.py``), users' settings (``directory.py``) and chat posts
(``posts.py``).

Each commit is one transaction, written before anything it acknowledges
leaves the daemon.
"""

from __future__ import annotations

import gc
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from askd.core.changes import Change
from askd.core.snapshot import Loaded, SessionRow
from askd.protocol import codec
from askd.store.parts import LocalCluster, StoreListener
from askd.store.rows import request_from_row, steps_from_json
from askd.store.sqlite.audit import SqliteTrail
from askd.store.sqlite.once_keys import SqliteOnceKeys
from askd.store.sqlite.directory import SqliteDirectory
from askd.store.sqlite.database import Database
from askd.store.sqlite.posts import SqlitePosts
from askd.store.sqlite.writes import write

# What the probe writes: about one question with its frame.
PROBE_BYTES = 8192


class SqliteStore:
    kind = "sqlite"
    durable = True
    shared = False

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._file = Database(path)
        self._db = self._file.db
        self._listener: StoreListener | None = None
        self.once_keys = SqliteOnceKeys(self._file, clock)
        self.directory = SqliteDirectory(self._file)
        self.posts = SqlitePosts(self._file, clock)
        self.cluster = LocalCluster(lambda: self._listener)
        self.audit = SqliteTrail(self._file)
        self._clock = clock

    def attach(self, listener: StoreListener) -> None:
        self._listener = listener

    async def catch_up(self) -> None:
        return None  # nothing another node did

    async def load(self) -> Loaded:
        # The load makes several objects per question and keeps them all,
        # with no cycle among them: the cyclic collector would only walk the
        # growing heap again and again (a third of the load's time with
        # 100,000 questions, measured by the load benchmark in docs/performance.md).
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._load()
        finally:
            if collecting:
                gc.enable()

    def _load(self) -> Loaded:
        loaded = Loaded()
        for name, members in self._db.execute("SELECT name, members FROM groups"):
            loaded.groups[name] = codec.loads(members)
        for user, until, delegates in self._db.execute("SELECT user_id, until, delegates FROM aways"):
            loaded.aways[user] = (until, codec.loads(delegates))
        sessions = self._db.execute("SELECT session_id, owner, parent_session_id, agent FROM sessions ORDER BY rowid")
        loaded.sessions = [SessionRow(*row) for row in sessions]
        rows = self._db.execute(
            "SELECT request_id, session_id, user_id, created_at, expires_at, idempotency_key, frame,"
            " status, answers, error, ended_at, notified, agent, max_extension, extended, on_timeout, answered_by,"
            " via, reason, defaulted, escalate, escalations, digest, approval, on_behalf_of, remind_every, remind_times,"
            " host_key FROM requests ORDER BY rowid"
        )
        requests = loaded.requests
        for (
            rid, sid, uid, created, expires, key, frame, status, answers, error, ended, notified, agent,
            max_extension, extended, on_timeout, answered_by, via, reason, defaulted, escalate, escalations, digest,
            approval, on_behalf_of, remind_every, remind_times, host_key,
        ) in rows:
            req = request_from_row(
                rid, sid, uid, created, expires, key, frame, status, answers, error, ended, bool(notified),
                agent=agent, max_extension=max_extension, extended=extended, on_timeout=on_timeout,
                answered_by=answered_by, via=via, reason=reason, defaulted=bool(defaulted), digest=digest,
                approval=approval,
            )
            req.on_behalf_of, req.host_key_hash = on_behalf_of, host_key
            req.escalate, req.escalations = steps_from_json(escalate), escalations
            if remind_every is not None:
                req.remind = (remind_every, remind_times)
            requests.append(req)
        return loaded

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        done: list[Change] = []
        with self._file.transaction() as db:
            for change in changes:
                if write(db, change):
                    done.append(change)
            head = self.audit.write(db, done, self._clock())  # the records, in the same transaction
        self.audit.advanced(head)
        return done

    async def probe(self) -> None:
        """Write (and commit) a question's worth of bytes, then delete them:
        a read, or a write rolled back, passes on a full disk."""
        db = self._db
        try:
            for statement in ("INSERT INTO probe VALUES (zeroblob(?))", "DELETE FROM probe"):
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.execute(statement, (PROBE_BYTES,) if "?" in statement else ())
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
        except sqlite3.Error as err:
            raise self._file.refused("write", err) from None

    async def load_not_before(self) -> float:
        row = self._db.execute("SELECT value FROM settings WHERE name = 'not_before'").fetchone()
        return float(row[0]) if row else 0.0

    async def save_not_before(self, at: float) -> None:
        self._file.write(
            lambda db: db.execute(
                "INSERT INTO settings VALUES ('not_before', ?)"
                " ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)",
                (at,),
            )
        )

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()
