"""The SQLite store's file: what it keeps across a reopen, and the files it
refuses at start (never erasing or rewriting them)."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import itertools
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from askd.core import AskInput, Limits, Status
from askd.core.registry import Registry
from askd.core.snapshot import restore
from askd.store import StoreError, open_store
from askd.store.sqlite import APPLICATION_ID, SCHEMA_VERSION, SqliteStore

QS = [{"question": "Which database?", "options": [{"label": "SQLite"}], "x-extra": {"kept": True}}]


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def registry(clock: Clock) -> Registry:
    ids = itertools.count(1)
    return Registry(Limits(question_timeout=900, result_ttl=600), clock=clock, new_id=lambda: f"r{next(ids)}")


async def stored(store: SqliteStore, reg: Registry, changes: list) -> None:
    done = await store.commit(changes)
    for change in done:
        assert reg.apply(change)


async def test_what_is_committed_comes_back_after_a_reopen(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "askd.db"
    store, reg = SqliteStore(path), registry(clock)
    a, asked_a = reg.prepare_ask(AskInput("child", "alice", QS, metadata={"m": "\ud800"}, parent_session_id="parent", idempotency_key="k1"))
    b, asked_b = reg.prepare_ask(AskInput("s2", "bob", [{"question": "Deploy?"}], timeout=60))
    c, asked_c = reg.prepare_ask(AskInput("s2", "bob", [{"question": "Again?"}]))
    await stored(store, reg, [asked_a, asked_b, asked_c])
    await stored(store, reg, [reg.prepare_answer("s2", b.request_id, {"Deploy?": "yes \ud800"})])
    store.close()

    clock.now += 5
    again, reg2 = SqliteStore(path), registry(clock)
    assert restore(await again.load(), reg2) == 3
    assert [r.describe() for r in reg2.pending()] == [a.describe(), c.describe()]
    assert reg2.get("s2", b.request_id).result() == b.result()  # type: ignore[union-attr]
    assert reg2.get("child", a.request_id).frame == a.frame  # type: ignore[union-attr]
    # The idempotency key replays, the session tree still cascades.
    assert reg2.prepare_ask(AskInput("child", "alice", QS, idempotency_key="k1")) == (reg2.get("child", a.request_id), None)
    assert [e.request_id for e in reg2.prepare_cancel("parent")] == [a.request_id]
    # A restore sends nothing; the counters count what the store holds.
    assert reg2.drain().sends == []
    assert {k: reg2.stats()[k] for k in ("asked", "pending", "answered")} == {"asked": 3, "pending": 2, "answered": 1}
    again.close()


async def test_restored_questions_share_their_session_s_ids_and_the_collector_is_left_as_found(tmp_path: Path) -> None:
    """Memory at start-up (docs/performance.md, B5): the questions of a
    session hold its id and its owner's once, as asked ones do, not a copy
    each from their rows; the load pauses the cyclic collector only while
    it runs."""
    clock, path = Clock(), tmp_path / "askd.db"
    store, reg = SqliteStore(path), registry(clock)
    await stored(store, reg, [reg.prepare_ask(AskInput("s1", "alice", QS))[1], reg.prepare_ask(AskInput("s1", "alice", QS))[1]])
    store.close()

    for collecting in (True, False):
        (gc.enable if collecting else gc.disable)()
        try:
            again, reg2 = SqliteStore(path), registry(clock)
            restore(await again.load(), reg2)
            assert gc.isenabled() is collecting
            a, b = reg2.pending("s1")
            assert a.session_id is b.session_id and a.user_id is b.user_id
            assert a.ask_event().session_id is a.session_id
            again.close()
        finally:
            gc.enable()


async def test_deadlines_that_passed_while_down_are_due_at_once(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "askd.db"
    store, reg = SqliteStore(path), registry(clock)
    a, asked = reg.prepare_ask(AskInput("s1", "alice", QS, timeout=10))
    await stored(store, reg, [asked])
    store.close()

    clock.now += 3600  # past the timeout and past the result's retention
    again, reg2 = SqliteStore(path), registry(clock)
    restore(await again.load(), reg2)
    [timeout] = reg2.due()
    assert timeout.status is Status.TIMEOUT and timeout.ended_at == clock.now
    await stored(again, reg2, [timeout])
    assert reg2.get("s1", a.request_id).status is Status.TIMEOUT  # type: ignore[union-attr]
    # Its result is kept for result_ttl from now, not from expiresAt.
    assert reg2.due() == []
    clock.now += 600
    [forgot] = reg2.due()
    await stored(again, reg2, [forgot])
    again.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT (SELECT count(*) FROM requests) + (SELECT count(*) FROM sessions)").fetchone()[0] == 0


async def test_a_session_tree_outlives_the_questions_that_made_it(tmp_path: Path) -> None:
    """s1's link to s0 came with s1's own question; that question is
    forgotten while s1 lives on as s2's parent: cancelling s0 after a
    restart must still reach s2."""
    clock, path = Clock(), tmp_path / "askd.db"
    store, reg = SqliteStore(path), registry(clock)
    r1, asked1 = reg.prepare_ask(AskInput("s1", "alice", QS, parent_session_id="s0"))
    await stored(store, reg, [asked1])
    _, asked2 = reg.prepare_ask(AskInput("s2", "alice", QS, parent_session_id="s1", timeout=5000))
    await stored(store, reg, [asked2])
    await stored(store, reg, [reg.prepare_answer("s1", r1.request_id, {"Which database?": "SQLite"})])
    clock.now += 601
    await stored(store, reg, reg.due())  # r1 forgotten; s1 stays, s2's parent
    assert reg.get("s1", r1.request_id) is None and reg.owner("s1") == "alice"
    store.close()

    again, reg2 = SqliteStore(path), registry(clock)
    restore(await again.load(), reg2)
    assert [e.session_id for e in reg2.prepare_cancel("s0")] == ["s2"]
    assert reg2.stats()["sessions"] == reg.stats()["sessions"] == 3
    again.close()


async def test_a_known_session_keeps_its_row_until_it_gains_a_parent(tmp_path: Path) -> None:
    """Asking again in a session writes no session row (the upsert's WHERE),
    except the ask that gives it its parent: that link survives a reopen."""
    clock, path = Clock(), tmp_path / "askd.db"
    store, reg = SqliteStore(path), registry(clock)
    await stored(store, reg, [reg.prepare_ask(AskInput("s1", "alice", QS))[1]])
    await stored(store, reg, [reg.prepare_ask(AskInput("s1", "alice", QS))[1]])
    await stored(store, reg, [reg.prepare_ask(AskInput("s1", "alice", QS, parent_session_id="s0"))[1]])
    await stored(store, reg, [reg.prepare_ask(AskInput("s1", "alice", QS, parent_session_id="s0"))[1]])
    store.close()
    rows = sqlite3.connect(path).execute("SELECT session_id, owner, parent_session_id FROM sessions ORDER BY session_id").fetchall()
    assert rows == [("s0", "alice", None), ("s1", "alice", "s0")]

    again, reg2 = SqliteStore(path), registry(clock)
    assert restore(await again.load(), reg2) == 4
    assert len(reg2.prepare_cancel("s0")) == 4
    again.close()


async def test_an_end_or_forget_the_status_no_longer_allows_is_not_written(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "askd.db"
    store, reg = SqliteStore(path), registry(clock)
    a, asked = reg.prepare_ask(AskInput("s1", "alice", QS))
    await stored(store, reg, [asked])
    answer = reg.prepare_answer("s1", a.request_id, {"Which database?": "SQLite"})
    cancel = reg.prepare_cancel("s1")[0]
    # Both decided while pending; the store takes the first and refuses the second.
    assert await store.commit([answer, cancel]) == [answer]
    from askd.core.changes import Forgot

    assert await store.commit([Forgot("s1", "nope")]) == []
    store.close()


# ---- files askd refuses ----------------------------------------------------


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_garbage(path: Path) -> None:
    path.write_bytes(os.urandom(4096))


def make_truncated(path: Path) -> None:
    store = SqliteStore(path)
    reg = registry(Clock())
    for i in range(200):
        _, asked = reg.prepare_ask(AskInput(f"s{i}", "alice", [{"question": "x" * 500}]))
        asyncio.run(store.commit([asked]))
    store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def make_newer(path: Path) -> None:
    SqliteStore(path).close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()


def make_foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    db.execute("INSERT INTO notes (body) VALUES ('mine')")
    db.commit()
    db.close()


def make_foreign_with_another_id(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA application_id = 1234")
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()


BAD = {
    "garbage": (make_garbage, "is not an SQLite database"),
    "truncated": (make_truncated, "corrupt"),
    "newer schema": (make_newer, "newer than this askd knows"),
    "another program's": (make_foreign, "another program's SQLite database"),
    "another application id": (make_foreign_with_another_id, "another program's SQLite database"),
}


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_file_is_refused_and_left_untouched(tmp_path: Path, kind: str) -> None:
    make, message = BAD[kind]
    path = tmp_path / "askd.db"
    make(path)
    before, files = digest(path), sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(StoreError, match=message) as err:
        open_store(f"sqlite://{path}", tmp_path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    assert digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == files  # no -wal or -shm made either


def test_serve_on_a_bad_file_exits_2_with_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "askd.db"
    make_foreign(path)
    before = digest(path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASKD_")}
    env["ASKD_STATE_DIR"] = str(tmp_path / "state")
    proc = subprocess.run(
        [sys.executable, "-m", "askd.cli.main", "serve", "--port", "0", "--admin-port", "0", "--store", f"sqlite://{path}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and lines[0].startswith("askd: "), proc.stderr
    assert digest(path) == before


def test_an_empty_file_and_a_missing_one_become_askd_databases(tmp_path: Path) -> None:
    (tmp_path / "empty.db").write_bytes(b"")
    for name in ("empty.db", "sub/dir/new.db"):
        path = tmp_path / name
        SqliteStore(path).close()
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        db.close()
    assert (tmp_path / "sub/dir/new.db").stat().st_mode & 0o777 == 0o600


def test_the_default_store_lives_in_the_state_directory(tmp_path: Path) -> None:
    store = open_store("sqlite", tmp_path / "state")
    assert store.kind == "sqlite" and (tmp_path / "state" / "askd.db").is_file()
    store.close()
    assert open_store("memory", tmp_path).kind == "memory"


async def test_a_delivered_webhook_is_not_sent_again_after_a_restart_and_a_due_one_is(tmp_path: Path) -> None:
    from askd.core import NotifyPolicy
    from askd.core.changes import Notified

    clock, path = Clock(), tmp_path / "askd.db"
    store = SqliteStore(path)
    reg = Registry(Limits(), clock=clock, new_id=iter(["r1", "r2"]).__next__, notify=NotifyPolicy(after=60, only_offline=False))
    sent, asked = reg.prepare_ask(AskInput("s1", "alice", QS))
    await stored(store, reg, [asked])
    clock.now += 30
    due, asked = reg.prepare_ask(AskInput("s1", "alice", [{"question": "Later?"}]))
    await stored(store, reg, [asked])
    clock.now += 31
    assert reg.due() == [] and [r.request_id for r in reg.drain().notify] == ["r1"]
    await stored(store, reg, [Notified("s1", "r1")])  # its delivery succeeded
    store.close()

    clock.now += 3600  # r2's notification came due while askd was down
    again = SqliteStore(path)
    reg2 = Registry(Limits(), clock=clock, notify=NotifyPolicy(after=60, only_offline=False))
    restore(await again.load(), reg2)
    assert reg2.get("s1", "r1").notified and not reg2.get("s1", "r2").notified  # type: ignore[union-attr]
    reg2.due()
    assert [r.request_id for r in reg2.drain().notify] == ["r2"]
    again.close()


def test_a_second_daemon_on_the_same_file_is_refused_until_the_first_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "askd.db"
    first = SqliteStore(path)
    with pytest.raises(StoreError, match=rf"{path} is in use by another askd \(pid {os.getpid()}\)"):
        SqliteStore(path)
    first.close()
    SqliteStore(path).close()
