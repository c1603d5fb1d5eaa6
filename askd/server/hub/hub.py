"""The hub: the one door the handlers use, and the one place that does
what they ask.

For an event that changes a question, a group, an away or a session, the
hub decides the change through the registry (``askd/core``, no I/O), hands
it to the commit path (``commits.py``: stored, applied, flushed) and
replies. What it does on the connections (connect, subscribe, the admin's
listing and disconnects) and for the admin (revocations, groups, aways,
the directory) is written here too. The parts beneath it are its
internals, each made with the parts it calls: the flush (``flush.py``),
the commit path, the deadline timer and clock (``deadlines.py``), this
node's sockets (``connections.py``), the waiting agents (``waiters.py``)
and the notification pipeline (``askd/channels/pipeline.py``). Handlers
call the methods below, never a part (tests may); a plain read or
once-only take of a store part (the audit trail, the once keys, the
directory, presence) goes to ``hub.store``'s part itself. It never asks
which store it has. All of it runs on the event loop thread: no locks.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, TypeVar

import structlog

from askd.channels.pipeline import Pipeline
from askd.core import AskInput, Connection, Limits, NotifyPolicy, NotPending, Request
from askd.core.registry.deadlines import DeadlineFailure
from askd.core.registry.decisions import Relay
from askd.core.registry import Registry
from askd.core import events as ev
from askd.core.changes import Change, Ended
from askd.core.errors import AskInFlight
from askd.core.selectors import Selector, matches
from askd.core.snapshot import restore
from askd.protocol.action import MAX_QUORUM
from askd.server.hub.deadlines import DeadlineClock, DeadlineTimer, log_failures
from askd.server.hub.commits import Commits
from askd.server.hub.connections import Connections, Peer
from askd.server.hub.flush import Flush
from askd.server.hub.tasks import Tasks
from askd.server.hub.waiters import ShuttingDown, Waiters
from askd.server.logs import get_logger
from askd.server.metrics import Metrics
from askd.store import Store, StoreError, StoreUnavailable
from askd.store.memory import MemoryStore
from askd.store.parts import EMAIL, SLACK

__all__ = ["Health", "Hub", "Peer", "ShuttingDown"]

log = get_logger("askd.hub")

# How many times an ask is decided again after another node's change got in first.
ASK_ATTEMPTS = 3
# An approval not taken lost to another approval (the count moved on, at
# most a quorum's worth) or to the end: decided again at most this often.
APPROVE_ATTEMPTS = MAX_QUORUM + 2

# What ``Hub.decide`` hands back: the change its decision made.
ChangeT = TypeVar("ChangeT", bound=Change)

# Who may cancel a session: its agent, or the admin.
CANCEL_VIAS = ("agent", "admin")

# What a directory field left out of an admin's write means: keep it.
UNCHANGED: Any = object()


@dataclass(frozen=True, slots=True)
class Health:
    """What ``/healthz`` reports: why the store fails, while it does, and
    the deadlines whose handling fails and is retried, oldest first."""

    degraded: str | None
    failing: list[DeadlineFailure]


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
        # Takes each new revocation instant, from this node or (shared store) another.
        self._on_revoked = on_revoked

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
        """Go, before the listeners open: end what passed its deadline while
        no daemon ran, so no tab is shown a question already over and no
        client is told of the end as if it happened live; then hand on what
        the load made due (webhooks) and arm the timer (the flush)."""
        due = self.registry.due()
        if due:
            await self.commits.write_deferred(due)  # flushes once stored
        self.flush()
        log_failures(self.registry)

    def health(self) -> Health:
        """The store's state and the failing deadlines (protocol section 6)."""
        return Health(self.commits.degraded, self.registry.failing_deadlines())

    # ---- what the store calls back (askd.store.base.StoreListener) ------

    def on_changes(self, changes: list[Change]) -> None:
        """A shared store's follower: the cluster's changes, in its order
        (this node's own among them), applied and flushed."""
        self.commits.apply(changes)
        self.flush()

    def on_failed(self, err: StoreUnavailable) -> None:
        self.commits.failed(err)

    def on_ok(self) -> None:
        self.commits.ok()

    def on_command(self, command: dict[str, Any]) -> None:
        """An order sent to every node: a revocation for the waiting agents
        and the daemon's sockets, anything else for the connections."""
        if "notBefore" in command:
            self._revoked(float(command["notBefore"]))
        else:
            self.connections.on_command(command)

    def local_connections(self) -> list[Connection]:
        return self.registry.connections()

    # ---- connections: presence is told to the store, which lists them
    # cluster wide on a shared store --------------------------------------

    def connect(self, peer: Peer, user_id: str, remote: str) -> str:
        conn_id = "c_" + secrets.token_urlsafe(9)
        conn = self.registry.connect(conn_id, user_id, remote)
        self.connections.peers[conn_id] = peer
        self.store.cluster.present(conn_id, conn)
        return conn_id

    def disconnect(self, conn_id: str) -> None:
        self.connections.peers.pop(conn_id, None)
        self.registry.disconnect(conn_id)  # never ends a question: the person may answer later
        self.store.cluster.present(conn_id, None)

    def peer_count(self, user_id: str) -> int:
        return len(self.registry.connections(user_id))

    def subscriptions(self, conn_id: str) -> Mapping[str, Any]:
        """What the connection is subscribed to (the registry's own record)."""
        return self.registry.connection(conn_id).subscriptions

    def subscribe(self, conn_id: str, session_id: str, reply_id: Any = None) -> int:
        """Subscribe a connection and re-push its pending questions; returns how many.
        The re-push goes out through the one flush, which also hands on what
        else the registry holds (webhooks the clock found due before its
        write, waiters to wake): a subscribe drops none of it."""
        pushed = self.registry.subscribe(conn_id, session_id, reply_id)
        self.store.cluster.present(conn_id, self.registry.connection(conn_id))
        out = self.flush()
        if pushed:
            # One line per subscribe, not per question: a log line costs more
            # than re-pushing a question (docs/performance.md, the reconnect
            # storm of 5,000 users).
            rids = [s.event.request_id for s in out.sends if s.event.type == ev.ASK]
            log.info("question.repushed", subscription=session_id, count=pushed, requestIds=rids)
        return pushed

    def unsubscribe(self, conn_id: str, session_id: str) -> None:
        self.registry.unsubscribe(conn_id, session_id)
        self.store.cluster.present(conn_id, self.registry.connection(conn_id))

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
        """End the session's pending questions (and its sub-sessions') as
        ``cancelled``; how many. Via ``agent``, ``agent`` is the agent
        token's sub, which must reach the session; via ``admin`` (the admin
        API), the admin token's, which reaches every session. Who did it and
        through what go into the change itself (``Ended.actor`` and
        ``actor_via``), so the audit trail writes what the change says."""
        if via not in CANCEL_VIAS:
            raise ValueError(f"via is one of {CANCEL_VIAS}, not {via!r}")
        # On a shared store, questions of the session (or of a sub-session)
        # asked on another node a moment ago are cancelled too.
        await self.store.catch_up()
        changes = self.registry.prepare_cancel(session_id, agent if via == "agent" else None)
        for change in changes:
            change.actor, change.actor_via = agent, via
        n = await self.commits.commit(list(changes)) if changes else 0  # flushed once stored
        log.info("session.cancelled", sessionId=session_id, cancelled=n, via=via)
        return n

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

    # ---- the admin's: connections and tokens ----------------------------

    async def list_connections(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Every node's connections, with their node (of ``user_id`` only, when given)."""
        listed = await self.connections.listing()
        return [c for c in listed if user_id is None or c["userId"] == user_id]

    async def disconnect_matching(self, selector: dict[str, Any], mode: str) -> int:
        """Drop the connections ``selector`` names (``userId``, ``sessionId``,
        ``connectionId``, ``all``), on every node; how many."""
        chosen = Selector.from_wire(selector)
        owner = self.registry.session_users(chosen.session_id) if chosen.session_id else set()
        listed = (Connection.from_description(c) for c in await self.connections.listing())
        n = sum(1 for c in listed if matches(c, chosen, owner))
        if n:
            await self.store.cluster.command({"disconnect": chosen.to_wire(), "mode": mode})
        return n

    async def revoke_before(self, at: float) -> None:
        """Refuse tokens issued before ``at`` from now on, on every node:
        kept in the store (so a restart keeps it) and applied here at once;
        a shared store tells every node (this one again: no harm)."""
        await self.store.save_not_before(at)
        self._revoked(at)

    async def not_before(self) -> float:
        """The latest revocation instant the store keeps (0: none); raises
        :class:`StoreUnavailable` when the store cannot say."""
        try:
            return await self.store.load_not_before()
        except StoreError as err:  # Redis says so when it cannot be read
            raise StoreUnavailable(str(err)) from None

    def _revoked(self, at: float) -> None:
        """A revocation reached this node: agents waiting with a revoked
        token stop waiting (401), and the daemon closes its sockets."""
        self.waiters.revoke_before(at)
        if self._on_revoked is not None:
            self._on_revoked(at)

    # ---- one decision, whatever it is: the admin's groups and aways, and
    # any new one, need no method of their own here ------------------------

    async def decide(
        self, prepare: Callable[[Registry], ChangeT], *, fresh: bool = True, refused: Exception | None = None
    ) -> ChangeT:
        """Decide one change through the core (``prepare``, a registry's
        ``prepare_*`` with its arguments; it raises what it refuses,
        changing nothing), commit it (stored, applied, flushed) and return
        it for the reply. ``fresh``: catch up with the cluster first, so it
        is decided against what every node holds. ``refused``: raised when
        the store did not take it (another node got there first); else a
        change not taken is returned all the same (a group set: the last
        stored wins)."""
        if fresh:
            await self.store.catch_up()
        change = prepare(self.registry)
        if not await self.commits.commit([change]) and refused is not None:  # flushed once stored
            raise refused
        return change

    async def groups(self) -> dict[str, tuple[str, ...]]:
        """Every group and its members, as the cluster holds them now."""
        await self.store.catch_up()
        return dict(self.registry.audiences.groups)

    # ---- the admin's: the directory (users' e-mail addresses and Slack ids)

    async def user(self, user: str) -> dict[str, Any]:
        """What the directory keeps of ``user`` (``GET /admin/v1/users/{U}``),
        and their away while they are (as the cluster holds it now)."""
        directory = self.store.directory
        out = {"user": user, "email": (await directory.get(EMAIL, [user])).get(user), "slack": (await directory.get(SLACK, [user])).get(user)}
        await self.store.catch_up()
        away = self.registry.away(user)  # shown only while away
        return out if away is None else {**out, "away": away.wire(user)}

    async def set_user(self, user: str, *, email: str | None = UNCHANGED, slack: str | None = UNCHANGED) -> dict[str, Any]:
        """Keep ``user``'s e-mail address and Slack user id (None: forget
        it; left out: unchanged); returns the user as ``user`` reads it."""
        if email is not UNCHANGED:
            await self.store.directory.set(EMAIL, user, email)
        if slack is not UNCHANGED:
            await self.store.directory.set(SLACK, user, slack)
        return await self.user(user)

    # ---- counters -------------------------------------------------------

    def waiting(self) -> int:
        """Agents waiting on a question now."""
        return self.waiters.count()

    def counts(self) -> dict[str, int]:
        """This node's counters, with the agents waiting now (``waiting``)."""
        return {**self.registry.stats(), "waiting": self.waiters.count()}

    async def stats(self) -> dict[str, Any]:
        """The counters, with the connections and users of every node."""
        stats: dict[str, Any] = self.registry.stats()
        if self.store.shared:  # connections live on every node
            conns = await self.connections.listing()
            stats["connections"], stats["users"] = len(conns), len({c["userId"] for c in conns})
        return stats

    # ---- stop ---------------------------------------------------------

    def shutdown(self) -> None:
        """Fail every waiting agent and close every connection with 1001."""
        self.stopping = True
        self.waiters.fail_all()
        self.connections.close_all("askd is stopping")
        self.clock.close()
        self.commits.close()
