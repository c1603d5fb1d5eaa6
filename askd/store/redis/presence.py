"""Who is connected where, for cluster-wide listings (``Presence``)."""

from __future__ import annotations

import asyncio
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.protocol import codec
from askd.store.redis.keys import P, RETRY_SECONDS, drop_idle


# KEYS: the node's heartbeat key, the set of nodes. ARGV: the TTL in ms, the
# node. Returns whether the heartbeat was still there.
BEAT = """
local was = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
return was
"""

# KEYS: a node's heartbeat key, its connections, the set of nodes. ARGV: the
# node. Forgets the node only if its heartbeat is still gone (it may have
# beaten since the listing looked).
FORGET_NODE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
return 1
"""


class Presence:
    """Who is connected where, for cluster-wide listings: each node keeps its
    connections in one hash and a heartbeat key; a node whose heartbeat
    expired (``kill -9``) leaves the listings within ``ttl`` seconds.

    A live node's heartbeat can run out too (Redis down longer than
    ``ttl``, or restarted without its data): another node's listing then
    forgets its connections. The node sees at its next beat that its
    heartbeat was gone and writes all its connections again."""

    def __init__(self, redis: aioredis.Redis, node: str, ttl: float) -> None:
        self._redis, self.node, self.ttl = redis, node, ttl
        self._conns = f"{P}conns:{node}"
        self._alive = f"{P}node:{node}"
        self._queue: list[tuple[str, str | None]] = []  # (connection id, JSON or None: left)
        self._current: dict[str, str] = {}  # every connection as it is now (what a rewrite writes)
        self._rewrite = False  # write them all (the heartbeat had run out), not the queue
        self._wake = asyncio.Event()
        # Changes put so far, and how many of them are written: ``written``
        # waits for the count it saw (an ack the listings must agree with).
        self._put = self._done = 0
        self._waiting: list[tuple[int, asyncio.Future[None]]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._beat_script = redis.register_script(BEAT)
        self._forget_script = redis.register_script(FORGET_NODE)

    async def start(self) -> None:
        # A node restarted under the same id: its old connections are gone.
        await self._redis.delete(self._conns)
        await self._beat_once()
        self._tasks = [asyncio.ensure_future(self._beat()), asyncio.ensure_future(self._write())]

    def put(self, conn_id: str, description: dict[str, Any] | None) -> None:
        """Record a connection as it is now (None: it left). Written in
        order, in batches, off the hot path."""
        desc = codec.dumps(description).decode() if description is not None else None
        if desc is None:
            self._current.pop(conn_id, None)
        else:
            self._current[conn_id] = desc
        self._queue.append((conn_id, desc))
        self._put += 1
        self._wake.set()

    def written(self) -> asyncio.Future[None] | None:
        """None when every change put so far is written; else a future done
        once it is (a later batch's write counts too: writes keep order)."""
        if self._done >= self._put:
            return None
        fut = asyncio.get_running_loop().create_future()
        self._waiting.append((self._put, fut))
        return fut

    def _wrote(self, upto: int) -> None:
        self._done = max(self._done, upto)
        still = []
        for want, fut in self._waiting:
            if want <= self._done:
                if not fut.done():  # a waiter that gave up is cancelled
                    fut.set_result(None)
            elif not fut.done():
                still.append((want, fut))
        self._waiting = still

    async def _write(self) -> None:
        """The one task that writes this node's connections, so that writes
        land in the order they were made."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._queue, upto = self._queue, [], self._put
            rewrite, self._rewrite = self._rewrite, False
            pipe = self._redis.pipeline(transaction=rewrite)
            if rewrite:  # everything as it is now: what the batch says, and the rest
                pipe.delete(self._conns)
                if self._current:
                    pipe.hset(self._conns, mapping=dict(self._current))
            for conn_id, desc in batch if not rewrite else ():
                if desc is None:
                    pipe.hdel(self._conns, conn_id)
                else:
                    pipe.hset(self._conns, conn_id, desc)
            try:
                await pipe.execute()
            except (RedisError, OSError):
                await drop_idle(self._redis)
                self._queue = batch + self._queue  # keep the order; try again
                self._rewrite = self._rewrite or rewrite
                await asyncio.sleep(RETRY_SECONDS)
                self._wake.set()
            else:
                self._wrote(upto)

    async def _beat_once(self) -> None:
        was = await self._beat_script(keys=[self._alive, f"{P}nodes"], args=[int(self.ttl * 1000), self.node])
        if not was and self._current:
            # Our heartbeat had run out: a listing may have forgotten our
            # connections. The writer writes them all again.
            self._rewrite = True
            self._wake.set()

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                await self._beat_once()
            except (RedisError, OSError):
                await drop_idle(self._redis)  # the follower reports the lost link

    async def listing(self) -> list[dict[str, Any]]:
        """Every live node's connections, each with its ``node``."""
        r = self._redis
        nodes = sorted(n.decode() for n in await r.smembers(f"{P}nodes"))
        pipe = r.pipeline(transaction=False)
        for node in nodes:
            pipe.exists(f"{P}node:{node}")
            pipe.hgetall(f"{P}conns:{node}")
        got = await pipe.execute()
        out: list[dict[str, Any]] = []
        for node, alive, conns in zip(nodes, got[::2], got[1::2]):
            if not alive:  # its heartbeat ran out: forget its connections
                await self._forget_script(keys=[f"{P}node:{node}", f"{P}conns:{node}", f"{P}nodes"], args=[node])
                continue
            out.extend(dict(codec.loads(v), node=node) for v in conns.values())
        return out

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        self._wrote(self._put)  # nobody waits on a node that leaves the listings
        try:
            pipe = self._redis.pipeline(transaction=False)
            pipe.delete(self._conns, self._alive)
            pipe.srem(f"{P}nodes", self.node)
            await pipe.execute()
        except (RedisError, OSError):
            pass
