"""The trail a store keeps: sealing a commit's records in order, and the
memory store's trail (``store = "memory"``: gone with the process, like
everything it keeps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from askd.audit.chain import ZERO, seal
from askd.audit.history import MemoryHistory, PastQuestion, titles
from askd.audit.records import bodies
from askd.core.changes import Change


class Head:
    """The chain's last seq and hash (seq 0, 64 zeros: nothing yet). Kept
    apart from the records, so pruning every record keeps the chain going."""

    __slots__ = ("seq", "hash", "at")

    def __init__(self, seq: int = 0, hash: str = ZERO, at: str | None = None) -> None:
        self.seq, self.hash, self.at = seq, hash, at

    def sealed(self, taken: Sequence[Change], at: float) -> tuple[list[dict[str, Any]], Head]:
        """The records ``taken`` (changes that took effect, in order) yield,
        sealed after this head, and the head after them."""
        out: list[dict[str, Any]] = []
        seq, prev, last_at = self.seq, self.hash, self.at
        for change in taken:
            for body in bodies(change, at):
                seq += 1
                record = seal(body, seq, prev)
                prev, last_at = record["hash"], record["at"]
                out.append(record)
        return out, Head(seq, prev, last_at)

    def wire(self) -> dict[str, Any] | None:
        return None if self.seq == 0 else {"seq": self.seq, "hash": self.hash, "at": self.at}


class SealingTrail:
    """What a trail that seals its own records (memory, SQLite) answers from
    the head it keeps; the Redis trail reads the chain's instead."""

    _head: Head

    @property
    def sealed(self) -> int:
        """Records sealed so far, pruned ones included (the head's seq)."""
        return self._head.seq

    async def head(self) -> dict[str, Any] | None:
        return self._head.wire()


class MemoryTrail(SealingTrail):
    """Records in a list, oldest first (``store.audit``)."""

    def __init__(self) -> None:
        self._records: list[dict[str, Any]] = []
        self._head = Head()
        self._history = MemoryHistory()

    def append(self, taken: Sequence[Change], at: float) -> None:
        records, self._head = self._head.sealed(taken, at)
        self._records.extend(records)
        self._history.add(records, titles(taken))

    async def page(self, after_seq: int, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` records with seq above ``after_seq``, oldest first."""
        records = self._records
        if not records:
            return []
        start = max(0, after_seq - records[0]["seq"] + 1)
        return records[start : start + limit]

    async def history(self, user: str) -> list[PastQuestion]:
        """The last ends of questions asked of ``user`` (records, titles), newest first."""
        records = self._records
        return self._history.of(user, records[0]["seq"] if records else self._head.seq + 1)

    async def prune(self, before: str) -> int:
        """Drop the records older than ``before`` (RFC 3339, as ``at``)."""
        records, n = self._records, 0
        while n < len(records) and records[n]["at"] < before:
            n += 1
        del records[:n]
        if n:
            self._history.prune(records[0]["seq"] if records else self._head.seq + 1)
        return n

    async def count(self) -> int:
        return len(self._records)
