"""The SQLite store's audit trail (``store.audit``): one row per record in
the ``audit`` table, written in the commit's own transaction (``log.py``).
The chain's head is its last row; ``audit_head`` keeps it when a prune
leaves none (written by the prune, not by every commit: one page less to
write per commit)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import orjson

from askd.audit.history import ENDS, HISTORY, PastQuestion, joined, titles
from askd.audit.trail import Head, SealingTrail
from askd.core.changes import Change
from askd.protocol import codec
from askd.store.sqlite.file import Database


def _text(record: dict[str, Any]) -> str:
    """A record as the row keeps it: compact JSON (its hash is over its JCS,
    not these bytes), by orjson (a tenth of json's time) unless it holds what
    orjson refuses (a lone surrogate in a user's id)."""
    try:
        return orjson.dumps(record).decode()
    except TypeError:
        return json.dumps(record, separators=(",", ":"))


class SqliteTrail(SealingTrail):
    def __init__(self, file: Database) -> None:
        self._file = file
        last = file.db.execute("SELECT record FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        if last is not None:
            record = codec.loads(last[0])
            self._head = Head(record["seq"], record["hash"], record["at"])
        else:  # none yet, or every record pruned
            row = file.db.execute("SELECT seq, hash, at FROM audit_head WHERE id = 1").fetchone()
            self._head = Head(*row) if row else Head()

    def write(self, db: sqlite3.Connection, taken: Sequence[Change], at: float) -> Head:
        """Seal and insert the records of ``taken`` in the open transaction;
        the new head, kept once the transaction commits (:meth:`advanced`)."""
        records, head = self._head.sealed(taken, at)
        if records:
            db.executemany(
                "INSERT INTO audit (seq, at, session_id, request_id, record) VALUES (?, ?, ?, ?, ?)",
                [(r["seq"], r["at"], r["sessionId"], r["requestId"], _text(r)) for r in records],
            )
            self._index(db, records, titles(taken))
        return head

    def _index(self, db: sqlite3.Connection, records: list[dict[str, Any]], asked: dict[tuple[str, str], str]) -> None:
        """Each end's seq and title on the lists of its question's audience
        (read from its records, this commit's included), the last
        ``HISTORY`` kept; a question's title kept from its ask to its end."""
        for rec in records:
            sid, rid = rec["sessionId"], rec["requestId"]
            if rec["event"] == "asked" and (sid, rid) in asked:
                db.execute(
                    "INSERT OR REPLACE INTO audit_titles (request_id, session_id, title) VALUES (?, ?, ?)",
                    (rid, sid, asked[(sid, rid)]),
                )
            if rec["event"] not in ENDS:
                continue
            key = (rid, sid)
            taken_title = db.execute("DELETE FROM audit_titles WHERE request_id = ? AND session_id = ? RETURNING title", key).fetchall()
            title = taken_title[0][0] if taken_title else None
            rows = db.execute(
                "SELECT record FROM audit WHERE request_id = ? AND session_id = ? AND seq < ?", (*key, rec["seq"])
            )
            for user in sorted({u for (raw,) in rows for u in joined(codec.loads(raw))}):
                db.execute(
                    "INSERT OR IGNORE INTO audit_history (user_id, seq, title) VALUES (?, ?, ?)", (user, rec["seq"], title)
                )
                db.execute(
                    "DELETE FROM audit_history WHERE user_id = ? AND seq <="
                    " (SELECT seq FROM audit_history WHERE user_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                    (user, user, HISTORY),
                )

    def advanced(self, head: Head) -> None:
        self._head = head

    async def page(self, after_seq: int, limit: int) -> list[dict[str, Any]]:
        rows = self._file.db.execute("SELECT record FROM audit WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq, limit))
        return [json.loads(r) for (r,) in rows]

    async def history(self, user: str) -> list[PastQuestion]:
        """The last ends of questions asked of ``user`` (records, titles), newest first."""
        rows = self._file.db.execute(
            "SELECT a.record, h.title FROM audit_history AS h JOIN audit AS a ON a.seq = h.seq"
            " WHERE h.user_id = ? ORDER BY h.seq DESC LIMIT ?",
            (user, HISTORY),
        )
        return [PastQuestion(json.loads(r), title) for (r, title) in rows]

    async def prune(self, before: str) -> int:
        # From the front: up to the newest record older than ``before``, so
        # the chain left is whole even if the clock once stepped back. The
        # history index loses the ends removed with them.
        last = "(SELECT max(seq) FROM audit WHERE at < ?)"
        head = self._head
        with self._file.transaction() as db:
            db.execute(f"DELETE FROM audit_history WHERE seq <= {last}", (before,))
            n = int(db.execute(f"DELETE FROM audit WHERE seq <= {last}", (before,)).rowcount)
            if n:  # the head outlives the records: a start with none left reads it here
                db.execute(
                    "INSERT INTO audit_head (id, seq, hash, at) VALUES (1, ?, ?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at",
                    (head.seq, head.hash, head.at),
                )
            return n

    async def count(self) -> int:
        return int(self._file.db.execute("SELECT count(*) FROM audit").fetchone()[0])
