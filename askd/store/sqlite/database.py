"""The SQLite store's file: refused unless it is askd's, locked for one
daemon, opened with one connection and migrated (``Database``).

One connection, one writer: the daemon's event loop. WAL with
``synchronous=NORMAL``: a process crash loses nothing committed; a power cut
may lose the last transactions not yet checkpointed (docs/decisions.md). A
file that is not askd's, is corrupt, or has a newer schema is refused at
start and never written to.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from askd.store.errors import StoreError, StoreUnavailable
from askd.store.sqlite.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION

T = TypeVar("T")

# How long a write waits for another holder of the file's lock. The daemon
# is the only writer; waiting longer would stall its event loop.
BUSY_TIMEOUT_MS = 200

_SQLITE_MAGIC = b"SQLite format 3\x00"


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


class Database:
    """The open file: its one connection (``db``), shared by the store's parts."""

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
            self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as err:
            raise StoreError(f"cannot open the store {path}: {err}") from None
        try:
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # Read again through the live connection: the check above read
            # the main file alone, without a crashed daemon's -wal.
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            _check_version(path, version)
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
            self._migrate(version)
        except StoreError:
            self.close()
            raise
        except sqlite3.Error as err:
            self.close()
            raise StoreError(f"cannot prepare the store {path}: {err}") from None

    def _migrate(self, version: int) -> None:
        for target in range(version + 1, SCHEMA_VERSION + 1):
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[target - 1]:
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self.db.execute(f"PRAGMA user_version = {target}")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def refused(self, what: str, err: sqlite3.Error) -> StoreUnavailable:
        return StoreUnavailable(f"the store {self.path} refused a {what}: {err}")

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed, or rolled back and raised as
        :class:`StoreUnavailable` (nothing written)."""
        db = self.db
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
            raise self.refused("write", err) from None

    def write(self, step: Callable[[sqlite3.Connection], T]) -> T:
        """One statement's write (autocommit), raised as :class:`StoreUnavailable`."""
        try:
            return step(self.db)
        except sqlite3.Error as err:
            raise self.refused("write", err) from None

    def read(self, step: Callable[[sqlite3.Connection], T]) -> T:
        try:
            return step(self.db)
        except sqlite3.Error as err:
            raise self.refused("read", err) from None

    def close(self) -> None:
        self.db.close()
        if self._lock >= 0:
            os.close(self._lock)  # releases the lock
            self._lock = -1
