"""The one delivery worker: every channel's deliveries, claimed, attempted
and retried the same way.

The pipeline hands each notice to every channel (``notify``, which never
blocks and never raises). A channel makes its deliveries of it; each one
is claimed in the store once, before its first attempt (askd.channels.once:
the node whose claim wins sends it), is checked to be still pending before
every attempt (unless it is about the question's end), and after a failure another try may fix is tried again after
the channel's ``Retry`` backoff, a loop timer rather than a sleeping task,
until it succeeds, the question ends, or the attempts run out. A channel
holds at most its ``_max_held`` notices at once (queued, in flight or
waiting to retry); beyond that a notice is dropped and counted. Nothing
here can delay, fail or change an ask.

Channels fail loudly: every outcome, and every failure before an attempt
(a message that could not be built, a notice dropped, a claim the store
refused), is logged by its channel with the request id and the reason,
and recorded in the question's delivery status (``record``:
askd.channels.status), which the admin listing shows.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from askd.channels.channel import ENDED, Channel, OnceKey, Delivery, Notice
from askd.channels.status import FAILED, RETRYING, SENT, DeliveryBook, State
from askd.store import StoreUnavailable


def _internal(err: BaseException) -> str:
    # The type alone: an exception's text may quote what it was given (question text).
    return f"an error inside askd ({type(err).__name__}); its traceback is in the log"


@dataclass(eq=False)
class _Held:
    """One notice of one channel, until all its deliveries are done."""

    notice: Notice
    open: int = 1  # deliveries not finished (1 while they are being made)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    timers: set[asyncio.TimerHandle] = field(default_factory=set)


class Worker:
    def __init__(
        self,
        *,
        claim: Callable[[OnceKey], Awaitable[bool]],
        still_pending: Callable[[str, str], bool],
        book: DeliveryBook | None = None,
    ) -> None:
        self._claim = claim
        self._still_pending = still_pending
        self.book = book if book is not None else DeliveryBook(time.time)  # each question's delivery status
        self.channels: list[Channel] = []
        self._held: dict[Channel, set[_Held]] = {}
        self._lanes: dict[Channel, asyncio.Semaphore] = {}
        self._stopped: set[Channel] = set()  # a late notice to a stopped channel starts nothing

    def add(self, channel: Channel) -> Channel:
        """Deliver ``channel``'s notices from now on."""
        channel._worker = self  # noqa: SLF001  (the one owner of a channel's deliveries)
        self.channels.append(channel)
        self._held[channel] = set()
        if channel.concurrency is not None:
            self._lanes[channel] = asyncio.Semaphore(channel.concurrency)
        return channel

    # ---- from the pipeline ----------------------------------------------

    def notify(self, notice: Notice) -> None:
        """Hand ``notice`` to every channel."""
        for channel in self.channels:
            self.submit(channel, notice)

    def submit(self, channel: Channel, notice: Notice) -> bool:
        """Hand ``notice`` to ``channel``; False when it was dropped."""
        if channel in self._stopped:
            return False
        try:
            prepared = channel.prepare(notice)
        except Exception as err:  # a bug here must not reach the ask
            channel.report("error", None, notice, reason=_internal(err))
            self._note(channel, notice, None, FAILED, _internal(err))
            return False
        if prepared is None:
            return True
        held = self._held[channel]
        if len(held) >= channel._max_held:  # noqa: SLF001
            channel.report("dropped", None, notice, held=len(held))
            reason = f"dropped: the channel held {len(held)} notices already"
            self._note(channel, notice, None, FAILED, reason)
            return False
        h = _Held(notice)
        held.add(h)
        self._spawn(h, self._make(channel, h, prepared))
        return True

    def held(self, channel: Channel) -> int:
        return len(self._held.get(channel, ()))

    # ---- the deliveries ---------------------------------------------------

    def _spawn(self, h: _Held, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        h.tasks.add(task)  # the loop keeps only weak references to tasks
        task.add_done_callback(h.tasks.discard)

    async def _make(self, channel: Channel, h: _Held, prepared: Any) -> None:
        try:
            made = await channel.deliveries(prepared, h.notice)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            channel.report("error", None, h.notice, reason=_internal(err))
            self._note(channel, h.notice, None, FAILED, _internal(err))
            made = []
        h.open = len(made)
        if not made:
            self._held[channel].discard(h)
        for d in made:
            self._spawn(h, self._run(channel, h, d))

    async def _run(self, channel: Channel, h: _Held, d: Delivery) -> None:
        try:
            if d.claim is not None and d.attempts == 0:
                try:
                    won = await self._claim(d.claim)
                except StoreUnavailable as err:
                    channel.report("skipped", d, h.notice, reason="store unavailable", error=str(err))
                    self._note(channel, h.notice, d, FAILED, "not sent: the store was unavailable to claim it")
                    self._done(channel, h)
                    return
                if not won:
                    self._done(channel, h)  # another node's, or sent before a restart
                    return
            lane = self._lanes.get(channel)
            if lane is not None:
                await lane.acquire()
            try:
                if d.only_pending and not self._still_pending(d.session_id, d.request_id):
                    channel.report("skipped", d, h.notice, reason="question ended", attempts=d.attempts)
                    self._done(channel, h)
                    return
                d.attempts += 1
                got = await channel.attempt(d)
            finally:
                if lane is not None:
                    lane.release()
            if got.ok:
                channel.report("delivered", d, h.notice, got)
                self._note(channel, h.notice, d, SENT)
                self._done(channel, h)
                return
            if not got.retryable or d.attempts >= channel.retry.attempts:
                channel.report("failed", d, h.notice, got)
                self._note(channel, h.notice, d, FAILED, got.reason)
                self._done(channel, h)
                return
            delay = channel.retry.delay(d.attempts, got.retry_after)
            channel.report("retry", d, h.notice, got, retryIn=round(delay, 3))
            self._note(channel, h.notice, d, RETRYING, got.reason)

            def again() -> None:
                h.timers.discard(timer)
                self._spawn(h, self._run(channel, h, d))

            timer = asyncio.get_running_loop().call_later(delay, again)
            h.timers.add(timer)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # one delivery's bug never reaches another's, nor the ask
            channel.report("error", d, h.notice, reason=_internal(err))
            self._note(channel, h.notice, d, FAILED, _internal(err))
            self._done(channel, h)

    def _note(self, channel: Channel, notice: Notice, d: Delivery | None, state: State, reason: str | None = None) -> None:
        """Keep the outcome in the question's delivery status; an edit after
        its end is only logged (nothing lists an ended question)."""
        if notice.kind == ENDED:
            return
        recipient, attempts = (d.recipient, d.attempts) if d is not None else (None, 0)
        self.book.record(notice.req.request_id, channel.name, recipient, state, reason, attempts)

    def _done(self, channel: Channel, h: _Held) -> None:
        h.open -= 1
        if h.open <= 0:
            self._held[channel].discard(h)

    # ---- stop -------------------------------------------------------------

    async def stop(self, channel: Channel) -> None:
        """Stop ``channel``'s deliveries at once: what is not delivered is
        left undelivered (a claimed mail is not sent: at most once; a store
        keeps an undelivered webhook's question un-notified, so a restart
        sends it)."""
        self._stopped.add(channel)
        held = self._held.get(channel, set())
        tasks = [t for h in held for t in h.tasks]
        for h in held:
            for timer in h.timers:
                timer.cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        held.clear()

    async def aclose(self) -> None:
        """Stop every channel, and close what each holds open."""
        for channel in self.channels:
            await channel.aclose()
