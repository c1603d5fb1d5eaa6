"""What each store's history index (``GET /v1/me/history``) is made of: a
question's audience is its ``asked`` record's ``audience`` and each
``escalated`` record's ``added``; its end's record goes on the list of each
of those users, the last ``HISTORY`` kept. A store writes the index with
the records (same step), so a call reads at most ``HISTORY`` records; a
record retention removed leaves the index too."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

HISTORY = 100
ENDS = frozenset({"answered", "declined", "timeout", "cancelled", "withdrawn"})


def joined(rec: Mapping[str, Any]) -> list[str]:
    """The users a record adds to its question's audience ([] for most)."""
    event = rec["event"]
    if event == "asked":
        return list(rec["data"].get("audience") or ())
    if event == "escalated":
        return list(rec["data"].get("added") or ())
    return []


class MemoryHistory:
    """The index in memory: the audience of each question not yet ended,
    and each user's last ends (the records themselves, oldest first)."""

    def __init__(self) -> None:
        self._audience: dict[tuple[str, str], set[str]] = {}
        self._ends: dict[str, deque[dict[str, Any]]] = {}

    def add(self, records: Iterable[dict[str, Any]]) -> None:
        for rec in records:
            key = (rec["sessionId"], rec["requestId"])
            users = joined(rec)
            if users:
                self._audience.setdefault(key, set()).update(users)
            elif rec["event"] in ENDS:
                for user in self._audience.pop(key, ()):
                    self._ends.setdefault(user, deque(maxlen=HISTORY)).append(rec)

    def of(self, user: str, front: int) -> list[dict[str, Any]]:
        """The user's ends kept in the trail (seq from ``front``), newest first."""
        return [rec for rec in reversed(self._ends.get(user, ())) if rec["seq"] >= front]
