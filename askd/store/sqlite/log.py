"""``store = "sqlite"``: an embedded SQLite database, the default.

One connection, one writer: the daemon's event loop. Each commit is one
transaction, written before anything it acknowledges leaves the daemon.
WAL with ``synchronous=NORMAL``: a process crash loses nothing committed; a
power cut may lose the last transactions not yet checkpointed
(docs/decisions.md). A file that is not askd's, is corrupt, or has a newer
schema is refused at start and never written to.
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from askd.core import Request
from askd.core.registry import Registry
from askd.core.changes import Asked, Change, Ended, Escalated, Extended, Forgot, GroupDeleted, GroupSet, Notified
from askd.core.events import encode
from askd.store.base import LocalStore, StoreError, StoreUnavailable
from askd.store.rows import request_from_row, steps_from_json, steps_to_json

#: ``PRAGMA application_id``: marks the file as askd's ("askd" in ASCII).
APPLICATION_ID = 0x61736B64

#: Schema migrations: the statements that take a database from version N-1
#: to N. The schema version is ``PRAGMA user_version``.
MIGRATIONS: list[list[str]] = [
    [  # 1: sessions (their tree), pending questions and kept results
        """CREATE TABLE sessions (
            session_id        TEXT PRIMARY KEY,
            owner             TEXT NOT NULL,
            parent_session_id TEXT
        )""",
        "CREATE INDEX sessions_by_parent ON sessions (parent_session_id)",
        """CREATE TABLE requests (
            request_id        TEXT PRIMARY KEY,
            session_id        TEXT NOT NULL,
            user_id           TEXT NOT NULL,
            created_at        REAL NOT NULL,
            expires_at        REAL NOT NULL,
            idempotency_key   TEXT,
            frame             BLOB,    -- the ask_user_questions frame, while pending
            status            TEXT NOT NULL,
            answers           BLOB,    -- UTF-8 JSON, once answered
            error             TEXT,
            ended_at          REAL,
            notified          INTEGER NOT NULL DEFAULT 0  -- a webhook delivery succeeded
        )""",
        "CREATE INDEX requests_by_session ON requests (session_id)",
        # The probe's scratch row: while the store fails, askd writes one
        # question's worth here (and deletes it) to learn it takes writes again.
        "CREATE TABLE probe (x BLOB)",
    ],
    [  # 2: daemon-wide values set at run time: the revocation instant (auth.not_before)
        "CREATE TABLE settings (name TEXT PRIMARY KEY, value REAL NOT NULL)",
    ],
    [  # 3: agents kept apart: the sub of the agent token that first asked in a
        # session, and of the one that asked each question (its
        # Idempotency-Key is that agent's); NULL: a token without a sub
        "ALTER TABLE sessions ADD COLUMN agent TEXT",
        "ALTER TABLE requests ADD COLUMN agent TEXT",
    ],
    [  # 4: more time, a safe default, declining, and who answered how
        "ALTER TABLE requests ADD COLUMN max_extension REAL NOT NULL DEFAULT 0",  # the person's allowance
        "ALTER TABLE requests ADD COLUMN extended REAL NOT NULL DEFAULT 0",  # of which used
        "ALTER TABLE requests ADD COLUMN on_timeout BLOB",  # UTF-8 JSON answers, while pending
        "ALTER TABLE requests ADD COLUMN answered_by TEXT",
        "ALTER TABLE requests ADD COLUMN via TEXT",
        "ALTER TABLE requests ADD COLUMN reason TEXT",  # a decline's
        "ALTER TABLE requests ADD COLUMN defaulted INTEGER NOT NULL DEFAULT 0",
    ],
    [  # 5: groups, named sets of user ids a question may be asked of, and escalation steps
        "CREATE TABLE groups (name TEXT PRIMARY KEY, members TEXT NOT NULL)",  # members: a JSON list
        "ALTER TABLE requests ADD COLUMN escalate TEXT",  # JSON [[afterSeconds, [entries]], ...], or NULL
        "ALTER TABLE requests ADD COLUMN escalations INTEGER NOT NULL DEFAULT 0",  # steps taken
    ],
    [  # 6: e-mail: users' addresses, and each mail claimed (question, escalation step, recipient)
        "CREATE TABLE users (user_id TEXT PRIMARY KEY, email TEXT NOT NULL)",
        """CREATE TABLE mail_claims (
            request_id TEXT NOT NULL,
            step       INTEGER NOT NULL,
            user_id    TEXT NOT NULL,
            PRIMARY KEY (request_id, step, user_id)
        ) WITHOUT ROWID""",
    ],
    [  # 7: once-only claims (an `askd open` code's use), each kept until the credential is dead
        "CREATE TABLE once_claims (key TEXT PRIMARY KEY, expires_at REAL NOT NULL) WITHOUT ROWID",
    ],
    [  # 8: receipts: an ended question's digest, taken before its questions are dropped
        "ALTER TABLE requests ADD COLUMN digest TEXT",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)

# How long a write waits for another holder of the file's lock. The daemon
# is the only writer; waiting longer would stall its event loop.
BUSY_TIMEOUT_MS = 200

_SQLITE_MAGIC = b"SQLite format 3\x00"

# What the probe writes: about one question with its frame.
PROBE_BYTES = 8192


def _check_file(path: Path) -> None:
    """Refuse a file that is not an askd database. Reads it as an immutable
    file (no lock, no -wal or -shm made), so a refused file is untouched."""
    try:
        with path.open("rb") as f:
            head = f.read(100)
    except FileNotFoundError:
        return
    except OSError as err:
        raise StoreError(f"cannot read the store {path}: {err.strerror or err}") from None
    if not head:
        return  # an empty file: SQLite makes a database of it
    if not head.startswith(_SQLITE_MAGIC):
        raise StoreError(f"the store {path} is not an SQLite database; askd will not touch it")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
        try:
            app_id = db.execute("PRAGMA application_id").fetchone()[0]
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            check = db.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            db.close()
    except sqlite3.DatabaseError as err:
        raise StoreError(f"the store {path} is corrupt or unreadable ({err}); askd will not touch it") from None
    if check != "ok":
        raise StoreError(f"the store {path} is corrupt ({check}); askd will not touch it")
    if app_id != APPLICATION_ID and (app_id != 0 or tables):
        raise StoreError(f"the store {path} is another program's SQLite database; askd will not touch it")
    _check_version(path, version)


def _check_version(path: Path, version: int) -> None:
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"the store {path} has schema version {version}, newer than this askd knows ({SCHEMA_VERSION}); "
            "run a newer askd"
        )


def _lock(path: Path) -> int:
    """Hold ``PATH.lock`` for the daemon's life: two daemons on one file
    would each serve their own copy of the state. The kernel drops the lock
    when the process dies, even by ``kill -9``."""
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise StoreError(
            f"the store {path} is in use by another askd (pid {holder}); "
            "one SQLite store serves one daemon (use a redis:// store for several)"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


class SqliteStore(LocalStore):
    kind = "sqlite"
    durable = True

    def __init__(self, path: Path) -> None:
        self.path = path
        _check_file(path)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # ":memory:" (tests) is no file another daemon could open: no lock,
            # else a stray ":memory:.lock" lands in the working directory.
            self._lock = _lock(path) if str(path) != ":memory:" else -1
            if self._lock >= 0 and not path.exists():  # questions and answers are private: 0600, whatever the umask
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as err:
            raise StoreError(f"cannot open the store {path}: {err}") from None
        try:
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # Read again through the live connection: the check above read
            # the main file alone, without a crashed daemon's -wal.
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            _check_version(path, version)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._migrate(version)
        except StoreError:
            self.close()
            raise
        except sqlite3.Error as err:
            self.close()
            raise StoreError(f"cannot prepare the store {path}: {err}") from None

    def _migrate(self, version: int) -> None:
        for target in range(version + 1, SCHEMA_VERSION + 1):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[target - 1]:
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self._db.execute(f"PRAGMA user_version = {target}")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # ---- the Store interface -------------------------------------------

    async def load(self, registry: Registry) -> int:
        # The load makes several objects per question and keeps them all,
        # with no cycle among them: the cyclic collector would only walk the
        # growing heap again and again (a third of the load's time with
        # 100,000 questions, docs/performance.md, B5).
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._load(registry)
        finally:
            if collecting:
                gc.enable()

    def _load(self, registry: Registry) -> int:
        for name, members in self._db.execute("SELECT name, members FROM groups"):
            registry.restore_group(name, json.loads(members))
        sessions = self._db.execute("SELECT session_id, owner, parent_session_id, agent FROM sessions ORDER BY rowid")
        for sid, owner, parent, agent in sessions:
            registry.restore_session(sid, owner, parent, agent)
        rows = self._db.execute(
            "SELECT request_id, session_id, user_id, created_at, expires_at, idempotency_key, frame,"
            " status, answers, error, ended_at, notified, agent, max_extension, extended, on_timeout, answered_by,"
            " via, reason, defaulted, escalate, escalations, digest FROM requests ORDER BY rowid"
        )
        n = 0
        for (
            rid, sid, uid, created, expires, key, frame, status, answers, error, ended, notified, agent,
            max_extension, extended, on_timeout, answered_by, via, reason, defaulted, escalate, escalations, digest,
        ) in rows:
            req = request_from_row(
                rid, sid, uid, created, expires, key, frame, status, answers, error, ended, bool(notified),
                agent=agent, max_extension=max_extension, extended=extended, on_timeout=on_timeout,
                answered_by=answered_by, via=via, reason=reason, defaulted=bool(defaulted), digest=digest,
            )
            req.escalate, req.escalations = steps_from_json(escalate), escalations
            registry.restore(req)
            n += 1
        return n

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed, or rolled back and raised as
        :class:`StoreUnavailable` (nothing written)."""
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.Error as err:
            raise StoreUnavailable(f"the store {self.path} refused a write: {err}") from None

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        done: list[Change] = []
        with self._transaction() as db:
            for change in changes:
                if self._write(db, change):
                    done.append(change)
        return done

    @staticmethod
    def _write(db: sqlite3.Connection, change: Change) -> bool:
        if isinstance(change, Asked):
            req, parent = change.request, change.parent_session_id
            assert req.frame is not None
            # The session before its parent, as the registry makes them: rowid
            # order is the order a restart restores, lists and re-pushes them in.
            # A session the registry knew with this parent is stored as it is
            # (one statement less per ask); the WHERE leaves a known session's
            # row alone unless it gains its parent: rewriting it unchanged cost
            # a page in the WAL per ask.
            if not change.session_known:
                # A new session (or a parent it names) is the asking agent's.
                db.execute(
                    "INSERT INTO sessions (session_id, owner, parent_session_id, agent) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (session_id) DO UPDATE SET parent_session_id = excluded.parent_session_id"
                    " WHERE parent_session_id IS NULL AND excluded.parent_session_id IS NOT NULL",
                    (req.session_id, req.user_id, parent, req.agent),
                )
                if parent is not None:
                    db.execute(
                        "INSERT OR IGNORE INTO sessions (session_id, owner, parent_session_id, agent) VALUES (?, ?, NULL, ?)",
                        (parent, req.user_id, req.agent),
                    )
            db.execute(
                "INSERT INTO requests (request_id, session_id, user_id, created_at, expires_at,"
                " idempotency_key, frame, status, agent, max_extension, on_timeout, escalate)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
                (
                    req.request_id,
                    req.session_id,
                    req.user_id,
                    req.created_at,
                    req.expires_at,
                    req.idempotency_key,
                    req.frame,
                    req.agent,
                    req.max_extension,
                    None if req.on_timeout is None else encode(req.on_timeout),
                    steps_to_json(req.escalate),
                ),
            )
            return True
        if isinstance(change, Ended):
            cur = db.execute(
                "UPDATE requests SET status = ?, answers = ?, error = ?, ended_at = ?, frame = NULL, on_timeout = NULL,"
                " answered_by = ?, via = ?, reason = ?, defaulted = ?, digest = ? WHERE request_id = ? AND status = 'pending'",
                (
                    change.status.value,
                    None if change.answers is None else encode(change.answers),  # lone surrogates escaped
                    change.error,
                    change.ended_at,
                    change.answered_by,
                    change.via,
                    change.reason,
                    int(change.defaulted),
                    change.digest,
                    change.request_id,
                ),
            )
            return cur.rowcount == 1
        if isinstance(change, Extended):
            # Compare and set: only from the deadline it was decided against.
            cur = db.execute(
                "UPDATE requests SET expires_at = ?, extended = ?, frame = ?"
                " WHERE request_id = ? AND status = 'pending' AND expires_at = ?",
                (change.expires_at, change.extended, change.frame, change.request_id, change.previous),
            )
            return cur.rowcount == 1
        if isinstance(change, Escalated):
            cur = db.execute(
                "UPDATE requests SET escalations = ? WHERE request_id = ? AND status = 'pending' AND escalations < ?",
                (change.step, change.request_id, change.step),
            )
            return cur.rowcount == 1
        if isinstance(change, GroupSet):
            db.execute(
                "INSERT INTO groups VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET members = excluded.members",
                (change.group, json.dumps(change.members)),
            )
            return True
        if isinstance(change, GroupDeleted):
            return db.execute("DELETE FROM groups WHERE name = ?", (change.group,)).rowcount == 1
        if isinstance(change, Notified):
            cur = db.execute(
                "UPDATE requests SET notified = 1 WHERE request_id = ? AND status = 'pending'", (change.request_id,)
            )
            return cur.rowcount == 1
        assert isinstance(change, Forgot)
        cur = db.execute("DELETE FROM requests WHERE request_id = ? AND status != 'pending'", (change.request_id,))
        if cur.rowcount != 1:
            return False
        db.execute("DELETE FROM mail_claims WHERE request_id = ?", (change.request_id,))
        SqliteStore._collect(db, change.session_id)
        return True

    @staticmethod
    def _collect(db: sqlite3.Connection, session_id: str | None) -> None:
        """Forget sessions that hold nothing, walking up to their parents, as
        the registry does."""
        while session_id is not None:
            holds = db.execute(
                "SELECT EXISTS (SELECT 1 FROM requests WHERE session_id = ?1)"
                " OR EXISTS (SELECT 1 FROM sessions WHERE parent_session_id = ?1)",
                (session_id,),
            ).fetchone()[0]
            if holds:
                return
            row = db.execute(
                "DELETE FROM sessions WHERE session_id = ? RETURNING parent_session_id", (session_id,)
            ).fetchone()
            session_id = row[0] if row else None

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
            raise StoreUnavailable(f"the store {self.path} refused a write: {err}") from None

    async def load_not_before(self) -> float:
        row = self._db.execute("SELECT value FROM settings WHERE name = 'not_before'").fetchone()
        return float(row[0]) if row else 0.0

    async def save_not_before(self, at: float) -> None:
        try:
            self._db.execute(
                "INSERT INTO settings VALUES ('not_before', ?)"
                " ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)",
                (at,),
            )
        except sqlite3.Error as err:
            raise StoreUnavailable(f"the store {self.path} refused a write: {err}") from None

    async def claim_mails(self, req: Request, step: int, users: Sequence[str]) -> list[str]:
        won: list[str] = []
        with self._transaction() as db:
            for user in dict.fromkeys(users):
                cur = db.execute(
                    "INSERT INTO mail_claims VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (req.request_id, step, user)
                )
                if cur.rowcount == 1:
                    won.append(user)
        return won

    async def claim_once(self, key: str, expires_at: float) -> bool:
        with self._transaction() as db:
            # Claims live minutes: the few dead ones go with each new claim.
            db.execute("DELETE FROM once_claims WHERE expires_at <= ?", (time.time(),))
            cur = db.execute("INSERT INTO once_claims VALUES (?, ?) ON CONFLICT DO NOTHING", (key, expires_at))
            return cur.rowcount == 1

    async def user_emails(self, users: Sequence[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(users))
        out: dict[str, str] = {}
        try:
            for start in range(0, len(wanted), 500):  # under SQLite's limit of bound parameters
                chunk = wanted[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                out.update(self._db.execute(f"SELECT user_id, email FROM users WHERE user_id IN ({marks})", chunk))
        except sqlite3.Error as err:
            raise StoreUnavailable(f"the store {self.path} refused a read: {err}") from None
        return out

    async def set_user_email(self, user: str, email: str | None) -> None:
        try:
            if email is None:
                self._db.execute("DELETE FROM users WHERE user_id = ?", (user,))
            else:
                self._db.execute(
                    "INSERT INTO users VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET email = excluded.email",
                    (user, email),
                )
        except sqlite3.Error as err:
            raise StoreUnavailable(f"the store {self.path} refused a write: {err}") from None

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()
        if self._lock >= 0:
            os.close(self._lock)  # releases the lock
            self._lock = -1
