"""The hub drives the core registry from the event loop.

Handlers call the hub. For an event that changes a question (ask, answer,
withdraw, cancel, the clock) the hub has the registry decide the change,
makes it durable in the store, applies it, then flushes what the registry
asks for: frames to connections (each event encoded once, whatever the
number of connections), agents to wake, and the one loop timer moved to the
registry's next deadline. Nothing leaves before its change is stored. All
of it runs on the event loop thread, so nothing here locks.
"""

from __future__ import annotations

import asyncio
import contextvars
import secrets
import time
from collections.abc import Callable
from typing import Any, Protocol, cast

import structlog

from dataclasses import replace

from askd.core import AskInput, Connection, Limits, NotifyPolicy, NotPending, Registry, Request, Status
from askd.core import events as ev
from askd.core.changes import Change, Ended, Notified
from askd.server.logs import get_logger
from askd.server.metrics import Metrics
from askd.store import Store, StoreUnavailable
from askd.store.base import SharedStore
from askd.store.memory import MemoryStore

log = get_logger("askd.hub")

_END_EVENT = {
    Status.ANSWERED: "question.answered",
    Status.TIMEOUT: "question.timeout",
    Status.CANCELLED: "question.cancelled",
}


class Peer(Protocol):
    """What the hub needs of a WebSocket connection."""

    def send_frame(self, frame: bytes) -> None: ...

    def close_peer(self, code: int, reason: str) -> None: ...

    def abort_peer(self) -> None: ...


class ShuttingDown(Exception):
    """The daemon is stopping; waiting agents get a 503."""


# While the store fails, how often the hub tries it again.
PROBE_SECONDS = 1.0
# How many times an ask is decided again after another node's change got in first.
ASK_ATTEMPTS = 3


class Hub:
    def __init__(
        self,
        limits: Limits,
        store: Store | None = None,
        *,
        node_id: str = "local",
        clock: Callable[[], float] = time.time,
        notify: NotifyPolicy | None = None,
    ) -> None:
        self.registry = Registry(limits, clock=clock, notify=notify)
        self.store: Store = store or MemoryStore()
        # The same store when several daemons share it, for cluster-wide work.
        self._cluster = cast(SharedStore, self.store) if self.store.shared else None
        self.node_id = node_id
        self.metrics = Metrics(self.registry)
        self.started_at = clock()
        self.stopping = False
        self.degraded: str | None = None  # why the store fails, while it does
        self._clock = clock
        self._peers: dict[str, Peer] = {}
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._backlog: list[Change] = []  # the clock's changes the store has not taken yet
        self._replies: dict[int, Callable[[], None]] = {}  # id(change) -> what runs when it applies
        self._probe: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

        # Takes each question due for a webhook (askd.server.notify.Notifier.submit).
        self.on_notify: Callable[[Request], object] | None = None

    async def load(self) -> int:
        """Restore what the store kept; questions whose deadline passed while
        no daemon ran end once ``start`` arms the timer, with the usual events."""
        self.store.attach(self._apply_remote, self._store_failed, self._store_ok)
        if self._cluster is not None:
            self._cluster.on_command(self._on_command)
        return await self.store.load(self.registry)

    def start(self) -> None:
        """Go: hand over what the load made due (webhooks) and arm the timer."""
        self._flush()

    # ---- connections --------------------------------------------------

    def connect(self, peer: Peer, user_id: str, remote: str) -> str:
        conn_id = "c_" + secrets.token_urlsafe(9)
        conn = self.registry.connect(conn_id, user_id, remote)
        self._peers[conn_id] = peer
        self._present(conn)
        return conn_id

    def disconnect(self, conn_id: str) -> None:
        self._peers.pop(conn_id, None)
        self.registry.disconnect(conn_id)  # never ends a question (seed D1)
        if self._cluster is not None:
            self._cluster.presence.put(conn_id, None)

    def _present(self, conn: Connection) -> None:
        """Tell a shared store how this connection is now (for cluster-wide
        listings and session-targeted disconnects)."""
        if self._cluster is not None:
            self._cluster.presence.put(conn.id, conn.describe())

    def peer_count(self, user_id: str) -> int:
        return len(self.registry.connections(user_id))

    def subscribe(self, conn_id: str, session_id: str, reply_id: Any = None) -> int:
        pushed = self.registry.subscribe(conn_id, session_id, reply_id)
        self._present(self.registry.connection(conn_id))
        out = self.registry.drain()
        if pushed:
            # One line per subscribe, not per question: a log line costs more
            # than re-pushing a question (docs/performance.md, B1).
            rids = [s.event.request_id for s in out.sends if s.event.type == ev.ASK]
            log.info("question.repushed", subscription=session_id, count=pushed, requestIds=rids)
        self._deliver(out.sends)
        return pushed

    def unsubscribe(self, conn_id: str, session_id: str) -> None:
        self.registry.unsubscribe(conn_id, session_id)
        self._present(self.registry.connection(conn_id))

    # ---- agents and answers -------------------------------------------

    async def ask(
        self,
        session_id: str,
        user_id: str,
        questions: list[dict[str, Any]],
        *,
        metadata: dict[str, Any] | None = None,
        timeout: float | None = None,
        require_online: bool = False,
        parent_session_id: str | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[Request, bool]:
        """Ask; returns the request and whether it is new (an Idempotency-Key
        replay is not). Raises :class:`StoreUnavailable`, pushing nothing."""
        ask = AskInput(
            session_id, user_id, questions, metadata, timeout, require_online, parent_session_id, idempotency_key
        )
        if require_online and self._cluster is not None:
            # Online means a connection on any node, not only on this one.
            ask = replace(ask, require_online=not await self._online_anywhere(user_id))
        req, change = self.registry.prepare_ask(ask)
        for _ in range(ASK_ATTEMPTS):
            if change is None:
                return req, False
            if await self._commit([change]):
                break
            # Not taken: on a shared store another node got there first (an
            # ask with the same Idempotency-Key, or the session for another
            # user). The store waited until this node applied that: decide
            # again, against what the cluster holds now.
            req, change = self.registry.prepare_ask(ask)
        else:
            raise StoreUnavailable("the store refused the ask each time; nothing was asked")
        structlog.contextvars.bind_contextvars(requestId=req.request_id)
        # One line per question: what was asked and to how many connections it went.
        pushed = len(self.registry.connections(user_id))
        log.info("question.asked", questions=len(questions), expiresAt=ev.isotime(req.expires_at), connections=pushed)
        self._flush()
        return req, True

    async def answer(
        self,
        session_id: str,
        request_id: str,
        answers: dict[str, Any],
        *,
        user_id: str | None,
        before_flush: Callable[[], None] | None = None,
    ) -> Request:
        """Answer; raises (changing nothing) when not pending, invalid, or the
        store fails. ``before_flush`` runs once the answer is taken and before
        the ``cancelled`` events go out (the sender's ack goes first)."""
        await self.lookup(session_id, request_id)
        change = self.registry.prepare_answer(session_id, request_id, answers, user_id=user_id)
        replies = {id(change): before_flush} if before_flush is not None else None
        if not await self._commit([change], replies):
            # The store ended it first (its timeout was waiting to be written,
            # or another node's answer won).
            self._flush()
            raise NotPending(f"question {request_id} is not pending")
        self._flush()
        req = self.registry.get(session_id, request_id)
        assert req is not None
        return req

    async def withdraw(self, session_id: str, request_id: str) -> Request | None:
        await self.lookup(session_id, request_id)
        req, change = self.registry.prepare_withdraw(session_id, request_id)
        if change is not None:
            await self._commit([change])
            self._flush()
        return req

    async def cancel_session(self, session_id: str) -> int:
        if self._cluster is not None:
            # Questions of the session (or of a sub-session) asked on another
            # node a moment ago are cancelled too.
            await self._cluster.catch_up()
        changes = self.registry.prepare_cancel(session_id)
        n = await self._commit(list(changes)) if changes else 0
        log.info("session.cancelled", sessionId=session_id, cancelled=n)
        self._flush()
        return n

    async def lookup(self, session_id: str, request_id: str, *, fresh: bool = False) -> Request | None:
        """The request, pending or ended (``registry.get``). On a shared store
        a miss first catches up with the cluster: an agent that asked on
        another node a moment ago (no sticky sessions) finds its question
        here too. With ``fresh`` a pending one catches up as well, so a read
        that returns at once never shows pending what another node already
        ended. Raises :class:`StoreUnavailable` if that fails."""
        req = self.registry.get(session_id, request_id)
        if (req is None or (fresh and req.pending)) and self._cluster is not None:
            await self._cluster.catch_up()
            req = self.registry.get(session_id, request_id)
        return req

    async def pending(self, *, session_id: str | None = None, user_id: str | None = None) -> list[Request]:
        """Pending questions (``registry.pending``). On a shared store the
        list first catches up with the cluster, so it shows a question asked
        on another node a moment ago. Raises :class:`StoreUnavailable`."""
        if self._cluster is not None:
            await self._cluster.catch_up()
        return self.registry.pending(session_id=session_id, user_id=user_id)

    async def _commit(self, changes: list[Change], replies: dict[int, Callable[[], None]] | None = None) -> int:
        """Store the clock's backlog and ``changes`` as one step, then apply
        what took effect; returns how many of ``changes`` did. ``replies``
        (by ``id`` of a change) run as their change is applied, before its
        events go out. Raises :class:`StoreUnavailable`, applying none of
        ``changes``."""
        backlog, self._backlog = self._backlog, []
        if replies:
            self._replies.update(replies)
        try:
            done = await self.store.commit(backlog + changes if backlog else changes)
        except StoreUnavailable as err:
            self._backlog = backlog + self._backlog
            for key in replies or ():
                self._replies.pop(key, None)
            self._store_failed(err)
            raise
        self._store_ok()
        self._apply(done)
        for change in done:
            if type(change) is Ended:
                self._log_end(change)
        for key in replies or ():
            self._replies.pop(key, None)  # not taken: no reply
        mine = {id(c) for c in changes}
        return sum(1 for c in done if id(c) in mine)

    def _apply(self, changes: list[Change]) -> None:
        """Apply stored changes (again, harmlessly, if a shared store's
        follower already did) and run the replies waiting on them."""
        for change in changes:
            self.registry.apply(change)
            reply = self._replies.pop(id(change), None)
            if reply is not None:
                reply()

    def _apply_remote(self, changes: list[Change]) -> None:
        """A shared store's follower: changes as the cluster decided them, in
        its order (this node's own among them)."""
        self._apply(changes)
        self._flush()

    # ---- the store's health -------------------------------------------

    def _store_failed(self, err: StoreUnavailable) -> None:
        if self.degraded is None:
            log.error("store.failed", store=self.store.kind, error=str(err))
        self.degraded = str(err)
        if self._probe is None and not self.stopping:
            self._probe = asyncio.get_running_loop().call_later(
                PROBE_SECONDS, self._spawn, self._try_store, context=contextvars.Context()
            )

    def _store_ok(self) -> None:
        if self.degraded is not None:
            log.info("store.recovered", store=self.store.kind)
            self.degraded = None
        if self._probe is not None:
            self._probe.cancel()
            self._probe = None

    async def _try_store(self) -> None:
        """While degraded: probe the store and write the backlog once it
        takes writes again (askd recovers by itself)."""
        self._probe = None
        try:
            await self.store.probe()
            await self._commit([])
        except StoreUnavailable as err:
            self._store_failed(err)
        self._flush()

    def _spawn(self, fn: Callable[[], Any]) -> None:
        task = asyncio.ensure_future(fn())
        self._tasks.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(self._tasks.discard)

    async def wait(self, req: Request, timeout: float, abandon: asyncio.Future[None] | None = None) -> Request:
        """Wait until ``req`` ends or ``timeout`` passes (or ``abandon`` is
        done: the agent hung up). Raises :class:`ShuttingDown` on stop."""
        if not req.pending or timeout <= 0:
            return req
        if self.stopping:
            raise ShuttingDown()
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        waiters = self._waiters.setdefault(req.request_id, [])
        waiters.append(fut)
        # One future for every way a wait ends (the question's end, the
        # timeout, the agent hanging up, a stop): one wake-up, no extra task.
        timer = loop.call_later(timeout, _wake, fut)
        hung_up = lambda _: _wake(fut)  # noqa: E731
        if abandon is not None:
            abandon.add_done_callback(hung_up)
        try:
            await fut
        except Exception:  # shutdown() failed every waiter
            raise ShuttingDown() from None
        finally:
            timer.cancel()
            if abandon is not None:
                abandon.remove_done_callback(hung_up)
            if fut in waiters:
                waiters.remove(fut)
                if not waiters:
                    self._waiters.pop(req.request_id, None)
        return req

    def waiting(self) -> int:
        """Agents currently waiting on a question."""
        return sum(len(w) for w in self._waiters.values())

    # ---- the flush ----------------------------------------------------

    def _flush(self) -> None:
        out = self.registry.drain()
        try:
            self._deliver(out.sends)
        finally:
            # Whatever a send did, the registry already moved on: waiting
            # agents must still be woken and the next deadline armed.
            for req in out.ended:
                self._ended(req)
            if self.on_notify is not None:
                for req in out.notify:
                    if self._cluster is not None:  # every node's heap says so: one node sends
                        self._spawn(lambda req=req: self._notify_once(req))
                    else:
                        self.on_notify(req)
            self._arm_timer()

    def _deliver(self, sends: list[ev.Send]) -> None:
        for send in sends:
            frame = send.event.frame  # encoded once for every connection
            for conn_id in send.to:
                peer = self._peers.get(conn_id)
                if peer is not None:
                    peer.send_frame(frame)

    def _log_end(self, change: Ended) -> None:
        """One line per question's end, from the node whose step took effect
        (on a shared store the others only follow it, and stay quiet)."""
        req = self.registry.get(change.session_id, change.request_id)
        user_id = req.user_id if req is not None else None
        log.info(_END_EVENT[change.status], sessionId=change.session_id, requestId=change.request_id, userId=user_id)

    def _ended(self, req: Request) -> None:
        if req.status is Status.ANSWERED and req.ended_at is not None:
            self.metrics.time_to_answer.observe(req.ended_at - req.created_at)
        for fut in self._waiters.pop(req.request_id, ()):
            _wake(fut)

    def _arm_timer(self) -> None:
        """Keep one loop timer at the registry's next deadline."""
        when = self.registry.next_deadline()
        if when is None or (self._timer_at is not None and self._timer_at <= when):
            return  # an earlier timer is armed; when it fires it re-arms
        if self._timer is not None:
            self._timer.cancel()
        delay = max(0.0, when - self._clock())
        # A fresh context: the timer must not log with the ids of whichever
        # request happened to arm it.
        self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer, context=contextvars.Context())
        self._timer_at = when

    def _on_timer(self) -> None:
        self._timer = self._timer_at = None
        due = self.registry.due()
        if not due:
            self._flush()  # notifications that came due; re-arms the timer
            return
        self._backlog.extend(due)
        self._spawn(self._write_due)

    async def _write_due(self) -> None:
        try:
            await self._commit([])
        except StoreUnavailable:
            pass  # kept in the backlog; the probe writes it when the store is back
        self._flush()

    # ---- webhooks -----------------------------------------------------

    def still_pending(self, session_id: str, request_id: str) -> bool:
        req = self.registry.get(session_id, request_id)
        return req is not None and req.pending

    async def _notify_once(self, req: Request) -> None:
        try:
            assert self._cluster is not None
            won = await self._cluster.claim_notify(req)
        except StoreUnavailable:
            return  # no node can claim it now; the question stays on every tab
        if not won or self.on_notify is None:
            return
        policy = self.registry.notify_policy
        if policy is not None and policy.only_offline and await self._online_anywhere(req.user_id):
            return  # a tab on another node: no webhook (claimed, so no node sends)
        self.on_notify(req)

    async def _online_anywhere(self, user_id: str) -> bool:
        if self.registry.connections(user_id):
            return True
        try:
            return any(c["userId"] == user_id for c in await self.connection_list(user_id))
        except StoreUnavailable:
            return False

    def mark_notified(self, session_id: str, request_id: str) -> None:
        """A webhook delivery succeeded: never send this question again, not
        even after a restart (written with the clock's changes)."""
        self._backlog.append(Notified(session_id, request_id))
        self._spawn(self._write_due)

    # ---- admin --------------------------------------------------------

    def matching_connections(
        self,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        connection_id: str | None = None,
        everyone: bool = False,
    ) -> list[Connection]:
        if session_id is not None:
            conns = self.registry.connections_for_session(session_id)
        else:
            conns = self.registry.connections(user_id)
        if user_id is not None:
            conns = [c for c in conns if c.user_id == user_id]
        if connection_id is not None:
            conns = [c for c in conns if c.id == connection_id]
        if not (everyone or user_id or session_id or connection_id):
            return []
        return conns

    async def connection_list(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Every connection, on every node of a shared store, with its node."""
        if self._cluster is not None:
            conns = await self._cluster.connections()
            return [c for c in conns if user_id is None or c["userId"] == user_id]
        return [{**c.describe(), "node": self.node_id} for c in self.registry.connections(user_id)]

    async def disconnect_matching(self, selector: dict[str, Any], mode: str) -> int:
        """Drop the connections ``selector`` names (``userId``, ``sessionId``,
        ``connectionId``, ``all``), on every node of a shared store."""
        if self._cluster is None:
            return self.drop(self.matching_connections(**_selection(selector)), mode)
        owner = self.registry.owner(selector["sessionId"]) if selector.get("sessionId") else None
        n = sum(1 for c in await self.connection_list() if _selected(c, selector, owner))
        if n:
            await self._cluster.command({"disconnect": selector, "mode": mode})
        return n

    def _on_command(self, command: dict[str, Any]) -> None:
        if "disconnect" in command:
            self.drop(self.matching_connections(**_selection(command["disconnect"])), command["mode"])

    def drop(self, conns: list[Connection], mode: str) -> int:
        """Close connections: ``abort`` drops TCP with no close handshake (a
        network failure), ``close`` sends close code 1001."""
        n = 0
        for conn in conns:
            peer = self._peers.get(conn.id)
            if peer is None:
                continue
            if mode == "abort":
                peer.abort_peer()
            else:
                peer.close_peer(1001, "closed by admin")
            n += 1
        return n

    # ---- stop ---------------------------------------------------------

    def shutdown(self) -> None:
        """Fail every waiting agent and close every connection with 1001."""
        self.stopping = True
        for waiters in self._waiters.values():
            for fut in waiters:
                if not fut.done():
                    fut.set_exception(ShuttingDown())
        for peer in list(self._peers.values()):
            peer.close_peer(1001, "askd is stopping")
        for handle in (self._timer, self._probe):
            if handle is not None:
                handle.cancel()
        self._timer = self._timer_at = self._probe = None


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def _selection(selector: dict[str, Any]) -> dict[str, Any]:
    return {
        "user_id": selector.get("userId"),
        "session_id": selector.get("sessionId"),
        "connection_id": selector.get("connectionId"),
        "everyone": bool(selector.get("all")),
    }


def _selected(conn: dict[str, Any], selector: dict[str, Any], owner: str | None) -> bool:
    """``matching_connections``' rule, on a listed connection of any node."""
    if not any(selector.get(k) for k in ("userId", "sessionId", "connectionId", "all")):
        return False
    if selector.get("userId") and conn["userId"] != selector["userId"]:
        return False
    if selector.get("connectionId") and conn["connectionId"] != selector["connectionId"]:
        return False
    sid = selector.get("sessionId")
    subs = conn["subscriptions"]
    return not sid or sid in subs or (conn["userId"] == owner and "*" in subs)
