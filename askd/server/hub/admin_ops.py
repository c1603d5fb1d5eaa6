"""The admin's door: what the admin API reads and changes beyond one
question. Listing and dropping connections, revoking tokens, groups, a
user's away with delegates, users' e-mail addresses and Slack ids. Each
change goes through the store, so it holds on every node and across
restarts; a group or an away is a change the core applies (``GroupSet``,
``GroupDeleted``, ``AwaySet``, ``AwayEnded``), an away's end at ``until``
the core's own deadline.

The admin handlers hold this part (``hub.admin``) and call it directly:
the hub makes it with the parts it needs and forwards nothing to it, so
an admin operation is one method here. What concerns one question (an
answer, a cancel) stays the hub's, for agents, people and the admin alike."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from askd.core import NotFound
from askd.core.away import Away
from askd.core.registry import Registry
from askd.core.selectors import Selector
from askd.server.hub.commits import Commits
from askd.server.hub.connections import Connections
from askd.server.hub.waiters import Waiters
from askd.store import Store, StoreError, StoreUnavailable
from askd.store.parts import EMAIL, SLACK


class AdminOps:
    def __init__(
        self,
        registry: Registry,
        store: Store,
        commits: Commits,
        connections: Connections,
        waiters: Waiters | None = None,
        on_revoked: Callable[[float], None] | None = None,
    ) -> None:
        self._registry, self._store, self._commits, self._connections = registry, store, commits, connections
        self._waiters = waiters
        # Takes each new revocation instant, from this node or (shared store) another.
        self._on_revoked = on_revoked

    # ---- connections and tokens --------------------------------------

    async def connections(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Every node's connections (of ``user_id`` only, when given)."""
        return await self._connections.listing(user_id)

    async def disconnect_matching(self, selector: dict[str, Any], mode: str) -> int:
        """Drop the connections ``selector`` names (``userId``, ``sessionId``,
        ``connectionId``, ``all``), on every node."""
        return await self._connections.disconnect_matching(Selector.from_wire(selector), mode)

    def on_command(self, command: dict[str, Any]) -> None:
        """An order sent to every node (the store's listener): a revocation
        for the daemon's sockets, anything else for the connections."""
        if "notBefore" in command:
            self._revoked(float(command["notBefore"]))
        else:
            self._connections.on_command(command)

    async def revoke_before(self, at: float) -> None:
        """Refuse tokens issued before ``at`` from now on, on every node:
        kept in the store (so a restart keeps it) and applied here at once;
        a shared store tells every node (this one again: no harm)."""
        await self._store.save_not_before(at)
        self._revoked(at)

    async def not_before(self) -> float:
        """The latest revocation instant the store keeps (0: none); raises
        :class:`StoreUnavailable` when the store cannot say."""
        try:
            return await self._store.load_not_before()
        except StoreError as err:  # Redis says so when it cannot be read
            raise StoreUnavailable(str(err)) from None

    def _revoked(self, at: float) -> None:
        """A revocation reached this node: agents waiting with a revoked
        token stop waiting (401), and the daemon closes its sockets."""
        if self._waiters is not None:
            self._waiters.revoke_before(at)
        if self._on_revoked is not None:
            self._on_revoked(at)

    # ---- groups -------------------------------------------------------

    async def groups(self) -> dict[str, tuple[str, ...]]:
        """Every group and its members, as the cluster holds them now."""
        await self._store.catch_up()
        return dict(self._registry.audiences.groups)

    async def set_group(self, group: str, members: list[str]) -> tuple[str, ...]:
        """Replace a group's members; returns them as stored."""
        change = self._registry.prepare_group_set(group, members)
        await self._commits.commit([change])  # flushed once stored
        return change.members

    async def delete_group(self, group: str) -> None:
        """Delete a group; raises :class:`NotFound` when there is none (or
        another node deleted it first)."""
        await self._store.catch_up()
        change = self._registry.prepare_group_delete(group)
        if not await self._commits.commit([change]):
            raise NotFound(f"no group {group}")

    # ---- a user's away, with delegates: their questions also go to them

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

    # ---- the directory: users' e-mail addresses and Slack ids ---------

    async def emails(self, users: Sequence[str]) -> dict[str, str]:
        """The e-mail addresses kept for those of ``users`` that have one."""
        return await self._store.directory.get(EMAIL, users)

    async def set_email(self, user: str, email: str | None) -> None:
        """Keep ``user``'s e-mail address (None: forget it)."""
        await self._store.directory.set(EMAIL, user, email)

    async def set_slack(self, user: str, slack_id: str | None) -> None:
        """Keep ``user``'s Slack user id (None: forget it)."""
        await self._store.directory.set(SLACK, user, slack_id)

    async def user(self, user: str) -> dict[str, Any]:
        """What the directory keeps of ``user`` (``GET /admin/v1/users/{U}``)."""
        directory = self._store.directory
        out = {"user": user, "email": (await directory.get(EMAIL, [user])).get(user), "slack": (await directory.get(SLACK, [user])).get(user)}
        away = await self.away(user)  # shown only while away
        return out if away is None else {**out, "away": away.wire(user)}
