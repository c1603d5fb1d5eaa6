"""``store = "memory"``: v1's behaviour, nothing survives the process."""

from __future__ import annotations

from collections.abc import Sequence

from askd.core import Registry
from askd.core.changes import Change


class MemoryStore:
    kind = "memory"

    async def load(self, registry: Registry) -> int:
        return 0

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        return list(changes)  # the registry's own checks decide

    async def probe(self) -> None:
        return None

    def close(self) -> None:
        return None
