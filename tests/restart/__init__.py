"""Process-level restart and crash tests of the durable store (issue #10)."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from pathlib import Path

from tests.askd_process import ServeProcess, Service
from tests.conftest import SECRET

HOW = ["kill", "term"]  # kill -9, or SIGTERM (the clean stop, which must exit 0)


async def service(tmp: Path, *args: str, **settings: str) -> Service:
    """A started ``askd serve ARGS`` whose tokens ``RunningDaemon`` can sign
    (``settings``: more ``ASKD_*`` variables)."""
    svc = Service(tmp / "state", *args, env={"ASKD_AUTH__SECRET": SECRET, **settings})
    await svc.start()
    return svc


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
