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

This is its change log (``RedisStore``); the parts: ``commit.lua`` (the
step), ``change_json.py`` (a change as JSON), ``follower.py`` (the stream's
reader), ``once_keys.py``, ``directory.py`` (users' settings), ``posts.py``
(chat messages to edit), ``cluster.py``
with ``presence.py`` (who is connected where, orders to every node),
``keys.py`` (the key prefix and the stream).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Sequence
from importlib.resources import files

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.audit.history import title_of_change
from askd.audit.records import bodies
from askd.core import Request
from askd.core.changes import Change
from askd.core.snapshot import Loaded, SessionRow
from askd.protocol import codec
from askd.store.errors import StoreError, StoreUnavailable
from askd.store.parts import StoreListener
from askd.store.redis.audit import RedisTrail
from askd.store.redis.once_keys import RedisOnceKeys
from askd.store.redis.cluster import RedisCluster
from askd.store.redis.change_json import to_json
from askd.store.redis.directory import RedisDirectory
from askd.store.redis.follower import Follower
from askd.store.redis.posts import RedisPosts
from askd.store.redis.keys import NOT_BEFORE, STREAM, STREAM_MAXLEN, P, failed
from askd.store.redis.presence import Presence
from askd.store.rows import remind_from_json, request_from_row, steps_from_json

#: The commit step (one atomic script run per commit); see the file.
COMMIT = files("askd.store.redis").joinpath("commit.lua").read_text(encoding="utf-8")
#: Keeps the later revocation instant; see the file.
KEEP_LATER = files("askd.store.redis").joinpath("not_before.lua").read_text(encoding="utf-8")

# A node's connections for commands (the follower has its own). A call
# beyond them waits for a free one, up to the socket timeout, instead of
# failing: redis-py's default pool (capped at 100 connections in redis-py 8;
# 4.x had no cap) raised "Too many connections", which askd took for Redis
# being down.
POOL_SIZE = 100
TIMEOUT_SECONDS = 5


class RedisStore:
    kind = "redis"
    durable = True
    shared = True

    def __init__(
        self, url: str, node_id: str, node_ttl: float = 30.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.url, self.node = url, node_id
        try:
            pool = aioredis.BlockingConnectionPool.from_url(
                url, max_connections=POOL_SIZE, timeout=TIMEOUT_SECONDS,
                socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS, health_check_interval=10,
            )
            self._redis = aioredis.Redis.from_pool(pool)
            self._follower = Follower(url, node_id, self.where, lambda: self._to)
        except (ValueError, RedisError) as err:
            raise StoreError(f"the store {self.where} is not a usable Redis URL: {err}") from None
        self._script = self._redis.register_script(COMMIT)
        self._seq = itertools.count(1)
        self._listener: StoreListener | None = None
        self._closed = False
        self.presence = Presence(self._redis, node_id, node_ttl)
        self.once_keys = RedisOnceKeys(self._redis, node_id, self.where, clock)
        self.directory = RedisDirectory(self._redis, self.where)
        self.posts = RedisPosts(self._redis, self.where, clock)
        self.cluster = RedisCluster(self._redis, self.where, self.presence, TIMEOUT_SECONDS)
        self.audit = RedisTrail(self._redis, self.where)
        self._clock = clock

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

    async def load(self) -> Loaded:
        try:
            return await self._load()
        except (RedisError, OSError) as err:
            raise StoreError(f"cannot load the store {self.where}: {err}") from None

    async def _load(self) -> Loaded:
        loaded = Loaded()
        r = self._redis
        newest = await r.xrevrange(STREAM, count=1)
        start = newest[0][0].decode() if newest else "0-0"  # the snapshot is from here
        for name, members in (await r.hgetall(P + "groups")).items():
            loaded.groups[name.decode()] = codec.loads(members)
        tos = await r.hgetall(P + "away:to")
        for user, until in (await r.hgetall(P + "away:until")).items():
            if user in tos:
                loaded.aways[user.decode()] = (float(until), codec.loads(tos[user]))
        sids = [s.decode() for s in await r.smembers(P + "sessions")]
        pipe = r.pipeline(transaction=False)
        for sid in sids:
            pipe.hgetall(P + "s:" + sid)
        sessions = [(sid, f) for sid, f in zip(sids, await pipe.execute()) if f]
        sessions.sort(key=lambda item: int(item[1].get(b"seq", 0)))  # the order they were made in
        for sid, fields in sessions:
            parent, agent = fields.get(b"parent"), fields.get(b"agent")
            loaded.sessions.append(
                SessionRow(sid, fields[b"owner"].decode(), parent.decode() if parent else None, agent.decode() if agent else None)
            )
        rids = [x.decode() for x in await r.smembers(P + "requests")]
        rows: list[tuple[int, Request]] = []
        for at in range(0, len(rids), 1000):
            chunk = rids[at : at + 1000]
            pipe = r.pipeline(transaction=False)
            for rid in chunk:
                pipe.hgetall(P + "r:" + rid)
            for rid, f in zip(chunk, await pipe.execute()):
                if f:
                    rows.append((int(f[b"seq"]), self._request(rid, f)))
        rows.sort(key=lambda row: row[0])
        loaded.requests = [req for _, req in rows]
        await self.presence.start()
        # It hands on what came after the snapshot from the caller's next
        # await: by then the core has restored the snapshot (snapshot.Loaded).
        self._follower.start(start)
        return loaded

    @staticmethod
    def _request(rid: str, f: dict[bytes, bytes]) -> Request:
        req = RedisStore._row(rid, f)
        req.escalate, req.escalations = steps_from_json(f.get(b"esc")), int(f.get(b"escalations", 0))
        req.remind = remind_from_json(f.get(b"rmd"))
        req.on_behalf_of = _text(f.get(b"obo"))
        req.host_key_hash = _text(f.get(b"hk"))
        return req

    @staticmethod
    def _row(rid: str, f: dict[bytes, bytes]) -> Request:
        key, error, ended, agent = f.get(b"key"), f.get(b"error"), f.get(b"ended"), f.get(b"agent")
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
            agent=agent.decode() if agent is not None else None,
            max_extension=float(f.get(b"mext", 0.0)),
            extended=float(f.get(b"ext", 0.0)),
            on_timeout=f.get(b"otm"),
            answered_by=_text(f.get(b"by")),
            via=_text(f.get(b"via")),
            reason=_text(f.get(b"reason")),
            defaulted=f.get(b"dflt") == b"1",
            digest=_text(f.get(b"dg")),
            approval=f.get(b"appr"),
        )

    # ---- commits -------------------------------------------------------

    async def commit(self, changes: Sequence[Change]) -> list[Change]:
        if not changes:
            return []
        seqs = [next(self._seq) for _ in changes]
        mine = self._follower.mine
        for seq, change in zip(seqs, changes):
            mine[seq] = change
        at = self._clock()
        audit = codec.dumps(
            {
                "records": [[codec.dumps(b).decode() for b in bodies(c, at)] for c in changes],
                "titles": [title_of_change(c) or "" for c in changes],  # the history's, not the records'
            }
        ).decode()
        args = [self.node, P, STREAM_MAXLEN, audit, *(to_json(c, self.node, q) for c, q in zip(changes, seqs))]
        try:
            flags = await self._script(args=args)
        except (RedisError, OSError) as err:
            for seq in seqs:
                mine.pop(seq, None)
            raise await self._failed("refused a write", err) from None
        last = flags[-1].decode() if isinstance(flags[-1], bytes) else str(flags[-1])
        done = []
        for seq, change, flag in zip(seqs, changes, flags):
            if flag == 1:
                done.append(change)
            else:
                mine.pop(seq, None)
        if last:
            # The follower applied them, in the cluster's order; or, when a
            # change did not take effect, what another node did instead.
            await self._follower.reached(last)
        return done

    async def catch_up(self) -> None:
        """Wait until the follower applied the stream's newest entry (one
        round trip, then the follower's own pace)."""
        try:
            newest = await self._redis.xrevrange(STREAM, count=1)
        except (RedisError, OSError) as err:
            raise await self._failed("does not answer", err) from None
        if newest:
            await self._follower.reached(newest[0][0].decode())

    async def load_not_before(self) -> float:
        try:
            value = await self._redis.get(NOT_BEFORE)
        except (RedisError, OSError) as err:
            raise StoreError(f"cannot load the store {self.where}: {err}") from None
        return float(value) if value else 0.0

    async def save_not_before(self, at: float) -> None:
        """Kept, then told to every node (this one included) by the stream."""
        try:
            await self._redis.eval(KEEP_LATER, 1, NOT_BEFORE, repr(at))
        except (RedisError, OSError) as err:
            raise await self._failed("refused a write", err) from None
        await self.cluster.command({"notBefore": at})

    async def probe(self) -> None:
        try:
            await self._redis.ping()
        except (RedisError, OSError) as err:
            raise await self._failed("does not answer", err) from None

    async def _failed(self, what: str, err: Exception) -> StoreUnavailable:
        return await failed(self._redis, self.where, what, err)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        await self.presence.stop()
        await self._follower.stop()
        await self._redis.aclose()


def _text(value: bytes | None) -> str | None:
    return value.decode() if value is not None else None
