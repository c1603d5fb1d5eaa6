"""The SQLite store's audit trail (``store.audit``): one row per record in
the ``audit`` table, written in the commit's own transaction (``log.py``),
and the chain's head in ``audit_head``, so pruning every record keeps it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from askd.audit.history import ENDS, HISTORY, joined
from askd.audit.trail import Head, SealingTrail
from askd.core.changes import Change
from askd.store.sqlite.file import Database


class SqliteTrail(SealingTrail):
    def __init__(self, file: Database) -> None:
        self._file = file
        row = file.db.execute("SELECT seq, hash, at FROM audit_head WHERE id = 1").fetchone()
        self._head = Head(*row) if row else Head()

    def write(self, db: sqlite3.Connection, taken: Sequence[Change], at: float) -> Head:
        """Seal and insert the records of ``taken`` in the open transaction;
        the new head, kept once the transaction commits (:meth:`advanced`)."""
        records, head = self._head.sealed(taken, at)
        if records:
            db.executemany(
                "INSERT INTO audit (seq, at, session_id, request_id, record) VALUES (?, ?, ?, ?, ?)",
                [(r["seq"], r["at"], r["sessionId"], r["requestId"], json.dumps(r, separators=(",", ":"))) for r in records],
            )
            self._index(db, records)
            db.execute(
                "INSERT INTO audit_head (id, seq, hash, at) VALUES (1, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at",
                (head.seq, head.hash, head.at),
            )
        return head

    def _index(self, db: sqlite3.Connection, records: list[dict[str, Any]]) -> None:
        """Each end's seq on the lists of its question's audience (read from
        its records, this commit's included), the last ``HISTORY`` kept."""
        for rec in records:
            if rec["event"] not in ENDS:
                continue
            rows = db.execute(
                "SELECT record FROM audit WHERE request_id = ? AND session_id = ? AND seq < ?",
                (rec["requestId"], rec["sessionId"], rec["seq"]),
            )
            for user in sorted({u for (raw,) in rows for u in joined(json.loads(raw))}):
                db.execute("INSERT OR IGNORE INTO audit_history (user_id, seq) VALUES (?, ?)", (user, rec["seq"]))
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

    async def history(self, user: str) -> list[dict[str, Any]]:
        """The records of the last ends of questions asked of ``user``, newest first."""
        rows = self._file.db.execute(
            "SELECT a.record FROM audit_history AS h JOIN audit AS a ON a.seq = h.seq"
            " WHERE h.user_id = ? ORDER BY h.seq DESC LIMIT ?",
            (user, HISTORY),
        )
        return [json.loads(r) for (r,) in rows]

    async def prune(self, before: str) -> int:
        # From the front: up to the newest record older than ``before``, so
        # the chain left is whole even if the clock once stepped back. The
        # history index loses the ends removed with them.
        last = "(SELECT max(seq) FROM audit WHERE at < ?)"
        with self._file.transaction() as db:
            db.execute(f"DELETE FROM audit_history WHERE seq <= {last}", (before,))
            return int(db.execute(f"DELETE FROM audit WHERE seq <= {last}", (before,)).rowcount)

    async def count(self) -> int:
        return int(self._file.db.execute("SELECT count(*) FROM audit").fetchone()[0])
