"""``store = "memory"``: v1's behaviour, nothing survives the process."""

from __future__ import annotations

from collections.abc import Sequence

from askd.core import Registry
from askd.core.changes import Change


class MemoryStore:
    kind = "memory"
    shared = False

    def __init__(self) -> None:
        self._registry: Registry | None = None

    def attach(self, *callbacks: object) -> None:
        return None

    async def load(self, registry: Registry) -> int:
        self._registry = registry
        return 0

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        # Nothing to write: the core says what would take effect (the hub
        # applies it, as for every store).
        assert self._registry is not None, "load() first"
        return self._registry.taking(changes)

    async def probe(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
