"""The Redis store's audit trail (``store.audit``).

``commit.lua`` appends each record's content to the list ``audit`` as
``"<seq> <body JSON>"`` in the script that writes its change, with the seq
from ``INCR audit:seq``: one gap-free order for every node. Lua in Redis has
no SHA-256, so ``prev`` and ``hash`` are computed here, in seq order, from
the anchor (the last pruned record's seq, hash and at; seq 0 and 64 zeros
at first): deterministic, so every node serves the same chain. Each node
keeps a hash every ``CHECKPOINT`` seqs, so a page never re-reads the chain
from its start more than once per node.
"""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.audit.chain import ZERO, seal
from askd.audit.history import ENDS, HISTORY, PastQuestion
from askd.protocol import codec
from askd.store.redis.keys import P, failed

RECORDS = P + "audit"
HISTORY_OF = P + "audit:history:"  # + a user: the seqs of their last ends, newest first (commit.lua)
TITLES = P + "audit:titles"  # an end's seq -> its question's title, while a history list holds it (commit.lua)
HELD = P + "audit:titles:n"  # an end's seq -> how many history lists hold its title
SEQ = P + "audit:seq"
ANCHOR = P + "audit:anchor"
CHECKPOINT = 1024
READ = 1000

# Drop the front up to the new anchor, only if no other node moved it first;
# the history's titles of the ends dropped (ARGV[4..]) go with them.
PRUNE = """
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[1] then return -1 end
redis.call('LTRIM', KEYS[1], tonumber(ARGV[3]), -1)
redis.call('SET', KEYS[2], ARGV[2])
for i = 4, #ARGV do
  redis.call('HDEL', KEYS[3], ARGV[i])
  redis.call('HDEL', KEYS[4], ARGV[i])
end
return tonumber(ARGV[3])
"""


def _anchor(raw: bytes | None) -> tuple[int, str, str | None]:
    if not raw:
        return 0, ZERO, None
    seq, hash_, at = raw.decode().split(" ", 2)
    return int(seq), hash_, (at or None)


def _parse(raw: bytes) -> dict[str, Any]:
    seq, body = raw.decode().split(" ", 1)
    return {"seq": int(seq), **codec.loads(body)}


class RedisTrail:
    def __init__(self, redis: aioredis.Redis, where: str) -> None:
        self._redis, self._where = redis, where
        self._prune = redis.register_script(PRUNE)
        self._hashes: dict[int, str] = {}  # seq -> hash, every CHECKPOINT seqs (and the last read)
        self._sealed = 0

    @property
    def sealed(self) -> int:
        """Records sealed into the chain as this node last read it."""
        return self._sealed

    async def _read(self, start: int, stop: int) -> tuple[tuple[int, str, str | None], list[bytes]]:
        """The anchor and the raw records at list indexes start..stop, read at one instant."""
        pipe = self._redis.pipeline(transaction=True)
        pipe.get(ANCHOR)
        pipe.lrange(RECORDS, start, stop)
        pipe.get(SEQ)
        try:
            anchor, raws, seq = await pipe.execute()
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "does not answer", err) from None
        self._sealed = max(self._sealed, int(seq or 0))
        return _anchor(anchor), raws

    async def _hash_at(self, seq: int, anchor: tuple[int, str, str | None]) -> str:
        """The hash of record ``seq`` (at or after the anchor), sealing from
        the nearest hash known."""
        a_seq, a_hash, _ = anchor
        if seq <= a_seq:
            return a_hash
        known = [k for k in self._hashes if a_seq <= k <= seq]
        at, prev = (max(known), self._hashes[max(known)]) if known else (a_seq, a_hash)
        while at < seq:
            # list index of seq s is s - a_seq - 1 (only while the anchor holds)
            _, raws = await self._read(at - a_seq, min(seq, at + READ) - a_seq - 1)
            if not raws:
                break
            for raw in raws:
                rec = self._sealed_record(_parse(raw), prev)
                prev, at = rec["hash"], rec["seq"]
        return prev

    def _sealed_record(self, rec: dict[str, Any], prev: str) -> dict[str, Any]:
        seq = rec.pop("seq")
        out = seal(rec, seq, prev)
        if seq % CHECKPOINT == 0:
            self._hashes[seq] = out["hash"]
        return out

    async def page(self, after_seq: int, limit: int) -> list[dict[str, Any]]:
        anchor, _ = await self._read(0, 0)
        a_seq = anchor[0]
        after_seq = max(after_seq, a_seq)
        anchor, raws = await self._read(after_seq - a_seq, after_seq - a_seq + limit - 1)
        if anchor[0] != a_seq:  # pruned meanwhile: read again from the new front
            return await self.page(after_seq, limit)
        prev = await self._hash_at(after_seq, anchor)
        out = []
        for raw in raws:
            rec = self._sealed_record(_parse(raw), prev)
            prev = rec["hash"]
            out.append(rec)
        return out

    async def head(self) -> dict[str, Any] | None:
        pipe = self._redis.pipeline(transaction=True)
        pipe.get(ANCHOR)
        pipe.lindex(RECORDS, -1)
        try:
            raw_anchor, last = await pipe.execute()
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "does not answer", err) from None
        anchor = _anchor(raw_anchor)
        if last is None:
            return None if anchor[0] == 0 else {"seq": anchor[0], "hash": anchor[1], "at": anchor[2]}
        rec = _parse(last)
        self._sealed = max(self._sealed, rec["seq"])
        return {"seq": rec["seq"], "hash": await self._hash_at(rec["seq"], anchor), "at": rec["at"]}

    async def history(self, user: str) -> list[PastQuestion]:
        """The last ends of questions asked of ``user`` (records, titles),
        newest first, the records as kept (no ``prev``, ``hash``: the history
        shows neither, and sealing them could read the chain from a
        checkpoint). An end retention removed is before the anchor: left out."""
        for _ in range(3):
            pipe = self._redis.pipeline(transaction=True)
            pipe.get(ANCHOR)
            pipe.lrange(HISTORY_OF + user, 0, HISTORY - 1)
            try:
                raw_anchor, seqs = await pipe.execute()
                a_seq = _anchor(raw_anchor)[0]
                wanted = [int(s) for s in seqs if int(s) > a_seq]
                pipe = self._redis.pipeline(transaction=True)
                pipe.get(ANCHOR)
                for seq in wanted:
                    pipe.lindex(RECORDS, seq - a_seq - 1)
                if wanted:
                    pipe.hmget(TITLES, wanted)
                again, *raws = await pipe.execute()
            except (RedisError, OSError) as err:
                raise await failed(self._redis, self._where, "does not answer", err) from None
            if _anchor(again)[0] == a_seq:  # not pruned between the reads: the indexes hold
                titles = raws.pop() if wanted else []
                return [
                    PastQuestion(_parse(raw), title.decode() if title is not None else None)
                    for raw, title in zip(raws, titles)
                    if raw is not None
                ]
        return []

    async def prune(self, before: str) -> int:
        anchor, raws = await self._read(0, READ - 1)
        n, last, ends = 0, None, []
        for raw in raws:
            rec = _parse(raw)
            if rec["at"] >= before:
                break
            n, last = n + 1, rec
            if rec["event"] in ENDS:
                ends.append(rec["seq"])
        if last is None:
            return 0
        hash_ = await self._hash_at(last["seq"], anchor)
        old = "" if anchor[0] == 0 else f"{anchor[0]} {anchor[1]} {anchor[2] or ''}"
        try:
            done = await self._prune(
                keys=[RECORDS, ANCHOR, TITLES, HELD], args=[old, f"{last['seq']} {hash_} {last['at']}", n, *ends]
            )
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "refused a write", err) from None
        if int(done) < 0:
            return 0  # another node pruned first
        return int(done) + (await self.prune(before) if n == len(raws) else 0)

    async def count(self) -> int:
        _, _ = await self._read(0, 0)
        try:
            return int(await self._redis.llen(RECORDS))
        except (RedisError, OSError) as err:
            raise await failed(self._redis, self._where, "does not answer", err) from None
