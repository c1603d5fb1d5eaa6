"""The store interface the daemon's hub drives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from askd.core import Registry
from askd.core.changes import Change


class StoreError(Exception):
    """The store cannot be used at all (at start): one line naming it."""


class StoreUnavailable(Exception):
    """The store failed while running (disk full, locked, unreachable).
    Nothing was written; the caller's change must not be applied."""


class Store(Protocol):
    #: ``sqlite``, ``memory`` or ``redis``, as ``/healthz`` names it.
    kind: str

    async def load(self, registry: Registry) -> int:
        """Restore every kept question into a fresh registry (oldest first);
        returns how many."""
        ...

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        """Make ``changes`` durable as one step, in order; return those that
        took effect (an ``Ended`` only ends a question still pending, a
        ``Forgot`` only forgets an ended one). Raises
        :class:`StoreUnavailable`, having written nothing."""
        ...

    async def probe(self) -> None:
        """Raise :class:`StoreUnavailable` unless the store takes writes again."""
        ...

    def close(self) -> None: ...
