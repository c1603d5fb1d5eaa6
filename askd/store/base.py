"""The one store interface the daemon's hub drives, whichever store it is.

A store makes the core's changes durable and reports which took effect; it
never touches the registry (only the core restores what it loaded, only the
hub applies). It is a change log (``parts.ChangeLog``) with three small
parts: ``claims``, ``directory`` and ``cluster`` (``parts.py``). Two
capabilities say what it is: ``durable`` (it survives the process) and
``shared`` (several daemons use it as one askd).

The calls before the parts (``claim_notify``, ``claim_mails``,
``claim_once``, ``user_emails``, ``set_user_email``, ``present``,
``presence_written``, ``connections``, ``command``) are thin wrappers over
them (``compat.py``) while their callers move to the parts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from askd.core import Connection, Request
from askd.store.errors import StoreError, StoreUnavailable
from askd.store.parts import ChangeLog, Claims, Cluster, Directory, StoreListener

__all__ = ["Store", "StoreError", "StoreListener", "StoreUnavailable"]


class Store(ChangeLog, Protocol):
    claims: Claims
    directory: Directory
    cluster: Cluster

    # ---- the calls before the parts (compat.OldCalls) -------------------

    async def claim_notify(self, req: Request) -> bool:
        """Whether this node is the one to send the question's webhook at
        its current escalation step (a store one daemon owns: always)."""
        ...

    async def claim_mails(self, req: Request, step: int, users: Sequence[str]) -> list[str]:
        """Of ``users``, those whose mail about the question at escalation
        ``step`` this call is the first to claim (``parts.mail_key``)."""
        ...

    async def claim_once(self, key: str, expires_at: float) -> bool:
        """``claims.claim(key, expires_at)``: ``key`` is ``open:<jti>``."""
        ...

    async def user_emails(self, users: Sequence[str]) -> dict[str, str]: ...

    async def set_user_email(self, user: str, email: str | None) -> None: ...

    def present(self, conn_id: str, conn: Connection | None) -> None: ...

    def presence_written(self) -> Awaitable[None] | None: ...

    async def connections(self) -> list[dict[str, Any]]: ...

    async def command(self, command: dict[str, Any]) -> None: ...
