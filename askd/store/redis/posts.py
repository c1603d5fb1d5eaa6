"""``store.posts`` on Redis: one hash per question (``POSTS + request id``:
key -> the post as JSON) expiring with its last post, and one sorted set of
the questions that have posts (by that instant), for a start's sweep."""

from __future__ import annotations

import math
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.protocol import codec
from askd.store.parts import Post
from askd.store.redis.keys import POSTS, POSTED, failed


def _post(raw: bytes) -> Post:
    return Post(**codec.loads(raw))


class RedisPosts:
    def __init__(self, redis: aioredis.Redis, where: str, clock: Callable[[], float]) -> None:
        self._redis, self._where, self._now = redis, where, clock

    async def keep(self, post: Post) -> None:
        key = POSTS + post.request_id
        value = codec.dumps(
            {"session_id": post.session_id, "request_id": post.request_id, "key": post.key, "channel": post.channel,
             "ts": post.ts, "body": post.body, "until": post.until}
        )
        try:
            async with self._redis.pipeline(transaction=True) as p:
                p.hset(key, post.key, value)
                # The hash lives as long as its latest post: a question's
                # posts are kept until its latest possible end, which only
                # moves later (no GT/NX flags: Redis before 7 has none).
                p.pexpireat(key, math.ceil(post.until * 1000))
                p.zadd(POSTED, {post.request_id: post.until})
                p.zremrangebyscore(POSTED, "-inf", self._now())
                await p.execute()
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "refused a write", err) from None

    async def of(self, request_id: str) -> list[Post]:
        try:
            got = await self._redis.hvals(POSTS + request_id)
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "does not answer", err) from None
        now = self._now()
        return sorted((p for p in map(_post, got) if p.until > now), key=lambda p: p.key)

    async def done(self, request_id: str, key: str) -> None:
        try:
            await self._redis.hdel(POSTS + request_id, key)
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "refused a write", err) from None

    async def every(self) -> list[Post]:
        try:
            rids = [r.decode() for r in await self._redis.zrangebyscore(POSTED, self._now(), "+inf")]
            out: list[Post] = []
            for rid in rids:
                out.extend(await self.of(rid))
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "does not answer", err) from None
        return out
