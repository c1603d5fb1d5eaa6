"""The store's calls from before its parts (issue 31), each a thin wrapper
over ``claims``, ``directory`` or ``cluster``. Remove a wrapper once
nothing calls it."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from askd.core import Connection, Request
from askd.store.parts import EMAIL, Claims, Cluster, Directory, mail_key, notify_key

#: How long past a question's last possible deadline its claims are kept.
CLAIM_SLACK_SECONDS = 60.0


def claimed_until(req: Request) -> float:
    """Until when a claim about ``req`` is kept: past the latest instant it
    could still be pending (every extension taken), with a minute to spare."""
    return req.expires_at + req.max_extension + CLAIM_SLACK_SECONDS


class OldCalls:
    shared: bool
    claims: Claims
    directory: Directory
    cluster: Cluster

    async def claim_notify(self, req: Request) -> bool:
        # A store one daemon owns: this node sends every webhook, and sends
        # it again after a restart (the claim is the cluster's, not a record).
        if not self.shared:
            return True
        return await self.claims.claim(notify_key(req.request_id, req.escalations), claimed_until(req))

    async def claim_mails(self, req: Request, step: int, users: Sequence[str]) -> list[str]:
        wanted = list(dict.fromkeys(users))
        keys = [mail_key(req.request_id, step, user) for user in wanted]
        won = set(await self.claims.claim_all(keys, claimed_until(req)))  # type: ignore[attr-defined]
        return [user for user, key in zip(wanted, keys) if key in won]

    async def claim_once(self, key: str, expires_at: float) -> bool:
        return await self.claims.claim(key, expires_at)

    async def user_emails(self, users: Sequence[str]) -> dict[str, str]:
        return await self.directory.get(EMAIL, users)

    async def set_user_email(self, user: str, email: str | None) -> None:
        await self.directory.set(EMAIL, user, email)

    def present(self, conn_id: str, conn: Connection | None) -> None:
        self.cluster.present(conn_id, conn)

    def presence_written(self) -> Awaitable[None] | None:
        return self.cluster.presence_written()

    async def connections(self) -> list[dict[str, Any]]:
        return await self.cluster.connections()

    async def command(self, command: dict[str, Any]) -> None:
        await self.cluster.command(command)
