"""``store.directory`` on Redis: one hash per user setting (user id -> value)."""

from __future__ import annotations

from collections.abc import Sequence

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.store.parts import check_setting
from askd.store.redis.keys import failed, user_setting


class RedisDirectory:
    def __init__(self, redis: aioredis.Redis, where: str) -> None:
        self._redis, self._where = redis, where

    async def get(self, setting: str, users: Sequence[str]) -> dict[str, str]:
        key = user_setting(check_setting(setting))
        wanted = list(dict.fromkeys(users))
        if not wanted:
            return {}
        try:
            got = await self._redis.hmget(key, wanted)
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "does not answer", err) from None
        return {user: value.decode() for user, value in zip(wanted, got) if value is not None}

    async def set(self, setting: str, user: str, value: str | None) -> None:
        key = user_setting(check_setting(setting))
        try:
            if value is None:
                await self._redis.hdel(key, user)
            else:
                await self._redis.hset(key, user, value)
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "refused a write", err) from None
