"""The SQLite store's audit trail (``store.audit``): one row per record in
the ``audit`` table, written in the commit's own transaction (``log.py``),
and the chain's head in ``audit_head``, so pruning every record keeps it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

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
            db.execute(
                "INSERT INTO audit_head (id, seq, hash, at) VALUES (1, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = excluded.at",
                (head.seq, head.hash, head.at),
            )
        return head

    def advanced(self, head: Head) -> None:
        self._head = head

    async def page(self, after_seq: int, limit: int) -> list[dict[str, Any]]:
        rows = self._file.db.execute("SELECT record FROM audit WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq, limit))
        return [json.loads(r) for (r,) in rows]

    async def prune(self, before: str) -> int:
        # From the front: up to the newest record older than ``before``, so
        # the chain left is whole even if the clock once stepped back.
        statement = "DELETE FROM audit WHERE seq <= (SELECT max(seq) FROM audit WHERE at < ?)"
        return int(self._file.write(lambda db: db.execute(statement, (before,)).rowcount))

    async def count(self) -> int:
        return int(self._file.db.execute("SELECT count(*) FROM audit").fetchone()[0])
