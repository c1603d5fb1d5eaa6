"""Agents waiting on a question (long-polls, ``?wait=``): woken when it
ends, when their wait runs out, when they hang up, failed on stop, or
failed when ``askd token revoke-all`` revokes the token they waited with."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from askd.core import Request


class ShuttingDown(Exception):
    """The daemon is stopping; waiting agents get a 503."""


class Revoked(Exception):
    """The token the agent waits with was revoked; it gets a 401."""


@dataclass(eq=False, slots=True)
class _Wait:
    fut: asyncio.Future[None]
    issued_at: float  # the waiting token's iat (0 without one): revoke_before() ends it


class Waiters:
    def __init__(self) -> None:
        self._by_request: dict[str, list[_Wait]] = {}

    async def wait(
        self, req: Request, timeout: float, abandon: asyncio.Future[None] | None = None, issued_at: float | None = None
    ) -> Request:
        """Wait until ``req`` ends or ``timeout`` passes (or ``abandon`` is
        done: the agent hung up). Raises :class:`ShuttingDown` on stop and
        :class:`Revoked` once tokens issued before ``issued_at`` are revoked."""
        if not req.pending or timeout <= 0:
            return req
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        entry = _Wait(fut, issued_at or 0.0)
        waiters = self._by_request.setdefault(req.request_id, [])
        waiters.append(entry)
        # One future for every way a wait ends (the question's end, the
        # timeout, the agent hanging up, a stop, a revocation): one wake-up, no extra task.
        timer = loop.call_later(timeout, _wake, fut)
        hung_up = lambda _: _wake(fut)  # noqa: E731
        if abandon is not None:
            abandon.add_done_callback(hung_up)
        try:
            await fut
        except Revoked:
            raise
        except Exception:  # fail_all()
            raise ShuttingDown() from None
        finally:
            timer.cancel()
            if abandon is not None:
                abandon.remove_done_callback(hung_up)
            if entry in waiters:
                waiters.remove(entry)
                if not waiters:
                    self._by_request.pop(req.request_id, None)
        return req

    def wake(self, request_id: str) -> None:
        """The question ended: every agent waiting on it returns."""
        for entry in self._by_request.pop(request_id, ()):
            _wake(entry.fut)

    def revoke_before(self, at: float) -> int:
        """Tokens issued before ``at`` were revoked: every wait begun with
        one ends with :class:`Revoked` (the result is not the holder's any
        more). Returns how many."""
        ended = 0
        for waiters in self._by_request.values():
            for entry in waiters:
                if entry.issued_at < at and not entry.fut.done():
                    entry.fut.set_exception(Revoked())
                    ended += 1
        return ended

    def waiting_on(self, request_id: str) -> int:
        return len(self._by_request.get(request_id, ()))

    def count(self) -> int:
        return sum(len(w) for w in self._by_request.values())

    def fail_all(self) -> None:
        for waiters in self._by_request.values():
            for entry in waiters:
                if not entry.fut.done():
                    entry.fut.set_exception(ShuttingDown())


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
