"""Where askd keeps its state in Redis, and what every part of the store shares."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.exceptions import RedisError

#: Every key carries the ``{askd}`` hash tag, so they all live in one slot.
P = "{askd}:"
#: The stream of every change that took effect, which every node follows.
STREAM = P + "events"
#: The revocation instant (askd token revoke-all); each node reads it at
#: start and hears of a new one through a command on the stream.
NOT_BEFORE = P + "not_before"
#: Once-only claims (``claim_once``): ``ONCE + key``, each set NX with its expiry.
ONCE = P + "once:"
#: Users' e-mail addresses (a hash: user id -> address), read when mailing.
USER_EMAILS = P + "user_emails"
#: The stream keeps this many entries (about); a node that falls further
#: behind than this reloads (docs/scaling.md).
STREAM_MAXLEN = 1_000_000
#: After a failed call, how long a background loop waits to try again.
RETRY_SECONDS = 0.5


async def drop_idle(redis: aioredis.Redis) -> None:
    """A call failed: close the connections idle in the pool. After Redis
    restarts, each connection that sat idle through the outage would fail
    its next command once (a 503 though Redis is back); closed, it
    reconnects instead."""
    try:
        await redis.connection_pool.disconnect(inuse_connections=False)
    except (RedisError, OSError):
        pass
