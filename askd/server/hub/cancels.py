"""Cancelling a session's questions, by its agent or by the admin: who did
it and through what go into the change itself (``Ended.actor`` and
``actor_via``), so the audit trail writes what the change says."""

from __future__ import annotations

from askd.core.registry import Registry
from askd.server.hub.commits import Commits
from askd.server.logs import get_logger
from askd.store import Store

log = get_logger("askd.hub")

VIAS = ("agent", "admin")


class Cancels:
    def __init__(self, registry: Registry, store: Store, commits: Commits) -> None:
        self._registry, self._store, self._commits = registry, store, commits

    async def cancel_session(self, session_id: str, by: str | None, via: str) -> int:
        """End the session's pending questions (and its sub-sessions') as
        ``cancelled``; how many. ``via`` ``agent``: ``by`` is the agent
        token's sub, which must reach the session; ``admin``: the admin
        token's sub, which reaches every session."""
        if via not in VIAS:
            raise ValueError(f"via is one of {VIAS}, not {via!r}")
        # On a shared store, questions of the session (or of a sub-session)
        # asked on another node a moment ago are cancelled too.
        await self._store.catch_up()
        changes = self._registry.prepare_cancel(session_id, by if via == "agent" else None)
        for change in changes:
            change.actor, change.actor_via = by, via
        n = await self._commits.commit(list(changes)) if changes else 0  # flushed once stored
        log.info("session.cancelled", sessionId=session_id, cancelled=n, via=via)
        return n
