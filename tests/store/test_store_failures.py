"""A store that fails while askd runs, against the real sqlite3: a full
database (``PRAGMA max_page_count``), a read-only one (``PRAGMA
query_only``: tests run as root, so file modes would not stop a write), and
one another process holds locked. Asks answer 503 ``store_unavailable`` and
push nothing, answers are refused with an ``error``, ``/healthz`` says
``degraded``; askd recovers by itself and loses nothing stored before."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from askd.store.sqlite import SqliteStore
from tests.conftest import RunningDaemon, eventually, q


def db_of(daemon: RunningDaemon) -> sqlite3.Connection:
    store = daemon.daemon.hub.store
    assert isinstance(store, SqliteStore)
    return store._db


@contextmanager
def full(daemon: RunningDaemon) -> Iterator[None]:
    db = db_of(daemon)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")
    yield
    db.execute("PRAGMA max_page_count = 1073741823")


@contextmanager
def read_only(daemon: RunningDaemon) -> Iterator[None]:
    db_of(daemon).execute("PRAGMA query_only = ON")
    yield
    db_of(daemon).execute("PRAGMA query_only = OFF")


@contextmanager
def locked(daemon: RunningDaemon) -> Iterator[None]:
    other = sqlite3.connect(daemon.daemon.hub.store.path, isolation_level=None)  # type: ignore[attr-defined]
    other.execute("BEGIN EXCLUSIVE")
    yield
    other.execute("ROLLBACK")
    other.close()


BIG = {"blob": "x" * 20_000}  # needs new pages: a full database cannot take it

FAILURES: dict[str, Callable[[RunningDaemon], object]] = {"full": full, "read-only": read_only, "locked": locked}


async def health(daemon: RunningDaemon) -> tuple[int, dict]:
    # With a token: a stranger learns only ok/degraded, not which store.
    r = await daemon.http.get(f"{daemon.url}/healthz", headers=daemon.agent_headers)
    return r.status_code, r.json()


@pytest.mark.parametrize("failure", list(FAILURES))
async def test_a_failing_store_refuses_changes_and_recovers_by_itself(daemon: RunningDaemon, failure: str) -> None:
    tab = await daemon.connect("alice")
    kept = await daemon.ask("s1", "alice", [q("Kept?")], metadata=BIG)
    await tab.expect("ask_user_questions")

    with FAILURES[failure](daemon):  # type: ignore[attr-defined]
        r = await daemon.http.post(
            f"{daemon.url}/v1/sessions/s1/questions",
            json={"userId": "alice", "questions": [q("Lost?")], "metadata": BIG},
            headers=daemon.agent_headers,
        )
        assert r.status_code == 503, r.text
        assert r.json()["error"]["code"] == "store_unavailable"
        await tab.quiet()  # nothing pushed for it

        status, body = await health(daemon)
        assert (status, body["status"], body["store"]) == (503, "degraded", "sqlite")
        if failure == "full":
            # The probe writes a question's worth: no room, still degraded.
            await daemon.daemon.hub.commits.try_store()
            assert (await health(daemon))[0] == 503

        reply = await tab.answer("s1", kept["requestId"], {"Kept?": "yes"})
        if failure == "full":
            # An answer needs no new page (it drops the question's frame):
            # a full database takes it, durably, so it is accepted.
            assert reply["payload"] == {"accepted": True}, reply
            await tab.expect("ask_user_questions_cancelled")
        else:
            assert reply["type"] == "error" and reply["payload"]["code"] == "store_unavailable", reply
            await tab.quiet()  # no cancelled event: the answer was not taken
            assert (await daemon.result("s1", kept["requestId"])).json()["status"] == "pending"
            pending = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
            assert [p["requestId"] for p in pending] == [kept["requestId"]]

    # Recovers by itself (the probe), with nothing lost.
    await eventually(lambda: _ok(daemon), timeout=5, what="healthz ok again")
    if failure != "full":
        assert (await tab.answer("s1", kept["requestId"], {"Kept?": "yes"}))["payload"] == {"accepted": True}
        await tab.expect("ask_user_questions_cancelled")
    again = await daemon.ask("s1", "alice", [q("Now?")], metadata=BIG)
    assert (await tab.expect("ask_user_questions"))["payload"]["requestId"] == again["requestId"]
    rows = db_of(daemon).execute("SELECT request_id, status FROM requests ORDER BY rowid").fetchall()
    assert rows == [(kept["requestId"], "answered"), (again["requestId"], "pending")]


async def _ok(daemon: RunningDaemon) -> bool:
    status, body = await health(daemon)
    return status == 200 and body["status"] == "ok"


@pytest.mark.parametrize("settings_overrides", [{"question_timeout_seconds": 0.3}])
async def test_a_timeout_due_while_the_store_fails_is_written_once_it_recovers(daemon: RunningDaemon) -> None:
    tab = await daemon.connect("alice")
    asked = await daemon.ask("s1", "alice", [q("Soon?")])
    await tab.expect("ask_user_questions")
    with read_only(daemon):
        # The clock's change waits for the store: nothing is told before it is kept.
        await tab.quiet(0.6)
        assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "pending"
    ended = await tab.expect("ask_user_questions_cancelled")
    assert ended["payload"] == {"requestId": asked["requestId"], "reason": "timeout"}
    assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "timeout"
    assert db_of(daemon).execute("SELECT status FROM requests").fetchall() == [("timeout",)]


async def test_withdraw_and_cancel_are_refused_while_the_store_fails(daemon: RunningDaemon) -> None:
    asked = await daemon.ask("s1", "alice", [q("Keep?")])
    with locked(daemon):
        r = await daemon.http.delete(f"{daemon.url}/v1/sessions/s1/questions/{asked['requestId']}", headers=daemon.agent_headers)
        assert (r.status_code, r.json()["error"]["code"]) == (503, "store_unavailable")
        r = await daemon.admin("POST", "/admin/v1/sessions/s1/cancel")
        assert (r.status_code, r.json()["error"]["code"]) == (503, "store_unavailable")
        r = await daemon.admin("POST", f"/admin/v1/sessions/s1/questions/{asked['requestId']}/answer", json={"answers": {"Keep?": "y"}})
        assert (r.status_code, r.json()["error"]["code"]) == (503, "store_unavailable")
    assert (await daemon.result("s1", asked["requestId"])).json()["status"] == "pending"


async def test_healthz_and_stats_name_the_store_and_node(daemon: RunningDaemon) -> None:
    status, body = await health(daemon)
    assert status == 200 and body["store"] == "sqlite" and body["node"] == daemon.daemon.hub.node_id
    stats = (await daemon.admin("GET", "/admin/v1/stats")).json()
    assert (stats["store"], stats["node"], stats["storeStatus"]) == ("sqlite", daemon.daemon.hub.node_id, "ok")
    admin_health = (await daemon.http.get(f"{daemon.admin_url}/healthz")).json()
    assert admin_health["store"] == "sqlite"

