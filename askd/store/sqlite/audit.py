"""The SQLite store's audit trail (``store.audit``): one row per record in
the ``audit`` table, written in the commit's own transaction (``store.py``).
The chain's head is its last row; ``audit_head`` keeps it when a prune
leaves none (written by the prune, not by every commit: one page less to
write per commit)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from askd.audit.history import ENDS, HISTORY, PastQuestion, joined, titles
from askd.audit.trail import Head, SealingTrail
from askd.core.changes import Change
from askd.protocol import codec
from askd.store.sqlite.database import Database


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
                [(r["seq"], r["at"], r["sessionId"], r["requestId"], codec.dumps(r).decode()) for r in records],
            )
            self._index(db, records, titles(taken))
        return head

    def _index(self, db: sqlite3.Connection, records: list[dict[str, Any]], asked: dict[tuple[str, str], str]) -> None:
        """Each end's seq and title on the lists of its question's audience,
        the last ``HISTORY`` kept. A pending question's title and audience
        wait in its ``audit_titles`` row (title '' when it has none), written
        at its ask, grown by its escalations, taken by its end: one row read,
        not its records."""
        for rec in records:
            sid, rid, event = rec["sessionId"], rec["requestId"], rec["event"]
            key = (rid, sid)
            if event == "asked":
                db.execute(
                    "INSERT OR REPLACE INTO audit_titles (request_id, session_id, title, users) VALUES (?, ?, ?, ?)",
                    (rid, sid, asked.get((sid, rid), ""), codec.dumps(joined(rec)).decode()),
                )
            elif event == "escalated":
                row = db.execute("SELECT title, users FROM audit_titles WHERE request_id = ? AND session_id = ?", key).fetchone()
                title, users = (row[0], row[1]) if row else ("", None)
                known = codec.loads(users) if users is not None else self._audience(db, key, rec["seq"])
                grown = known + [u for u in joined(rec) if u not in known]
                db.execute(
                    "INSERT OR REPLACE INTO audit_titles (request_id, session_id, title, users) VALUES (?, ?, ?, ?)",
                    (rid, sid, title, codec.dumps(grown).decode()),
                )
            elif event in ENDS:
                taken = db.execute(
                    "DELETE FROM audit_titles WHERE request_id = ? AND session_id = ? RETURNING title, users", key
                ).fetchall()
                title = (taken[0][0] or None) if taken else None
                users = codec.loads(taken[0][1]) if taken and taken[0][1] is not None else self._audience(db, key, rec["seq"])
                for user in sorted(set(users)):
                    db.execute(
                        "INSERT OR IGNORE INTO audit_history (user_id, seq, title) VALUES (?, ?, ?)", (user, rec["seq"], title)
                    )
                    db.execute(
                        "DELETE FROM audit_history WHERE user_id = ? AND seq <="
                        " (SELECT seq FROM audit_history WHERE user_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                        (user, user, HISTORY),
                    )

    @staticmethod
    def _audience(db: sqlite3.Connection, key: tuple[str, str], before: int) -> list[str]:
        """A question's audience read from its records before seq ``before``:
        only for one with no row (its records' retention ran, or it was
        asked by an askd before schema 17 and its row was not filled): a scan."""
        rows = db.execute("SELECT record FROM audit WHERE request_id = ? AND session_id = ? AND seq < ?", (*key, before))
        return [u for (raw,) in rows for u in joined(codec.loads(raw))]

    def advanced(self, head: Head) -> None:
        self._head = head

    async def page(self, after_seq: int, limit: int) -> list[dict[str, Any]]:
        rows = self._file.db.execute("SELECT record FROM audit WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq, limit))
        return [codec.loads(r) for (r,) in rows]

    async def history(self, user: str) -> list[PastQuestion]:
        """The last ends of questions asked of ``user`` (records, titles), newest first."""
        rows = self._file.db.execute(
            "SELECT a.record, h.title FROM audit_history AS h JOIN audit AS a ON a.seq = h.seq"
            " WHERE h.user_id = ? ORDER BY h.seq DESC LIMIT ?",
            (user, HISTORY),
        )
        return [PastQuestion(codec.loads(r), title) for (r, title) in rows]

    async def prune(self, before: str) -> int:
        # From the front: up to the newest record older than ``before``, so
        # the chain left is whole even if the clock once stepped back. The
        # history index loses the ends removed with them.
        # A scan (no index on ``at``: one page less per commit), before the
        # write lock: records sealed meanwhile have higher seqs.
        last = self._file.db.execute("SELECT max(seq) FROM audit WHERE at < ?", (before,)).fetchone()[0]
        if last is None:
            return 0
        head = self._head
        with self._file.transaction() as db:
            db.execute("DELETE FROM audit_history WHERE seq <= ?", (last,))
            n = int(db.execute("DELETE FROM audit WHERE seq <= ?", (last,)).rowcount)
            if n:  # the head outlives the records: a start with none left reads it here
                db.execute(
                    "INSERT INTO audit_head (id, seq, hash, at) VALUES (1, ?, ?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at",
                    (head.seq, head.hash, head.at),
                )
            return n

    async def count(self) -> int:
        return int(self._file.db.execute("SELECT count(*) FROM audit").fetchone()[0])
