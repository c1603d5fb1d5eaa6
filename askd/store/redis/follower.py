"""The follower: this node's reader of the stream of changes.

It reads the stream on from the last entry applied, for ever, and hands
what it reads to the listener in the stream's order (this node's own
changes as the very objects it committed, so their replies run). After a
lost link it catches up from there: nothing lost, nothing repeated. A
commit waits (``reached``) until the follower has applied its entry.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from askd.core.changes import Change
from askd.protocol import codec
from askd.store.errors import StoreUnavailable
from askd.store.parts import StoreListener
from askd.store.redis.change_json import from_json
from askd.store.redis.keys import RETRY_SECONDS, STREAM

log = logging.getLogger("askd.store.redis")

# How long a commit waits for its own entry to come back through the stream.
REACH_SECONDS = 10.0
READ_BLOCK_MS = 5_000


def entry_order(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class Follower:
    def __init__(self, url: str, node: str, where: str, listener: Callable[[], StoreListener]) -> None:
        # It blocks in XREAD: its own connection, no socket timeout shorter than the block.
        self._reader = aioredis.Redis.from_url(url, socket_timeout=READ_BLOCK_MS / 1000 + 5, socket_connect_timeout=5)
        self._node, self._where, self._to = node, where, listener
        self.mine: dict[int, Change] = {}  # this node's changes in flight, by their sequence number
        self.last = "0-0"  # the last stream entry applied
        self._waiting: list[tuple[tuple[int, int], asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def start(self, last: str) -> None:
        self.last = last
        self._task = asyncio.ensure_future(self._follow())

    async def _follow(self) -> None:
        failing = False
        while not self._closed:
            try:
                got = await self._reader.xread({STREAM: self.last}, count=1000, block=READ_BLOCK_MS)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as err:
                if not failing:
                    self._to().on_failed(StoreUnavailable(f"lost the store {self._where}: {err}"))
                failing = True
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if failing:
                failing = False
                self._to().on_ok()
            for _, entries in got or ():
                self._hand_over(entries)

    def _hand_over(self, entries: list[tuple[bytes, dict[bytes, bytes]]]) -> None:
        to = self._to()
        batch: list[Change] = []
        try:
            for entry_id, fields in entries:
                self.last = entry_id.decode()
                if b"cmd" in fields:  # an admin's order to every node
                    to.on_changes(batch)
                    batch = []
                    to.on_command(codec.loads(fields[b"cmd"]))
                    continue
                data = codec.loads(fields[b"c"])
                own = self.mine.pop(data["q"], None) if data["o"] == self._node else None
                batch.append(own if own is not None else from_json(data))
            to.on_changes(batch)
        except Exception:  # a bug must not stop the node following the cluster
            log.exception("applying the stream's changes failed")
        finally:
            self._release()

    def _release(self) -> None:
        """Wake commits whose entries the follower has now applied."""
        upto = entry_order(self.last)
        still = []
        for at, fut in self._waiting:
            if at <= upto:
                if not fut.done():
                    fut.set_result(None)
            else:
                still.append((at, fut))
        self._waiting = still

    async def reached(self, entry_id: str) -> None:
        """Return once the follower has applied the stream up to ``entry_id``."""
        if entry_order(entry_id) <= entry_order(self.last):
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((entry_order(entry_id), fut))
        try:
            await asyncio.wait_for(fut, REACH_SECONDS)
        except asyncio.TimeoutError:
            raise StoreUnavailable(f"the store {self._where} took the change but its stream did not come back") from None

    async def stop(self) -> None:
        self._closed = True
        for _, fut in self._waiting:
            if not fut.done():
                fut.cancel()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        await self._reader.aclose()
