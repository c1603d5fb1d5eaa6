"""Agents waiting on a question (long-polls, ``?wait=``): woken when it
ends, when their wait runs out, when they hang up, or failed on stop."""

from __future__ import annotations

import asyncio

from askd.core import Request


class ShuttingDown(Exception):
    """The daemon is stopping; waiting agents get a 503."""


class Waiters:
    def __init__(self) -> None:
        self._by_request: dict[str, list[asyncio.Future[None]]] = {}

    async def wait(self, req: Request, timeout: float, abandon: asyncio.Future[None] | None = None) -> Request:
        """Wait until ``req`` ends or ``timeout`` passes (or ``abandon`` is
        done: the agent hung up). Raises :class:`ShuttingDown` on stop."""
        if not req.pending or timeout <= 0:
            return req
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        waiters = self._by_request.setdefault(req.request_id, [])
        waiters.append(fut)
        # One future for every way a wait ends (the question's end, the
        # timeout, the agent hanging up, a stop): one wake-up, no extra task.
        timer = loop.call_later(timeout, _wake, fut)
        hung_up = lambda _: _wake(fut)  # noqa: E731
        if abandon is not None:
            abandon.add_done_callback(hung_up)
        try:
            await fut
        except Exception:  # fail_all()
            raise ShuttingDown() from None
        finally:
            timer.cancel()
            if abandon is not None:
                abandon.remove_done_callback(hung_up)
            if fut in waiters:
                waiters.remove(fut)
                if not waiters:
                    self._by_request.pop(req.request_id, None)
        return req

    def wake(self, request_id: str) -> None:
        """The question ended: every agent waiting on it returns."""
        for fut in self._by_request.pop(request_id, ()):
            _wake(fut)

    def waiting_on(self, request_id: str) -> int:
        return len(self._by_request.get(request_id, ()))

    def count(self) -> int:
        return sum(len(w) for w in self._by_request.values())

    def fail_all(self) -> None:
        for waiters in self._by_request.values():
            for fut in waiters:
                if not fut.done():
                    fut.set_exception(ShuttingDown())


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
