"""What the admin API changes of a user's away (spec R): a start (or a
change), an end, a read. Each goes through the store as a change the core
applies (``AwaySet``, ``AwayEnded``), so it holds on every node and across
restarts; its end at ``until`` is the core's own deadline."""

from __future__ import annotations

from collections.abc import Iterable

from askd.core import NotFound
from askd.core.away import Away
from askd.core.registry import Registry
from askd.server.hub.commits import Commits
from askd.store import Store


class AwayOps:
    def __init__(self, registry: Registry, store: Store, commits: Commits) -> None:
        self._registry, self._store, self._commits = registry, store, commits

    async def set_away(self, user: str, until: float, delegates: Iterable[str]) -> Away:
        """The user is away until ``until`` (the clock's seconds), their
        questions also going to ``delegates``; raises ``InvalidRequest``
        for an ``until`` past or delegates the core refuses."""
        await self._store.catch_up()  # the groups as the cluster holds them
        change = self._registry.prepare_away(user, until, delegates)
        await self._commits.commit([change])  # flushed once stored
        return Away(change.until, change.delegates)

    async def end_away(self, user: str) -> None:
        """End the user's away; raises :class:`NotFound` when they are not
        away (or another node ended it first)."""
        await self._store.catch_up()
        change = self._registry.prepare_back(user)
        if not await self._commits.commit([change]):
            raise NotFound(f"{user} is not away")

    async def away(self, user: str) -> Away | None:
        """The user's away as the cluster holds it now (None: not away)."""
        await self._store.catch_up()
        return self._registry.away(user)
