"""A store is a change log plus four small parts, each an interface of
its own so a caller names the part it uses.

- :class:`ChangeLog`, the store itself: what it kept at start (``load``),
  each batch of the core's changes (``commit``), the other nodes' changes
  (``catch_up``), its health (``probe``) and the revocation instant.
- :class:`OnceKeys` (``store.once_keys``): the first to take a key wins,
  until a given instant. Keys are named by their kind: :func:`notify_key`,
  :func:`mail_key`, :func:`open_key`.
- :class:`Directory` (``store.directory``): per-user settings, by name
  (:data:`SETTINGS`; a new one is a name there, not a new member).
- :class:`Posts` (``store.posts``): the chat messages askd posted about a
  question (Slack's channel and ``ts``), kept so any node, or this one
  after a restart, edits them once the question ends.
- :class:`Cluster` (``store.cluster``): who is connected where, and orders
  every node carries out. :class:`LocalCluster` is the one for a store a
  single daemon owns (SQLite, memory).
- :class:`AuditTrail` (``store.audit``): the sealed chain of audit
  records (protocol section 19), a page at a time, its head, each user's
  history index, and its pruning. Optional in the interface: a store
  that keeps no trail has ``audit = None``, and the daemon says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from askd.audit.history import PastQuestion
from askd.core import Connection
from askd.core.changes import Change
from askd.core.snapshot import Loaded
from askd.store.errors import StoreUnavailable

#: The per-user settings a directory keeps: ``email`` (the address askd
#: mails), ``slack`` (the Slack user id askd sends direct messages to).
#: Away periods come next, one name more.
EMAIL = "email"
SLACK = "slack"
SETTINGS = (EMAIL, SLACK)


def notify_key(request_id: str, step: int) -> str:
    """The once key of a question's webhook at escalation ``step``: one node sends it."""
    return f"notify:{request_id}:{step}"


def mail_key(request_id: str, step: int, user: str) -> str:
    """The once key of the mail to ``user`` about a question at escalation ``step``."""
    return f"mail:{request_id}:{step}:{user}"


def open_key(jti: str) -> str:
    """The once key of a once-only code's use (``askd open``'s, by its id)."""
    return f"open:{jti}"


def check_setting(name: str) -> str:
    if name not in SETTINGS:
        raise ValueError(f"no user setting {name!r} (known: {', '.join(SETTINGS)})")
    return name


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


class ChangeLog(Protocol):
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

    async def load(self) -> Loaded:
        """What the store kept: groups, sessions, every kept question oldest
        first. The core restores it (``askd.core.snapshot.restore``)."""
        ...

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        """Make ``changes`` durable as one step, in order; return those that
        took effect (an ``Asked`` only with a request id not kept yet, an
        ``Ended`` only ends a question still pending, a ``Forgot`` only
        forgets an ended one, a ``Notified`` only marks a pending one).
        Raises :class:`StoreUnavailable`, having written nothing. A shared
        store returns once its follower has handed them (and whatever other
        nodes did before them) to ``on_changes``."""
        ...

    async def catch_up(self) -> None:
        """Hand ``on_changes`` everything the cluster decided up to now."""
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


class OnceKeys(Protocol):
    async def take(self, key: str, until: float) -> bool:
        """Whether this call is the first to take ``key``, checked and kept
        in one atomic step, durably on a durable store and for every node of
        a shared one. The key is kept until ``until`` (epoch seconds on
        the store's clock, the one it was made with), then the key is free
        again: whatever it guards must be over by then (a question no
        longer pending, a code expired). Raises :class:`StoreUnavailable`,
        having taken nothing."""
        ...


class Directory(Protocol):
    async def get(self, setting: str, users: Sequence[str]) -> dict[str, str]:
        """``setting`` (one of :data:`SETTINGS`) of those of ``users`` that have it."""
        ...

    async def set(self, setting: str, user: str, value: str | None) -> None:
        """Keep ``user``'s ``setting`` (None: forget it). Raises
        :class:`StoreUnavailable`, having written nothing."""
        ...


@dataclass(frozen=True, slots=True)
class Post:
    """One chat message posted about a question: ``key`` names it within
    the question (its step and recipient, the channel's own words);
    ``channel`` and ``ts`` are where the chat keeps it (what an edit names);
    ``body`` is the channel's own text (what the edit starts from);
    ``until`` is when it may be forgotten (epoch seconds)."""

    session_id: str
    request_id: str
    key: str
    channel: str
    ts: str
    body: str
    until: float


class Posts(Protocol):
    async def keep(self, post: Post) -> None:
        """Keep ``post`` (one with the same request id and key replaces
        it) until its ``until``. Raises :class:`StoreUnavailable`, having
        kept nothing."""
        ...

    async def of(self, request_id: str) -> list[Post]:
        """The posts kept about a question, not yet done."""
        ...

    async def done(self, request_id: str, key: str) -> None:
        """The post was edited for good: forget it."""
        ...

    async def every(self) -> list[Post]:
        """Every post kept and not done (a start's sweep: questions that
        ended while no node edited their messages)."""
        ...


class Cluster(Protocol):
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


class AuditTrail(Protocol):
    @property
    def sealed(self) -> int:
        """Records sealed into the chain so far, pruned ones included."""
        ...

    async def head(self) -> dict[str, Any] | None:
        """The chain's head (``seq``, ``hash``, ``at``); None when empty."""
        ...

    async def page(self, after_seq: int, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` records after ``after_seq``, oldest first."""
        ...

    async def history(self, user: str) -> list[PastQuestion]:
        """The last questions that ended with ``user`` in their audience, newest first."""
        ...

    async def prune(self, before: str) -> int:
        """Drop the records sealed before ``before`` (RFC 3339), from the
        front; returns how many went."""
        ...

    async def count(self) -> int:
        """Records held now (after pruning)."""
        ...


class LocalCluster:
    """The cluster of one daemon (SQLite, memory): the connections are this
    node's, and a command runs here."""

    def __init__(self, listener: Callable[[], StoreListener | None]) -> None:
        self._listener = listener

    def present(self, conn_id: str, conn: Connection | None) -> None:
        return None

    def presence_written(self) -> Awaitable[None] | None:
        return None  # the listing is this node's registry

    async def connections(self) -> list[dict[str, Any]]:
        listener = self._listener()
        if listener is None:
            return []
        return [{**c.describe(), "node": listener.node_id} for c in listener.local_connections()]

    async def command(self, command: dict[str, Any]) -> None:
        listener = self._listener()
        if listener is not None:
            listener.on_command(command)
