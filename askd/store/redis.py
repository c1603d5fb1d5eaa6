"""``store = "redis://..."``: state shared by every daemon pointed at it.

Every change is one Lua script run (atomic in Redis) that checks the status
first: of two nodes racing to answer or to time out one question, the first
ends it and the second is told it no longer applies. A change that took
effect is appended to one Redis Stream in the same step. Every node follows
that stream (``XREAD``) and applies what it reads, its own changes included,
in the stream's order: so each node's registry is a replica of the cluster's
state, each node pushes to its own sockets and wakes its own agents, and a
user's events arrive in the order the cluster decided them. A node that lost
its link reads on from the last entry it applied (docs/decisions.md says why
a stream and not pub/sub).

Keys all carry the ``{askd}`` hash tag, so they live in one slot.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.core import Connection, Registry, Request
from askd.core.changes import Asked, Change, Ended, Forgot, Notified
from askd.core.events import encode
from askd.core.lifecycle import Trigger
from askd.store.base import StoreError, StoreListener, StoreUnavailable
from askd.store.rows import request_from_row

log = logging.getLogger("askd.store.redis")

P = "{askd}:"
STREAM = P + "events"
# The stream keeps this many entries (about); a node that falls further
# behind than this reloads (docs/scaling.md).
STREAM_MAXLEN = 1_000_000
# How long a commit waits for its own entry to come back through the stream.
REACH_SECONDS = 10.0
READ_BLOCK_MS = 5_000
RETRY_SECONDS = 0.5
# A node's connections for commands (the follower has its own). A call
# beyond them waits for a free one, up to the socket timeout, instead of
# failing: redis-py's default pool (capped at 100 connections in redis-py 8;
# 4.x had no cap) raised "Too many connections", which askd took for Redis
# being down.
POOL_SIZE = 100
TIMEOUT_SECONDS = 5

# KEYS: none (one hash slot, named in ARGV). ARGV[1] the node, ARGV[2..] the
# changes as JSON. Returns {flag per change (1 took effect, 0 did not), the
# stream id up to which the caller must have applied the stream (its last
# entry, or when none took effect the stream's newest), or ""}.
COMMIT = """
local node = ARGV[1]
local P = '{askd}:'
local out = {}
local last = ''
local function session(sid, owner)
  local sk = P .. 's:' .. sid
  if redis.call('EXISTS', sk) == 0 then
    redis.call('HSET', sk, 'owner', owner, 'n', 0, 'kids', 0, 'seq', redis.call('INCR', P .. 'seq'))
    redis.call('SADD', P .. 'sessions', sid)
  end
  return sk
end
for i = 2, #ARGV do
  local c = cjson.decode(ARGV[i])
  local ok = 0
  local rk = P .. 'r:' .. c.rid
  if c.t == 'a' then
    local sk = P .. 's:' .. c.sid
    local owner = redis.call('HGET', sk, 'owner')
    local dup = c.key and redis.call('EXISTS', P .. 'k:' .. c.sid .. ':' .. c.key) == 1
    if (not owner or owner == c.uid) and not dup and redis.call('EXISTS', rk) == 0 then
      session(c.sid, c.uid)
      if c.parent and not redis.call('HGET', sk, 'parent') then
        session(c.parent, c.uid)
        redis.call('HSET', sk, 'parent', c.parent)
        redis.call('HINCRBY', P .. 's:' .. c.parent, 'kids', 1)
      end
      redis.call('HINCRBY', sk, 'n', 1)
      local seq = redis.call('INCR', P .. 'seq')
      redis.call('HSET', rk, 'sid', c.sid, 'uid', c.uid, 'created', c.created, 'expires', c.expires,
        'frame', c.frame, 'status', 'pending', 'seq', seq, 'notified', 0)
      if c.key then
        redis.call('HSET', rk, 'key', c.key)
        redis.call('SET', P .. 'k:' .. c.sid .. ':' .. c.key, c.rid)
      end
      redis.call('SADD', P .. 'requests', c.rid)
      ok = 1
    end
  elseif c.t == 'e' then
    if redis.call('HGET', rk, 'status') == 'pending' then
      redis.call('HSET', rk, 'status', c.status, 'ended', c.ended)
      redis.call('HDEL', rk, 'frame')
      if c.answers then redis.call('HSET', rk, 'answers', c.answers) end
      if c.error then redis.call('HSET', rk, 'error', c.error) end
      ok = 1
    end
  elseif c.t == 'n' then
    if redis.call('HGET', rk, 'status') == 'pending' then
      redis.call('HSET', rk, 'notified', 1)
      ok = 1
    end
  elseif c.t == 'f' then
    local status = redis.call('HGET', rk, 'status')
    if status and status ~= 'pending' then
      local key = redis.call('HGET', rk, 'key')
      if key then redis.call('DEL', P .. 'k:' .. c.sid .. ':' .. key) end
      redis.call('DEL', rk)
      redis.call('SREM', P .. 'requests', c.rid)
      local sid = c.sid
      redis.call('HINCRBY', P .. 's:' .. sid, 'n', -1)
      -- forget sessions that hold nothing, walking up, as the registry does
      while sid do
        local sk = P .. 's:' .. sid
        if tonumber(redis.call('HGET', sk, 'n') or '0') > 0 or tonumber(redis.call('HGET', sk, 'kids') or '0') > 0 then
          break
        end
        local parent = redis.call('HGET', sk, 'parent')
        redis.call('DEL', sk)
        redis.call('SREM', P .. 'sessions', sid)
        if parent then redis.call('HINCRBY', P .. 's:' .. parent, 'kids', -1) end
        sid = parent
      end
      ok = 1
    end
  end
  if ok == 1 then
    last = redis.call('XADD', P .. 'events', 'MAXLEN', '~', 1000000, '*', 'c', ARGV[i])
  end
  out[#out + 1] = ok
end
if last == '' then
  -- Nothing took effect: another node decided first. The caller waits
  -- until it has applied the stream up to here, then decides again.
  local top = redis.call('XREVRANGE', P .. 'events', '+', '-', 'COUNT', 1)
  if top[1] then last = top[1][1] end
end
out[#out + 1] = last
return out
"""


async def drop_idle(redis: aioredis.Redis) -> None:
    """A call failed: close the connections idle in the pool. After Redis
    restarts, each connection that sat idle through the outage would fail
    its next command once (a 503 though Redis is back); closed, it
    reconnects instead."""
    try:
        await redis.connection_pool.disconnect(inuse_connections=False)
    except (RedisError, OSError):
        pass


def _id(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


def to_json(change: Change, node: str, seq: int) -> str:
    """A change as the script and the stream carry it (no nulls: Lua's
    cjson turns them into a value that is true)."""
    if isinstance(change, Asked):
        req = change.request
        assert req.frame is not None
        out: dict[str, Any] = {"o": node, "q": seq, "sid": req.session_id}
        out.update(t="a", rid=req.request_id, uid=req.user_id, created=repr(req.created_at),
                   expires=repr(req.expires_at), frame=req.frame.decode())
        if req.idempotency_key is not None:
            out["key"] = req.idempotency_key
        if change.parent_session_id is not None:
            out["parent"] = change.parent_session_id
        return json.dumps(out, separators=(",", ":"))
    out = {"o": node, "q": seq, "sid": change.session_id}
    if isinstance(change, Ended):
        out.update(t="e", rid=change.request_id, trigger=change.trigger.value, status=change.status.value,
                   ended=repr(change.ended_at))
        if change.answers is not None:
            out["answers"] = encode(change.answers).decode()
        if change.error is not None:
            out["error"] = change.error
    elif isinstance(change, Notified):
        out.update(t="n", rid=change.request_id)
    else:
        out.update(t="f", rid=change.request_id)
    return json.dumps(out, separators=(",", ":"))


def from_json(data: dict[str, Any]) -> Change:
    t, sid, rid = data["t"], data["sid"], data["rid"]
    if t == "a":
        req = Request(rid, sid, data["uid"], float(data["created"]), float(data["expires"]),
                      idempotency_key=data.get("key"))
        req.frame = data["frame"].encode()
        return Asked(req, data.get("parent"))
    if t == "e":
        answers = json.loads(data["answers"]) if "answers" in data else None
        return Ended(sid, rid, Trigger(data["trigger"]), answers, data.get("error"), float(data["ended"]))
    if t == "n":
        return Notified(sid, rid)
    return Forgot(sid, rid)


class RedisStore:
    kind = "redis"
    durable = True
    shared = True

    def __init__(self, url: str, node_id: str, node_ttl: float = 30.0) -> None:
        self.url, self.node = url, node_id
        try:
            pool = aioredis.BlockingConnectionPool.from_url(
                url, max_connections=POOL_SIZE, timeout=TIMEOUT_SECONDS,
                socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS, health_check_interval=10,
            )
            self._redis = aioredis.Redis.from_pool(pool)
            # The follower blocks in XREAD: its own connection, no socket timeout shorter than the block.
            self._reader = aioredis.Redis.from_url(url, socket_timeout=READ_BLOCK_MS / 1000 + 5, socket_connect_timeout=5)
        except (ValueError, RedisError) as err:
            raise StoreError(f"the store {self.where} is not a usable Redis URL: {err}") from None
        self._script = self._redis.register_script(COMMIT)
        self._seq = itertools.count(1)
        self._mine: dict[int, Change] = {}  # our changes in flight, by their sequence number
        self._last = "0-0"  # the last stream entry applied
        self._waiting: list[tuple[tuple[int, int], asyncio.Future[None]]] = []
        self._follower: asyncio.Task[None] | None = None
        self._listener: StoreListener | None = None
        self._closed = False
        self.presence = Presence(self._redis, node_id, node_ttl)

    @property
    def where(self) -> str:
        """The URL without its password, for messages and logs."""
        head, at, tail = self.url.rpartition("@")
        return f"{head.split('://')[0]}://…@{tail}" if at else self.url

    def attach(self, listener: StoreListener) -> None:
        self._listener = listener

    @property
    def _to(self) -> StoreListener:
        assert self._listener is not None, "attach() first"
        return self._listener

    # ---- start: the snapshot, then the stream from where it was taken ----

    async def load(self, registry: Registry) -> int:
        try:
            return await self._load(registry)
        except (RedisError, OSError) as err:
            raise StoreError(f"cannot load the store {self.where}: {err}") from None

    async def _load(self, registry: Registry) -> int:
        r = self._redis
        newest = await r.xrevrange(STREAM, count=1)
        self._last = newest[0][0].decode() if newest else "0-0"
        sids = [s.decode() for s in await r.smembers(P + "sessions")]
        pipe = r.pipeline(transaction=False)
        for sid in sids:
            pipe.hgetall(P + "s:" + sid)
        sessions = [(sid, f) for sid, f in zip(sids, await pipe.execute()) if f]
        sessions.sort(key=lambda item: int(item[1].get(b"seq", 0)))  # the order they were made in
        for sid, fields in sessions:
            parent = fields.get(b"parent")
            registry.restore_session(sid, fields[b"owner"].decode(), parent.decode() if parent else None)
        rids = [x.decode() for x in await r.smembers(P + "requests")]
        rows: list[tuple[int, Request]] = []
        for start in range(0, len(rids), 1000):
            chunk = rids[start : start + 1000]
            pipe = r.pipeline(transaction=False)
            for rid in chunk:
                pipe.hgetall(P + "r:" + rid)
            for rid, f in zip(chunk, await pipe.execute()):
                if f:
                    rows.append((int(f[b"seq"]), self._request(rid, f)))
        rows.sort(key=lambda row: row[0])
        for _, req in rows:
            registry.restore(req)
        await self.presence.start()
        self._follower = asyncio.ensure_future(self._follow())
        return len(rows)

    @staticmethod
    def _request(rid: str, f: dict[bytes, bytes]) -> Request:
        key, error, ended = f.get(b"key"), f.get(b"error"), f.get(b"ended")
        return request_from_row(
            rid,
            f[b"sid"].decode(),
            f[b"uid"].decode(),
            float(f[b"created"]),
            float(f[b"expires"]),
            key.decode() if key else None,
            f.get(b"frame"),
            f[b"status"].decode(),
            f.get(b"answers"),
            error.decode() if error is not None else None,
            float(ended) if ended is not None else None,
            f.get(b"notified") == b"1",
        )

    # ---- the follower --------------------------------------------------

    async def _follow(self) -> None:
        """Read the stream on from the last entry applied, for ever; after a
        lost link, catch up from there (nothing lost, nothing repeated)."""
        failing = False
        while not self._closed:
            try:
                got = await self._reader.xread({STREAM: self._last}, count=1000, block=READ_BLOCK_MS)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as err:
                if not failing:
                    self._to.on_failed(StoreUnavailable(f"lost the store {self.where}: {err}"))
                failing = True
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if failing:
                failing = False
                self._to.on_ok()
            for _, entries in got or ():
                batch: list[Change] = []
                for entry_id, fields in entries:
                    self._last = entry_id.decode()
                    if b"cmd" in fields:  # an admin's order to every node
                        self._to.on_changes(batch)
                        batch = []
                        self._to.on_command(json.loads(fields[b"cmd"]))
                        continue
                    data = json.loads(fields[b"c"])
                    own = self._mine.pop(data["q"], None) if data["o"] == self.node else None
                    batch.append(own if own is not None else from_json(data))
                try:
                    self._to.on_changes(batch)
                except Exception:  # a bug must not stop the node following the cluster
                    log.exception("applying the stream's changes failed")
                finally:
                    self._release()

    def _release(self) -> None:
        """Wake commits whose entries the follower has now applied."""
        upto = _id(self._last)
        still = []
        for at, fut in self._waiting:
            if at <= upto:
                if not fut.done():
                    fut.set_result(None)
            else:
                still.append((at, fut))
        self._waiting = still

    async def _reached(self, entry_id: str) -> None:
        if _id(entry_id) <= _id(self._last):
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((_id(entry_id), fut))
        try:
            await asyncio.wait_for(fut, REACH_SECONDS)
        except asyncio.TimeoutError:
            raise StoreUnavailable(f"the store {self.where} took the change but its stream did not come back") from None

    # ---- commits -------------------------------------------------------

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        if not changes:
            return []
        seqs = [next(self._seq) for _ in changes]
        for seq, change in zip(seqs, changes):
            self._mine[seq] = change
        try:
            flags = await self._script(args=[self.node, *(to_json(c, self.node, q) for c, q in zip(changes, seqs))])
        except (RedisError, OSError) as err:
            for seq in seqs:
                self._mine.pop(seq, None)
            raise await self._failed("refused a write", err) from None
        last = flags[-1].decode() if isinstance(flags[-1], bytes) else str(flags[-1])
        done = []
        for seq, change, flag in zip(seqs, changes, flags):
            if flag == 1:
                done.append(change)
            else:
                self._mine.pop(seq, None)
        if last:
            # The follower applied them, in the cluster's order; or, when a
            # change did not take effect, what another node did instead.
            await self._reached(last)
        return done

    async def claim_notify(self, req: Request) -> bool:
        """Whether this node is the one to send the question's webhook (the
        first to claim it; the claim lasts as long as the question could)."""
        ttl = max(1, int(req.expires_at - req.created_at) + 60)
        try:
            return bool(await self._redis.set(f"{P}notify:{req.request_id}", self.node, nx=True, ex=ttl))
        except (RedisError, OSError) as err:
            raise await self._failed("does not answer", err) from None

    async def catch_up(self) -> None:
        """Wait until the follower applied the stream's newest entry (one
        round trip, then the follower's own pace)."""
        try:
            newest = await self._redis.xrevrange(STREAM, count=1)
        except (RedisError, OSError) as err:
            raise await self._failed("does not answer", err) from None
        if newest:
            await self._reached(newest[0][0].decode())

    def present(self, conn_id: str, conn: Connection | None) -> None:
        self.presence.put(conn_id, conn.describe() if conn is not None else None)

    async def command(self, command: dict[str, Any]) -> None:
        """Send an order every node carries out on its own connections."""
        try:
            await self._redis.xadd(STREAM, {"cmd": json.dumps(command)}, maxlen=STREAM_MAXLEN, approximate=True)
        except (RedisError, OSError) as err:
            raise await self._failed("refused a write", err) from None

    async def connections(self) -> list[dict[str, Any]]:
        try:
            return await self.presence.listing()
        except (RedisError, OSError) as err:
            raise await self._failed("does not answer", err) from None

    async def probe(self) -> None:
        try:
            await self._redis.ping()
        except (RedisError, OSError) as err:
            raise await self._failed("does not answer", err) from None

    async def _failed(self, what: str, err: Exception) -> StoreUnavailable:
        await drop_idle(self._redis)
        return StoreUnavailable(f"the store {self.where} {what}: {err}")

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for _, fut in self._waiting:
            if not fut.done():
                fut.cancel()
        await self.presence.stop()
        if self._follower is not None:
            self._follower.cancel()
            try:
                await self._follower
            except (asyncio.CancelledError, Exception):
                pass
        await self._redis.aclose()
        await self._reader.aclose()


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
        desc = json.dumps(description) if description is not None else None
        if desc is None:
            self._current.pop(conn_id, None)
        else:
            self._current[conn_id] = desc
        self._queue.append((conn_id, desc))
        self._wake.set()

    async def _write(self) -> None:
        """The one task that writes this node's connections, so that writes
        land in the order they were made."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            batch, self._queue = self._queue, []
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
            out.extend(dict(json.loads(v), node=node) for v in conns.values())
        return out

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        try:
            pipe = self._redis.pipeline(transaction=False)
            pipe.delete(self._conns, self._alive)
            pipe.srem(f"{P}nodes", self.node)
            await pipe.execute()
        except (RedisError, OSError):
            pass
