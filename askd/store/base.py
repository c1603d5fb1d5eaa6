"""The one store interface the daemon's hub drives, whichever store it is.

A store makes the core's changes durable and reports which took effect; it
never changes the registry (only the hub applies). Two capabilities say what
it is: ``durable`` (it survives the process) and ``shared`` (several daemons
use it as one askd). The calls a shared store needs to act as one askd
(catch up, claim a webhook, list and command every node's connections) are
on every store: :class:`LocalStore` does them trivially for a store one
daemon owns, so the hub never asks which store it has.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from askd.core import Connection, Request
from askd.core.registry import Registry
from askd.core.changes import Change


class StoreError(Exception):
    """The store cannot be used at all (at start): one line naming it."""


class StoreUnavailable(Exception):
    """The store failed while running (disk full, locked, unreachable).
    Nothing was written; the caller's change must not be applied."""


class StoreListener(Protocol):
    """What a store calls back (the hub)."""

    node_id: str

    def on_changes(self, changes: list[Change]) -> None:
        """Changes that took effect, as the cluster decided them, in its
        order (a shared store's follower; this node's own among them)."""
        ...

    def on_failed(self, err: StoreUnavailable) -> None: ...

    def on_ok(self) -> None: ...

    def on_command(self, command: dict[str, Any]) -> None:
        """An order ``command`` sent, carried out on this node's connections."""
        ...

    def local_connections(self) -> list[Connection]: ...


class Store(Protocol):
    #: ``sqlite``, ``memory`` or ``redis``: the name ``/healthz`` shows. The
    #: daemon never branches on it; it reads the capabilities below.
    kind: str
    #: What it holds survives the process (a restart keeps every question).
    durable: bool
    #: Several daemons use it as one askd.
    shared: bool

    def attach(self, listener: StoreListener) -> None:
        """Whom to tell of changes, of the store's health and of commands."""
        ...

    async def load(self, registry: Registry) -> int:
        """Restore every kept question into a fresh registry (oldest first);
        returns how many."""
        ...

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        """Make ``changes`` durable as one step, in order; return those that
        took effect (an ``Ended`` only ends a question still pending, a
        ``Forgot`` only forgets an ended one, a ``Notified`` only marks a
        pending one). Raises :class:`StoreUnavailable`, having written
        nothing. A shared store returns once its follower has handed them
        (and whatever other nodes did before them) to ``on_changes``."""
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

    async def catch_up(self) -> None:
        """Hand ``on_changes`` everything the cluster decided up to now."""
        ...

    async def claim_notify(self, req: Request) -> bool:
        """Whether this node is the one to send the question's webhook."""
        ...

    async def claim_mails(self, req: Request, step: int, users: Sequence[str]) -> list[str]:
        """Of ``users``, those whose mail about the question at escalation
        ``step`` this call is the first to claim (checked and kept in one
        atomic step, durably on a durable store): each is mailed by one
        node, once, never again after a restart. Raises
        :class:`StoreUnavailable`, having claimed nothing."""
        ...

    async def claim_once(self, key: str, expires_at: float) -> bool:
        """Whether this call is the first to claim ``key`` (a once-only
        credential's id, named by its kind: ``open:<jti>``), checked and kept
        in one atomic step, durably on a durable store and for every node of
        a shared one. The claim is kept until ``expires_at`` (epoch seconds),
        after which the key is free again: the credential must be dead by
        then. Raises :class:`StoreUnavailable`; the caller then grants
        nothing (a credential may be spent unused, never used twice)."""
        ...

    async def user_emails(self, users: Sequence[str]) -> dict[str, str]:
        """The addresses kept for those of ``users`` that have one."""
        ...

    async def set_user_email(self, user: str, email: str | None) -> None:
        """Keep ``user``'s address (None: forget it). Raises
        :class:`StoreUnavailable`, having written nothing."""
        ...

    def present(self, conn_id: str, conn: Connection | None) -> None:
        """This node's connection as it is now (None: it left)."""
        ...

    def presence_written(self) -> Awaitable[None] | None:
        """None when every ``present`` so far is what other nodes' listings
        read; else an awaitable done once it is (or after at most a store
        call's timeout), so an ack can wait for the listings to agree."""
        ...

    async def connections(self) -> list[dict[str, Any]]:
        """Every node's connections, as ``Connection.describe`` lists them,
        each with its ``node``."""
        ...

    async def command(self, command: dict[str, Any]) -> None:
        """Have every node carry out ``command`` on its own connections."""
        ...


class LocalStore:
    """The shared calls of a store one daemon owns: nothing to catch up
    with, every webhook claim won, the connections are this node's, and a
    command runs here."""

    shared = False
    _listener: StoreListener | None = None

    def attach(self, listener: StoreListener) -> None:
        self._listener = listener

    async def catch_up(self) -> None:
        return None

    async def claim_notify(self, req: Request) -> bool:
        return True

    def present(self, conn_id: str, conn: Connection | None) -> None:
        return None

    def presence_written(self) -> Awaitable[None] | None:
        return None  # the listing is this node's registry

    async def connections(self) -> list[dict[str, Any]]:
        listener = self._listener
        if listener is None:
            return []
        return [{**c.describe(), "node": listener.node_id} for c in listener.local_connections()]

    async def command(self, command: dict[str, Any]) -> None:
        if self._listener is not None:
            self._listener.on_command(command)
