"""``store = "memory"``: v1's behaviour, nothing survives the process."""

from __future__ import annotations

import time
from collections.abc import Sequence

from askd.core import Request
from askd.core.registry import Registry
from askd.core.changes import Change, Forgot
from askd.store.base import LocalStore


class MemoryStore(LocalStore):
    kind = "memory"
    durable = False

    def __init__(self) -> None:
        self._registry: Registry | None = None
        self._not_before = 0.0
        self._emails: dict[str, str] = {}
        self._mailed: dict[str, set[tuple[int, str]]] = {}  # request -> (step, user) claimed
        self._once: dict[str, float] = {}  # claim_once: key -> until when it is kept

    async def load(self, registry: Registry) -> int:
        self._registry = registry  # read, never changed: the hub applies
        return 0

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        # Nothing to write: what would take effect is a pure function of
        # the core's state.
        assert self._registry is not None, "load() first"
        taken = self._registry.taking(changes)
        for change in taken:
            if isinstance(change, Forgot):
                self._mailed.pop(change.request_id, None)
        return taken

    async def probe(self) -> None:
        return None

    async def load_not_before(self) -> float:
        return self._not_before

    async def save_not_before(self, at: float) -> None:
        self._not_before = max(self._not_before, at)

    async def claim_mails(self, req: Request, step: int, users: Sequence[str]) -> list[str]:
        claimed = self._mailed.setdefault(req.request_id, set())
        won = [u for u in dict.fromkeys(users) if (step, u) not in claimed]
        claimed.update((step, u) for u in won)
        return won

    async def claim_once(self, key: str, expires_at: float) -> bool:
        now = time.time()
        for gone in [k for k, until in self._once.items() if until <= now]:
            del self._once[gone]
        if key in self._once:
            return False
        self._once[key] = expires_at
        return True

    async def user_emails(self, users: Sequence[str]) -> dict[str, str]:
        return {u: self._emails[u] for u in users if u in self._emails}

    async def set_user_email(self, user: str, email: str | None) -> None:
        if email is None:
            self._emails.pop(user, None)
        else:
            self._emails[user] = email

    async def aclose(self) -> None:
        return None
