"""The history index each store keeps with its audit trail (``GET
/v1/me/history``, protocol section 19): the same ends on every store,
newest first, an escalation's group members included; on SQLite, a file
whose records predate the index gets it filled when it is migrated."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from askd.core import AskInput, Limits
from askd.core.registry import Registry
from askd.store.memory import MemoryStore
from askd.store.sqlite import SqliteStore
from askd.store.sqlite.schema import MIGRATIONS


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def stored(store: Any, reg: Registry, changes: list[Any]) -> None:
    for change in await store.commit(changes):
        assert reg.apply(change)


async def life(store: Any, clock: Clock) -> dict[str, list[tuple[str, str]]]:
    """Questions asked, escalated to a group, answered and cancelled; each
    user's history as (requestId, event)."""
    ids = itertools.count(1)
    reg = Registry(Limits(question_timeout=900), clock=clock, new_id=lambda: f"r{next(ids)}")
    await stored(store, reg, [reg.prepare_group_set("leads", ["alice", "dave"])])
    qs = [{"question": "Deploy?"}]
    a, asked = reg.prepare_ask(AskInput("s1", "alice", qs, escalate=((60.0, ("group:leads", "erin")),)))
    b, asked_b = reg.prepare_ask(AskInput("s2", "bob", qs))
    await stored(store, reg, [asked, asked_b])
    clock.now += 60
    await stored(store, reg, reg.due())  # the step: dave and erin join (alice is asked already)
    await stored(store, reg, [reg.prepare_answer("s1", a.request_id, {"Deploy?": "yes"}, user_id="dave", via="ws")])
    await stored(store, reg, reg.prepare_cancel("s2"))
    c, asked_c = reg.prepare_ask(AskInput("s3", "alice", qs))
    await stored(store, reg, [asked_c])  # pending: in no history
    return {u: [(e.record["requestId"], e.record["event"]) for e in await store.audit.history(u)] for u in ("alice", "bob", "dave", "erin", "carol")}


EXPECTED = {
    "alice": [("r1", "answered")],
    "bob": [("r2", "cancelled")],
    "dave": [("r1", "answered")],
    "erin": [("r1", "answered")],
    "carol": [],
}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_each_store_indexes_the_ends_of_its_audiences(tmp_path: Path, kind: str) -> None:
    clock = Clock()
    store = MemoryStore(clock) if kind == "memory" else SqliteStore(tmp_path / "askd.db", clock)
    assert await life(store, clock) == EXPECTED


async def test_a_file_migrated_to_the_index_gets_it_filled_from_its_records(tmp_path: Path) -> None:
    clock, path = Clock(), tmp_path / "askd.db"
    store = SqliteStore(path, clock)
    assert await life(store, clock) == EXPECTED
    store.close()
    # The file as it was before the index's migration, then that migration
    # and the titles' (which finds no title to fill: the records hold none).
    steps = [m for m in MIGRATIONS if any("audit_history" in s or "audit_titles" in s for s in m)]
    db = sqlite3.connect(path)
    db.execute("DROP TABLE audit_history")
    db.execute("DROP TABLE audit_titles")
    db.execute("DROP INDEX audit_by_request")
    for statement in (s for step in steps for s in step):
        db.execute(statement)
    db.commit()
    db.close()
    again = SqliteStore(path, clock)
    assert {u: [(e.record["requestId"], e.record["event"]) for e in await again.audit.history(u)] for u in EXPECTED} == EXPECTED
    assert {e.title for u in EXPECTED for e in await again.audit.history(u)} == {None}
    again.close()
