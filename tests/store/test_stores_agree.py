"""Where the stores used to disagree (issue 31), each now one documented
behaviour on memory, SQLite and Redis alike; and SQLite's migration of the
claims and addresses kept before the claims part."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from askd.core import Request
from askd.core.changes import Asked, Extended
from askd.store import Store
from askd.store.sqlite import MIGRATIONS, SqliteStore
from tests.store.test_take_effect import loaded

NOW = 1_800_000_000


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    async with loaded(request.param, tmp_path) as opened:
        yield opened


def asked(rid: str, expires: float) -> Asked:
    req = Request(rid, "s1", "alice", NOW, expires)
    req.frame = b"{}"
    return Asked(req, None)


async def test_a_request_id_kept_already_does_not_take_effect(store: Store) -> None:
    """An ``Asked`` whose request id the store holds already is not taken,
    quietly (SQLite raised a constraint error, which failed the whole batch
    as if the store were down); the rest of the batch is."""
    first = asked("r1", NOW + 60)
    assert await store.commit([first]) == [first]
    again, other = asked("r1", NOW + 90), asked("r2", NOW + 60)
    assert await store.commit([again, other]) == [other]


async def test_a_deadline_is_compared_as_a_number(store: Store) -> None:
    """An extension takes effect from the deadline it was decided against,
    compared as a number: Redis compared the text, so 1800000060 and
    1800000060.0 differed."""
    first = asked("r1", NOW + 60)  # an int, as a clock may give
    assert await store.commit([first]) == [first]
    ext = Extended("s1", "r1", float(NOW + 60), NOW + 90.5, 30.5, b"{}")
    assert await store.commit([ext]) == [ext]


def test_migration_9_moves_the_claims_and_addresses_kept_before(tmp_path: Path) -> None:
    path = tmp_path / "askd.db"
    db = sqlite3.connect(path, isolation_level=None)
    for version, statements in enumerate(MIGRATIONS[:8], start=1):
        for statement in statements:
            db.execute(statement)
        db.execute(f"PRAGMA user_version = {version}")
    db.execute("PRAGMA application_id = 1634954084")
    db.execute(
        "INSERT INTO requests (request_id, session_id, user_id, created_at, expires_at, status, max_extension)"
        " VALUES ('r1', 's1', 'alice', 100, 160, 'pending', 30)"
    )
    db.execute("INSERT INTO mail_claims VALUES ('r1', 0, 'alice'), ('gone', 1, 'bob')")
    db.execute("INSERT INTO once_claims VALUES ('open:j1', 500)")
    db.execute("INSERT INTO users VALUES ('alice', 'alice@example.com')")
    db.close()

    store = SqliteStore(path)
    try:
        rows = store._db.execute("SELECT key, until FROM claims ORDER BY key").fetchall()
        # a forgotten question's claim has nothing left to guard
        assert rows == [("mail:r1:0:alice", 160 + 30 + 60), ("open:j1", 500)]
        assert store._db.execute("SELECT * FROM user_settings").fetchall() == [("alice", "email", "alice@example.com")]
        tables = {r[0] for r in store._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert not tables & {"mail_claims", "once_claims", "users"}
    finally:
        store.close()


async def test_a_claim_already_over_still_loses_to_a_live_one(store: Store) -> None:
    """Redis answered "won" for a claim whose instant had passed, without
    asking Redis, even of a key another held."""
    now = time.time()
    assert await store.once_keys.take("open:a", now + 60)
    assert not await store.once_keys.take("open:a", now - 1)
    assert await store.once_keys.take("open:b", now - 1)
