"""Every store write goes through the one JSON encoder (``askd.protocol.codec``):
compact UTF-8. Rows an older askd wrote with ``json.dumps`` (spaced, ASCII
escapes) still read the same, on SQLite and in Redis's stream entries."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from askd.core import AskInput, Limits
from askd.core.changes import AwaySet, GroupSet
from askd.core.registry import Registry
from askd.protocol import codec
from askd.store.redis import change_json
from askd.store.rows import remind_from_json, remind_to_json, steps_from_json, steps_to_json
from askd.store.sqlite import SqliteStore

NOW = 1_800_000_000.0
MEMBERS = ("bob", "zoë")
STEPS = ((60.0, ("zoë", "dave")), (120.5, ("carol",)))


def _old(value: object) -> str:
    """What an askd before the one encoder wrote: ``json.dumps``'s defaults."""
    return json.dumps(value)


async def test_sqlite_writes_the_codecs_json_and_reads_rows_written_before(tmp_path: Path) -> None:
    path = tmp_path / "askd.db"
    store = SqliteStore(path, lambda: NOW)
    reg = Registry(Limits(), clock=lambda: NOW)
    req, asked = reg.prepare_ask(AskInput("s1", "alice", [{"question": "Ship it?"}], escalate=STEPS))
    assert asked is not None
    took = await store.commit([asked, GroupSet("ops", MEMBERS), AwaySet("alice", NOW + 60, MEMBERS)])
    assert len(took) == 3
    store.close()

    db = sqlite3.connect(path)
    members, delegates, escalate = db.execute(
        "SELECT (SELECT members FROM groups), (SELECT delegates FROM aways), (SELECT escalate FROM requests)"
    ).fetchone()
    # The codec's text (kept as TEXT, not a BLOB), one encoder for every column.
    assert members == delegates == codec.dumps(MEMBERS).decode() == '["bob","zoë"]'
    assert escalate == steps_to_json(STEPS) == codec.dumps([[a, list(e)] for a, e in STEPS]).decode()
    # Rows as an older askd wrote them read as before.
    with db:
        db.execute("UPDATE groups SET members = ?", (_old(list(MEMBERS)),))
        db.execute("UPDATE aways SET delegates = ?", (_old(list(MEMBERS)),))
        db.execute("UPDATE requests SET escalate = ?", (_old([[a, list(e)] for a, e in STEPS]),))
    assert "\\u00eb" in db.execute("SELECT members FROM groups").fetchone()[0]
    db.close()

    again = SqliteStore(path, lambda: NOW)
    try:
        loaded = await again.load()
    finally:
        again.close()
    assert loaded.groups == {"ops": list(MEMBERS)}
    assert loaded.aways == {"alice": (NOW + 60, list(MEMBERS))}
    assert [r.escalate for r in loaded.requests] == [STEPS]


def test_steps_reminders_and_stream_entries_written_before_read_the_same() -> None:
    assert steps_from_json(_old([[a, list(e)] for a, e in STEPS])) == STEPS
    assert remind_from_json(_old([300.0, 2])) == remind_from_json(remind_to_json((300.0, 2))) == (300.0, 2)
    # A stream entry an older node wrote: the change's fields, lists as JSON text.
    old = {"o": "n1", "q": 1, "t": "g", "g": "ops", "members": _old(list(MEMBERS))}
    assert change_json.from_json(json.loads(json.dumps(old))) == GroupSet("ops", MEMBERS)
    new = change_json.to_json(GroupSet("ops", MEMBERS), "n1", 1)
    assert new == '{"o":"n1","q":1,"t":"g","g":"ops","members":"[\\"bob\\",\\"zoë\\"]"}'
    assert change_json.from_json(codec.loads(new)) == GroupSet("ops", MEMBERS)
