"""Process-level restart and crash tests of the durable store (issue #10)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import httpx

from tests.support.askd_process import ServeProcess, Service
from tests.conftest import SECRET, RunningDaemon

HOW = ["kill", "term"]  # kill -9, or SIGTERM (the clean stop, which must exit 0)


@asynccontextmanager
async def running(tmp: Path, *args: str, **settings: str) -> AsyncIterator[RunningDaemon[Service]]:
    """``askd serve ARGS`` started as a ``Service`` (``settings``: more
    ``ASKD_*`` variables), with the helpers of ``RunningDaemon``; its tabs
    closed and its processes killed at the end, where none may have logged
    an error."""
    svc = Service(tmp / "state", *args, env={"ASKD_AUTH__SECRET": SECRET, **settings})
    try:
        await svc.start()
        async with httpx.AsyncClient(timeout=30) as http:
            d = RunningDaemon(svc, http)
            try:
                yield d
            finally:
                for c in d.clients:
                    await c.close()
        errors = [line for p in svc.processes for line in p.error_lines()]
        assert errors == [], "askd logged errors"
    finally:
        await svc.close()


async def go_down(svc: Service, how: str) -> None:
    if how == "kill":
        await svc.kill()
    else:
        assert await svc.stop() == 0


async def restart(svc: Service, how: str, down_until: float = 0.0) -> ServeProcess:
    """Stop or kill the daemon, stay down until ``down_until`` (epoch
    seconds) has passed, and start it again on the same ports."""
    await go_down(svc, how)
    await asyncio.sleep(max(0.0, down_until - time.time()))
    return await svc.start()


def epoch(iso: str) -> float:
    """An ``expiresAt`` / ``createdAt`` as epoch seconds."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
