"""Where askd keeps its state in Redis, and what every part of the store shares."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.store.errors import StoreUnavailable

#: Every key carries the ``{askd}`` hash tag, so they all live in one slot.
P = "{askd}:"
#: The stream of every change that took effect, which every node follows.
STREAM = P + "events"
#: The revocation instant (askd token revoke-all); each node reads it at
#: start and hears of a new one through a command on the stream.
NOT_BEFORE = P + "not_before"
#: Once keys (``store.once_keys``): ``ONCE_KEYS + key``, each set NX with its
#: expiry. The prefix is the one they always had (``once:``), so a key taken
#: before an upgrade stays taken.
ONCE_KEYS = P + "once:"
#: Users' e-mail addresses (a hash: user id -> address), read when mailing;
#: every other user setting has its own hash (``user_setting``).
USER_EMAILS = P + "user_emails"
#: Chat posts (``store.posts``): ``POSTS + request id``, a hash of its posts;
#: ``POSTED``, the request ids that have some, by when the last may go.
POSTS = P + "posts:"
POSTED = P + "posted"
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


def user_setting(name: str) -> str:
    """The hash of one user setting (user id -> value)."""
    return USER_EMAILS if name == "email" else f"{P}user_settings:{name}"


async def failed(redis: aioredis.Redis, where: str, what: str, err: Exception) -> StoreUnavailable:
    """A call failed: drop the idle connections; the error to raise."""
    await drop_idle(redis)
    return StoreUnavailable(f"the store {where} {what}: {err}")
