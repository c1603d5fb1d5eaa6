"""From the core's schedule to the channels: which questions are notified.

The core reports each question due for a notification (``due``: after
``notify.after_seconds``, at each escalation step, not while its audience
has a tab on this node). With ``only_offline`` no notice goes out while one
of the people it is about has a tab on another node either; else every
channel gets the notice (``sink``: the delivery worker's ``notify``). Which
node sends each delivery is the worker's claim; a delivery that succeeded
is a ``Notified`` change, committed with the clock's changes so that not
even a restart sends it again. A reminder (``remind``, askd.core.reminders)
is for those of the audience with no tab on any node, whatever
``only_offline`` says; its claims (one per reminder) keep it to one node.
What became of each delivery is kept in ``deliveries`` (askd.channels.status)
while its question is pending.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from askd.channels.channel import ENDED, REMINDER, Notice
from askd.channels.status import DeliveryBook
from askd.core.changes import Change, Notified

if TYPE_CHECKING:
    from askd.core import Request
    from askd.core.registry import Registry


class Pipeline:
    def __init__(
        self,
        registry: Registry,
        *,
        online_elsewhere: Callable[..., Awaitable[bool]],
        defer: Callable[[list[Change]], None],
        spawn: Callable[[Callable[[], Coroutine[Any, Any, None]]], None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._registry = registry
        self.deliveries = DeliveryBook(clock)  # what the delivery worker made of each question's notices
        self._online_elsewhere = online_elsewhere  # Connections.online_elsewhere(*users)
        self._defer = defer  # the commit path's: written with the next commit
        self._spawn = spawn
        # Takes each notice to every channel started (askd.server.channels_setup):
        # the delivery worker's ``notify``; None without channels.
        self.sink: Callable[[Notice], object] | None = None

    def due(self, reqs: list[Request]) -> None:
        if self.sink is not None:
            for req in reqs:
                self._spawn(lambda req=req: self._notice(req))

    async def _notice(self, req: Request) -> None:
        policy = self._registry.notify_policy
        users, watched = self._registry.audiences.notify_users(req)
        if policy is not None and policy.only_offline and await self._online_elsewhere(*watched):
            return  # a tab on another node: no notice
        if self.sink is not None:
            self.sink(Notice(req, users, watched))

    def ended(self, reqs: list[Request]) -> None:
        """Questions that ended, as this node applied their end (its own or,
        on a shared store, another node's): every channel hears of each
        (Slack edits its messages; a claim has one node do it)."""
        for req in reqs:
            self.deliveries.forget(req.request_id)
            if self.sink is not None:
                self.sink(Notice(req, [], [], ENDED))

    def remind(self, reminders: list[tuple[Request, int, list[str], list[str]]]) -> None:
        """Reminders due (``Registry.drain_reminders``): each to every channel, for
        its audience members with no tab on this node."""
        if self.sink is not None:
            for req, k, users, offline in reminders:
                self._spawn(lambda req=req, k=k, users=users, offline=offline: self._reminder(req, k, users, offline))

    async def _reminder(self, req: Request, k: int, users: list[str], offline: list[str]) -> None:
        offline = [u for u in offline if not self._registry.connections(u)]  # a tab opened here since
        if await self._online_elsewhere(*offline):  # one of them has a tab on another node: who?
            offline = [u for u in offline if not await self._online_elsewhere(u)]
        if offline and self.sink is not None and req.pending:
            self.sink(Notice(req, users, offline, kind=REMINDER, reminder=k))

    def still_pending(self, session_id: str, request_id: str) -> bool:
        req = self._registry.get(session_id, request_id)
        return req is not None and req.pending

    def delivered(self, session_id: str, request_id: str) -> None:
        """A webhook delivery succeeded: never send this question again."""
        self._defer([Notified(session_id, request_id)])
