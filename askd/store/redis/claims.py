"""``store.claims`` on Redis: each key one ``SET NX PX`` (the first node's
wins), its lifetime counted on the store's clock (this node's, injected), so
Redis's own clock does not matter."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.store.redis.keys import CLAIMS, failed


class RedisClaims:
    def __init__(self, redis: aioredis.Redis, node: str, where: str, clock: Callable[[], float]) -> None:
        self._redis, self._node, self._where, self._now = redis, node, where, clock

    async def claim(self, key: str, until: float) -> bool:
        return key in await self.claim_all([key], until)

    async def claim_all(self, keys: Sequence[str], until: float) -> list[str]:
        """Of ``keys``, those this call is the first to claim (one round trip;
        each key's claim is atomic on its own)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return []
        # A claim already over still loses to a live one: kept a millisecond.
        ms = max(1, math.ceil((until - self._now()) * 1000))
        try:
            pipe = self._redis.pipeline(transaction=False)
            for key in wanted:
                pipe.set(CLAIMS + key, self._node, nx=True, px=ms)
            got = await pipe.execute()
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "refused a write", err) from None
        return [key for key, ok in zip(wanted, got) if ok]
