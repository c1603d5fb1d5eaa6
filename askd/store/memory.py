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
        self._not_before = 0.0

    def attach(self, *callbacks: object) -> None:
        return None

    async def load(self, registry: Registry) -> int:
        self._registry = registry
        return 0

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        # Nothing to write: the registry itself says what still applies.
        assert self._registry is not None, "load() first"
        return [c for c in changes if self._registry.apply(c)]

    async def probe(self) -> None:
        return None

    async def load_not_before(self) -> float:
        return self._not_before

    async def save_not_before(self, at: float) -> None:
        self._not_before = max(self._not_before, at)

    async def aclose(self) -> None:
        return None
