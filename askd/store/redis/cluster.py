"""``store.cluster`` on Redis: every node's connections (``presence.py``),
and orders every node carries out, sent on the stream of changes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.core import Connection
from askd.protocol import codec
from askd.store.redis.keys import STREAM, STREAM_MAXLEN, failed
from askd.store.redis.presence import Presence


class RedisCluster:
    def __init__(self, redis: aioredis.Redis, where: str, presence: Presence, timeout: float) -> None:
        self._redis, self._where, self.presence, self._timeout = redis, where, presence, timeout

    def present(self, conn_id: str, conn: Connection | None) -> None:
        self.presence.put(conn_id, conn.describe() if conn is not None else None)

    def presence_written(self) -> Awaitable[None] | None:
        written = self.presence.written()
        return None if written is None else _at_most(written, self._timeout)

    async def connections(self) -> list[dict[str, Any]]:
        try:
            return await self.presence.listing()
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "does not answer", err) from None

    async def command(self, command: dict[str, Any]) -> None:
        """Send an order every node carries out on its own connections."""
        try:
            await self._redis.xadd(STREAM, {"cmd": codec.dumps(command)}, maxlen=STREAM_MAXLEN, approximate=True)
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "refused a write", err) from None


async def _at_most(written: Awaitable[None], seconds: float) -> None:
    """Wait for the presence write, no longer than a Redis call may take:
    with Redis down, an ack comes late, not never."""
    try:
        await asyncio.wait_for(written, seconds)
    except asyncio.TimeoutError:
        pass
