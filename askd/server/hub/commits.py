"""The commit path: every change reaches the registry through here.

A change is committed to the store first, then applied, then its replies
run (the ask's answer, the answer's ack), before the hub flushes pushes and
wake-ups: nothing leaves askd for a change that is not stored. While the
store fails, the clock's changes wait in the **backlog** (written first in
the next commit, whatever it is) and the store is **probed** every
``PROBE_SECONDS`` until it takes writes again.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable

from askd.core import Status
from askd.core.registry import Registry
from askd.core.changes import Approved, Asked, Change, Ended, Escalated
from askd.core.records import audience_entries, is_team
from askd.server.hub.flush import Flush
from askd.server.hub.tasks import Tasks
from askd.server.logs import get_logger
from askd.store import Store, StoreUnavailable

log = get_logger("askd.hub")

# While the store fails, how often the hub tries it again.
PROBE_SECONDS = 1.0

# A commit asked for: its changes, the replies they run, what it returns.
_Commit = tuple[list[Change], "dict[int, Callable[[], None]] | None", "asyncio.Future[int]"]

_END_EVENT = {
    Status.ANSWERED: "question.answered",
    Status.TIMEOUT: "question.timeout",
    Status.CANCELLED: "question.cancelled",
    Status.DECLINED: "question.declined",
}


class Commits:
    def __init__(self, store: Store, registry: Registry, tasks: Tasks, flush: Flush) -> None:
        self.store, self.registry = store, registry
        self.degraded: str | None = None  # why the store fails, while it does
        self._tasks = tasks
        self._flush = flush  # pushes, wake-ups, the timer
        self._backlog: list[Change] = []  # the clock's changes the store has not taken yet
        self._replies: dict[int, Callable[[], None]] = {}  # id(change) -> what runs when it applies
        # id() of the changes the store is writing now and no one applied yet:
        # a shared store's follower applies this node's own (the very
        # objects) before the commit returns, and they are not applied again.
        self._unapplied: set[int] = set()
        self._probe: asyncio.TimerHandle | None = None
        self._closed = False
        self._queue: list[_Commit] = []  # commits asked for, not yet in a batch
        self._leading = False  # a caller is writing batches
        self._settled: list[asyncio.Future[None]] = []  # settled() callers, woken when idle

    async def commit(self, changes: list[Change], replies: dict[int, Callable[[], None]] | None = None) -> int:
        """Store ``changes`` (after the backlog), then apply what took effect;
        returns how many of ``changes`` did. ``replies`` (by ``id`` of a
        change) run as their change is applied, before its events go out.
        Raises :class:`StoreUnavailable`, applying none of ``changes``.

        Group commit: every commit asked for in one loop iteration (many
        agents asking, many tabs answering) is written in one store step
        (one SQLite transaction, one Redis script call); each caller returns
        once that step is stored and applied."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[int] = loop.create_future()
        self._queue.append((changes, replies, done))
        if not self._leading:
            # The first caller leads the batch (no task of its own): it
            # yields once, so that whatever else this loop iteration commits
            # joins, then writes everything queued.
            self._leading = True
            try:
                if _others_ready(loop):
                    await asyncio.sleep(0)
                await self._write_batches()
            except BaseException:
                if self._queue:  # cancelled before writing: the batch is still owed
                    self._tasks.spawn(self._write_batches)
                raise
            finally:
                if not self._queue:
                    self._idle()
        return await done

    async def settled(self) -> None:
        """Return once every commit asked for so far is over."""
        if self._leading:
            idle: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._settled.append(idle)
            await idle

    async def _write_batches(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                await self._write(batch)
        finally:
            if not self._queue:
                self._idle()

    def _idle(self) -> None:
        self._leading = False
        waiting, self._settled = self._settled, []
        for idle in waiting:
            if not idle.done():
                idle.set_result(None)

    async def _write(self, batch: list[_Commit]) -> None:
        changes = [c for entry in batch for c in entry[0]]
        for _, replies, _ in batch:
            if replies:
                self._replies.update(replies)
        backlog, self._backlog = self._backlog, []
        writing = backlog + changes if backlog else changes
        self._unapplied = {id(c) for c in writing}
        try:
            done = await self.store.commit(writing)
        except BaseException as err:
            self._unapplied = set()
            self._backlog = backlog + self._backlog
            self._settle(batch, changes)
            if isinstance(err, StoreUnavailable):
                self.failed(err)
            for _, _, fut in batch:
                if not fut.done():
                    fut.set_exception(StoreUnavailable(str(err)) if isinstance(err, StoreUnavailable) else err)
            if not isinstance(err, Exception):
                raise
            return
        # What the follower did not already apply (all of it on a store
        # one daemon owns): each change is applied, and flushed, once.
        fresh = [c for c in done if id(c) in self._unapplied]
        self._unapplied = set()
        self.ok()
        self.apply(fresh)
        for change in done:
            if type(change) is Ended:
                self._log_end(change)
            elif type(change) is Escalated:  # from the node whose step took effect, as an end
                log.info("question.escalated", sessionId=change.session_id, requestId=change.request_id, step=change.step)
            elif type(change) is Approved:  # an approval short of the quorum (the last one ends it)
                log.info(
                    "question.approved", sessionId=change.session_id, requestId=change.request_id,
                    approvals=change.counted + 1, needed=change.approval.quorum, answeredBy=change.vote.by, via=change.vote.via,
                )
        self._settle(batch, changes)
        taken = {id(c) for c in done}
        for entry_changes, _, fut in batch:
            if not fut.done():
                fut.set_result(sum(1 for c in entry_changes if id(c) in taken))
        # Pushes and wake-ups now, not when a caller resumes: a caller may
        # never resume (its WebSocket went away mid-answer). When the
        # follower applied all that took effect it flushed it then.
        if fresh or not done:
            self._flush()

    def _settle(self, batch: list[_Commit], changes: list[Change]) -> None:
        """The batch's step is over: replies not run are dropped (their change
        was not taken), and what its asks reserved is free."""
        for _, replies, _ in batch:
            for key in replies or ():
                self._replies.pop(key, None)
        for change in changes:
            if type(change) is Asked:
                self.registry.release(change)

    def apply(self, changes: list[Change]) -> None:
        """Apply stored changes and run the replies waiting on them."""
        for change in changes:
            self._unapplied.discard(id(change))
            self.registry.apply(change)
            reply = self._replies.pop(id(change), None)
            if reply is not None:
                reply()

    def defer(self, changes: list[Change]) -> None:
        """Changes nobody waits on (the clock's, a webhook's delivery):
        written in order with the next commit, which starts now."""
        self._backlog.extend(changes)
        self._tasks.spawn(self.write_backlog)

    async def write_deferred(self, changes: list[Change]) -> None:
        """As ``defer``, but return once they are written (or, should the
        store refuse, kept in the backlog for the probe)."""
        self._backlog.extend(changes)
        await self.write_backlog()

    async def write_backlog(self) -> None:
        try:
            await self.commit([])  # flushes once stored
        except StoreUnavailable:
            pass  # kept in the backlog; the probe writes it when the store is back

    def _log_end(self, change: Ended) -> None:
        """One line per question's end, from the node whose step took effect
        (on a shared store the others only follow it, and stay quiet)."""
        req = self.registry.get(change.session_id, change.request_id)
        # A team question's owner is its audience key (control characters
        # inside): the line names its entries instead.
        who: dict[str, object] = {}
        if req is not None:
            who = {"to": list(audience_entries(req.user_id))} if is_team(req.user_id) else {"userId": req.user_id}
        if change.via is not None:
            who.update(answeredBy=change.answered_by, via=change.via)
        log.info(_END_EVENT[change.status], sessionId=change.session_id, requestId=change.request_id, **who)
        if change.digest is None:  # every end decided here takes one; none: its content had no canonical JSON
            log.error(
                "receipt.no_digest", sessionId=change.session_id, requestId=change.request_id,
                reason="its questions or action hold a value RFC 8785 cannot write (stored before askd refused it); "
                "it ended without a receipt",
            )

    # ---- the store's health -------------------------------------------

    def failed(self, err: StoreUnavailable) -> None:
        if self.degraded is None:
            log.error("store.failed", store=self.store.kind, error=str(err))
        self.degraded = str(err)
        if self._probe is None and not self._closed:
            self._probe = asyncio.get_running_loop().call_later(
                PROBE_SECONDS, self._tasks.spawn, self.try_store, context=contextvars.Context()
            )

    def ok(self) -> None:
        if self.degraded is not None:
            log.info("store.recovered", store=self.store.kind)
            self.degraded = None
        if self._probe is not None:
            self._probe.cancel()
            self._probe = None

    async def try_store(self) -> None:
        """While degraded: probe the store and write the backlog once it
        takes writes again (askd recovers by itself)."""
        self._probe = None
        try:
            await self.store.probe()
            await self.commit([])
        except StoreUnavailable as err:
            self.failed(err)
        self._flush()

    def close(self) -> None:
        self._closed = True
        if self._probe is not None:
            self._probe.cancel()
            self._probe = None


def _others_ready(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether other callbacks wait to run in this loop iteration (another
    request's handler may be among them, and commit too). When none does,
    nothing else can join this batch before the loop polls for I/O: the
    leader writes at once, and a lone commit costs no iteration. Read from
    asyncio's own loop; a loop that does not show it (uvloop) is assumed
    busy, and the leader yields.

    ``_ready`` is private, and asyncio has no public way to ask this. The
    public alternative, always yielding once (``asyncio.sleep(0)``), was
    measured in one process with 200 idle sockets in the selector: a lone
    commit 11-18 us with this peek against 25-45 us always yielding, about
    30-55 us more per sequential round trip (an ask and an answer, of the
    round-trip benchmark's ~900 us); bursts of 20 grouped alike either way. So the peek stays."""
    ready = getattr(loop, "_ready", None)
    return ready is None or len(ready) > 0
