"""``store.once_keys`` on Redis: each key one ``SET NX PX`` (the first node's
wins), its lifetime counted on the store's clock (this node's, injected), so
Redis's own clock does not matter."""

from __future__ import annotations

import math
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.store.redis.keys import ONCE_KEYS, failed


class RedisOnceKeys:
    def __init__(self, redis: aioredis.Redis, node: str, where: str, clock: Callable[[], float]) -> None:
        self._redis, self._node, self._where, self._now = redis, node, where, clock

    async def take(self, key: str, until: float) -> bool:
        # A key already over still loses to a live one: kept a millisecond.
        ms = max(1, math.ceil((until - self._now()) * 1000))
        try:
            got = await self._redis.set(ONCE_KEYS + key, self._node, nx=True, px=ms)
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "refused a write", err) from None
        return bool(got)
