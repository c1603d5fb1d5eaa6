"""Waiting for a condition in tests: poll briefly, fail loudly after a bound."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from tests.conftest import FRAME_TIMEOUT, RunningDaemon


async def eventually(check: Callable[[], Any | Awaitable[Any]], timeout: float = FRAME_TIMEOUT, what: str = "") -> Any:
    """Return the first truthy value of ``check()``; AssertionError after ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.02)


async def pending_on_daemon(daemon: RunningDaemon, count: int = 1) -> list[dict[str, Any]]:
    """Wait until the daemon holds at least ``count`` pending questions; return them."""

    async def pending() -> list[dict[str, Any]] | None:
        items = (await daemon.admin("GET", "/admin/v1/pending")).json()["pending"]
        return items if len(items) >= count else None

    return await eventually(pending, what=f"{count} pending question(s)")  # type: ignore[no-any-return]
