"""``store = "memory"``: v1's behaviour, nothing survives the process."""

from __future__ import annotations

from collections.abc import Sequence

from askd.core import Registry
from askd.core.changes import Change
from askd.store.base import LocalStore


class MemoryStore(LocalStore):
    kind = "memory"
    durable = False

    def __init__(self) -> None:
        self._registry: Registry | None = None
        self._not_before = 0.0

    async def load(self, registry: Registry) -> int:
        self._registry = registry  # read, never changed: the hub applies
        return 0

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        # Nothing to write: what would take effect is a pure function of
        # the core's state.
        assert self._registry is not None, "load() first"
        return self._registry.taking(changes)

    async def probe(self) -> None:
        return None

    async def load_not_before(self) -> float:
        return self._not_before

    async def save_not_before(self, at: float) -> None:
        self._not_before = max(self._not_before, at)

    async def aclose(self) -> None:
        return None
