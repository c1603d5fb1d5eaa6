"""The store interface the daemon's hub drives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from askd.core import Registry, Request
from askd.core.changes import Change


class StoreError(Exception):
    """The store cannot be used at all (at start): one line naming it."""


class StoreUnavailable(Exception):
    """The store failed while running (disk full, locked, unreachable).
    Nothing was written; the caller's change must not be applied."""


class Store(Protocol):
    #: ``sqlite``, ``memory`` or ``redis``, as ``/healthz`` names it.
    kind: str
    #: Whether several daemons share it (then ``connections`` and
    #: ``command`` reach every node, and ``presence`` records this node's).
    shared: bool

    def attach(
        self,
        on_changes: Callable[[list[Change]], None],
        on_failed: Callable[[StoreUnavailable], None],
        on_ok: Callable[[], None],
    ) -> None:
        """A shared store hands the changes every node decided to
        ``on_changes``, in the cluster's order, and reports its link's
        health; a local store ignores this."""
        ...

    async def load(self, registry: Registry) -> int:
        """Restore every kept question into a fresh registry (oldest first);
        returns how many."""
        ...

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        """Make ``changes`` durable as one step, in order; return those that
        took effect (an ``Ended`` only ends a question still pending, a
        ``Forgot`` only forgets an ended one). Raises
        :class:`StoreUnavailable`, having written nothing. A shared store
        returns once its follower has handed them to ``on_changes``."""
        ...

    async def probe(self) -> None:
        """Raise :class:`StoreUnavailable` unless the store takes writes again."""
        ...

    async def load_not_before(self) -> float:
        """The latest revocation instant saved (``askd token revoke-all``):
        tokens issued before it are refused. 0 when there is none."""
        ...

    async def save_not_before(self, at: float) -> None:
        """Keep ``at`` as the revocation instant unless a later one is kept.
        Raises :class:`StoreUnavailable`, having written nothing."""
        ...

    async def aclose(self) -> None:
        """Let go of the store (a second call does nothing)."""
        ...


class ConnectionLog(Protocol):
    def put(self, conn_id: str, description: dict[str, Any] | None) -> None:
        """This node's connection as it is now (None: it left)."""
        ...


class SharedStore(Store, Protocol):
    """A store several daemons share (``shared`` is true): what the hub
    needs beyond ``Store`` to act as one askd."""

    presence: ConnectionLog

    def on_command(self, handler: Callable[[dict[str, Any]], None]) -> None:
        """Every node's handler for the orders ``command`` sends."""
        ...

    async def command(self, command: dict[str, Any]) -> None: ...

    async def connections(self) -> list[dict[str, Any]]:
        """Every live node's connections, each with its ``node``."""
        ...

    async def claim_notify(self, req: Request) -> bool:
        """Whether this node is the one to send the question's webhook."""
        ...

    async def catch_up(self) -> None:
        """Apply (through ``on_changes``) everything the cluster decided up
        to now, so that this node sees what another node just did."""
        ...
