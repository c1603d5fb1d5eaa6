"""Waiting for a condition in tests: poll briefly, fail loudly after a bound."""

from __future__ import annotations

from typing import Any

from tests.conftest import RunningDaemon, eventually

__all__ = ["eventually", "pending_on_daemon"]


async def pending_on_daemon(daemon: RunningDaemon, count: int = 1) -> list[dict[str, Any]]:
    """Wait until the daemon holds at least ``count`` pending questions; return them."""

    async def pending() -> list[dict[str, Any]] | None:
        items = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
        return items if len(items) >= count else None

    return await eventually(pending, what=f"{count} pending question(s)")  # type: ignore[no-any-return]
