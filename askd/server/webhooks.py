"""Which node sends a due webhook, and the record of a delivery.

Every node's schedule says when a question is due for a webhook; the node
that wins the store's claim sends it (on a local store, always this one),
and with ``only_offline`` not while the user has a tab on any node. A
delivery that succeeded is a ``Notified`` change, committed with the
clock's changes so that not even a restart sends it again.
"""

from __future__ import annotations

from collections.abc import Callable

from askd.core import Request
from askd.core.registry import Registry
from askd.core.changes import Notified
from askd.server.hub.commits import Commits
from askd.server.hub.connections import Connections
from askd.server.hub.tasks import Tasks
from askd.store import Store, StoreUnavailable


class Webhooks:
    def __init__(self, registry: Registry, store: Store, commits: Commits, connections: Connections, tasks: Tasks) -> None:
        self._registry, self._store, self._commits = registry, store, commits
        self._connections, self._tasks = connections, tasks
        # Takes each question to send, with its audience and those the
        # sending is about (after an escalation step, its new members):
        # askd.server.notify.Notifier.submit.
        self.sink: Callable[[Request, list[str], list[str]], object] | None = None

    def due(self, reqs: list[Request]) -> None:
        if self.sink is not None:
            for req in reqs:
                self._tasks.spawn(lambda req=req: self._send_once(req))

    async def _send_once(self, req: Request) -> None:
        try:
            won = await self._store.claim_notify(req)
        except StoreUnavailable:
            return  # no node can claim it now; the question stays on every tab
        if not won or self.sink is None:
            return
        policy = self._registry.notify_policy
        users, watched = self._registry.audiences.notify_users(req)
        if policy is not None and policy.only_offline and await self._connections.online_elsewhere(*watched):
            return  # a tab on another node: no webhook (claimed, so no node sends)
        self.sink(req, users, watched)

    def still_pending(self, session_id: str, request_id: str) -> bool:
        req = self._registry.get(session_id, request_id)
        return req is not None and req.pending

    def delivered(self, session_id: str, request_id: str) -> None:
        """A delivery succeeded: never send this question again."""
        self._commits.defer([Notified(session_id, request_id)])
