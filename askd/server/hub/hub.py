"""The hub: the one door the handlers use; it composes the parts and routes.

The parts, each made with those below it that it calls: the flush
(``flush.py``), the commit path (``commits.py``), the deadline timer and
clock (``deadlines.py``), the connections, the waiting agents, the
notification pipeline (``askd/channels/pipeline.py``) and the admin's changes
(``admin_ops.py``, which the admin handlers hold: the hub forwards them
nothing), a session's cancel (``cancels.py``). For an event that
changes a question the registry decides the change and the commit path
stores, applies and flushes it. Handlers call the methods below, never a
part (tests may), except the admin's part, which is the admin's door. It
never asks which store it has. All of it runs on the event loop thread: no
locks.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import structlog

from askd.channels.pipeline import Pipeline
from askd.core import AskInput, Connection, Limits, NotifyPolicy, NotPending, Request
from askd.core.decisions import Relay
from askd.core.registry import Registry
from askd.core import events as ev
from askd.core.changes import Change, Ended
from askd.core.errors import AskInFlight
from askd.core.snapshot import restore
from askd.protocol.action import MAX_QUORUM
from askd.server.hub.admin_ops import AdminOps
from askd.server.hub.cancels import Cancels
from askd.server.hub.deadlines import DeadlineClock, DeadlineTimer
from askd.server.hub.commits import Commits
from askd.server.hub.connections import Connections, Peer
from askd.server.hub.flush import Flush
from askd.server.hub.tasks import Tasks
from askd.server.hub.waiters import ShuttingDown, Waiters
from askd.server.logs import get_logger
from askd.server.metrics import Metrics
from askd.store import Store, StoreUnavailable
from askd.store.memory import MemoryStore

__all__ = ["Hub", "Peer", "ShuttingDown"]

log = get_logger("askd.hub")

# How many times an ask is decided again after another node's change got in first.
ASK_ATTEMPTS = 3
# An approval not taken lost to another approval (the count moved on, at
# most a quorum's worth) or to the end: decided again at most this often.
APPROVE_ATTEMPTS = MAX_QUORUM + 2


class Hub:
    def __init__(
        self,
        limits: Limits,
        store: Store | None = None,
        *,
        node_id: str = "local",
        clock: Callable[[], float] = time.time,
        notify: NotifyPolicy | None = None,
        on_revoked: Callable[[float], None] | None = None,
    ) -> None:
        # on_revoked: each revocation instant that reaches this node.
        self.registry = Registry(limits, clock=clock, notify=notify)
        self.store: Store = store or MemoryStore(clock)
        self.node_id = node_id
        self.metrics = Metrics(self.registry)
        self.started_at = clock()
        self.stopping = False
        # Bottom up: each part is made with the parts it calls.
        self.tasks = Tasks()
        self.waiters = Waiters()
        self.connections = Connections(self.registry, self.store, node_id)
        timer = DeadlineTimer(self.registry, clock)
        self.flush = Flush(self.registry, self.connections, self.waiters, self.metrics, timer)
        self.commits = Commits(self.store, self.registry, self.tasks, self.flush)
        self.clock = DeadlineClock(self.registry, self.commits, self.flush, timer)
        self.webhooks = Pipeline(
            self.registry,
            online_elsewhere=self.connections.online_elsewhere,
            defer=self.commits.defer,
            spawn=self.tasks.spawn,
            clock=clock,
        )
        self.flush.attach(self.webhooks)
        self.admin = AdminOps(self.registry, self.store, self.commits, self.connections, self.waiters, on_revoked)
        self.cancels = Cancels(self.registry, self.store, self.commits)

    @property
    def degraded(self) -> str | None:
        """Why the store fails, while it does."""
        return self.commits.degraded

    @property
    def durable(self) -> bool:
        """Whether a restart keeps every question (the store's capability)."""
        return self.store.durable

    @property
    def store_kind(self) -> str:
        """The store's name, for ``/healthz``, stats and logs (never branched on)."""
        return self.store.kind

    async def load(self) -> int:
        """Restore what the store kept; questions whose deadline passed while
        no daemon ran end in ``start``, with the usual events."""
        self.store.attach(self)
        return restore(await self.store.load(), self.registry)

    async def start(self) -> None:
        """Go, before the listeners open: end what is overdue, hand over what
        the load made due (webhooks) and arm the timer."""
        await self.clock.catch_up()

    # ---- what the store calls back (askd.store.base.StoreListener) ------

    def on_changes(self, changes: list[Change]) -> None:
        """A shared store's follower: the cluster's changes, in its order."""
        self.commits.followed(changes)

    def on_failed(self, err: StoreUnavailable) -> None:
        self.commits.failed(err)

    def on_ok(self) -> None:
        self.commits.ok()

    def on_command(self, command: dict[str, Any]) -> None:
        self.admin.on_command(command)

    def local_connections(self) -> list[Connection]:
        return self.registry.connections()

    # ---- connections ----------------------------------------------------

    def connect(self, peer: Peer, user_id: str, remote: str) -> str:
        return self.connections.connect(peer, user_id, remote)

    def disconnect(self, conn_id: str) -> None:
        self.connections.disconnect(conn_id)

    def peer_count(self, user_id: str) -> int:
        return self.connections.peer_count(user_id)

    def subscriptions(self, conn_id: str) -> Mapping[str, Any]:
        """What the connection is subscribed to (the registry's own record)."""
        return self.registry.connection(conn_id).subscriptions

    def subscribe(self, conn_id: str, session_id: str, reply_id: Any = None) -> int:
        """Subscribe a connection and re-push its pending questions; returns how many.
        The re-push goes out through the one flush, which also hands on what
        else the registry holds (webhooks the clock found due before its
        write, waiters to wake): a subscribe drops none of it."""
        pushed = self.connections.subscribe(conn_id, session_id, reply_id)
        out = self.flush()
        if pushed:
            # One line per subscribe, not per question: a log line costs more
            # than re-pushing a question (docs/performance.md, the reconnect
            # storm of 5,000 users).
            rids = [s.event.request_id for s in out.sends if s.event.type == ev.ASK]
            log.info("question.repushed", subscription=session_id, count=pushed, requestIds=rids)
        return pushed

    def unsubscribe(self, conn_id: str, session_id: str) -> None:
        self.connections.unsubscribe(conn_id, session_id)

    def listed(self) -> Awaitable[None] | None:
        """None, or done once every node's listing shows this node's connections."""
        return self.connections.listed()

    # ---- agents and answers -------------------------------------------

    async def ask(self, ask: AskInput) -> tuple[Request, bool]:
        """Ask its user, or its audience ``to`` (users and groups) with its
        ``escalate`` steps; returns the request and whether it is new (an
        Idempotency-Key replay is not). Raises :class:`StoreUnavailable`,
        pushing nothing. ``agent`` here and below is the calling agent token's
        ``sub``: with one, a session another agent first asked in is unknown
        to it (the registry's ``reach``); None reaches every session."""
        if self.registry.audiences.names_unknown_group(ask):
            await self.store.catch_up()  # a group made on another node a moment ago: as the cluster holds it
        if ask.require_online and await self.connections.online_elsewhere(*self.registry.audiences.resolve(ask.to or (ask.user_id,))):
            ask = replace(ask, require_online=False)  # online means a connection on any node
        for _ in range(ASK_ATTEMPTS):
            try:
                req, change = self.registry.prepare_ask(ask)
            except AskInFlight:
                # The same Idempotency-Key is being committed: once that is
                # over, this ask is its replay (or, if it failed, asks anew).
                await self.commits.settled()
                continue
            if change is None:
                return req, False
            if await self.commits.commit([change]):
                break
            # Not taken: on a shared store another node got there first (an
            # ask with the same Idempotency-Key, or the session for another
            # user). The store waited until this node applied that: decide
            # again, against what the cluster holds now.
        else:
            raise StoreUnavailable("the store refused the ask each time; nothing was asked")
        structlog.contextvars.bind_contextvars(requestId=req.request_id)
        # One line per question: what was asked and to how many connections it went.
        pushed = sum(len(self.registry.connections(u)) for u in self.registry.audiences.of(req))
        what = {"action": ask.action["name"]} if ask.action is not None else {"questions": len(ask.questions or ())}
        log.info("question.asked", **what, expiresAt=ev.isotime(req.expires_at), connections=pushed)
        return req, True

    async def answer(
        self, session_id: str, request_id: str, answers: dict[str, Any], *, relay: Relay | None = None,
        user_id: str | None, via: str = "ws", answered_by: str | None = None, before_flush: Callable[[], None] | None = None,
    ) -> Request:
        """Answer; raises (changing nothing) when not pending, invalid, not the
        ``relay``'s to give, or the store fails. ``before_flush`` runs once it is
        taken and before the ``cancelled`` events go out (the sender's ack first)."""
        await self.lookup(session_id, request_id)
        change = self.registry.prepare_answer(
            session_id, request_id, answers, user_id=user_id, via=via, answered_by=answered_by, relay=relay
        )
        return await self._end(change, before_flush)

    async def decline(
        self, session_id: str, request_id: str, reason: str | None, *, relay: Relay | None = None,
        user_id: str | None, via: str = "ws", answered_by: str | None = None, before_flush: Callable[[], None] | None = None,
    ) -> Request:
        """The person refuses to answer; raises as ``answer`` does."""
        await self.lookup(session_id, request_id)
        change = self.registry.prepare_decline(
            session_id, request_id, reason, user_id=user_id, via=via, answered_by=answered_by, relay=relay
        )
        return await self._end(change, before_flush)

    async def approve(
        self, session_id: str, request_id: str, arguments: dict[str, Any] | None = None, scope: str | None = None, *,
        user_id: str | None, via: str = "ws", answered_by: str | None = None, before_flush: Callable[[], None] | None = None,
        relay: Relay | None = None,
    ) -> Request:
        """One approval of a pending action (``Registry.prepare_approve``);
        the one completing its quorum ends it. Raises (changing nothing)
        :class:`NotPending`, ``Forbidden``, ``AlreadyVoted``, ``InvalidRequest``
        (``NoSeat``) or :class:`StoreUnavailable`; ``before_flush`` as ``extend``'s."""
        await self.lookup(session_id, request_id)
        prepare = partial(
            self.registry.prepare_approve, session_id, request_id, arguments, scope,
            user_id=user_id, via=via, answered_by=answered_by, relay=relay,
        )
        return await self._retried(prepare, before_flush, APPROVE_ATTEMPTS, "approval")

    async def _retried(self, prepare: Callable[[], Change], before_flush: Callable[[], None] | None, attempts: int, what: str) -> Request:
        """Decide (``prepare``), commit, and while not taken (another change
        to its question got in first and was applied here) decide again
        against what holds now: the question it is about after."""
        for _ in range(attempts):
            change = prepare()
            replies = {id(change): before_flush} if before_flush is not None else None
            if await self.commits.commit([change], replies):
                req = self.registry.get(change.session_id, change.request_id)  # type: ignore[union-attr]
                assert req is not None
                return req
        raise StoreUnavailable(f"the store refused the {what} each time; nothing changed")

    async def _end(self, change: Ended, before_flush: Callable[[], None] | None) -> Request:
        replies = {id(change): before_flush} if before_flush is not None else None
        if not await self.commits.commit([change], replies):  # flushed once stored
            # The store ended it first (its timeout was waiting to be written,
            # or another node's answer won).
            raise NotPending(f"question {change.request_id} is not pending")
        req = self.registry.get(change.session_id, change.request_id)
        assert req is not None
        return req

    async def extend(
        self, session_id: str, request_id: str, seconds: float, *, user_id: str | None, before_flush: Callable[[], None] | None = None,
        agent: str | None = None,
    ) -> Request:
        """Move a pending question's deadline (``Registry.prepare_extend``:
        a person's with ``user_id``, the agent's without). Raises
        :class:`NotPending`, :class:`NotAllowed` or :class:`StoreUnavailable`,
        changing nothing. ``before_flush`` runs before the connections hear of it."""
        await self.lookup(session_id, request_id)
        prepare = partial(self.registry.prepare_extend, session_id, request_id, seconds, user_id=user_id, agent=agent)
        return await self._retried(prepare, before_flush, ASK_ATTEMPTS, "extension")

    async def withdraw(self, session_id: str, request_id: str, *, agent: str | None = None) -> Request | None:
        await self.lookup(session_id, request_id)
        req, change = self.registry.prepare_withdraw(session_id, request_id, agent)
        if change is not None:
            await self.commits.commit([change])  # flushed once stored
        return req

    async def cancel_session(self, session_id: str, *, agent: str | None = None, via: str = "agent") -> int:
        """``agent``: the caller's sub; via ``admin`` (the admin API), the admin's, reaching every session."""
        return await self.cancels.cancel_session(session_id, agent, via)

    async def lookup(
        self, session_id: str, request_id: str, *, fresh: bool = False, agent: str | None = None
    ) -> Request | None:
        """The request, pending or ended (``registry.get``); None for one in
        another agent's session, as for one askd does not know. A miss first
        catches up with the cluster: an agent that asked on another node a
        moment ago (no sticky sessions) finds its question here too. With
        ``fresh`` a pending one catches up as well, so a read that returns at
        once never shows pending what another node already ended. Raises
        :class:`StoreUnavailable` if that fails."""
        req = self.registry.get(session_id, request_id)
        if req is None or (fresh and req.pending):
            await self.store.catch_up()
            req = self.registry.get(session_id, request_id)
        return req if self.registry.reaches(session_id, agent) else None

    async def pending(
        self, *, session_id: str | None = None, user_id: str | None = None, agent: str | None = None
    ) -> list[Request]:
        """Pending questions (``registry.pending``), after catching up with
        the cluster. Raises :class:`StoreUnavailable`, and :class:`NotFound`
        for another agent's session."""
        await self.store.catch_up()
        if session_id is not None:
            self.registry.reach(session_id, agent)
        return self.registry.pending(session_id=session_id, user_id=user_id)

    async def wait(
        self, req: Request, timeout: float, abandon: asyncio.Future[None] | None = None, issued_at: float | None = None
    ) -> Request:
        """Wait until ``req`` ends or ``timeout`` passes (or ``abandon`` is
        done: the agent hung up). Raises :class:`ShuttingDown` on stop, and
        ``Revoked`` when the waiting token (issued at ``issued_at``) is revoked."""
        if self.stopping and req.pending and timeout > 0:
            raise ShuttingDown()
        return await self.waiters.wait(req, timeout, abandon, issued_at)

    def get(self, session_id: str, request_id: str) -> Request | None:
        """The request as this node holds it now (no catching up)."""
        return self.registry.get(session_id, request_id)

    def audience(self, req: Request) -> tuple[str, ...]:
        """Whom a pending question is asked of now (its groups resolved)."""
        return tuple(self.registry.audiences.of(req))

    async def take_once(self, key: str, expires_at: float) -> bool:
        """Whether this is a once-only credential's first use: ``key`` is
        ``open:<jti>``, claimed until the credential expires (``store.once_keys``)."""
        return await self.store.once_keys.take(key, expires_at)

    # ---- the admin's: its handlers call ``self.admin`` (admin_ops.py) --

    async def emails(self, users: Sequence[str]) -> dict[str, str]:
        """The e-mail addresses kept for ``users`` (the notification channels')."""
        return await self.admin.emails(users)

    def waiting(self) -> int:
        """Agents waiting on a question now."""
        return self.waiters.count()

    def counts(self) -> dict[str, int]:
        return self.registry.stats()  # this node's counters

    async def stats(self) -> dict[str, Any]:
        """The counters, with the connections and users of every node."""
        stats: dict[str, Any] = self.registry.stats()
        if self.store.shared:  # connections live on every node
            conns = await self.connections.listing()
            stats["connections"], stats["users"] = len(conns), len({c["userId"] for c in conns})
        return stats

    def metrics_text(self) -> bytes:
        return self.metrics.render()

    # ---- stop ---------------------------------------------------------

    def shutdown(self) -> None:
        """Fail every waiting agent and close every connection with 1001."""
        self.stopping = True
        self.waiters.fail_all()
        self.connections.close_all("askd is stopping")
        self.clock.close()
        self.commits.close()
